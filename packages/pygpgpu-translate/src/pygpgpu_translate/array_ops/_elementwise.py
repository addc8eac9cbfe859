"""Elementwise operations (operators and ufuncs) as generated ``@kernel`` functions.

numpy decides every type: ``ufunc.resolve_dtypes`` gives the loop (the dtype each input is
converted to and the result dtype) with Python scalars passed as weak types, exactly as numpy 2
computes ``np.add(g, 1)`` (NEP 50). The kernel converts each input to its loop dtype, applies
the expression and converts the result to the output's dtype.

Two layouts, one kernel source each per (operation, loop dtypes, output dtype):

* *flat*: every array operand is C-contiguous from byte 0 and has the output's shape, so work
  item ``i`` handles element ``i`` of each (``out[i] = x0[i] + x1``): the fast path.
* *strided*: anything else (broadcasting, views, transposes). The shape is first collapsed to
  as few dimensions as the layouts allow; each array is its whole allocation seen as 1-D plus an
  element offset and one element stride per dimension (0 where it broadcasts).

The warm path is a few dict lookups: loop dtypes per (ufunc, operand types), the kernel per
(operation, dtypes, layout), and the translator's own plan lookup per argument types.
"""
from __future__ import annotations

from typing import Any, Callable, Literal, cast

import numpy as np
from pygpgpu_core import funcs
from pygpgpu_core.gnp import DeviceArray, DeviceArrayView
from pygpgpu_core.gnp._array import check_out_writeable, warn_complex_to_real
from pygpgpu_core.gnp._functions import UFUNC_NAMES

from ._codegen import DEFAULT_CONFIG, bind, kernel_from_source, launch, np_type
from ._complex_ufuncs import complex_rule
from ._half import bits, half_bits, narrow, stores_half_only, widen
from ._operands import (
    Scalar,
    broadcast_shapes,
    check_dtype,
    check_same_device,
    classify,
    collapse,
    flat,
    shape_text,
    strided,
)

__all__ = ["UFUNCS", "ufunc_call", "binary", "unary", "elementwise", "assign", "fill", "astype", "copy",
           "where", "clip", "supported_ufunc", "OPERATOR_SYMBOLS"]

OPERATOR_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/", "divide": "/",
                    "floor_divide": "//", "remainder": "%", "power": "**", "bitwise_and": "&", "bitwise_or": "|",
                    "bitwise_xor": "^", "left_shift": "<<", "right_shift": ">>", "equal": "==",
                    "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
                    "negative": "unary -", "positive": "unary +", "absolute": "abs()", "invert": "~"}


# ---- expressions ---------------------------------------------------------------------------------------------
# An expression rule takes the loop's input dtypes and returns the Python expression of one element,
# with {0}, {1}, {2} standing for the converted inputs, and optionally helper definitions it calls.
def _sym(symbol: str) -> Callable:
    return lambda dts: f"({{0}} {symbol} {{1}})"


_CMP_MIXED = ("def _gnp_cmp_u64_i64(a, b):\n"       # numpy compares uint64 with int64 exactly
              "    if b < 0:\n"
              "        return 1\n"
              "    c = np.uint64(b)\n"
              "    if a < c:\n"
              "        return -1\n"
              "    if a > c:\n"
              "        return 1\n"
              "    return 0\n")


def _compare(symbol: str) -> Callable:
    """A comparison; numpy's loops for uint64 against int64 compare the values exactly (no
    common type holds both), through a three-way helper."""
    def rule(dts):
        if dts[0] == dts[1]:
            return f"({{0}} {symbol} {{1}})"
        if dts[0].kind == "u":
            return f"(_gnp_cmp_u64_i64({{0}}, {{1}}) {symbol} 0)", _CMP_MIXED
        return f"(0 {symbol} _gnp_cmp_u64_i64({{1}}, {{0}}))", _CMP_MIXED
    return rule


def _bool_or(symbol: str, logical: str) -> Callable:
    return lambda dts: f"({{0}} {logical} {{1}})" if dts[0].kind == "b" else f"({{0}} {symbol} {{1}})"


def _call(fn: str) -> Callable:
    return lambda dts: f"{fn}({', '.join('{%d}' % k for k in range(len(dts)))})"


def _float_or_identity(fn: str) -> Callable:
    """floor/ceil/trunc/rint: numpy keeps integer and bool inputs as they are."""
    return lambda dts: f"{fn}({{0}})" if dts[0].kind == "f" else "{0}"


def _predicate(fn: str, for_ints: str) -> Callable:
    return lambda dts: f"{fn}({{0}})" if dts[0].kind == "f" else for_ints


def _shift(direction: str) -> Callable:
    """numpy's shifts: a shift count outside 0..bits-1 gives 0 (or -1 for a negative value
    shifted right), where C's behaviour is undefined."""
    def rule(dts):
        t = dts[0]
        bits = t.itemsize * 8
        name = f"_gnp_{direction}shift_{t.name}"
        zero = f"{np_type(t)}(0)"
        if direction == "l":
            body = f"    if b < 0 or b >= {bits}:\n        return {zero}\n    return {np_type(t)}(a << b)\n"
        else:
            neg = f"{np_type(t)}(-1) if a < 0 else {zero}" if t.kind == "i" else zero
            body = f"    if b < 0 or b >= {bits}:\n        return {neg}\n    return {np_type(t)}(a >> b)\n"
        return f"{name}({{0}}, {{1}})", f"def {name}(a, b):\n{body}"
    return rule


def _int_fmod(dts):
    t = dts[0]
    if t.kind == "f":
        return "np.fmod({0}, {1})"
    name = f"_gnp_fmod_{t.name}"
    if t.kind == "u":
        return "({0} % {1})", None
    body = ("    r = a % b\n"        # Python's floor modulo (0 for b == 0); C's remainder has a's sign
            "    if r != 0 and (r < 0) != (a < 0):\n"
            "        r = r - b\n"
            f"    return {np_type(t)}(r)\n")
    return f"{name}({{0}}, {{1}})", f"def {name}(a, b):\n{body}"


