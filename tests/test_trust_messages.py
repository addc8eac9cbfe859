"""Translator errors that say what is wrong (issue 12, "clear errors"): each message names the
real problem and points at the right place."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_translate import KernelTypeError, kernel
from pygpgpu_core.vec_types import float4


@kernel
def add_one(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] + 1


def test_an_unknown_keyword_argument_is_named_as_unknown(backend):
    x = np.zeros(4, np.float32)
    for call in (lambda: add_one(x, outt=x), lambda: add_one[backend](x, outt=x),
                 lambda: add_one.inspect(x, outt=x, backend="opencl")):
        with pytest.raises(TypeError) as info:
            call()
        msg = str(info.value)
        assert "unknown keyword argument 'outt'" in msg and "did you mean 'out'" in msg, msg
        assert "missing" not in msg
    with pytest.raises(TypeError, match="unknown keyword argument 'scale'; its parameters are x, out"):
        add_one(x, x, scale=2)


def _closure_kernel():
    scale = [3.0]                         # a list: not a value a kernel can capture

    @kernel
    def scaled(x, out):
        for i in range(out.shape[0]):
            y = x[i]
            out[i] = y * scale            # the line the error must point at
    return scaled


def _make_shift(offset):
    offset = {"by": offset}               # a dict: not a value a helper can capture
    def shift(v):
        w = v + 1.0
        return w + offset                 # the line the error must point at
    return shift


shift_by_two = _make_shift(2.0)          # a module-level helper that is a closure (of a dict)


@kernel
def uses_closure_helper(x, out):
    for i in range(out.shape[0]):
        out[i] = shift_by_two(x[i])


def test_a_captured_value_of_an_unsupported_kind_points_at_the_line_that_uses_it():
    k = _closure_kernel()
    x = np.zeros(4, np.float32)
    with pytest.raises(SyntaxError) as info:
        k.inspect(x, x, backend="opencl")
    assert "'scale' is a list" in str(info.value) and "numpy array" in str(info.value)
    assert info.value.lineno == k.py_func.__code__.co_firstlineno + 4
    assert info.value.filename == __file__
    with pytest.raises(SyntaxError) as info:
        uses_closure_helper.inspect(x, x, backend="opencl")
    assert "'offset' is a dict" in str(info.value) and "'uses_closure_helper'" in str(info.value)
    assert info.value.lineno == shift_by_two.__code__.co_firstlineno + 2


def test_a_bad_default_float_names_the_argument():
    def body(out):
        for i in range(out.shape[0]):
            out[i] = 1.0
    with pytest.raises(ValueError, match=r"default_float must be np.float32 or np.float64, got 'x'"):
        kernel(default_float="x")(body)
    with pytest.raises(ValueError, match="default_float"):
        kernel(default_float=np.int32)(body)


@kernel
def conflicting(a, b, out):
    for i in range(out.shape[0]):
        v = a[i]
        v = b[i]
        out[i] = v


@kernel
def vector_into_scalar(out):
    for i in range(out.shape[0]):
        out[i] = float4(1.0, 2.0, 3.0, 4.0)


def test_kernel_type_errors_carry_the_file_name_and_line():
    with pytest.raises(KernelTypeError) as info:
        conflicting.inspect(np.zeros(4, np.int32), np.zeros(4, np.uint32), np.zeros(4, np.int64), backend="opencl")
    err = info.value
    assert err.filename == __file__ and err.lineno == conflicting.py_func.__code__.co_firstlineno + 4
    assert f"{__file__}:{err.lineno}" in str(err)
    with pytest.raises(KernelTypeError) as info:      # a conversion error (it named only "line N")
        vector_into_scalar.inspect(np.zeros(4, np.float32), backend="opencl")
    err = info.value
    assert err.filename == __file__ and err.lineno == vector_into_scalar.py_func.__code__.co_firstlineno + 3
    assert f"{__file__}:{err.lineno}" in str(err) and "float4" in str(err)


@kernel
def random_inside(out):
    for i in range(out.shape[0]):
        out[i] = np.random.random()


def test_numpy_random_is_not_called_a_method_to_make_static():
    with pytest.raises(SyntaxError) as info:
        random_inside.inspect(np.zeros(4), backend="opencl")
    msg = str(info.value)
    assert "np.random.random()" in msg and "random numbers" in msg and "on the host" in msg
    assert "staticmethod" not in msg and "method" not in msg


class Scaler:
    def factor(self, v):
        return v * 2.0


_scaler = Scaler()


@kernel
def user_method_inside(out):
    for i in range(out.shape[0]):
        out[i] = _scaler.factor(1.0)


def test_a_user_method_still_gets_the_staticmethod_hint():
    with pytest.raises(SyntaxError, match="staticmethod"):
        user_method_inside.inspect(np.zeros(4, np.float32), backend="opencl")


@kernel
def set_array_attribute(a, out):
    for i in range(out.shape[0]):
        a.foo = 1
        out[i] = a[i]


def test_setting_an_attribute_of_an_array_is_not_called_a_swizzle():
    x = np.zeros(4, np.float32)
    with pytest.raises(SyntaxError) as info:
        set_array_attribute.inspect(x, x, backend="opencl")
    msg = str(info.value)
    assert "attribute 'foo'" in msg and "array 'a'" in msg and "a[i] = ..." in msg
    assert "swizzle" not in msg and "vector" not in msg
    assert info.value.lineno == set_array_attribute.py_func.__code__.co_firstlineno + 3
