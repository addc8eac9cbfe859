"""Pieces for Python/numpy semantics where C differs: ``<op>:<T>`` defines ``pg_<op>_<T>``.

``pyfloordiv`` / ``pymod`` (every type): Python's ``//`` and ``%`` where C truncates. Integer
division by zero gives 0 (Python would raise; a kernel cannot; numpy gives 0 too), and
``MIN // -1`` wraps instead of trapping (x86 CPUs running OpenCL would raise SIGFPE). A guard
branch around the division is not enough: compilers may speculate the division (seen with
PoCL), so the C division always runs on a divisor that is never 0 or -1 and the Python result
is selected afterwards. Floats follow CPython's ``float_divmod`` exactly, including signed
zeros; a float division by zero gives numpy's results (``x // 0.0`` is ``x / 0.0``, ``x % 0.0``
is NaN).

``pypow`` (integer types): ``a ** b`` wrapping like numpy (the multiplication runs in the
unsigned type of at least 32 bits: signed overflow is undefined in C). A negative exponent, where
numpy raises, gives the integer part of the true value as CuPy does: 1 for ``a == 1``, 1 or -1
for ``a == -1``, else 0 (also for ``a == 0``, where the true value is infinite).

``pyshl`` / ``pyshr`` (integer types): numpy's ``a << b`` / ``a >> b``: a count outside
0..bits-1 (negative counts included) gives 0, or -1 for a negative ``a`` shifted right; C leaves
such counts undefined. The left shift runs in the unsigned type (at least 32 bits): shifting a
negative value left is undefined in C too.

``pyneg`` (signed integer types): numpy's ``-a``, which wraps (``-int16(-32768)`` is -32768), by
:func:`negation`.

``pymin`` / ``pymax`` (float types): Python's builtin ``min(a, b)`` / ``max(a, b)``: ``b`` only
when it is strictly smaller/larger, so ``min(nan, 1.0)`` is NaN and ``min(1.0, nan)`` is 1.0.
``npminimum`` / ``npmaximum`` (float types): ``np.minimum`` / ``np.maximum``, NaN if either is.
``npsign`` (float types): ``np.sign``: NaN stays NaN, both zeros give +0.0. For integers these
five mean the same as ``funcs.min`` / ``funcs.max`` / ``funcs.sign``: use those.
"""
from __future__ import annotations

from ._types import (
    FLOAT_SCALARS,
    INT_SCALARS,
    WIDTHS,
    bits,
    c_type,
    component,
    dialect_of,
    float_literal,
    float_math,
    fn_prefix,
    is_unsigned,
    make_vector,
    split_type,
)
from ._vec import fp64_deps

PY_OPS = ("pyfloordiv", "pymod", "pypow", "pyshl", "pyshr", "pyneg", "pymin", "pymax", "npminimum", "npmaximum",
          "npsign")
_UNARY = ("npsign", "pyneg")


def pysem_types(op: str) -> list[str]:
    """Every type name ``<op>:<T>`` exists for."""
    scalars = {"pyfloordiv": INT_SCALARS + FLOAT_SCALARS, "pymod": INT_SCALARS + FLOAT_SCALARS,
               "pypow": INT_SCALARS, "pyshl": INT_SCALARS, "pyshr": INT_SCALARS,
               "pyneg": tuple(s for s in INT_SCALARS if not is_unsigned(s))}.get(op, FLOAT_SCALARS)
    return [f"{s}{w}" for s in scalars for w in ("",) + WIDTHS]


def pysem_deps(dialect: str, op: str, type_name: str) -> list[str]:
    s, w = split_type(type_name)
    deps = fp64_deps(dialect, type_name)
    if w > 1:
        deps += ([f"vec:{type_name}"] if not dialect_of(dialect).builtin_vectors else []) + [f"{op}:{s}"]
    return deps


def pysem_source(dialect: str, op: str, type_name: str) -> str:
    s, w = split_type(type_name)
    t = c_type(dialect, type_name)
    args = ("a",) if op in _UNARY else ("a", "b")
    head = f"{fn_prefix(dialect)} {t} pg_{op}_{type_name}({', '.join(f'{t} {x}' for x in args)})"
    if w > 1:
        comps = [f"pg_{op}_{s}({', '.join(x + component(dialect, type_name, i) for x in args)})" for i in range(w)]
        return f"{head} {{ return {make_vector(dialect, type_name, comps)}; }}\n"
    if op == "pypow":
        return f"{head} {{ {_pow_body(dialect, s)} }}\n"
    if op in ("pyshl", "pyshr"):
        return f"{head} {{ {_shift_body(dialect, op, s)} }}\n"
    if op == "pyneg":
        return f"{head} {{ return {negation(dialect, s)}; }}\n"
    if s in FLOAT_SCALARS:
        return f"{head} {{ {_float_body(dialect, op, s)} }}\n"
    if is_unsigned(s):
        expr = "a / d" if op == "pyfloordiv" else "a % d"
        return f"{head} {{ {t} d = b == 0 ? ({t})1 : b; return b == 0 ? ({t})0 : ({t})({expr}); }}\n"
    body = (
        f"{t} d = (b == 0 || b == -1) ? ({t})1 : b; {t} q = ({t})(a / d); {t} r = ({t})(a % d); "
        f"if (r != 0 && ((r < 0) != (d < 0))) {{ q -= 1; r += d; }} "
    )
    if op == "pyfloordiv":
        body += f"return b == 0 ? ({t})0 : (b == -1 ? {negation(dialect, s)} : q);"
    else:
        body += f"return (b == 0 || b == -1) ? ({t})0 : r;"
    return f"{head} {{ {body} }}\n"


