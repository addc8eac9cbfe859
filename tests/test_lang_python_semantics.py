"""Ordinary kernels a Numba, Warp or Taichi user writes, found to differ from the same Python function
run on the host, each fixed and kept here. Every kernel is compared with its own undecorated function
(``k.py_func``) run on numpy data."""
from __future__ import annotations

import importlib.util
import math
import textwrap

import numpy as np
import pytest

from conftest import assert_code_object, assert_cubin, first_device
from pygpgpu import gpu, kernel
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture


def _same_as_host(k, backend, *args):
    """Run ``k`` on ``backend`` and its Python function on the host, on copies of ``args``; the
    arrays must come out equal."""
    host = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    dev = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    k.py_func(*host)
    k[backend](*dev)
    for h, d in zip(host, dev):
        if isinstance(h, np.ndarray):
            np.testing.assert_array_equal(d, h)


# ---- `and` / `or` give an operand, not a bool -------------------------------------------------------
def first_set(a, b):                   # a helper returning `a or b`
    return a or b


@kernel
def pick(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] and 5 or 7       # the usual pre-ternary idiom: 5 where x is nonzero, else 7


@kernel
def or_chain(x, y, out, n):
    for i in range(x.shape[0]):
        out[i] = (x[i] or y[i]) + (n and x[i]) + (x[i] and y[i] and n) + first_set(x[i], y[i] * 2)


@kernel
def bool_tests(x, y, out):
    for i in range(x.shape[0]):
        v = 0.0
        if x[i] and y[i] or x[i] == 3:
            v += 100
        j = 0
        while x[i] > j and (y[i] or j < 3):
            j += 1
        out[i] = v + j + (not (x[i] and y[i])) + (x[i] if y[i] or x[i] else -1.0)


@kernel
def short_circuit(x, out):
    for i in range(x.shape[0]):
        out[i] = i < x.shape[0] - 1 and x[i + 1]      # x[i + 1] read only when i is not the last


def test_and_or_give_the_deciding_operand(backend):
    _same_as_host(pick, backend, np.array([0, 3, -1, 0], np.int32), np.zeros(4, np.int32))
    x = np.array([0, 0, 3, 4, 0.5], np.float32)
    y = np.array([0, 2, 0, 5, 0], np.float32)
    for n in (0, 7):
        _same_as_host(or_chain, backend, x, y, np.zeros(5, np.float32), n)
    _same_as_host(or_chain, backend, x.astype(np.float64), y.astype(np.int16), np.zeros(5, np.float64), 7)
    _same_as_host(short_circuit, backend, np.array([1, 0, 3], np.int32), np.zeros(3, np.int32))


def test_and_or_in_tests_keep_their_truth(backend):
    x = np.array([0, 0, 3, 4, 0.5, 3], np.float32)
    y = np.array([0, 2, 0, 5, 0, 0], np.float32)
    _same_as_host(bool_tests, backend, x, y, np.zeros(6, np.float32))
    src = bool_tests.inspect(x, y, np.zeros(6, np.float32), backend="opencl").source
    assert "&&" in src and "||" in src         # a test stays one C condition


def test_and_or_values_compile_for_cuda_and_hip(rtc_compile):
    dialect, compile_ = rtc_compile
    x = np.zeros(4, np.float32)
    for k, args in ((pick, (np.zeros(4, np.int32),) * 2), (or_chain, (x, x, x, 1)), (bool_tests, (x, x, x))):
        src = k.inspect(*args, backend=dialect).source
        image = compile_(src)
        (assert_cubin if dialect == "cuda" else assert_code_object)(image, src)


@pytest.mark.parametrize("n", [0, 1])
def test_a_bool_and_or_is_still_a_bool(backend, n):
    @kernel
    def k(x, out, flag):
        for i in range(x.shape[0]):
            out[i] = x[i] > 1 and x[i] < 3 or flag

    _same_as_host(k, backend, np.arange(5, dtype=np.int32), np.zeros(5, np.bool_), bool(n))


# ---- no compiler warnings printed for ordinary tests --------------------------------------------------
@kernel
def count_threes(x, out):
    for i in range(x.shape[0]):
        if x[i] == 3:                  # in the wide kernel a local is compared: if (w0 == 3)
            out[i] = 1
        k = 0
        while k == 0:
            k += 1