def _invert(dts):
    return "(not {0})" if dts[0].kind == "b" else "(~{0})"


def _absolute(dts):
    return "{0}" if dts[0].kind in "bu" else "abs({0})"


def _square(dts):
    return "({0} and {0})" if dts[0].kind == "b" else "({0} * {0})"


def _reciprocal(dts):
    """Floats: 1 / x. Integers: numpy's integer 1 / x, which is 1 for 1, -1 for -1 and 0 otherwise;
    for 0 (C's undefined division) numpy's loops on x86-64 give the type's minimum for int32 and
    int64 and 0 for the other types, which gnp reproduces so results match numpy's there."""
    t = dts[0]
    if t.kind == "f":
        return f"({np_type(t)}(1) / {{0}})"
    name = f"_gnp_reciprocal_{t.name}"
    zero = int(np.iinfo(t).min) if t.kind == "i" and t.itemsize >= 4 else 0
    minus_one = f"    if a == {np_type(t)}(-1):\n        return {np_type(t)}(-1)\n" if t.kind == "i" else ""
    body = (f"    if a == {np_type(t)}(1):\n        return {np_type(t)}(1)\n{minus_one}"
            f"    if a == {np_type(t)}(0):\n        return {np_type(t)}({zero})\n"
            f"    return {np_type(t)}(0)\n")
    return f"{name}({{0}})", f"def {name}(a):\n{body}"


def _scale(numerator: float, denominator: float) -> Callable:
    """deg2rad/rad2deg: numpy's loops multiply by the constant in the loop's own type
    (NPY_PIf / 180.0f for float32), so the constant is formed in that type."""
    def rule(dts):
        t = dts[0]
        c = t.type(t.type(numerator) / t.type(denominator))
        return f"({{0}} * {np_type(t)}({float(c)!r}))"
    return rule


def _signbit(dts):
    # numpy's loops are float only (integers arrive as float64): the sign of copysign(1, x)
    return f"(np.copysign({np_type(dts[0])}(1), {{0}}) < {np_type(dts[0])}(0))"


def _logaddexp(base: str) -> Callable:
    """numpy's npy_logaddexp / npy_logaddexp2: the larger plus log(1 + exp(-difference)) in base e or
    2; equal inputs (both infinities included) give x + log(2); a NaN difference gives x + y."""
    def rule(dts):
        T = np_type(dts[0])
        name = f"_gnp_logaddexp{base}_{dts[0].name}"
        if base == "e":
            log2, soft = f"{T}({np.log(2.0)!r})", "np.log1p(np.exp({}))"
        else:
            log2, soft = f"{T}(1)", f"(np.log1p(np.exp2({{}})) * {T}({1 / np.log(2.0)!r}))"
        body = (f"    if x == y:\n        return x + {log2}\n"
                "    d = x - y\n"
                f"    if d > 0:\n        return x + {soft.format('-d')}\n"
                f"    if d <= 0:\n        return y + {soft.format('d')}\n"
                "    return d\n")
        return f"{name}({{0}}, {{1}})", f"def {name}(x, y):\n{body}"
    return rule


def _heaviside(dts):
    """numpy's npy_heaviside: 0 below zero, h0 at zero, 1 above, NaN for NaN."""
    T = np_type(dts[0])
    name = f"_gnp_heaviside_{dts[0].name}"
    body = (f"    if x < 0:\n        return {T}(0)\n    if x > 0:\n        return {T}(1)\n"
            "    if x == 0:\n        return h0\n    return x\n")
    return f"{name}({{0}}, {{1}})", f"def {name}(x, h0):\n{body}"


def _gcd(dts):
    """numpy's npy_gcd: Euclid's algorithm on the magnitudes (gcd(0, 0) is 0)."""
    t = dts[0]
    name = f"_gnp_gcd_{t.name}"
    x, y = ("abs(a)", "abs(b)") if t.kind == "i" else ("a", "b")
    body = (f"    x = {x}\n    y = {y}\n"
            "    while y != 0:\n        r = x % y\n        x = y\n        y = r\n"
            f"    return {np_type(t)}(x)\n")
    return f"{name}({{0}}, {{1}})", f"def {name}(a, b):\n{body}"


def _lcm(dts):
    """numpy's npy_lcm: |a / gcd(a, b) * b|, and 0 where gcd is 0."""
    t = dts[0]
    gcd_call, gcd_helper = _gcd(dts)
    name = f"_gnp_lcm_{t.name}"
    mag = "abs" if t.kind == "i" else ""
    # C's integer promotion: numpy's int8/int16 products are formed in int, then wrap to the type
    w = "np.int32" if t.itemsize < 4 else np_type(t)
    body = (f"    g = {gcd_call.format('a', 'b')}\n    if g == 0:\n        return {np_type(t)}(0)\n"
            f"    return {np_type(t)}({mag}({w}(a) // {w}(g) * {w}(b)))\n")
    return f"{name}({{0}}, {{1}})", f"{gcd_helper}\ndef {name}(a, b):\n{body}"


def _bitwise_count(dts):
    """numpy 2's bitwise_count: the number of 1 bits of |x| (a uint8)."""
    t = dts[0]
    name = f"_gnp_popcount_{t.name}"
    unsigned = np_type(np.dtype(f"uint{t.itemsize * 8}"))
    start = "abs(a)" if t.kind == "i" else "a"
    body = (f"    x = {unsigned}({start})\n    n = np.uint8(0)\n"
            f"    while x != {unsigned}(0):\n        n = np.uint8(n + np.uint8(x & {unsigned}(1)))\n"
            f"        x = x >> {unsigned}(1)\n    return n\n")
    return f"{name}({{0}})", f"def {name}(a):\n{body}"


