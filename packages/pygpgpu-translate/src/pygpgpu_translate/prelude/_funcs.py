"""Pieces ``funcs.<name>:<T>``: ``pg_<name>_<T>`` for every ``funcs.*`` row of the builtin registry.

OpenCL versions are one-line wrappers around the native builtin where OpenCL has one to the
host's precision (so a translator may call either); CUDA/HIP versions, and OpenCL's where the
builtin may be less precise (double mix and smoothstep), are written out component-wise. All
arguments have type ``T``: the translator splats scalar arguments first.
"""
from __future__ import annotations

from ._types import (
    FLOAT_SCALARS,
    SCALARS,
    WIDTHS,
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
from ._pysem import negation
from .._builtins import FUNCS

GEOMETRIC = ("dot", "length", "distance", "normalize", "cross", "reflect")
_ARGS = {1: ("a",), 2: ("a", "b"), 3: ("a", "b", "c")}


def func_types(name: str) -> list[str]:
    """Every type name ``funcs.<name>:<T>`` exists for."""
    types = FUNCS[name].types
    out = []
    for s in SCALARS:
        int_s = s not in FLOAT_SCALARS
        if ("int" if int_s else "float") in types.kinds:
            out.append(s)
        if ("intn" if int_s else "floatn") in types.kinds:
            out.extend(f"{s}{w}" for w in WIDTHS if types.widths is None or w in types.widths)
    return out


def funcs_deps(dialect: str, name: str, type_name: str, native: bool = True) -> list[str]:
    s, w = split_type(type_name)
    deps = fp64_deps(dialect, type_name)
    if w == 1 or (native and _builtin_function(dialect, name, type_name)):
        return deps
    if not dialect_of(dialect).builtin_vectors:
        deps.append(f"vec:{type_name}")
    if name not in GEOMETRIC:
        deps.append(f"funcs.{name}:{s}")
    elif name in ("length", "normalize"):
        deps.append(f"funcs.dot:{type_name}")
    elif name == "reflect":
        deps.append(f"funcs.dot:{type_name}")
    return deps


def _builtin_function(dialect, name: str, type_name: str) -> str | None:
    """The language's own function for it (OpenCL C's dot, clamp...), if it has one."""
    return dialect_of(dialect).builtin_function(name, type_name)


def funcs_source(dialect: str, name: str, type_name: str, native: bool = True) -> str:
    spec = FUNCS[name]
    s, w = split_type(type_name)
    vt = c_type(dialect, type_name)
    sc = c_type(dialect, s)
    args = _ARGS[spec.arity[0]]
    params = ", ".join(f"{vt} {a}" for a in args)
    ret = sc if spec.types.result == "base" else vt
    fname = f"pg_{name}_{type_name}"
    builtin = _builtin_function(dialect, name, type_name) if native else None
    if builtin:
        body = f"return {builtin}({', '.join(args)});"
    elif w == 1 and name == "smoothstep":
        m = lambda fn: float_math(dialect, s, fn)  # noqa: E731
        zero, one = float_literal(s, "0.0"), float_literal(s, "1.0")
        body = (
            f"{sc} t = {m('fmin')}({m('fmax')}((c - a) / (b - a), {zero}), {one}); "
            f"return t * t * ({float_literal(s, '3.0')} - {float_literal(s, '2.0')} * t);"
        )
    elif w == 1:
        body = "return " + _scalar_expr(dialect, name, s) + ";"
    elif name in GEOMETRIC:
        body = _geometric_body(dialect, name, type_name)
    else:
        comps = [
            f"pg_{name}_{s}({', '.join(a + component(dialect, type_name, i) for a in args)})" for i in range(w)
        ]
        body = f"return {make_vector(dialect, type_name, comps)};"
    return f"{fn_prefix(dialect)} {ret} {fname}({params}) {{ {body} }}\n"


def _scalar_expr(dialect: str, name: str, s: str) -> str:
    """Body expression of the scalar version, arguments a, b, c."""
    sc = c_type(dialect, s)
    if s in FLOAT_SCALARS:
        m = lambda fn: float_math(dialect, s, fn)  # noqa: E731
        one, zero = float_literal(s, "1.0"), float_literal(s, "0.0")
        table = {
            "dot": "a * b",
            "length": f"{m('fabs')}(a)",
            "distance": f"{m('fabs')}(a - b)",
            "normalize": f"(a == {zero} || a != a) ? a : (a > {zero} ? {one} : -{one})",
            "clamp": f"{m('fmin')}({m('fmax')}(a, b), c)",
            "mix": "a + (b - a) * c",
            "step": f"(b < a) ? {zero} : {one}",
            "fma": f"{m('fma')}(a, b, c)",
            "sign": f"(a > {zero}) ? {one} : ((a < {zero}) ? -{one} : ((a == a) ? a : {zero}))",
            "radians": f"a * ({sc})0.017453292519943295",
            "degrees": f"a * ({sc})57.29577951308232",
            "min": f"{m('fmin')}(a, b)",
            "max": f"{m('fmax')}(a, b)",
            "abs": f"{m('fabs')}(a)",
        }
        return table[name]
    table = {
        "clamp": f"(({sc})((a > b ? a : b) < c ? (a > b ? a : b) : c))",
        "sign": f"({sc})((a > 0) - (a < 0))" if not is_unsigned(s) else f"({sc})(a > 0)",
        "min": "(b < a ? b : a)",
        "max": "(a < b ? b : a)",
        # numpy's abs(MIN) is MIN; the negation is the wrapping one of pyneg (no signed overflow)
        "abs": f"(a < 0 ? {negation(dialect, s)} : a)" if not is_unsigned(s) else "a",
    }
    return table[name]


def _geometric_body(dialect: str, name: str, type_name: str) -> str:
    s, w = split_type(type_name)
    sc = c_type(dialect, s)
    c = lambda v, i: f"{v}{component(dialect, type_name, i)}"  # noqa: E731
    sqrt = float_math(dialect, s, "sqrt")
    zero = float_literal(s, "0.0")
    two = float_literal(s, "2.0")
    dot = f"pg_dot_{type_name}"
    if name == "dot":
        return "return " + " + ".join(f"{c('a', i)} * {c('b', i)}" for i in range(w)) + ";"
    if name == "length":
        return f"return {sqrt}({dot}(a, a));"
    if name == "distance":
        diffs = [f"{c('a', i)} - {c('b', i)}" for i in range(w)]
        return f"return {sqrt}(" + " + ".join(f"({d}) * ({d})" for d in diffs) + ");"
    if name == "normalize":
        comps = [f"{c('a', i)} / l" for i in range(w)]
        return f"{sc} l = {sqrt}({dot}(a, a)); if (l == {zero}) return a; return {make_vector(dialect, type_name, comps)};"
    if name == "reflect":
        comps = [f"{c('a', i)} - d * {c('b', i)}" for i in range(w)]
        return f"{sc} d = {two} * {dot}(b, a); return {make_vector(dialect, type_name, comps)};"
    if name == "cross":
        comps = [
            f"{c('a', 1)} * {c('b', 2)} - {c('a', 2)} * {c('b', 1)}",
            f"{c('a', 2)} * {c('b', 0)} - {c('a', 0)} * {c('b', 2)}",
            f"{c('a', 0)} * {c('b', 1)} - {c('a', 1)} * {c('b', 0)}",
        ] + ([zero] if w == 4 else [])
        return f"return {make_vector(dialect, type_name, comps)};"
    raise KeyError(name)
