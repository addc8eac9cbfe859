"""gnp.modf, frexp, ldexp, nextafter and spacing against numpy, bit for bit, on every float type
(float16 too, through its bit patterns), with zeros, infinities, NaN, subnormals and the extremes."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

FLOATS = [np.float64, np.float32, np.float16]


def sample(dt, seed=0):
    fi = np.finfo(dt)
    rng = np.random.default_rng(seed)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, fi.smallest_subnormal, -3 * fi.smallest_subnormal,
             fi.smallest_normal, -fi.smallest_normal, fi.max, -fi.max, 1.0, 0.5, 2.0, -1.5]
    return np.concatenate([rng.standard_normal(60) * 1e3, edges]).astype(dt)


def exact(got, want):
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("dt", FLOATS, ids=lambda t: np.dtype(t).name)
def test_frexp_and_modf_as_numpy(backend, dt):
    x = sample(dt)
    m, e = gnp.frexp(gnp.asarray(x, device=backend))
    want_m, want_e = np.frexp(x)
    exact(m, want_m)
    exact(e, want_e)
    f, i = gnp.modf(gnp.asarray(x, device=backend))
    want_f, want_i = np.modf(x)
    exact(f, want_f)
    exact(i, want_i)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int64, np.bool_], ids=lambda t: np.dtype(t).name)
def test_frexp_modf_spacing_of_integers_take_numpys_float_type(backend, dt):
    x = np.array([0, 1, 3, 100, 1]).astype(dt)
    g = gnp.asarray(x, device=backend)
    for got, want in zip(gnp.frexp(g) + gnp.modf(g), np.frexp(x) + np.modf(x)):
        exact(got, want)
    exact(gnp.spacing(g), np.spacing(x))


@pytest.mark.parametrize("dt", FLOATS, ids=lambda t: np.dtype(t).name)
def test_ldexp_rounds_once_and_saturates_as_numpy(backend, dt):
    x = sample(dt, 1)
    g = gnp.asarray(x, device=backend)
    with np.errstate(all="ignore"):
        for n in [0, 1, -1, 7, -30, 100, -1074, -1075, -1100, 1100, 5000, -5000]:
            exact(gnp.ldexp(g, n), np.ldexp(x, n))
        n = np.random.default_rng(2).integers(-1200, 1200, size=x.size)
        exact(gnp.ldexp(g, gnp.asarray(n, device=backend)), np.ldexp(x, n))


@pytest.mark.parametrize("dt", FLOATS, ids=lambda t: np.dtype(t).name)
def test_nextafter_and_spacing_as_numpy(backend, dt):
    x = sample(dt, 3)
    y = np.roll(x, 5)
    g = gnp.asarray(x, device=backend)
    with np.errstate(all="ignore"):
        exact(gnp.nextafter(g, gnp.asarray(y, device=backend)), np.nextafter(x, y))
        exact(gnp.nextafter(g, 0), np.nextafter(x, dt(0)))      # a Python scalar stays weak (NEP 50)
        exact(gnp.nextafter(g, gnp.asarray(x, device=backend)), np.nextafter(x, x))
        exact(gnp.spacing(g), np.spacing(x))


def test_two_outputs_into_out(backend):
    x = sample(np.float32)
    m = gnp.empty(x.shape, np.float32, device=backend)
    e = gnp.empty(x.shape, np.int32, device=backend)
    got = gnp.frexp(gnp.asarray(x, device=backend), m, e)
    assert got[0] is m and got[1] is e
    np.testing.assert_array_equal(e.get(), np.frexp(x)[1])


def test_ldexp_refuses_float_exponents_as_numpy(backend):
    with pytest.raises(TypeError):
        gnp.ldexp(gnp.asarray([1.0], device=backend), gnp.asarray([2.0], device=backend))
