"""gnp.gcd, gnp.lcm and gnp.bitwise_count against numpy on every integer type (numpy's C integer
promotion in lcm's product of int8/int16 included)."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dt", INTS, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_as_numpy(backend, name, dt):
    rng = np.random.default_rng(4)
    a = rng.integers(-100, 100, size=300).astype(dt)
    b = rng.integers(-100, 100, size=300).astype(dt)
    a[:3] = 0
    b[:2] = 0
    got = getattr(gnp, name)(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend))
    want = getattr(np, name)(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)


def test_gcd_lcm_of_python_scalars_and_broadcasting(backend):
    g = gnp.asarray([[12], [18]], device=backend)
    np.testing.assert_array_equal(gnp.gcd(g, [8, 9, 0]).get(), np.gcd([[12], [18]], [8, 9, 0]))
    assert int(gnp.lcm(4, 6)) == 12


def test_gcd_refuses_floats_as_numpy(backend):
    with pytest.raises(TypeError, match="gcd"):
        gnp.gcd(gnp.asarray([1.5], device=backend), 2)


@pytest.mark.parametrize("dt", INTS + [np.bool_], ids=lambda t: np.dtype(t).name)
def test_bitwise_count_as_numpy(backend, dt):
    a = np.random.default_rng(5).integers(-128, 127, size=200).astype(dt)
    got = gnp.bitwise_count(gnp.asarray(a, device=backend))
    want = np.bitwise_count(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)