# ufunc name -> expression rule, for the ufuncs whose rule is not "call np.<name>"; which ufuncs exist
# is gnp's table (pygpgpu_core.gnp._functions.UFUNC_NAMES, the one list of names), and UFUNCS below
# gives each of them this rule or the plain call
_RULES: dict[str, Callable] = {
    "add": _bool_or("+", "or"), "subtract": _sym("-"), "multiply": _bool_or("*", "and"),
    "true_divide": _sym("/"), "divide": _sym("/"), "floor_divide": _sym("//"), "remainder": _sym("%"),
    "mod": _sym("%"), "power": _sym("**"), "fmod": _int_fmod,
    # numpy's float_power loops are float64 (and complex) only, so the same ** runs in float64
    "float_power": _sym("**"),
    "bitwise_and": _sym("&"), "bitwise_or": _sym("|"), "bitwise_xor": _sym("^"),
    "left_shift": _shift("l"), "right_shift": _shift("r"),
    "equal": _compare("=="), "not_equal": _compare("!="), "less": _compare("<"), "less_equal": _compare("<="),
    "greater": _compare(">"), "greater_equal": _compare(">="),
    "logical_and": lambda d: "({0} and {1})", "logical_or": lambda d: "({0} or {1})",
    # the truth values differ (numpy's loops keep int/float inputs: 1 and 2 are both True)
    "logical_xor": lambda d: "(bool({0}) != bool({1}))", "logical_not": lambda d: "(not {0})",
    "negative": lambda d: "(-{0})", "positive": lambda d: "{0}", "absolute": _absolute, "invert": _invert,
    "square": _square, "reciprocal": _reciprocal,
    # the conjugate of a real number is itself (numpy's loops give bool int8); complex: _complex_ufuncs
    "conjugate": lambda d: "{0}",
    "deg2rad": _scale(np.pi, 180.0), "radians": _scale(np.pi, 180.0), "rad2deg": _scale(180.0, np.pi),
    "degrees": _scale(180.0, np.pi), "signbit": _signbit, "logaddexp": _logaddexp("e"),
    "logaddexp2": _logaddexp("2"), "heaviside": _heaviside, "gcd": _gcd, "lcm": _lcm,
    "bitwise_count": _bitwise_count,
    "floor": _float_or_identity("np.floor"), "ceil": _float_or_identity("np.ceil"),
    "trunc": _float_or_identity("np.trunc"), "rint": _float_or_identity("np.rint"),
    "isnan": _predicate("np.isnan", "False"), "isinf": _predicate("np.isinf", "False"),
    "isfinite": _predicate("np.isfinite", "True"),
}
# ufunc name -> expression rule, one per name of gnp's table (sqrt, exp, fabs... are plain calls)
UFUNCS: dict[str, Callable] = {name: _RULES.get(name) or _call(f"np.{name}") for name in UFUNC_NAMES}
# numpy's ufunc objects by our names (np.divide is np.true_divide, np.mod is np.remainder)
NP_UFUNCS = {name: getattr(np, name) for name in UFUNCS}
# internal copies (assign, astype): the value as it is, converted to the output's dtype
_COPY = "__copy__"


def supported_ufunc(name: str) -> bool:
    return name in UFUNCS


# ---- type resolution -----------------------------------------------------------------------------------------
_loops: dict = {}


def _loop(name: str, keys: tuple, dtype: Any, casting: str = "same_kind") -> tuple:
    """(input dtypes, output dtype) numpy uses for ufunc ``name`` on ``keys`` (dtypes, or the
    Python types of weak scalars); ``casting`` decides whether ``dtype`` may cast the inputs
    (``np.add(i16, f32, dtype=np.int8, casting="unsafe")``)."""
    ck = (name, keys, dtype, casting)
    hit = _loops.get(ck)
    if hit is not None:
        return hit
    uf = NP_UFUNCS[name]
    try:
        if dtype is None:
            dts = uf.resolve_dtypes(keys + (None,))
        else:
            dts = uf.resolve_dtypes(keys + (None,), signature=(None,) * len(keys) + (np.dtype(dtype),),
                                    casting=casting)
    except TypeError as exc:           # numpy has no loop for these types: say which operand and op
        symbol = OPERATOR_SYMBOLS.get(name)
        what = f"gnp.{name}" + (f" ({symbol})" if symbol else "")
        operands = ", ".join(k.name if isinstance(k, np.dtype) else f"Python {k.__name__}" for k in keys)
        raise TypeError(f"{what} is not supported for operands of type {operands}: {exc}") from None
    res = (tuple(dts[:-1]), dts[-1])
    if len(_loops) > 8192:
        _loops.clear()
    _loops[ck] = res
    return res


# numpy's casting rules (np.can_cast); an unknown one is numpy's ValueError
Casting = Literal["no", "equiv", "safe", "same_kind", "unsafe"]

_HALF = np.dtype(np.float16)
_COMPARISONS = frozenset(("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"))


def _scalar_value(s: Scalar, dt: np.dtype, name: str, position: int) -> np.generic:
    """A scalar operand converted to its loop dtype as numpy converts it (OverflowError for a
    Python int the type cannot hold)."""
    with np.errstate(all="ignore"):
        try:
            return cast(np.generic, np.asarray(s.value, dtype=dt)[()])     # () on a 0-d array: its scalar
        except OverflowError as exc:
            raise OverflowError(f"gnp.{name}: operand {position}: {exc}") from None


def _comparison_key(s: Scalar, arrays_dt: np.dtype) -> Any:
    """numpy 2 compares integer arrays with out-of-range Python ints exactly (int8 == 300 is all
    False): give such a scalar the integer type it needs instead of the weak type."""
    if s.weak and s.key is int and arrays_dt.kind in "iub":
        # (a bool array against 2**63: CuPy compares in uint64, where numpy's default int overflows)
        low, high = (0, 1) if arrays_dt.kind == "b" else (np.iinfo(arrays_dt).min, np.iinfo(arrays_dt).max)
        if not low <= s.value <= high:
            if -2**63 <= s.value < 2**63:
                return np.dtype(np.int64)
            return np.dtype(np.uint64) if 0 <= s.value < 2**64 else np.dtype(np.float64)
    return s.key


