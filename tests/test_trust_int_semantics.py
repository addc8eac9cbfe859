"""Integer semantics the differential fuzz (test_translate_fuzz.py) found wrong, one regression test
each: kernels run on the device and compare with the same function run on the host over numpy
scalars (numpy 2, NEP 50 rules)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from pygpgpu_translate import kernel


def _host(k, *args, out):
    want = np.zeros_like(out)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        k.py_func(*args, want)
    return want


U8 = np.uint8(10)
I16 = np.int16(300)


@kernel
def numpy_scalar_constants(out):
    for i in range(out.shape[0]):
        out[i, 0] = ~U8
        out[i, 1] = -U8
        out[i, 2] = I16 ** 2
        out[i, 3] = I16 * I16


def test_numpy_scalar_constants_wrap_like_numpy(backend):
    """Folded constants of a numpy type wrap in that type: ~np.uint8(10) is 245, -np.uint8(10) 246."""
    out = np.full((4, 4), -1, np.int64)
    numpy_scalar_constants[backend](out)
    np.testing.assert_array_equal(out, _host(numpy_scalar_constants, out=out))
