"""numpy computes float functions of int8, uint8 and bool arrays in float16 (np.sqrt(int8) is
float16): on a device that stores half but computes in float32 (PoCL without cl_khr_fp16) gnp runs
those loops through float32 and rounds once, as numpy's float16 loops do."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

SMALL = [np.int8, np.uint8, np.bool_]


@pytest.mark.parametrize("dtype", SMALL, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("name", ["sqrt", "rint", "fabs", "rad2deg", "expm1", "tanh", "arcsinh", "log2"])
def test_unary_float_function_of_small_integers_is_float16_as_numpy(backend, name, dtype):
    a = np.arange(1, 25).reshape(4, 6).astype(dtype)
    got = getattr(gnp, name)(gnp.asarray(a, device=backend))
    want = getattr(np, name)(a)
    assert got.dtype == want.dtype == np.float16
    # exact for the correctly rounded ones; libm functions within one half ulp of numpy's float32 libm
    np.testing.assert_allclose(got.get().astype(np.float32), want.astype(np.float32), rtol=1e-3)
    if name in ("sqrt", "rint", "fabs", "rad2deg"):
        np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("name", ["arctan2", "copysign", "true_divide"])
def test_binary_float_function_of_small_integers_is_float16_as_numpy(backend, name):
    a = np.arange(-12, 12).reshape(4, 6).astype(np.int8)
    b = np.arange(1, 25).reshape(4, 6).astype(np.int8)
    got = getattr(gnp, name)(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend))
    want = getattr(np, name)(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get().astype(np.float64), want.astype(np.float64), rtol=1e-3)


def test_float16_result_into_out(backend):
    a = np.arange(1, 9).astype(np.uint8)
    out = gnp.empty(8, dtype=np.float16, device=backend)
    r = gnp.sqrt(gnp.asarray(a, device=backend), out=out)
    assert r is out
    np.testing.assert_array_equal(out.get(), np.sqrt(a))
