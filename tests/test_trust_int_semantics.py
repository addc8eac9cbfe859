"""Integer semantics the differential fuzz (test_translate_fuzz.py) found wrong, one regression test
each: kernels run on the device and compare with the same function run on the host over numpy
scalars (numpy 2, NEP 50 rules)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from pygpgpu_core.vec_types import int4
from pygpgpu_translate import kernel
from conftest import assert_code_object, assert_cubin


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


# ---- no undefined behaviour in C: GPU compilers exploit it (PoCL happens not to) ----------------------------
@kernel
def int_ops(a, b, n, out):
    for i in range(out.shape[0]):
        out[i, 0] = ((a[i] * -(b[i])) << 9)
        out[i, 1] = a[i] * b[i] + a[i] - b[i]
        out[i, 2] = -a[i]
        out[i, 3] = a[i] << n[i]
        out[i, 4] = a[i] >> n[i]
        out[i, 5] = a[i] ** 3
        out[i, 6] = a[i] ** (n[i] & 7)
        out[i, 7] = (a[i] << 3) >> 1
        out[i, 8] = ~a[i] * 7
        out[i, 9] = abs(a[i]) + a[i] // (b[i] - b[i] - 1) * 2    # numpy: abs(MIN) and MIN // -1 are MIN


def _int_ops_args(family):
    info = np.iinfo(family)
    a = np.array([info.min, info.max, -1 if info.min else 2, 0, 1, 7, info.min + 1, info.max // 2 + 1] * 2, family)
    b = np.array([info.max, info.min, 3, -1 if info.min else 5, info.max, 2, 1, 3] * 2, family)
    bits = info.bits
    n = np.array([0, 1, bits - 1, bits, bits + 3, 40 % 128, -1 if info.min else 200, 3,
                  2, 5, -3 if info.min else 255, bits // 2, 1, 0, bits - 2, 7], family)
    return a, b, n


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64"])
def test_int_ops_follow_numpy(backend, family):
    """Wrapping + - * and unary -, shifts by counts past the width or negative (numpy: 0, or -1 for a
    negative value shifted right), ** with constant and run-time exponents."""
    a, b, n = _int_ops_args(family)
    out = np.full((len(a), 10), -77, np.int64 if family != "uint64" else np.uint64)
    int_ops[backend](a, b, n, out)
    np.testing.assert_array_equal(out, _host(int_ops, a, b, n, out=out), err_msg=family)


def _captured_ir(monkeypatch, k, *args):
    """The IR of ``k``'s kernel function for ``args``, translated afresh: neither the generated-source
    cache on disk nor the kernel's own translations in memory (an earlier test may have run ``k`` on
    CUDA in this process, and inspect then translates nothing). The IR is what ``build`` returns."""
    from pygpgpu_translate import _translate
    seen = []
    real_build, real_translate = _translate.build, _translate.translate

    def build(*a, **kw):
        built = real_build(*a, **kw)
        seen.append((built.kernel, built.helpers))
        return built

    monkeypatch.setattr(_translate, "build", build)     # translate() calls it on each miss
    monkeypatch.setattr(_translate, "translate", lambda *a, **kw: real_translate(*a, **{**kw, "use_disk": False}))
    monkeypatch.setattr(k, "_translations", {})
    monkeypatch.setattr(k, "_plans", {})
    k.inspect(*args, backend="cuda")
    assert seen, f"inspect translated nothing for {k.__name__}"
    return seen[-1]


def _ub_suspects(e, found, in_index=False):
    """Operations C leaves undefined for some operands: + - * << and unary - on signed ints of
    32/64 bits, * and << on narrow ints (computed in int), shifts by a count not known in range."""
    from pygpgpu_translate import _ir as ir
    from pygpgpu_translate._types import Scalar
    if isinstance(e, ir.Load):
        return             # index arithmetic: int32 by the launch's choice of index width
    t = getattr(e, "type", None)
    if isinstance(t, Scalar) and t.is_int and isinstance(e, (ir.Bin, ir.Un)):
        narrow, signed = t.bits < 32, t.kind == "i"
        if isinstance(e, ir.Un) and e.op == "-" and signed:
            # int32/int64: -INT_MIN overflows. int8/int16: C computes -a in int, which is defined, but
            # NVRTC 13.0 then lost the sign extension (-int16(-32768) widened to 32768): the prelude's
            # pyneg negates in the top bits of a uint instead
            found.append(("-", t.name))
        if isinstance(e, ir.Bin):
            if e.op in ("+", "-", "*", "<<") and signed and not narrow:
                found.append((e.op, t.name))
            if e.op in ("*", "<<") and narrow:
                found.append((e.op, t.name))
            if e.op in ("<<", ">>") and not _count_in_range(e.b, t.bits):
                found.append((e.op + " count", t.name))
    for attr in ("a", "b", "cond"):
        sub = getattr(e, attr, None)
        if isinstance(sub, ir.Expr):
            _ub_suspects(sub, found)
    for sub in getattr(e, "args", ()) or ():
        if isinstance(sub, ir.Expr):
            _ub_suspects(sub, found)


def _count_in_range(c, bits):
    """A constant count below ``bits``, or one masked to it (``n & 31``)."""
    from pygpgpu_translate import _ir as ir
    if isinstance(c, ir.Cast):
        c = c.a
    if isinstance(c, ir.Const):
        return 0 <= c.value < bits
    return isinstance(c, ir.Bin) and c.op == "&" and isinstance(c.b, ir.Const) and 0 <= c.b.value < bits


def test_vector_shifts_have_no_undefined_behaviour(monkeypatch):
    from pygpgpu_translate import _ir as ir
    v, n = np.zeros((4, 4), np.int32), np.zeros(4, np.int32)
    fn, _helpers = _captured_ir(monkeypatch, vector_shifts, v, n, np.zeros_like(v))
    found: list = []
    for s in _walk_stmts(fn.body):
        if isinstance(s, (ir.Store, ir.Assign)):
            _ub_suspects(s.value, found)
    assert not found, found


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "uint16", "int32", "int64"])
def test_int_ops_have_no_undefined_behaviour(monkeypatch, family):
    """NVIDIA's compilers gave ((a * -b) << 9) == 32768 for int16 (numpy: -32768) where the C code
    shifted a negative int left; PoCL computed what numpy does. So the check is on the IR: signed
    arithmetic runs in the unsigned type, narrow * and << in uint32, shift counts are in range."""
    from pygpgpu_translate import _ir as ir
    a, b, n = _int_ops_args(family)
    args = (a, b, n, np.zeros((len(a), 10), np.int64))
    int_ops.inspect(*args, backend="cuda")     # as on a CUDA machine, where test_int_ops_follow_numpy ran it first
    fn, _helpers = _captured_ir(monkeypatch, int_ops, *args)
    found: list = []
    stores = [s for s in _walk_stmts(fn.body) if isinstance(s, (ir.Store, ir.Assign))]
    assert len(stores) >= 10
    for s in stores:
        _ub_suspects(s.value, found)
    assert not found, found


@pytest.mark.parametrize("dialect", ["opencl", "cuda", "hip"])
@pytest.mark.parametrize("s", ["char", "short", "int", "long"])
def test_prelude_negations_wrap_in_unsigned_arithmetic(dialect, s):
    """abs, unary minus and x // -1 on signed ints negate through _pysem.negation: in the unsigned
    type (-INT_MIN overflows in C), and int8/int16 in the top bits of a uint shifted back down: the
    plain (short)-a, which C computes in int, widened to 32768 with NVRTC 13.0 on the H200."""
    from pygpgpu_translate.prelude import _funcs, _pysem
    neg = _pysem.negation(dialect, s)
    assert "0 - " in neg and ("<< " in neg) == (s in ("char", "short")), neg
    for piece in (_funcs._scalar_expr(dialect, "abs", s), _pysem.pysem_source(dialect, "pyneg", s),
                  _pysem.pysem_source(dialect, "pyfloordiv", s)):
        assert neg in piece, piece
        assert "-a" not in piece.replace(neg, "NEG"), piece     # no other negation of the operand


@kernel
def signed_unary(a, b, out):
    for i in range(out.shape[0]):
        out[i, 0] = -a[i]
        out[i, 1] = abs(a[i])
        out[i, 2] = np.abs(a[i] | b[i])
        out[i, 3] = abs((a[i] * b[i]) | b[i])      # b[i] holds MIN: abs of a value known negative
        out[i, 4] = -(a[i] * b[i])
        out[i, 5] = -min(a[i], b[i]) + -max(a[i], b[i])
        out[i, 6] = np.sign(a[i]) * a[i]
        out[i, 7] = a[i] // (b[i] - b[i] - 1)        # MIN // -1 is MIN


@pytest.mark.parametrize("family", ["int8", "int16", "int32", "int64"])
def test_negation_and_abs_of_the_minimum_wrap_like_numpy(backend, family):
    """numpy: -MIN, abs(MIN) and MIN // -1 are MIN in every signed type. The fuzz found
    abs((c * b) | -32768) == 32768 on NVIDIA (CUDA and OpenCL): the result must stay int16 when widened."""
    info = np.iinfo(family)
    a = np.array([info.min, info.min + 1, -1, 0, 1, info.max, -5, 7] * 2, family)
    b = np.full(len(a), info.min, family)
    out = np.full((len(a), 8), -77, np.int64)
    signed_unary[backend](a, b, out)
    np.testing.assert_array_equal(out, _host(signed_unary, a, b, out=out), err_msg=family)


@pytest.mark.parametrize("dialect", ["cuda", "hip"])
def test_signed_unary_compiles_for_cuda_and_hip(dialect, request):
    compile_ = request.getfixturevalue("nvrtc_compile" if dialect == "cuda" else "hiprtc_compile")
    for family in ("int8", "int16", "int32", "int64"):
        a = np.zeros(4, family)
        src = signed_unary.inspect(a, a, np.zeros((4, 8), np.int64), backend=dialect).source
        if dialect == "cuda":
            assert_cubin(compile_(src), src)
        else:
            assert_code_object(compile_(src, "gfx1030"), src)


def _walk_stmts(body):
    for s in body:
        yield s
        for attr in ("body", "orelse"):
            yield from _walk_stmts(getattr(s, attr, None) or ())


@pytest.mark.parametrize("dialect", ["cuda", "hip"])
def test_int_ops_compile_for_cuda_and_hip(dialect, request):
    """The lowering above (unsigned arithmetic, pyshl/pyshr, narrow pow) compiles on both dialects;
    on a CUDA machine test_int_ops_follow_numpy runs it too."""
    compile_ = request.getfixturevalue("nvrtc_compile" if dialect == "cuda" else "hiprtc_compile")
    for family in ("int8", "uint16", "int32", "int64"):
        a, b, n = _int_ops_args(family)
        src = int_ops.inspect(a, b, n, np.zeros((len(a), 10), np.int64), backend=dialect).source
        assert "pg_pyshl_" in src and "pg_pyshr_" in src
        if dialect == "cuda":
            assert_cubin(compile_(src), src)
        else:
            assert_code_object(compile_(src, "gfx1030"), src)


@kernel
def vector_shifts(v, n, out):
    for i in range(v.shape[0]):
        w = int4(v[i, 0], v[i, 1], v[i, 2], v[i, 3])
        r = (w << n[i]) + (w >> 33) - (w << 40)
        out[i, 0] = r.x
        out[i, 1] = r.y
        out[i, 2] = r.z
        out[i, 3] = r.w


def test_vector_shift_counts_wrap_like_the_host_vector_classes(backend):
    """Vectors keep OpenCL's rule, as the host classes do: the count modulo the bit width (int4(1) << 33
    is int4(2)); C leaves such counts undefined."""
    v = np.array([[1, -1, 2**30, -2**31], [7, 0, -5, 2**31 - 1]] * 4, np.int32)
    n = np.array([0, 31, 32, 33, -1, 64, 100, -31], np.int32)
    out = np.zeros_like(v)
    vector_shifts[backend](v, n, out)
    np.testing.assert_array_equal(out, _host(vector_shifts, v, n, out=out))


@kernel
def scaled(a, s, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + s + s * (a[i] << 2) * s


@pytest.mark.parametrize("family", ["int16", "int32"])
@pytest.mark.parametrize("s", [np.int16(-5), np.int8(-3), -7, np.uint8(200)])
def test_scalar_arguments_in_wrapping_arithmetic_are_not_range_checked_as_unsigned(backend, family, s):
    """Signed and narrow + - * run in the unsigned type, in chains: ``(int)((uint)a + (uint)s + (uint)t)``.
    The launch's range check of scalar arguments must not read those reinterpretations as conversions
    to uint32 (a Python int -7 raised OverflowError)."""
    a = np.array([1, -2, 300, -32768, 32767], family)
    out = np.zeros(5, np.int64)
    scaled[backend](a, s, out)
    np.testing.assert_array_equal(out, _host(scaled, a, s, out=out))


# ---- a Python int literal that does not fit the type it meets: OverflowError, as numpy raises --------------
@kernel
def literal_store(a, out):
    for i in range(out.shape[0]):
        out[i] = 300


@kernel
def literal_in_ternary(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] if a[i] > 0 else -129


@kernel
def literal_in_cast(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + np.uint8(-1)


@kernel
def literal_in_min(a, out):
    for i in range(out.shape[0]):
        out[i] = min(a[i], 1000)


@kernel
def literal_int32(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] ^ 0x9E3779B9


@pytest.mark.parametrize("k, a, out, host_raises", [
    (literal_store, np.zeros(4, np.int8), np.zeros(4, np.int8), True),
    (literal_in_cast, np.zeros(4, np.uint8), np.zeros(4, np.int64), True),
    (literal_int32, np.zeros(4, np.int32), np.zeros(4, np.int64), True),
    # on the host the result's type depends on the value (np.int8 or a Python int); a kernel needs one
    # type, and int8 cannot hold the literal: refused rather than computed in a type the host would not use
    (literal_in_ternary, np.zeros(4, np.int8), np.zeros(4, np.int64), False),
    (literal_in_min, np.zeros(4, np.int8), np.zeros(4, np.int64), False),
], ids=lambda v: getattr(v, "__name__", ""))
def test_out_of_range_literals_raise_overflow_error_like_numpy(backend, k, a, out, host_raises):
    if host_raises:
        with pytest.raises(OverflowError):           # numpy 2 on the host
            _host(k, a, out=out)
    before = out.copy()
    with pytest.raises(OverflowError, match=r"test_trust_int_semantics\.py:\d+: the Python int -?\d+ does not fit"):
        k[backend](a, out)
    np.testing.assert_array_equal(out, before)


@kernel
def literals_that_fit(a, out):
    for i in range(out.shape[0]):
        out[i, 0] = a[i] + 127
        out[i, 1] = a[i] + -128
        out[i, 2] = (a[i] * 100) & 0x7F
        out[i, 3] = np.int8(-128) + a[i]


def test_literals_at_the_edge_of_the_type_still_wrap(backend):
    a = np.array([-128, -1, 0, 1, 127], np.int8)
    out = np.zeros((5, 4), np.int64)
    literals_that_fit[backend](a, out)
    np.testing.assert_array_equal(out, _host(literals_that_fit, a, out=out))


# ---- comparisons with Python ints compare values, as numpy does (np.int8(5) < 300 is True) ----------------
@kernel
def compare_literals(a, out):
    for i in range(out.shape[0]):
        out[i, 0] = (a[i] < 300) + 2 * (a[i] == 300) + 4 * (300 > a[i]) + 8 * (a[i] >= -129)
        out[i, 1] = (a[i] != -1) + 2 * (-1 < a[i]) + 4 * (a[i] <= 2**40) + 8 * (a[i] == 2**40)
        out[i, 2] = (a[i] < 2**63) + 2 * (a[i] > -2**63) + 4 * (a[i] != 18446744073709551615) + 8 * (a[i] >= 1 - 2**63)


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "uint32", "int64", "uint64"])
def test_comparisons_with_out_of_range_literals_follow_numpy(backend, family):
    info = np.iinfo(family)
    a = np.array([info.min, info.max, 0, 1, 100], family)
    out = np.full((len(a), 3), -1, np.int64)
    compare_literals[backend](a, out)
    np.testing.assert_array_equal(out, _host(compare_literals, a, out=out), err_msg=family)


@kernel
def constant_powers(a, out):
    for i in range(out.shape[0]):
        out[i, 0] = 2**40 + a[i]
        out[i, 1] = -(2**63) + a[i]
        out[i, 2] = 3**39 - 10**18


@kernel
def constant_past_64_bits(a, out):
    for i in range(out.shape[0]):
        out[i, 0] = 2**62 * 4 + a[i]


def test_constant_expressions_are_python_ints(backend):
    """Python evaluates 2**40 exactly: it is a constant (weak int64), not int32 arithmetic that wraps;
    a constant past 64 bits is an error, not a wrapped value."""
    a = np.array([0, 1, -1], np.int64)
    out = np.zeros((3, 3), np.int64)
    constant_powers[backend](a, out)
    np.testing.assert_array_equal(out, _host(constant_powers, a, out=out))
    with pytest.raises(OverflowError, match="does not fit in 64 bits"):
        constant_past_64_bits[backend](a, np.zeros((3, 1), np.int64))


# ---- the loop index is a Python int on the host: weak in arithmetic with data, the index type in subscripts ----
@kernel
def index_values(a, out):
    for i in range(out.shape[0]):
        out[i, 0] = a[i] + i
        out[i, 1] = a[i] * len(a) - a.shape[0]
        out[i, 2] = a[i] - a.size
        for j in range(3):
            out[i, 3] = a[i] * j + j      # j is a Python int too
        out[i, 4] = 1 if a[i] < i else 0


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "float32"])
def test_index_values_are_weak_like_python(backend, family):
    """int8_data[i] + i stays int8 and wraps, as on the host (NEP 50); len(a), a.shape[0], a.size and
    range-loop variables are Python ints too. Comparisons stay by value (a[i] < i)."""
    n = 100
    a = np.resize(np.array([100, -100, 7, 120, 0, 90], family) if family != "uint8"
                  else np.array([200, 100, 7, 250, 0, 90], family), n)
    out = np.full((n, 5), -1, np.float64 if family == "float32" else np.int64)
    index_values[backend](a, out)
    np.testing.assert_array_equal(out, _host(index_values, a, out=out), err_msg=family)


@kernel
def offset_gather(a, off, out):
    for i in range(out.shape[0]):
        out[i] = a[i + off[i] + 1] + (i + off[i])


def test_index_arithmetic_stays_in_the_index_type(backend):
    """Inside a subscript the index keeps the index type: a[i + off[i]] with int8 offsets reads the
    right element past i = 127 (as a value, i + off[i] is int8 and wraps, as numpy's would)."""
    n = 600
    a = np.arange(n + 2, dtype=np.int64) * 10
    off = np.resize(np.array([-1, 0, 1], np.int8), n)
    out = np.zeros(n, np.int64)
    offset_gather[backend](a, off, out)
    i = np.arange(n)
    want = a[i + off + 1] + (i + off.astype(np.int64) + 128) % 256 - 128     # the value wraps in int8
    np.testing.assert_array_equal(out, want)


# ---- divmod(a, b): Python's (a // b, a % b) -------------------------------------------------------------
@kernel
def divmods(a, b, out):
    for i in range(out.shape[0]):
        q, r = divmod(a[i], b[i])
        out[i, 0] = q
        out[i, 1] = r
        out[i, 2], out[i, 3] = divmod(a[i], 3)
        out[i, 4] = divmod(-7, 2)[0] * 10 + divmod(-7.5, 2)[1] + divmod(a[i], b[i])[1]
        out[i, 5] = _split_cents(a[i])


def _split_cents(x):
    whole, cents = divmod(x, 100)
    return whole + cents


@pytest.mark.parametrize("family", ["int8", "uint8", "int32", "int64", "float32", "float64"])
def test_divmod_follows_python(backend, family, device):
    if family == "float64" and not getattr(device, "fp64", True):
        pytest.skip(f"{device} has no float64 support")
    info = np.finfo(family) if family.startswith("float") else np.iinfo(family)
    if family.startswith("float"):
        a = np.array([7.5, -7.5, 7.0, -0.0, 0.0, 1e30, -3.25, 5.0], family)
        b = np.array([2.0, 2.0, -2.0, 3.0, -3.0, 7.0, 0.0, np.inf], family)
    else:
        a = np.array([7, -7 if info.min else 200, 7, int(info.min), int(info.max), 0, 5, 100], family)
        b = np.array([2, 2, -2 if info.min else 3, -1 if info.min else 7, 7, 3, 0, 100], family)
    out = np.full((len(a), 6), -77, np.float64 if family.startswith("float") else np.int64)
    divmods[backend](a, b, out)
    want = _host(divmods, a, b, out=out)
    np.testing.assert_array_equal(out, want, err_msg=family)
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(out[zeros]), np.signbit(want[zeros]), err_msg=f"{family}: signed zeros")


def test_divmod_compiles_for_cuda_and_hip(nvrtc_compile, hiprtc_compile):
    a = np.array([7, -7], np.int16)
    for dialect, compile_, check in (("cuda", nvrtc_compile, assert_cubin), ("hip", hiprtc_compile, assert_code_object)):
        src = divmods.inspect(a, a, np.zeros((2, 6), np.int64), backend=dialect).source
        check(compile_(src) if dialect == "cuda" else compile_(src, "gfx1030"), src)


@kernel
def compare_arg(a, s, out):
    for i in range(out.shape[0]):
        out[i] = (a[i] < s) + 2 * (a[i] == s)


@pytest.mark.parametrize("family, s", [("uint64", -1), ("int64", 2**63)])
def test_comparisons_no_c_type_can_hold_still_raise(backend, family, s):
    """The documented exception to comparing by value: no C type holds both operands, so the launch
    refuses the argument (OverflowError naming it) instead of converting it."""
    a = np.array([0, 5], family)
    with pytest.raises(OverflowError, match="'s'"):
        compare_arg[backend](a, s, np.zeros(2, np.int64))