def test_equality_tests_build_without_warnings():
    """``if ((v == 3))`` made clang warn (-Wparentheses-equality) and PoCL print "4 warnings
    generated." on the first build of a kernel with an ``==`` test: conditions lose that bracket."""
    device = first_device("opencl")
    x = np.arange(17, dtype=np.int32)
    src = count_threes.inspect(x, np.zeros_like(x), backend="opencl").source
    assert "== 3)) {" not in src and "== 0)) {" not in src
    with device.context().program(src) as program:
        assert "parentheses" not in program.build_log, program.build_log
    _same_as_host(count_threes, device.selector, x, np.zeros_like(x))


# ---- range loops: the loop variable is Python's, range() is evaluated once --------------------------
@kernel
def last_item(x, out):
    for i in range(x.shape[0]):
        k = -1
        for k in range(x[i]):          # empty range: k keeps -1; else the last item, not x[i]
            pass
        j = -1
        for j in range(10, 0, -2):
            if j < x[i]:
                break                  # j keeps the item it broke at
        out[i] = k * 100 + j


@kernel
def rebinds_its_variable(x, out):
    for i in range(x.shape[0]):
        s = 0
        for k in range(x[i]):
            s += k
            k += 10                    # changes neither the next item nor the count
            s += k
        out[i] = s


@kernel
def range_once(x, out, m):
    for i in range(x.shape[0]):
        n = x[i]
        step = 1
        s = 0
        for k in range(0, n, step):    # n and step grow in the body: the range does not
            n += 1
            step += 1
            s += 1
        for k in range(m):
            m -= 1
            s += 100
        out[i] = s


@kernel
def halves(x, out):
    for i in range(x.shape[0]):
        s = 0.0
        for k in range(x[i]):
            k = k * 0.5                # a float variable: the range still counts in integers
            s += k
        out[i] = s + k


def count_to(n):
    s = 0
    for n in range(n):  # noqa: B020 - the range is taken before the loop rebinds n
        s += 1
    return s * 100 + n


@kernel
def shadowing(x, out):
    for i in range(x.shape[0]):
        n = x[i]
        s = 0
        for n in range(n):  # noqa: B020
            s += 1
        out[i] = s + count_to(x[i]) * 10


def sum_and_last(n):                   # the same in a helper
    t = 0
    for j in range(n):
        t += j
    return t * 100 + j


@kernel
def helper_last(x, out):
    for i in range(x.shape[0]):
        out[i] = sum_and_last(x[i])


@kernel
def zero_step(x, step, out):
    for i in range(x.shape[0]):
        s = 0
        for k in range(x[i], 0, step[i]):
            s += 1
        out[i] = s


def test_the_loop_variable_is_pythons(backend):
    x = np.array([0, 1, 5, 11, 2], np.int32)
    _same_as_host(last_item, backend, x, np.zeros_like(x))
    _same_as_host(rebinds_its_variable, backend, x, np.zeros_like(x))
    _same_as_host(helper_last, backend, x[1:], np.zeros_like(x[1:]))
    _same_as_host(halves, backend, x[1:], np.zeros(4, np.float32))
    assert "+= 1.0f)" not in halves.inspect(x, np.zeros(5, np.float32), backend="opencl").source   # an int counter


def test_range_is_evaluated_once(backend):
    # one work item: on the host, m -= 1 would carry over to the next item
    _same_as_host(range_once, backend, np.array([3], np.int32), np.zeros(1, np.int32), 4)
    _same_as_host(range_once, backend, np.array([0], np.int32), np.zeros(1, np.int32), 2)
    _same_as_host(shadowing, backend, np.array([3, 5], np.int32), np.zeros(2, np.int32))


def test_a_zero_step_at_run_time_ends_the_loop(backend):
    """Python raises ValueError; a kernel cannot, and must not spin forever either."""
    out = np.full(3, -1, np.int32)
    zero_step[backend](np.array([10, 0, 10], np.int32), np.array([0, 0, -3], np.int32), out)
    np.testing.assert_array_equal(out, [0, 0, 4])


def test_plain_loops_keep_their_counter():
    """A loop whose variable is neither assigned in the body nor read after it stays one C loop."""
    src = helper_last.inspect(np.zeros(2, np.int32), np.zeros(2, np.int32), backend="opencl").source
    assert "for (j = 0;" not in src           # j is read after its loop: a hidden counter
    src = zero_step.inspect(*(np.zeros(2, np.int32),) * 3, backend="opencl").source
    assert "for (k = " in src


# ---- keyword-only parameters ----------------------------------------------------------------------
def scaled(a, b=2, *, c=3):
    return a * b + c