# ---- kernel sources ------------------------------------------------------------------------------------------
def _expression(name: str, dts: tuple, out_dt: np.dtype) -> "tuple[str, str | None]":
    complex_in = any(dt.kind == "c" for dt in dts)
    if name == _COPY:
        if complex_in and out_dt.kind == "b":
            return "({0} != 0)", None          # numpy: a complex number is true when either part is
        if complex_in and out_dt.kind != "c":
            return "({0}).real", None          # numpy drops the imaginary part (its ComplexWarning)
        return "{0}", None
    if complex_in and name not in ("__where__",):
        return complex_rule(name, dts)
    r = UFUNCS[name](dts)
    return r if isinstance(r, tuple) else (r, None)


def _source(kname: str, expr: str, helpers: "str | None", kinds: str, in_dts: tuple, out_dt: np.dtype,
            nd: int) -> str:
    """One kernel: ``nd`` 0 is the flat layout, otherwise the strided one over ``nd`` dimensions."""
    lines = []
    if helpers:
        lines.append(helpers)
    params = []
    if nd == 0:
        params.append("out")
        refs = []
        for k, kind in enumerate(kinds):
            params.append(f"x{k}")
            refs.append(f"{np_type(in_dts[k])}(x{k}[i])" if kind == "A" else f"{np_type(in_dts[k])}(x{k})")
        value = expr.format(*refs)
        lines.append(f"def {kname}({', '.join(params)}):")
        lines.append("    for i in range(out.shape[0]):")
        lines.append(f"        out[i] = {np_type(out_dt)}({value})")
        return "\n".join(lines) + "\n"
    dims = [f"d{j}" for j in range(1, nd)]

    def index(prefix: str) -> str:
        terms = [f"{prefix}o"] + [f"i{j} * {prefix}s{j}" for j in range(nd)]
        return " + ".join(terms)

    params += ["out", "oo"] + [f"os{j}" for j in range(nd)]
    refs = []
    for k, kind in enumerate(kinds):
        if kind == "A":
            params += [f"x{k}", f"x{k}o"] + [f"x{k}s{j}" for j in range(nd)]
            refs.append(f"{np_type(in_dts[k])}(x{k}[{index(f'x{k}')}])")
        else:
            params.append(f"x{k}")
            refs.append(f"{np_type(in_dts[k])}(x{k})")
    params += ["n"] + dims
    value = expr.format(*refs)
    lines.append(f"def {kname}({', '.join(params)}):")
    lines.append("    for i in range(n):")
    if nd == 1:
        lines.append("        i0 = i")
    else:
        lines.append("        r = i")
        for j in range(nd - 1, 0, -1):
            lines.append(f"        i{j} = r % d{j}")
            lines.append(f"        r = r // d{j}")
        lines.append("        i0 = r")
    lines.append(f"        out[{index('o')}] = {np_type(out_dt)}({value})")
    return "\n".join(lines) + "\n"


_kernels: dict = {}


def _kernel(name: str, kinds: str, in_dts: tuple, out_dt: np.dtype, nd: int):
    key = (name, kinds, in_dts, out_dt, nd)
    k = _kernels.get(key)
    if k is None:
        expr, helpers = _expression(name, in_dts, out_dt)
        label = "copy" if name == _COPY else name
        kname = f"gnp_{label}_{'flat' if nd == 0 else f'nd{nd}'}_{kinds}"
        # complex arithmetic rounds each product as numpy's loops do (no fused multiply-add)
        exact = not any(dt.kind == "c" for dt in in_dts + (out_dt,))
        k = _kernels[key] = kernel_from_source(kname, _source(kname, expr, helpers, kinds, in_dts, out_dt, nd),
                                               None if exact else {"funcs": funcs}, contract=exact)
    return k


# ---- running -------------------------------------------------------------------------------------------------
def _overlaps(a: DeviceArray, b: DeviceArray) -> bool:
    """True when ``a`` and ``b`` share memory in a way a one-pass kernel could read after write."""
    if a.buffer is not b.buffer:
        return False
    if a.offset == b.offset and a.strides == b.strides and a.shape == b.shape:
        return False                 # the same elements in the same order: each work item owns its own
    sa = a.span() if isinstance(a, DeviceArrayView) else (0, a.nbytes)
    sb = b.span() if isinstance(b, DeviceArrayView) else (0, b.nbytes)
    return sa[0] < sb[1] and sb[0] < sa[1]


def _index_scalar(v: int, wide: bool):
    """An offset, stride or extent as a kernel argument: a numpy integer, so its type is fixed
    (int32, or int64 when some array is past 2**31 elements) whatever its sign."""
    return np.int64(v) if wide else np.int32(v)


def run(name: str, operands: list, in_dts: tuple, out: DeviceArray, device: Any) -> DeviceArray:
    """Launch ``name`` over ``operands`` (DeviceArray or np.generic already in its loop dtype)
    into ``out`` (already broadcast-checked)."""
    if out.size == 0:
        return out
    kinds = "".join("A" if isinstance(x, DeviceArray) else "S" for x in operands)
    if any(isinstance(x, DeviceArray) and _overlaps(out, x) for x in operands):
        # np.add(g[1:], g[:-1], out=g[1:]): read from a snapshot, as numpy's buffering does
        operands = [x.copy() if isinstance(x, DeviceArray) and _overlaps(out, x) else x for x in operands]
    arrays = [x for x in operands if isinstance(x, DeviceArray)]
    shape = out.shape
    if type(out) is DeviceArray and all(type(a) is DeviceArray and a.shape == shape for a in arrays):
        k = _kernel(name, kinds, in_dts, out.dtype, 0)
        args = [flat(out)] + [flat(x) if isinstance(x, DeviceArray) else x for x in operands]
        launch(k, device, DEFAULT_CONFIG, tuple(args))
        return out
    layouts = [strided(out, shape)] + [strided(x, shape) for x in operands if isinstance(x, DeviceArray)]
    dims, layouts = collapse(shape, layouts)
    if not dims:
        dims = (1,)
        for s in layouts:
            s.strides = [0]
    nd = len(dims)
    total = out.size
    wide = max(max(s.base.size for s in layouts), total) >= 2**31 - 1
    k = _kernel(name, kinds, in_dts, out.dtype, nd)
    o = layouts[0]
    args = [o.base, _index_scalar(o.offset, wide)] + [_index_scalar(s, wide) for s in o.strides]
    li = 1
    for x in operands:
        if isinstance(x, DeviceArray):
            s = layouts[li]
            li += 1
            args += [s.base, _index_scalar(s.offset, wide)] + [_index_scalar(v, wide) for v in s.strides]
        else:
            args.append(x)
    args.append(_index_scalar(total, wide))
    args += [_index_scalar(d, wide) for d in dims[1:]]
    launch(k, device, DEFAULT_CONFIG, tuple(args))
    return out


