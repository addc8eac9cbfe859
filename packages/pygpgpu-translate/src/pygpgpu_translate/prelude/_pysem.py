"""Pieces ``pyfloordiv:<T>`` / ``pymod:<T>``: Python's ``//`` and ``%`` where C truncates.

Integer division by zero gives 0 (Python would raise; a kernel cannot; numpy gives 0 too), and
``MIN // -1`` wraps instead of trapping (x86 CPUs running OpenCL would raise SIGFPE). A guard
branch around the division is not enough: compilers may speculate the division (seen with
PoCL), so the C division always runs on a divisor that is never 0 or -1 and the Python result
is selected afterwards. Floats follow CPython's ``float_divmod`` exactly, including signed
zeros; a float division by zero gives numpy's results (``x // 0.0`` is ``x / 0.0``, ``x % 0.0``
is NaN).
"""
from __future__ import annotations

from ._types import (
    FLOAT_SCALARS,
    c_type,
    component,
    float_literal,
    float_math,
    fn_prefix,
    is_unsigned,
    make_vector,
    split_type,
)
from ._vec import fp64_deps

PY_OPS = ("pyfloordiv", "pymod")


def pysem_deps(dialect: str, op: str, type_name: str) -> list[str]:
    s, w = split_type(type_name)
    deps = fp64_deps(dialect, type_name)
    if w > 1:
        deps += ([f"vec:{type_name}"] if dialect != "opencl" else []) + [f"{op}:{s}"]
    return deps


def pysem_source(dialect: str, op: str, type_name: str) -> str:
    s, w = split_type(type_name)
    t = c_type(dialect, type_name)
    head = f"{fn_prefix(dialect)} {t} pg_{op}_{type_name}({t} a, {t} b)"
    if w > 1:
        comps = [f"pg_{op}_{s}(a{component(dialect, type_name, i)}, b{component(dialect, type_name, i)})" for i in range(w)]
        return f"{head} {{ return {make_vector(dialect, type_name, comps)}; }}\n"
    if s in FLOAT_SCALARS:
        return f"{head} {{ {_float_body(dialect, op, s)} }}\n"
    if is_unsigned(s):
        expr = "a / d" if op == "pyfloordiv" else "a % d"
        return f"{head} {{ {t} d = b == 0 ? ({t})1 : b; return b == 0 ? ({t})0 : ({t})({expr}); }}\n"
    u = c_type(dialect, "u" + s)
    body = (
        f"{t} d = (b == 0 || b == -1) ? ({t})1 : b; {t} q = ({t})(a / d); {t} r = ({t})(a % d); "
        f"if (r != 0 && ((r < 0) != (d < 0))) {{ q -= 1; r += d; }} "
    )
    if op == "pyfloordiv":
        body += f"return b == 0 ? ({t})0 : (b == -1 ? ({t})(({u})0 - ({u})a) : q);"
    else:
        body += f"return (b == 0 || b == -1) ? ({t})0 : r;"
    return f"{head} {{ {body} }}\n"


def _float_body(dialect: str, op: str, s: str) -> str:
    t = c_type(dialect, s)
    m = lambda fn: float_math(dialect, s, fn)  # noqa: E731
    zero, one, half = (float_literal(s, x) for x in ("0.0", "1.0", "0.5"))
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