@kernel
def keyword_helpers(x, out):
    for i in range(x.shape[0]):
        out[i] = scaled(x[i]) + scaled(x[i], c=10) * 10 + scaled(b=3, a=x[i]) * 100


@kernel
def keyword_kernel(x, out, *, scale=2):
    for i in range(x.shape[0]):
        out[i] = x[i] * scale


def test_keyword_only_parameters(backend):
    x = np.array([1, 2, -3], np.int32)
    _same_as_host(keyword_helpers, backend, x, np.zeros_like(x))
    out = np.zeros_like(x)
    keyword_kernel[backend](x, out)                 # the default
    np.testing.assert_array_equal(out, x * 2)
    keyword_kernel[backend](x, out, scale=5)        # given by keyword: it was dropped
    np.testing.assert_array_equal(out, x * 5)
    keyword_kernel[backend](x, out=out, scale=7)
    np.testing.assert_array_equal(out, x * 7)


# ---- ~ of a bool is numpy's logical not ------------------------------------------------------------
@kernel
def invert_mask(mask, out, count):
    for i in range(mask.shape[0]):
        out[i] = ~mask[i]              # ~True was -2: stored into a bool array, always True
        count[i] = ~(mask[i] & (i > 0))


def test_invert_of_a_bool_is_not(backend):
    mask = np.array([True, False, True, False])
    _same_as_host(invert_mask, backend, mask, np.zeros(4, np.bool_), np.zeros(4, np.int32))