def _check_out(out: Any, shape: tuple, result_dt: np.dtype, name: str, casting: Casting, device: Any) -> DeviceArray:
    if not isinstance(out, DeviceArray):
        raise TypeError(f"gnp.{name}: out must be a device array, got {type(out).__name__}")
    check_out_writeable(out)
    if out.shape != shape:
        raise ValueError(f"non-broadcastable output operand with shape {shape_text(out.shape)} doesn't match "
                         f"the broadcast shape {shape_text(shape)}")
    if not np.can_cast(result_dt, out.dtype, casting):
        raise TypeError(f"Cannot cast ufunc {name!r} output from {result_dt!r} to {out.dtype!r} with casting rule "
                        f"{casting!r}")
    check_dtype(out.dtype, name, "out", device)
    return out


# The warm path: (ufunc, operand types, out dtype, id(device), id(context)) -> (loop input dtypes, result dtype,
# flat kernel, {shape: BoundLaunch}, device, context), filled by the first call that had plain C-contiguous
# operands of one shape (the full checks ran then); the bound launches skip the launch path's per-call work for
# shapes seen before. Device and context by id (a device's hash may be a Python method): the entry holds both,
# so neither id can be reused by another object while the entry lives.
_fast: dict = {}
_F32_MAX = float(np.finfo(np.float32).max)


def _fast_call(name: str, inputs: tuple, out: Any) -> Any:
    """``ufunc_call`` for the common case (plain arrays of one shape on one context, Python floats
    and ints, numpy scalars) in a few dict lookups; None when the full path must run."""
    sig = []
    first = None
    for x in inputs:
        t = type(x)
        if t is DeviceArray:
            if first is None:
                first = x
            elif x._shape != first._shape or x.buffer.context is not first.buffer.context:
                return None
            sig.append(x._dtype)
        elif t is float or t is int:
            sig.append(t)
        elif isinstance(x, np.generic):
            sig.append((x.dtype,))
        else:
            return None
    if first is None:
        return None
    ctx = first.buffer.context
    shape = first._shape
    if out is not None and (type(out) is not DeviceArray or out._shape != shape or out.buffer.context is not ctx
                            or out._readonly):
        return None
    device = first.device
    entry = _fast.get((name, tuple(sig), None if out is None else out._dtype, id(device), id(ctx)))
    if entry is None:
        return None
    in_dts, out_dt, kern, bounds, _device, _ctx = entry
    one_d = len(shape) == 1
    args: list[Any] = [None]        # [0]: the output, filled in last
    for k, x in enumerate(inputs):
        t = type(x)
        if t is DeviceArray:
            args.append(x if one_d else flat(x))
            continue
        dt = in_dts[k]
        if t is float:
            if dt.kind != "f" or (dt.itemsize == 4 and not -_F32_MAX <= x <= _F32_MAX):
                return None                   # overflow, NaN: the full path converts as numpy does
        elif t is int:
            info = _int_range(dt)
            if info is None or not info[0] <= x <= info[1]:
                return None                   # numpy's OverflowError (or an exact comparison)
        args.append(dt.type(x))
    size = 1
    for d in shape:
        size *= d
    if out is None:
        out = DeviceArray._empty(shape, out_dt, ctx.device, ctx, size * out_dt.itemsize)
    if size:
        args[0] = out if one_d else flat(out)
        call = tuple(args)
        bound = bounds.get(shape)
        if bound is None or not bound(call):
            bound = bind(kern, device, DEFAULT_CONFIG, call)     # launches
            if bound is not None:
                if len(bounds) > 64:
                    bounds.clear()
                bounds[shape] = bound
    return out


_int_ranges: dict = {}


def _int_range(dt: np.dtype) -> "tuple[int, int] | None":
    r = _int_ranges.get(dt)
    if r is None and dt.kind in "iu":
        info = np.iinfo(dt)
        r = _int_ranges[dt] = (int(info.min), int(info.max))
    elif r is None and dt.kind == "f":
        r = _int_ranges[dt] = (-2**53, 2**53)       # exactly representable: converts as numpy does
    return r


def _remember_fast(name: str, inputs: tuple, in_dts: tuple, out_dt: np.dtype, out: Any, device: Any) -> None:
    """Make the next call like this one take :func:`_fast_call` (the checks it skips passed now;
    they depend only on the key: operation, operand types, out dtype, device and context)."""
    if name == "power":                         # a negative integer exponent must raise each time
        return
    sig = []
    for x in inputs:
        t = type(x)
        if t is DeviceArray:
            sig.append(x.dtype)
        elif t is float or t is int:
            sig.append(t)
        elif isinstance(x, np.generic):
            sig.append((x.dtype,))
        else:
            return
    kinds = "".join("A" if type(x) is DeviceArray else "S" for x in inputs)
    ctx = device.context()
    key = (name, tuple(sig), None if out is None else out.dtype, id(device), id(ctx))
    if len(_fast) > 4096:
        _fast.clear()
    _fast[key] = (in_dts, out_dt, _kernel(name, kinds, in_dts, out_dt if out is None else out.dtype, 0), {}, device,
                  ctx)


