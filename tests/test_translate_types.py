"""The type rules of docs/architecture.md#type-rules, each executed and compared with what the rule predicts."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_translate import KernelTypeError, kernel


@kernel
def times_literal(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 2.1


def test_weak_literal_adopts_the_array_type(backend):
    x = np.linspace(-3, 3, 50, dtype=np.float32)
    out = np.zeros_like(x)
    times_literal[backend](x, out)
    np.testing.assert_array_equal(out, x * np.float32(2.1))     # float32 math, not float64
    assert "double" not in times_literal.inspect(x, out, backend="opencl").source
    out64, x64 = np.zeros(50), x.astype(np.float64)
    times_literal[backend](x64, out64)
    np.testing.assert_array_equal(out64, x64 * 2.1)             # float64 arrays keep float64 math


@kernel
def divide_scalar(out, a):
    for i in range(out.shape[0]):
        out[i] = a / 3 + i / 7


@kernel(default_float=np.float64)
def divide_scalar64(out, a):
    for i in range(out.shape[0]):
        out[i] = a / 3 + i / 7


def test_weak_float_alone_is_the_default_float(backend, device):
    out = np.zeros(10)
    divide_scalar[backend](out, 0.1)
    want32 = np.float32(0.1) / np.float32(3) + np.arange(10, dtype=np.float32) / np.float32(7)
    np.testing.assert_array_equal(out, want32.astype(np.float64))
    if device.fp64:
        divide_scalar64[backend](out, 0.1)
        np.testing.assert_array_equal(out, 0.1 / 3 + np.arange(10) / 7)
    assert "double" in divide_scalar64.inspect(out, 0.1, backend="cuda").source


@kernel
def int_true_div(a, b, out):
    for i in range(out.shape[0]):
        out[i] = a[i] / b[i]


def test_int_over_int_is_default_float(backend):
    a = np.arange(1, 21, dtype=np.int32)
    b = np.full(20, 3, np.int32)
    out = np.zeros(20, np.float32)
    int_true_div[backend](a, b, out)
    np.testing.assert_array_equal(out, a.astype(np.float32) / np.float32(3))


@kernel
def strong_scalar(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * np.float64(0.1)


def test_numpy_scalars_are_strong(backend, device):
    x = np.linspace(0, 1, 16, dtype=np.float32)
    assert "double" in strong_scalar.inspect(x, np.zeros(16), backend="opencl").source
    if device.fp64:
        out = np.zeros(16)
        strong_scalar[backend](x, out)
        np.testing.assert_array_equal(out, x.astype(np.float64) * 0.1)


@kernel
def accumulate(x, out):
    for i in range(out.shape[0]):
        s = 0
        for j in range(x.shape[0]):
            s += x[j] * (i + 1)
        out[i] = s


def test_local_type_is_the_join_of_its_assignments(backend):
    x = np.linspace(0, 1, 9, dtype=np.float32)
    out = np.zeros(4, np.float32)
    accumulate[backend](x, out)
    want = np.zeros(4, np.float32)
    accumulate.py_func(x, want)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    src = accumulate.inspect(x, out, backend="opencl").source
    assert "    float s;" in src      # weak 0 joined with float32 products -> float32, not double


@kernel
def conflict(a, b, out):
    for i in range(out.shape[0]):
        v = a[i]
        v = b[i]
        out[i] = v


def test_strong_conflict_names_kernel_line_and_types():
    a = np.zeros(4, np.int32)
    b = np.zeros(4, np.uint32)
    with pytest.raises(KernelTypeError) as info:
        conflict.inspect(a, b, np.zeros(4, np.int64), backend="opencl")
    msg = str(info.value)
    assert "conflict" in msg and "int32" in msg and "uint32" in msg and "'v'" in msg
    line = conflict.py_func.__code__.co_firstlineno + 4
    assert f":{line}:" in msg
    with pytest.raises(TypeError):     # KernelTypeError is a TypeError
        conflict.inspect(np.zeros(4, np.int64), np.zeros(4, np.uint64), np.zeros(4), backend="cuda")


@kernel
def int_to_float_store(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] * 3 // 2


def test_int_to_float_conversion_on_store(backend):
    a = np.arange(-10, 10, dtype=np.int32)
    out = np.zeros(20, np.float32)
    int_to_float_store[backend](a, out)
    np.testing.assert_array_equal(out, (a * 3 // 2).astype(np.float32))


@kernel
def signed_unsigned(a, b, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + b[i]


def test_int32_plus_uint32_promotes_to_int64_like_numpy(backend):
    a = np.array([-5, -2**31, 7], np.int32)
    b = np.array([3, 2**32 - 1, 1], np.uint32)
    out = np.zeros(3, np.int64)
    signed_unsigned[backend](a, b, out)
    np.testing.assert_array_equal(out, a.astype(np.int64) + b.astype(np.int64))
    assert "long" in signed_unsigned.inspect(a, b, out, backend="opencl").source


@kernel
def narrow(a, b, out):
    for i in range(out.shape[0]):
        out[i] = (a[i] * b[i]) // 3


def test_narrow_ints_wrap_like_numpy(backend):
    a = np.array([100, -100, 90, 7], np.int8)
    b = np.array([3, 3, -2, 5], np.int8)
    out = np.zeros(4, np.int32)
    narrow[backend](a, b, out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, ((a * b) // np.int8(3)).astype(np.int32))


@kernel
def floor_semantics(a, b, q, r, fq, fr):
    for i in range(q.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        fq[i] = (a[i] * 1.0) // (b[i] * 0.5)
        fr[i] = (a[i] * 1.0) % (b[i] * 0.5)


def test_floor_division_and_modulo_follow_python(backend):
    a = np.array([7, -7, 7, -7, 0, 13, -13], np.int32)
    b = np.array([2, 2, -2, -2, 3, -5, 5], np.int32)
    q, r = np.zeros(7, np.int32), np.zeros(7, np.int32)
    fq, fr = np.zeros(7, np.float32), np.zeros(7, np.float32)
    floor_semantics[backend](a, b, q, r, fq, fr)
    assert q.tolist() == [int(x) // int(y) for x, y in zip(a, b)]
    assert r.tolist() == [int(x) % int(y) for x, y in zip(a, b)]
    assert fq.tolist() == [float(x) // (float(y) * 0.5) for x, y in zip(a, b)]
    assert fr.tolist() == [float(x) % (float(y) * 0.5) for x, y in zip(a, b)]


@kernel
def powers(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] ** 2 + a[i] ** 3 + a[i] ** 0.5


def test_small_integer_powers_become_multiplication(backend):
    a = np.linspace(0.5, 3, 11, dtype=np.float32)
    out = np.zeros_like(a)
    powers[backend](a, out)
    np.testing.assert_allclose(out, a * a + a * a * a + np.sqrt(a), rtol=1e-6)
    src = powers.inspect(a, out, backend="opencl").source
    assert "pow(" not in src and "sqrt(" in src


@kernel
def builtins_types(a, iout, fout):
    for i in range(iout.shape[0]):
        k = a[i]
        iout[i] = abs(k) + min(k, 2) + max(k, -1)
        fout[i] = min(k, 0.5) + max(k * 1.5, 1)


def test_abs_min_max_keep_python_types(backend):
    a = np.arange(-4, 5, dtype=np.int32)
    iout, fout = np.zeros(9, np.int32), np.zeros(9, np.float32)
    builtins_types[backend](a, iout, fout)
    assert iout.tolist() == [abs(k) + min(k, 2) + max(k, -1) for k in a.tolist()]
    np.testing.assert_allclose(fout, [min(k, 0.5) + max(k * 1.5, 1) for k in a.tolist()])


@kernel
def big_scalar(out, base):
    for i in range(out.shape[0]):
        out[i] = base + i


def test_python_ints_that_need_64_bits_switch_to_64_bit(backend):
    out = np.zeros(5, np.int64)
    big_scalar[backend](out, 2**40)
    assert out.tolist() == [2**40 + i for i in range(5)]
    sig32 = big_scalar.inspect(out, 5, backend="opencl").signature
    sig64 = big_scalar.inspect(out, 2**40, backend="opencl")
    assert sig32[1] == 32 and sig64.signature[1] == 64
    assert "long i;" in sig64.source         # 64-bit indexing is chosen per call


def test_unsupported_argument_types_name_the_parameter():
    with pytest.raises(TypeError, match="argument 'out'"):
        big_scalar.inspect([1, 2, 3], 1, backend="opencl")
    with pytest.raises(TypeError, match="argument 'base'.*str"):
        big_scalar.inspect(np.zeros(3), "x", backend="opencl")
    with pytest.raises(TypeError, match="argument 'out'.*datetime64"):
        big_scalar.inspect(np.zeros(3, "M8[s]"), 1, backend="opencl")