# ---- a helper without a return value used as a value --------------------------------------------
@pytest.mark.parametrize("line", ["out[i] = bump(x[i])", "v = bump(x[i])", "out[i] = bump(x[i]) + 1"])
def test_using_a_helper_without_return_value_says_so(tmp_path, line):
    """It failed in the C compiler (operand of type 'void') or inside the translator (an
    AttributeError); now a SyntaxError at the line, naming the helper."""
    path = tmp_path / "void_helper.py"
    path.write_text(textwrap.dedent(f"""
        from pygpgpu import kernel

        def bump(a):
            a = a + 1

        @kernel
        def k(x, out):
            for i in range(x.shape[0]):
                {line}
                bump(x[i])             # as a statement it is fine
    """))
    spec = importlib.util.spec_from_file_location("void_helper", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(SyntaxError, match=r"bump\(\) returns nothing \(None\)") as info:
        mod.k.inspect(np.zeros(4, np.float32), np.zeros(4, np.float32), backend="opencl")
    assert info.value.filename == str(path) and info.value.lineno == 10


# ---- Python numbers chosen by a condition keep the precision of the data they meet ----------------
@kernel
def weak_choices(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * (0.1 if x[i] > 0 else 0.2) + x[i] * np.where(x[i] > 1, 0.3, 0.7)


def test_conditional_python_floats_stay_double_in_float64_kernels(backend):
    """``x_f64 * (0.1 if c else 0.2)`` multiplied by 0.1f: a float32 constant, 1e-9 off."""
    x = np.array([1.0, -1.0, 3.0])
    out = np.zeros_like(x)
    weak_choices[backend](x, out)
    host = np.zeros_like(x)
    weak_choices.py_func(x, host)
    np.testing.assert_array_equal(out, host)
    out32 = np.zeros(3, np.float32)
    weak_choices[backend](x.astype(np.float32), out32)        # and float32 data stays float32
    np.testing.assert_allclose(out32, host, rtol=1e-6)


# ---- tuples of numbers indexed by a variable, looped over, measured ---------------------------------
TAPS = (0.25, 0.5, 0.25)
OFFSETS = (-1, 0, 1)


@kernel
def blur3(x, out):
    for i in range(1, x.shape[0] - 1):
        acc = 0.0
        for k in range(len(TAPS)):
            acc += TAPS[k] * x[i + OFFSETS[k]]
        out[i] = acc


@kernel
def tuple_items(x, out):
    for i in range(x.shape[0]):
        t = (10, 20, x[i])
        s = 0
        for w in TAPS:                       # a loop over a tuple
            s += w
        for d in (1, 2, 3):
            s += d * 100
        out[i] = t[x[i]] + TAPS[-x[i] - 1] * 4 + s + d   # negative indices count from the end


def test_tuples_indexed_by_variables(backend):
    x = np.random.default_rng(0).random(16)
    _same_as_host(blur3, backend, x, np.zeros_like(x))
    _same_as_host(tuple_items, backend, np.array([0, 2, 1, -1, -3], np.int32), np.zeros(5, np.float32))


def test_tuple_index_errors(tmp_path):
    path = tmp_path / "tuple_index.py"
    path.write_text(textwrap.dedent("""
        from pygpgpu import kernel
        T = (1, 2, 3)
        PAIRS = ((1, 2), (3, 4))

        @kernel
        def past_the_end(x, out):
            for i in range(x.shape[0]):
                out[i] = T[3]

        @kernel
        def nested(x, out):
            for i in range(x.shape[0]):
                for p in PAIRS:
                    out[i] += p[0]
    """))
    spec = importlib.util.spec_from_file_location("tuple_index", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = np.zeros(4, np.int32)
    with pytest.raises(SyntaxError, match="tuple index 3 is out of range: the tuple has 3 items"):
        mod.past_the_end.inspect(x, x, backend="opencl")
    with pytest.raises(SyntaxError, match="only tuples of numbers or vectors can be indexed with a variable"):
        mod.nested.inspect(x, x, backend="opencl")


def test_tuple_loops_compile_for_cuda_and_hip(rtc_compile):
    dialect, compile_ = rtc_compile
    for k, args in ((blur3, (np.zeros(4),) * 2), (tuple_items, (np.zeros(4, np.int32), np.zeros(4, np.float32))),
                    (weak_choices, (np.zeros(4),) * 2), (last_item, (np.zeros(4, np.int32),) * 2),
                    (zero_step, (np.zeros(4, np.int32),) * 3), (invert_mask, (np.zeros(4, np.bool_),) * 2
                                                                + (np.zeros(4, np.int32),))):
        src = k.inspect(*args, backend=dialect).source
        image = compile_(src)
        (assert_cubin if dialect == "cuda" else assert_code_object)(image, src)


# ---- math of Python numbers is Python's; more numpy and math functions ------------------------------
@kernel
def constant_math(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * math.sqrt(2.0) + math.log(x[i], 2.0) + math.cos(ANGLE) * x[i]
        out[i] += x[i] * 2 ** 0.5 + x[i] * abs(-0.1) + x[i] * max(0.1, 0.2) + x[i] * round(0.123456789, 3)
        out[i] += x[i] * np.sqrt(0.5) + math.floor(2.7) * x[i] + x[i] * math.radians(1.0)


ANGLE = 0.3


@kernel
def numpy_functions(x, y, out):
    for i in range(x.shape[0]):
        out[i, 0] = np.log(x[i]) + math.log(x[i]) + math.log(x[i], 10)
        out[i, 1] = np.add(x[i], y[i]) * np.subtract(x[i], 1) + np.multiply(y[i], 2)
        out[i, 2] = np.true_divide(x[i], y[i]) + np.divide(x[i], 3) + np.floor_divide(x[i], y[i]) + np.mod(-x[i], y[i])
        out[i, 3] = np.square(x[i]) + math.degrees(x[i]) + math.radians(x[i]) + np.deg2rad(x[i]) + np.rad2deg(y[i])


@kernel
def numpy_int_functions(x, y, out):
    for i in range(x.shape[0]):
        out[i] = np.square(x[i]) + np.left_shift(x[i], 2) + np.bitwise_xor(x[i], y[i]) + np.remainder(x[i], y[i])


def test_math_of_python_numbers_is_folded_in_double_precision(backend):
    """``x_f64 * math.sqrt(2.0)`` multiplied by sqrt(2.0f), 3e-8 off; math.log(x, 2.0) by log(2.0f);
    2 ** 0.5, abs(-0.1), max(0.1, 0.2), round(0.123456789, 3) were float32 too."""
    x = np.array([0.5, 3.0, 10.0])
    out, host = np.zeros_like(x), np.zeros_like(x)
    constant_math[backend](x, out)
    constant_math.py_func(x, host)
    np.testing.assert_allclose(out, host, rtol=1e-15)
    src = constant_math.inspect(x, out, backend="opencl").source
    assert "1.4142135623730951" in src and "0.1f" not in src and "2.0f" not in src


def test_numpy_operator_functions(backend):
    x, y = np.array([0.5, 2.0, 10.0, 3.0]), np.array([3.0, -1.5, 2.0, 0.7])
    out, host = np.zeros((4, 4)), np.zeros((4, 4))
    numpy_functions[backend](x, y, out)
    numpy_functions.py_func(x, y, host)
    np.testing.assert_allclose(out, host, rtol=1e-14)
    _same_as_host(numpy_int_functions, backend, np.array([100, -7, 12, -128], np.int8),
                  np.array([3, 2, -5, 7], np.int8), np.zeros(4, np.int8))


def test_an_unsupported_numpy_function_lists_the_supported_ones():
    @kernel
    def k(x, out):
        for i in range(x.shape[0]):
            out[i] = np.heaviside(x[i], 0.5)

    with pytest.raises(SyntaxError, match=r"np.heaviside\(\) is not one of the numpy functions kernels translate") as info:
        k.inspect(np.zeros(4, np.float32), np.zeros(4, np.float32), backend="opencl")
    assert "arctan2" in str(info.value) and "float32" not in str(info.value)


# ---- .shape of a number or a vector row says what it is --------------------------------------------
@kernel
def sizes_of(x, out):
    for i in range(out.shape[0]):
        out[i] = x.shape[0]


def row_length(r):
    return r.shape[0]


@kernel
def row_sizes(m, out):
    for i in range(m.shape[0]):
        out[i] = row_length(m[i])


def test_shape_of_a_number_or_a_vector_row_is_explained():
    """It said "attribute 'shape' is not supported here" and "vectors have no component 'shape'"."""
    out = np.zeros(4, np.int32)
    with pytest.raises(SyntaxError, match=r"x is a Python int here, which has no \.shape") as info:
        sizes_of.inspect(5, out, backend="opencl")
    assert "pass an array for 'x'" in str(info.value)
    with pytest.raises(SyntaxError, match=r"r is a float4 vector here, which has no \.shape") as info:
        row_sizes.inspect(np.zeros((4, 4), np.float32), out, backend="opencl")
    assert "len(r)" in str(info.value)


# ---- negative integer powers ---------------------------------------------------------------------------
@kernel
def reciprocal_powers(out, n):
    for i in range(out.shape[0]):
        out[i] = (i + 1) ** -1 + 2 ** -2 + n ** -2     # Python ints: floats, 1/(i+1) + 0.25 + 1/n**2


def test_python_int_to_a_negative_power_is_a_float(backend):
    """It was C's integer power: 0 (and 2 ** -2 folded to 0)."""
    out, host = np.zeros(4), np.zeros(4)
    reciprocal_powers[backend](out, 4)
    reciprocal_powers.py_func(host, 4)
    np.testing.assert_allclose(out, host, rtol=1e-6)


def test_numpy_int_to_a_negative_constant_power_is_refused():
    @kernel
    def k(x, out):
        for i in range(x.shape[0]):
            out[i] = x[i] ** -2

    with pytest.raises(SyntaxError, match=r"int32 \*\* -2: numpy's integers to negative integer powers") as info:
        k.inspect(np.zeros(4, np.int32), np.zeros(4), backend="opencl")
    assert r"x[i] ** -2.0" in str(info.value)


# ---- x[f()] += v evaluates f() once ---------------------------------------------------------------------
@kernel
def take_tickets(out, order, ctr):
    for i in range(4):
        out[gpu.atomic_add(ctr, 0, 1)] += 1                     # one ticket per work item
        out[order[gpu.atomic_add(ctr, 1, 1)] + 4] += 10          # nested in another index


def test_an_augmented_assignment_evaluates_its_index_once(backend):
    """The index was evaluated for the read and again for the write: two atomics per item."""
    out, ctr = np.zeros(8, np.int32), np.zeros(2, np.int32)
    take_tickets[backend](out, np.array([3, 2, 1, 0] * 2, np.int32), ctr)   # in bounds even if read twice
    np.testing.assert_array_equal(ctr, [4, 4])
    np.testing.assert_array_equal(out, [1, 1, 1, 1, 10, 10, 10, 10])


# ---- loops over reversed() and zip() say what to write instead -------------------------------------------
@pytest.mark.parametrize("loop, message, hint", [
    ("for k in reversed(range(3)):", "reversed() loops are not supported", "range(n - 1, -1, -1)"),
    ("for a, b in zip(x, out):", "zip() loops are not supported", "for j in range(len(x))"),
])
def test_reversed_and_zip_loops_say_what_to_write(tmp_path, loop, message, hint):
    path = tmp_path / "loops.py"
    path.write_text(textwrap.dedent(f"""
        from pygpgpu import kernel

        @kernel
        def k(x, out):
            for i in range(x.shape[0]):
                {loop}
                    out[i] += 1
    """))
    spec = importlib.util.spec_from_file_location("loops", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(SyntaxError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        mod.k.inspect(np.zeros(4, np.int32), np.zeros(4, np.int32), backend="opencl")
    assert hint in str(info.value) and info.value.lineno == 7