def ufunc_call(name: str, inputs: tuple, out: Any = None, dtype: Any = None, casting: Casting = "same_kind") -> Any:
    """``np.<name>(*inputs, out=out, dtype=dtype)`` on the device. NotImplemented when an input
    is not something device operations take (so Python can try the other operand)."""
    if dtype is None and casting == "same_kind":
        r = _fast_call(name, inputs, out)
        if r is not None:
            return r
    ops = []
    for k, x in enumerate(inputs):
        c = classify(x, name, k)
        if c is None:
            if name in ("equal", "not_equal") and _never_equal(x):
                return _compared_with_object(name, inputs, out)
            return NotImplemented
        ops.append(c)
    arrays = [x for x in ops if isinstance(x, DeviceArray)]
    if not arrays:
        raise TypeError(f"gnp.{name}: at least one operand must be a device array")
    device = check_same_device(arrays + ([out] if isinstance(out, DeviceArray) else []), name)
    if _half_involved(ops, out, dtype) and stores_half_only(device):
        return _through_float32(name, ops, out, dtype, casting)
    for k, x in enumerate(ops):
        if isinstance(x, DeviceArray):
            check_dtype(x.dtype, name, k, device)
    keys = []
    for x in ops:
        if isinstance(x, DeviceArray):
            keys.append(x.dtype)
        elif name in _COMPARISONS:
            keys.append(_comparison_key(x, arrays[0].dtype))
        else:
            keys.append(x.key)
    in_dts, out_dt = _loop(name, tuple(keys), dtype, casting)
    if out_dt == _HALF and stores_half_only(device):
        # numpy computes np.sqrt(int8) in float16 (small integers convert to half exactly): through float32
        return _through_float32(name, ops, out, dtype, casting)
    for k, dt in enumerate(in_dts):
        check_dtype(dt, name, k, device)
    check_dtype(out_dt, name, "result", device)
    # scalars convert first, so uint8_array ** -2 is numpy's OverflowError (-2 does not fit); a complex
    # array in a real loop (np.add(c, c, dtype=np.float32, casting="unsafe")) converts first, as numpy's
    # casts do (the real part, with its ComplexWarning; bool: either part nonzero)
    operands = [(x.astype(in_dts[k]) if x.dtype.kind == "c" and in_dts[k].kind != "c" else x)
                if isinstance(x, DeviceArray) else _scalar_value(x, in_dts[k], name, k) for k, x in enumerate(ops)]
    if name == "power" and in_dts[1].kind in "iu":
        s = ops[1]
        if isinstance(s, Scalar) and s.value < 0:
            raise ValueError("Integers to negative integer powers are not allowed.")
    shape = _result_shape(arrays, out)
    given = out
    if out is None:
        out = DeviceArray(shape, out_dt, device.context())
    else:
        _check_out(out, shape, out_dt, name, casting, device)
    if (dtype is None and casting == "same_kind" and all(type(x) is not DeviceArrayView for x in arrays)
            and all(x.shape == shape for x in arrays) and type(out) is DeviceArray):
        _remember_fast(name, inputs, in_dts, out_dt, given, device)
    return run(name, operands, in_dts, out, device)


def _half_involved(ops: list, out: Any, dtype: Any) -> bool:
    half = np.dtype(np.float16)
    return (any(x.dtype == half for x in ops) or (isinstance(out, DeviceArray) and out.dtype == half)
            or (dtype is not None and np.dtype(dtype) == half))


def _through_float32(name: str, ops: list, out: Any, dtype: Any, casting: Casting) -> Any:
    """A float16 operation on a device that only stores half: numpy's float16 loops compute each
    element in float32 and round the result to half once, and so does this (``_half``)."""
    half = np.dtype(np.float16)
    keys = tuple(x.dtype if isinstance(x, DeviceArray) or not x.weak else x.key for x in ops)
    in_dts, out_dt = _loop(name, keys, dtype, casting)

    def scalar(x: Scalar, loop_dt: np.dtype) -> Any:
        if x.dtype == half and not x.weak:
            return np.float32(x.value)
        if x.weak and loop_dt == half and x.key is not complex:
            # numpy converts a weak scalar to the loop's half first: 2**32 is inf there (g16 <= 2**32)
            with np.errstate(over="ignore"):
                return np.float32(np.float16(x.value))
        return x.value
    wide = [widen(x) if isinstance(x, DeviceArray) and x.dtype == half else
            scalar(x, in_dts[k]) if isinstance(x, Scalar) else x for k, x in enumerate(ops)]
    # a float16 result is computed in float32 (np.sqrt(int8) too: numpy's e->e loop gets exact halves)
    res = ufunc_call(name, tuple(wide), dtype=np.float32 if out_dt == half else dtype, casting=casting)
    if out_dt == half:
        res = narrow(res)
    if out is None:
        return res
    _check_out(out, _result_shape([x for x in ops if isinstance(x, DeviceArray)], out), out_dt, name, casting,
               None)
    assign(out, res)
    return out


# types numpy turns into an object array whose == is never true for a number: np.equal(array, None)
# compares each element with them as Python objects, so the answer is known. (A string becomes a
# numpy string array, which np.equal refuses: TypeError, as numpy's; ``g == "a"`` is False, as
# numpy's operator says, through the operator's own fallback.)
_SELF_ONLY = (type(None), dict, set, frozenset, type)


def _never_equal(x: Any) -> bool:
    """Whether ``x`` (no operand) equals no number: None, a dict..., or an object without an
    ``__eq__`` of its own. One with its own may say otherwise, so it is left to Python."""
    return isinstance(x, _SELF_ONLY) or (type(x).__eq__ is object.__eq__ and type(x).__ne__ is object.__ne__)


def _compared_with_object(name: str, inputs: tuple, out: Any) -> Any:
    """``np.equal(a, None)`` / ``np.not_equal``: numpy's array of False / True, of ``a``'s shape."""
    arrays = [x for x in inputs if isinstance(x, DeviceArray)]
    if not arrays:
        return NotImplemented
    device = check_same_device(arrays + ([out] if isinstance(out, DeviceArray) else []), name)
    shape = _result_shape(arrays, out)
    result = DeviceArray(shape, np.dtype(bool), device.context()) if out is None else out
    if out is not None:
        _check_out(out, shape, np.dtype(bool), name, "same_kind", device)
    result.fill(name == "not_equal")
    return result


