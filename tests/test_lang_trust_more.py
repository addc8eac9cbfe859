"""More ordinary kernels found to differ from the same Python function run on the host, each fixed
and kept here (the style of test_lang_python_semantics.py: each kernel is compared with its own
undecorated function, ``k.py_func``, on numpy data)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import assert_code_object, assert_cubin
from pygpgpu import gpu, kernel
from test_lang_python_semantics import _same_as_host
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture

N = 4


# ---- a constant index outside a private or local array: numpy's IndexError, when translating ---------
@kernel
def store_past_the_end(out):
    for i in range(out.shape[0]):
        a = np.zeros(4, np.float32)
        a[5] = 1
        out[i] = a[0]


@kernel
def load_before_the_start(out):
    for i in range(out.shape[0]):
        a = np.zeros((3, N), np.float32)
        out[i] = a[1, -5]


@kernel
def local_past_the_end(out):
    gpu.work_size(out)
    t = gpu.local_array(8, np.float32)
    t[8] = 1.0


@kernel
def only_where_it_runs(out):
    for i in range(out.shape[0]):
        a = np.zeros(N, np.float32)
        a[-1] = 2                      # counts from the end
        if N > 4:
            a[4] = 1                   # never runs: N is 4
        out[i] = a[N - 1] + (a[N] if N > 4 else a[-N])


@pytest.mark.parametrize("k, where", [(store_past_the_end, "index 5 is out of bounds for axis 0 with size 4"),
                                      (load_before_the_start, "index -5 is out of bounds for axis 1 with size 4"),
                                      (local_past_the_end, "index 8 is out of bounds for axis 0 with size 8")])
def test_a_constant_index_out_of_a_private_array_raises(k, where):
    out = np.zeros(3, np.float32)
    if k is not local_past_the_end:
        with pytest.raises(IndexError, match=where):
            k.py_func(out)
    with pytest.raises(SyntaxError, match=where + r" \(numpy raises IndexError\)"):
        k.inspect(out, backend="opencl")


def test_a_constant_index_in_a_branch_that_never_runs_is_no_error(backend):
    _same_as_host(only_where_it_runs, backend, np.zeros(3, np.float32))


# ---- uint64 and signed ints: a Python int meeting uint64 is uint64; two numpy ints are float64 ---------
U64 = np.array([2**63 + 5, 2**62, 7, 2**53 + 1], np.uint64)
I64 = np.array([1, -2, 3, 2**53], np.int64)


@kernel
def count_u64(x, out):
    for i in range(out.shape[0]):
        acc = 0                        # a Python int on the host: 0 + uint64 is uint64, not float64
        h = 0
        for j in range(x.shape[0]):
            acc += x[j]
            h = h * 31 + x[j]          # a hash: wraps in uint64 as on the host
        out[i] = acc + h + i


@kernel
def mixed_u64(x, y, out, cmp):
    for i in range(out.shape[0]):
        out[i] = x[i] + y[i] + x[i] // y[i]          # float64, as numpy computes int64 op uint64
        cmp[i] = (x[i] < y[i]) + 2 * (y[i] <= x[i]) + 4 * (x[i] == y[i]) + 8 * (y[i] != x[i]) + 16 * (y[i] > x[i])


def test_a_counter_of_uint64_data_is_uint64(backend):
    with np.errstate(over="ignore"):
        _same_as_host(count_u64, backend, U64, np.zeros(2, np.uint64))


@pytest.mark.parametrize("signed", [np.int64, np.int32, np.int8])
def test_a_signed_int_and_uint64_are_float64_and_compare_exactly(backend, signed):
    y = I64.astype(signed) if signed is np.int64 else np.array([1, -2, 3, 5], signed)
    _same_as_host(mixed_u64, backend, U64, y, np.zeros(4, np.float64), np.zeros(4, np.int32))


def test_a_bitwise_operator_of_a_signed_int_and_uint64_is_refused():
    @kernel
    def mask(x, y, out):
        for i in range(out.shape[0]):
            out[i] = x[i] & y[i]

    with pytest.raises(TypeError):
        mask.py_func(U64, I64, np.zeros(4, np.uint64))
    with pytest.raises(TypeError, match=r"numpy has no & of uint64 and int64 .* np.uint64\(a\) & b"):
        mask.inspect(U64, I64, np.zeros(4, np.uint64), backend="opencl")


# ---- a range loop's variable is proven >= 0 only when every item is --------------------------------
@kernel
def ranges_below_zero(x, out):
    for i in range(out.shape[0]):
        s = 0.0
        for k in range(-2, 3):         # x[-2] and x[-1] count from the end
            s += x[k]
        for a in range(4, -3, -1):
            s += x[a] * 10
        for b in range(x.shape[0] - 1, -1, -1):
            s += x[b] * 100
        for c in range(-1, -6, -2):
            s += x[c] * 1000
        out[i] = s + k + a + b + c


def test_a_range_loop_from_below_zero_indexes_from_the_end(backend):
    _same_as_host(ranges_below_zero, backend, np.arange(5.0), np.zeros(2))


# ---- integer powers with a negative exponent known only at run time ----------------------------------
@kernel
def int_powers(x, y, out):
    for i in range(out.shape[0]):
        out[i] = x[i] ** y[i]


@kernel
def three_to_the(y, out):
    for i in range(out.shape[0]):
        out[i] = 3 ** y[i]             # the Python int 3 meets numpy data: numpy's integer power


def _documented_power(a, b, dtype):
    """README "Writing kernels": numpy's wrapping power, and where numpy raises (b < 0) the integer
    part of the true value, as CuPy gives."""
    if b >= 0:
        return np.array(int(a) ** int(b) % 2**64, np.uint64).astype(dtype)
    return dtype(1 if a == 1 else (-1) ** int(b) if a == -1 else 0)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_a_negative_integer_power_at_run_time_is_as_documented(backend, dtype):
    bases = np.array([2, -2, 1, -1, 0, 0, 3, -3, 1, -1, 5, np.iinfo(dtype).min, 7], dtype)
    exps = np.array([-1, -3, -5, -5, -1, 0, 4, 3, -128, -128, 0, 2, 9], dtype)
    with pytest.raises(ValueError, match="negative integer powers"):
        int_powers.py_func(bases, exps, np.zeros_like(bases))
    out = np.zeros_like(bases)
    int_powers[backend](bases, exps, out)
    np.testing.assert_array_equal(out, [_documented_power(a, b, dtype) for a, b in zip(bases, exps)])
    out = np.zeros_like(bases)
    three_to_the[backend](exps, out)
    np.testing.assert_array_equal(out, [_documented_power(3, b, dtype) for b in exps])
    positive = np.abs(exps).astype(dtype)
    _same_as_host(three_to_the, backend, positive[positive >= 0], np.zeros(int((positive >= 0).sum()), dtype))


@kernel
def python_int_powers(out, n):
    for i in range(out.shape[0]):
        s = 0.0
        for k in range(4):
            s += 2 ** k + i ** k       # powers proven >= 0: Python ints
        for k in range(-2, 3):
            s += 2.0 ** k + np.int64(2) ** abs(k)
        out[i] = s + n ** 2


def test_python_int_powers_proven_non_negative(backend):
    _same_as_host(python_int_powers, backend, np.zeros(3), 3)


def test_a_python_int_power_of_unknown_sign_is_the_integer_power(backend):
    """2 ** n with n a Python int argument: an int as on the host for n >= 0 (the usual case, so it
    is not refused), and for n < 0 the documented integer part (0 here), as Numba gives, where the
    host gives a float."""
    @kernel
    def scale(out, n):
        for i in range(out.shape[0]):
            out[i] = 2 ** n + 3 ** (i % 4)

    _same_as_host(scale, backend, np.zeros(8, np.int64), 5)
    out = np.zeros(8, np.int64)
    scale[backend](out, -1)
    np.testing.assert_array_equal(out, [3 ** (i % 4) for i in range(8)])


# ---- bool arithmetic: numpy's bools add as logical or, Python's as ints ------------------------------
@kernel
def bool_sums(m, x, out, n):
    for i in range(out.shape[0]):
        j = (i + 1) % m.shape[0]
        c = i > 0                                  # Python bools: True + True is 2
        d = i > 1
        python = c + d + (i > 0) + (i > 1) + (not m[i]) + (not m[j]) + True + (i > 0 and j > 0) + (n > 2)
        python += bool(m[i]) + bool(m[j]) + bool(x[i] > 1) * 10
        python += math.isfinite(x[i] * 0.5) + math.isfinite(x[i] * 0.5) + np.isfinite(x[i] * 0.5) * 100
        numpy = (m[i] + m[j]) + (x[i] > 0) + (x[i] > 1) + True + (x[i] > n)    # np.bool_: or, and stays a bool
        both = m[i] * m[j] + (m[i] * (x[i] > 1)) * 2 + (m[i] // m[i]) * 4 + (m[i] ** m[j]) * 8 + ((m[i] ** m[j]) * 100 + 100) * 16  # int8: wraps
        count = 0
        for k in range(m.shape[0]):
            count += m[k]                          # an int counting
        out[i] = python + 10 * numpy + 100 * both + 1000000 * count + 10000000 * -(i > 1)


def test_numpy_bools_add_as_or_and_python_bools_as_ints(backend):
    m = np.array([True, False, True, True])
    with np.errstate(divide="ignore", over="ignore"):     # m[i] // m[j] of False, 200 in int8
        _same_as_host(bool_sums, backend, m, np.array([0, 1, 2, 3], np.int32), np.zeros(4, np.int64), 3)


@kernel
def bool_choices(m, out):
    for i in range(out.shape[0]):
        python = ((i > 0) if i % 2 == 0 else (i > 1)) + (i > 2)     # a choice of Python bools: ints add
        numpy = (m[i] if i % 2 == 0 else (i > 1)) + m[0]            # a numpy bool among them: numpy's or
        out[i] = python + 10 * numpy


def test_a_choice_between_python_bools_is_a_python_bool(backend):
    """``b if c else d`` has its operands' common type (_choices.common_type): of two Python bools a
    Python bool, which adds as an int; with a numpy bool among them a numpy bool, which adds as or."""
    _same_as_host(bool_choices, backend, np.array([True, False, True, True, False, True]), np.zeros(6, np.int64))


def test_numpy_bool_minus_is_refused():
    @kernel
    def sub(m, out):
        for i in range(out.shape[0]):
            out[i] = m[i] - m[0]

    @kernel
    def neg(m, out):
        for i in range(out.shape[0]):
            out[i] = -m[i]

    m = np.array([True, False])
    for k, message in ((sub, "numpy has no - of two bools"), (neg, "numpy has no - of a bool")):
        with pytest.raises(TypeError):
            k.py_func(m, np.zeros(2, np.int32))
        with pytest.raises(TypeError, match=message):
            k.inspect(m, np.zeros(2, np.int32), backend="opencl")


def test_these_kernels_compile_for_cuda_and_hip(rtc_compile):
    dialect, compile_ = rtc_compile
    m, x4 = np.array([True, False, True, True]), np.array([0, 1, 2, 3], np.int32)
    for k, args in ((bool_sums, (m, x4, np.zeros(4, np.int64), 3)), (count_u64, (U64, np.zeros(2, np.uint64))),
                    (mixed_u64, (U64, I64, np.zeros(4), np.zeros(4, np.int32))),
                    (int_powers, (x4, x4, x4)), (ranges_below_zero, (np.arange(5.0), np.zeros(2))),
                    (tuple_items, (np.zeros(2), np.zeros(2), x4.astype(np.int8), x4.astype(np.int8)))):
        src = k.inspect(*args, backend=dialect).source
        (assert_cubin if dialect == "cuda" else assert_code_object)(compile_(src), src)


# ---- for w in (0.1, 0.3): w is each Python number, meeting data as the number would --------------------
@kernel
def tuple_items(x, out, ints, iout):
    for i in range(out.shape[0]):
        p = x[i]
        for w in (0.1, 0.3, 0.7):
            p = p * w                  # float64 data times the double 0.1, not 0.1f
        out[i] = p
        q = ints[i]
        for v in (2, 3):
            q = q * v                  # int8 times a Python int stays int8 and wraps
        iout[i] = q


def test_a_loop_over_a_tuple_of_numbers_binds_python_numbers(backend):
    x = np.random.default_rng(5).standard_normal(6)
    with np.errstate(over="ignore"):
        _same_as_host(tuple_items, backend, x, np.zeros(6), np.array([1, 5, 11, 40, -30, 127], np.int8),
                      np.zeros(6, np.int8))


@kernel
def bool_arguments(out, flag, other):
    for i in range(out.shape[0]):
        out[i] = flag + flag + (other and flag) * 3 + (not flag)


@pytest.mark.parametrize("flag, other", [(True, True), (False, True), (True, False), (np.True_, np.True_),
                                         (np.False_, np.True_)])
def test_bool_arguments_add_as_their_own_kind(backend, flag, other):
    """A Python bool argument adds as an int (True + True is 2), a numpy bool as numpy's (True)."""
    _same_as_host(bool_arguments, backend, np.zeros(4, np.int64), flag, other)