def negation(dialect: str, s: str, a: str = "a") -> str:
    """C for numpy's ``-a`` on signed integer type ``s``: it wraps (the minimum negates to itself),
    without signed overflow (undefined in C): computed in the unsigned type. char and short negate
    in the top bits of a uint and shift back down arithmetically: the plain ``(short)-a`` (and
    ``(short)(0u - (uint)a)``, which compilers narrow to the same 16-bit negation) came out of
    NVRTC 13.0's ptxas as a 32-bit negation never sign-extended again, so widening
    ``-int16(-32768)`` gave 32768 (the H200 run; NVRTC 13.5 and PoCL were right)."""
    t = c_type(dialect, s)
    if bits(s) < 32:
        shift = 32 - bits(s)
        uint, int_ = c_type(dialect, "uint"), c_type(dialect, "int")
        return f"({t})(({int_})(({uint})0 - (({uint}){a} << {shift})) >> {shift})"
    u = c_type(dialect, "u" + s)
    return f"({t})(({u})0 - ({u}){a})"


def _pow_body(dialect: str, s: str) -> str:
    t = c_type(dialect, s)
    # narrow types multiply in unsigned int: C computes ushort * ushort in int, where it overflows
    u = c_type(dialect, "uint") if bits(s) < 32 else c_type(dialect, s if is_unsigned(s) else "u" + s)
    negative = "" if is_unsigned(s) else (
        f"if (b < 0) return a == 1 ? ({t})1 : (a == -1 ? ((b & 1) ? ({t})-1 : ({t})1) : ({t})0); ")
    return (f"{negative}{u} r = 1, x = ({u})a; "
            f"while (b) {{ if (b & 1) r *= x; x *= x; b >>= 1; }} return ({t})r;")


def _shift_body(dialect: str, op: str, s: str) -> str:
    t = c_type(dialect, s)
    u = c_type(dialect, s if is_unsigned(s) else "u" + s)
    n = bits(s)
    in_range = f"({u})b < {n}"             # a negative count is a huge unsigned one
    if op == "pyshl":
        wide = c_type(dialect, "uint") if n < 32 else u
        return f"return {in_range} ? ({t})(({wide})a << b) : ({t})0;"
    beyond = f"({t})0" if is_unsigned(s) else f"(a < 0 ? ({t})-1 : ({t})0)"
    return f"return {in_range} ? ({t})(a >> b) : {beyond};"


_FLOAT_SIMPLE = {
    "pymin": "return b < a ? b : a;",
    "pymax": "return b > a ? b : a;",
    "npminimum": "return (a != a || b != b) ? a + b : (b < a ? b : a);",
    "npmaximum": "return (a != a || b != b) ? a + b : (b > a ? b : a);",
    "npsign": "return a > {zero} ? {one} : (a < {zero} ? -{one} : (a == {zero} ? {zero} : a));",
}


def _float_body(dialect: str, op: str, s: str) -> str:
    t = c_type(dialect, s)
    m = lambda fn: float_math(dialect, s, fn)  # noqa: E731
    zero, one, half = (float_literal(s, x) for x in ("0.0", "1.0", "0.5"))
    if op in _FLOAT_SIMPLE:
        return _FLOAT_SIMPLE[op].format(zero=zero, one=one)
    mod = (
        f"{t} m = {m('fmod')}(a, b); "
        f"if (m != {zero}) {{ if ((b < {zero}) != (m < {zero})) m += b; }} else {{ m = {m('copysign')}({zero}, b); }} "
    )
    if op == "pymod":
        return mod + "return m;"
    return (
        f"if (b == {zero}) return a / b; "
        f"{t} m = {m('fmod')}(a, b); {t} d = (a - m) / b; "
        f"if (m != {zero}) {{ if ((b < {zero}) != (m < {zero})) d -= {one}; }} "
        f"{t} f; if (d != {zero}) {{ f = {m('floor')}(d); if (d - f > {half}) f += {one}; }} "
        f"else {{ f = {m('copysign')}({zero}, a / b); }} return f;"
    )