def _result_shape(arrays: list, out: Any) -> tuple:
    """The inputs' broadcast shape; with ``out`` the inputs may also broadcast up to its shape."""
    shape = broadcast_shapes([x.shape for x in arrays]) if len(arrays) > 1 else arrays[0].shape
    if isinstance(out, DeviceArray) and out.shape != shape:
        try:
            full = broadcast_shapes([shape, out.shape])
        except ValueError:
            full = None
        if full is not None and full == out.shape:
            return full
    return shape


def binary(name: str, a: Any, b: Any, out: Any = None) -> Any:
    r = _fast_call(name, (a, b), out)
    if r is not None:
        return r
    return ufunc_call(name, (a, b), out=out)


def unary(name: str, a: Any, out: Any = None) -> Any:
    return ufunc_call(name, (a,), out=out)


elementwise = ufunc_call


# ---- copies, fills and conversions ---------------------------------------------------------------------------
def assign(dst: DeviceArray, src: Any) -> None:
    """``dst[...] = src`` on the device: broadcast like numpy, converted like numpy's setitem
    (unsafe casting)."""
    c = classify(src, "copyto", 1)
    if c is None:
        raise TypeError(f"cannot assign a {type(src).__name__} to a device array")
    device = check_same_device([dst] + ([c] if isinstance(c, DeviceArray) else []), "copyto")
    if isinstance(c, DeviceArray):
        try:
            shape = broadcast_shapes([dst.shape, c.shape])
        except ValueError:
            shape = None
        if shape != dst.shape:
            raise ValueError(f"could not broadcast input array from shape {shape_text(c.shape)} into shape "
                             f"{shape_text(dst.shape)}")
        warn_complex_to_real(c.dtype, dst.dtype)
        if c.dtype == dst.dtype and _stored_only(c.dtype):
            # complex or half data: copied as raw bytes, as copy() does
            run(_COPY, [_raw_view(c)], (_raw_view(c).dtype,), _raw_view(dst), device)
            return
        if np.float16 in (c.dtype, dst.dtype) and stores_half_only(device):
            wide = widen(c) if c.dtype == np.float16 else c
            assign_dst = dst if dst.dtype != np.float16 else None
            if assign_dst is not None:
                assign(assign_dst, wide)
            else:
                assign(dst, narrow(wide if wide.dtype in (np.float32, np.float64) else astype(wide, np.dtype(np.float32))))
            return
        check_dtype(dst.dtype, "copyto", 0, device)
        check_dtype(c.dtype, "copyto", 1, device)
        run(_COPY, [c], (c.dtype,), dst, device)
        return
    if dst.dtype == np.float16 and stores_half_only(device):      # numpy's rounding on the host, bits stored
        value = _scalar_value(c, dst.dtype, "copyto", 1)
        run(_COPY, [value.view(np.uint16)], (np.dtype(np.uint16),), _raw_view(dst), device)
        return
    check_dtype(dst.dtype, "copyto", 0, device)
    value = _scalar_value(c, dst.dtype, "copyto", 1)
    run(_COPY, [value], (dst.dtype,), dst, device)


def fill(dst: DeviceArray, value: Any) -> None:
    assign(dst, value)


def astype(a: DeviceArray, dtype: np.dtype) -> DeviceArray:
    device = check_same_device([a], "astype")
    if np.float16 in (a.dtype, np.dtype(dtype)) and a.dtype != np.dtype(dtype) and stores_half_only(device):
        if a.dtype == np.float16:                  # exact in float32, then numpy's conversion from there
            wide = widen(a)
            return wide if np.dtype(dtype) == np.float32 else astype(wide, dtype)
        # float64 rounds to half in one step (numpy's npy_double_to_half); other types through float32
        return narrow(a if a.dtype in (np.float32, np.float64) else astype(a, np.dtype(np.float32)))
    check_dtype(a.dtype, "astype", 0, device)
    check_dtype(np.dtype(dtype), "astype", "dtype", device)
    out = DeviceArray(a.shape, dtype, device.context())
    run(_COPY, [a], (a.dtype,), out, device)
    return out


def copy(a: DeviceArray) -> DeviceArray:
    """A C-contiguous device copy of any array or view."""
    device = a.device
    out = DeviceArray(a.shape, a.dtype, a.context)
    if _stored_only(a.dtype):
        run(_COPY, [_raw_view(a)], (_raw_view(a).dtype,), _raw_view(out), device)
        return out
    run(_COPY, [a], (a.dtype,), out, device)
    return out


def _stored_only(dtype: np.dtype) -> bool:
    """Complex and half data: stored, moved and copied (as raw bytes), never computed with."""
    return dtype.kind not in "biuf" or dtype == np.float16


def _raw_view(a: DeviceArray) -> DeviceArray:
    """``a``'s bytes as unsigned integers of 2 (float16) or 8 bytes (complex: one more axis for
    complex128), same layout: copies of data the device does not compute with."""
    if a.dtype == np.float16:
        return a.view(np.uint16)
    per = a.dtype.itemsize // 8
    return DeviceArrayView._make(a, a.shape + (per,), np.dtype(np.uint64), a.strides + (8,), a.offset)


# ---- where and clip ------------------------------------------------------------------------------------------
def where(condition: Any, x: Any = None, y: Any = None) -> DeviceArray | tuple:
    """``np.where(condition, x, y)`` on the device (x and y: arrays or scalars, numpy's result type)."""
    if x is None and y is None:
        from ._indexing import nonzero
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    classified = [classify(v, "where", k) for k, v in enumerate((condition, x, y))]
    ops = [o for o in classified if o is not None]
    if len(ops) != len(classified):
        raise TypeError("gnp.where takes device arrays and scalars")
    arrays = [o for o in ops if isinstance(o, DeviceArray)]
    if not arrays:
        raise TypeError("gnp.where: at least one operand must be a device array")
    device = check_same_device(arrays, "where")
    keys = [o.dtype if isinstance(o, DeviceArray) or not o.weak else o.value for o in ops[1:]]
    out_dt = np.result_type(*keys)
    if (out_dt == np.float16 or any(a.dtype == np.float16 for a in arrays)) and stores_half_only(device):
        return _where_half(ops, out_dt, device)
    for k, o in enumerate(ops):
        if isinstance(o, DeviceArray):
            check_dtype(o.dtype, "where", k, device)
    check_dtype(out_dt, "where", "result", device)
    cond = ops[0]
    if isinstance(cond, DeviceArray) and cond.dtype.kind == "c":      # a complex number is true where either part is
        cond = ufunc_call("not_equal", (cond, 0))
    operands = [cond if isinstance(cond, DeviceArray) else _scalar_value(cond, np.dtype(bool), "where", 0)]
    for k, o in enumerate(ops[1:], 1):
        operands.append(o if isinstance(o, DeviceArray) else _scalar_value(o, out_dt, "where", k))
    shape = broadcast_shapes([o.shape for o in arrays])
    out = DeviceArray(shape, out_dt, device.context())
    return run("__where__", operands, (np.dtype(bool), out_dt, out_dt), out, device)


