"""Python ints beyond a float16 array's range convert to half first, as numpy's weak scalars do
(2**32 is inf there, so g16 <= 2**32 holds for inf elements), and a bool array compares with ints
past int64 exactly (2**63 in uint64, as CuPy; numpy's default int overflows there)."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pygpgpu.numpy as gnp
import pytest

OPS = [operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge, operator.add, operator.mul]


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_float16_against_large_python_numbers_as_numpy(backend, op):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        a = np.array([-1, 0, 2**31 - 1, 2**32, 2**62, 65504, 65520, 3.5]).astype(np.float16)
        g = gnp.asarray(a, device=backend)
        for s in [2**32, 2**31 - 1, 2**64 - 1, 2**63, -1, 0, 1.5, 65519, 65520.0, 1e6]:
            for got, want in ((op(g, s), op(a, s)), (op(s, g), op(s, a))):
                assert got.dtype == want.dtype, (s, got.dtype, want.dtype)
                np.testing.assert_array_equal(got.get(), want, err_msg=f"{op.__name__} {s}")


@pytest.mark.parametrize("op", OPS[:6], ids=lambda f: f.__name__)
def test_bool_array_against_ints_past_int64(backend, op):
    g = gnp.asarray([True, False], device=backend)
    for big, same in [(2**63, 2), (2**63 + 100, 2), (-2**63, -1), (2**64 + 5, 2)]:
        np.testing.assert_array_equal(op(g, big).get(), op(g, same).get())
        np.testing.assert_array_equal(op(big, g).get(), op(same, g).get())
