"""The dtype argument of gpu.local_array, the private np.zeros/np.full arrays and gpu.uniform
(one rule, ``_dtype_objects.dtype_from_object``): each form it accepts computes what the host
computes, and something that names no dtype is a SyntaxError at its line, at every call site."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_translate import kernel

NOT_A_DTYPE = 3


@kernel
def private_of_each_form(out):
    for i in range(out.shape[0]):
        a = np.zeros(2, float)             # the default float
        b = np.full(2, 7, int)             # int32
        c = np.zeros(2, np.int16)
        a[0] = 0.5 * i
        c[1] = i
        out[i] = a[0] + a[1] + b[0] + c[1]


def test_each_dtype_form_computes_what_the_host_computes(backend):
    got = np.zeros(16, np.float32)
    private_of_each_form[backend](got)
    want = np.zeros(16, np.float32)
    private_of_each_form.py_func(want)
    np.testing.assert_array_equal(got, want)


@kernel
def local_not_a_dtype(x):
    i = gpu.get_global_id(0)
    t = gpu.local_array(8, NOT_A_DTYPE)  # WRONG
    t[0] = x[i]
    gpu.barrier()
    x[i] = t[0]


@kernel
def private_not_a_dtype(x):
    for i in range(x.shape[0]):
        t = np.zeros(4, NOT_A_DTYPE)  # WRONG
        x[i] = t[0]


@kernel
def random_not_a_dtype(x):
    for i in range(x.shape[0]):
        x[i] = gpu.uniform(1, i, dtype=NOT_A_DTYPE)  # WRONG


@pytest.mark.parametrize("k", [local_not_a_dtype, private_not_a_dtype, random_not_a_dtype],
                         ids=lambda k: k.__name__)
def test_a_value_that_names_no_dtype_is_a_syntax_error_at_its_line(k):
    lines, start = inspect.getsourcelines(k.py_func)
    wrong = start + next(n for n, text in enumerate(lines) if "# WRONG" in text)
    with pytest.raises(SyntaxError, match="expected a numpy dtype such as np.float32") as info:
        k.inspect(np.zeros(8, np.float32), backend="opencl")
    assert info.value.lineno == wrong