def _where_half(ops: list, out_dt: np.dtype, device: Any) -> DeviceArray:
    """``where`` with float16 on a device that only stores half: a float16 result selects bit
    patterns (exact); a wider result selects from float16 operands widened to float32."""
    half = np.dtype(np.float16)
    cond = ops[0]
    if isinstance(cond, DeviceArray) and cond.dtype == half:
        cond = ufunc_call("not_equal", (cond, 0))
    elif isinstance(cond, Scalar):
        cond = cond.value
    if out_dt != half:
        rest = [widen(o) if isinstance(o, DeviceArray) and o.dtype == half else
                (o.value if isinstance(o, Scalar) else o) for o in ops[1:]]
        return cast(DeviceArray, where(cond, rest[0], rest[1]))
    operands: list = [cond if isinstance(cond, DeviceArray) else np.bool_(cond)]
    for o in ops[1:]:
        if isinstance(o, DeviceArray):
            operands.append(bits(o if o.dtype == half else astype(o, half)))
        else:
            operands.append(half_bits(o.value))
    arrays = [o for o in operands if isinstance(o, DeviceArray)]
    out = DeviceArray(broadcast_shapes([o.shape for o in arrays]), half, device.context())
    u16 = np.dtype(np.uint16)
    run("__where__", operands, (np.dtype(bool), u16, u16), bits(out), device)
    return out


UFUNCS["__where__"] = lambda dts: "({1} if {0} else {2})"
UFUNCS["__clip__"] = lambda dts: ("np.minimum(np.maximum({0}, {1}), {2})" if dts[0].kind != "b"
                                  else "(({0} or {1}) and {2})")


def clip(a: Any, lo: Any = None, hi: Any = None, out: Any = None, **kwargs) -> DeviceArray:
    """``np.clip(a, lo, hi)``: numpy's result type (NEP 50); NaN propagates as numpy's does."""
    check_out_writeable(out)
    if kwargs:
        lo = kwargs.pop("a_min", kwargs.pop("min", lo))
        hi = kwargs.pop("a_max", kwargs.pop("max", hi))
        if kwargs:
            raise TypeError(f"gnp.clip: unsupported arguments {sorted(kwargs)}")
    if isinstance(a, DeviceArray) and a.dtype.kind in "iu":
        # numpy 2's np.clip drops a Python int bound beyond the integer type's range (no
        # value-based promotion under NEP 50): clip(uint8_array, -1, 2) is minimum(a, 2)
        info = np.iinfo(a.dtype)
        if type(lo) is int and lo <= info.min:
            lo = None
        if type(hi) is int and hi >= info.max:
            hi = None
    if lo is None and hi is None:
        return ufunc_call("positive", (a,), out=out)       # numpy's copy (bool arrays: its TypeError)
    if lo is None:
        return ufunc_call("minimum", (a, hi), out=out)
    if hi is None:
        return ufunc_call("maximum", (a, lo), out=out)
    classified = [classify(v, "clip", k) for k, v in enumerate((a, lo, hi))]
    ops = [o for o in classified if o is not None]
    if len(ops) != len(classified):
        raise TypeError("gnp.clip takes device arrays and scalars")
    arrays = [o for o in ops if isinstance(o, DeviceArray)]
    device = check_same_device(arrays + ([out] if isinstance(out, DeviceArray) else []), "clip")
    if any(o.dtype == np.float16 for o in ops) and stores_half_only(device):
        # a selection among the values: exact through float32, rounded back when numpy's result is half
        half_keys = tuple(o.dtype if isinstance(o, DeviceArray) or not o.weak else o.key for o in ops)
        res_dt = np._core.umath.clip.resolve_dtypes(half_keys + (None,))[3]  # type: ignore[attr-defined]
        wide = [widen(o) if isinstance(o, DeviceArray) and o.dtype == np.float16 else
                (np.float32(o.value) if isinstance(o, Scalar) and not o.weak and o.dtype == np.float16 else
                 (o.value if isinstance(o, Scalar) else o)) for o in ops]
        res = clip(*wide)
        if res_dt == np.float16:
            res = narrow(res)
        if out is None:
            return res
        assign(_check_out(out, res.shape, res_dt, "clip", "same_kind", None), res)
        return out
    for k, o in enumerate(ops):
        if isinstance(o, DeviceArray):
            check_dtype(o.dtype, "clip", k, device)
    keys = [o.dtype if isinstance(o, DeviceArray) else o.key for o in ops]
    # the clip ufunc's own type resolution; numpy's stubs do not expose np._core
    dts = np._core.umath.clip.resolve_dtypes(tuple(keys) + (None,))  # type: ignore[attr-defined]
    in_dts, out_dt = tuple(dts[:3]), dts[3]
    operands = [o if isinstance(o, DeviceArray) else _scalar_value(o, in_dts[k], "clip", k) for k, o in enumerate(ops)]
    shape = broadcast_shapes([o.shape for o in arrays])
    if out is None:
        out = DeviceArray(shape, out_dt, device.context())
    else:
        _check_out(out, shape, out_dt, "clip", "same_kind", device)
    return run("__clip__", operands, in_dts, out, device)
