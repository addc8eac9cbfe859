"""A local that is an int on one path and a float on another (issue 30 item 6) joins as in Numba:
float64, or float32 where that is the kernel's default float, and gives the host's values when
they are exact in that type."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_translate import kernel


def int_then_float(a, out):
    for i in range(out.shape[0]):
        t = a[i]
        if a[i] > 3:
            t = 0.5
        out[i] = t


def float_then_int(a, out):
    for i in range(out.shape[0]):
        t = 0.25
        if a[i] % 2 == 0:
            t = a[i]
        out[i] = t * 2


def int64_and_float32_data(a, x, out):
    for i in range(out.shape[0]):
        if x[i] > 0:
            t = x[i]
        else:
            t = a[i]
        out[i] = t


def pick(v, w):
    if v > 0:
        return v          # an int64
    return w * 0.5        # a float


def helper_returns_both(a, out):
    for i in range(out.shape[0]):
        out[i] = pick(a[i], a[i])


@pytest.mark.parametrize("fn", [int_then_float, float_then_int, helper_returns_both])
@pytest.mark.parametrize("default_float, ctype", [(None, "float"), (np.float64, "double")])
def test_int_and_float_paths_join_to_the_default_float_or_float64(backend, fn, default_float, ctype):
    k = kernel(fn) if default_float is None else kernel(default_float=default_float)(fn)
    a = np.arange(-4, 12, dtype=np.int64)
    out = np.full(len(a), -99.0)
    k[backend](a, out)
    want = np.zeros_like(out)
    fn(a, want)
    np.testing.assert_array_equal(out, want)
    src = k.inspect(a, out, backend="opencl").source
    assert f"{ctype} t;" in src or f"{ctype} pyg_pick(" in src


@pytest.mark.parametrize("default_float, ctype", [(None, "float"), (np.float64, "double")])
def test_int64_and_float32_data_join_like_numba(backend, default_float, ctype):
    k = kernel(int64_and_float32_data) if default_float is None else kernel(default_float=default_float)(
        int64_and_float32_data)
    a = np.arange(8, dtype=np.int64) * 1000
    x = np.array([1.5, -1, 2.25, -3, 0.125, -1, 7, -8], np.float32)
    out = np.zeros(8)
    k[backend](a, x, out)
    want = np.zeros(8)
    int64_and_float32_data(a, x, want)
    np.testing.assert_array_equal(out, want)
    assert f"{ctype} t;" in k.inspect(a, x, out, backend="opencl").source


def test_float64_data_and_int64_data_join_to_float64_whatever_the_default(backend):
    k = kernel(int64_and_float32_data)
    a = np.array([2**40 + 1, 3], np.int64)            # exact in float64, not in float32
    x = np.array([-1.0, 0.1], np.float64)
    out = np.zeros(2)
    k[backend](a, x, out)
    np.testing.assert_array_equal(out, [2.0**40 + 1, 0.1])
