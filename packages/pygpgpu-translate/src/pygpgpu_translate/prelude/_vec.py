"""Pieces ``vec:<T>``, ``vec_ops:<T>`` and ``vec_cmp:<T>`` for the 50 vector types."""
from __future__ import annotations

from ._types import (
    bits,
    c_type,
    comparison_type,
    component,
    dialect_of,
    fn_prefix,
    is_int,
    make_vector,
    own_struct,
    split_type,
)

ARITH_OPS = ("+", "-", "*", "/")
INT_OPS = ("%", "&", "|", "^", "<<", ">>")
CMP_FUNCS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def fp64_deps(dialect, type_name: str) -> list[str]:
    """Double code comes after the dialect's fp64 pragma (OpenCL's; the piece is empty elsewhere)."""
    if split_type(type_name)[0] == "double":
        return ["ext:fp64"]
    return []


def ext_fp64(dialect) -> str:
    return dialect_of(dialect).extension_pragma("fp64")


# -- vec:<T> -------------------------------------------------------------------------------------
def vec_deps(dialect: str, type_name: str) -> list[str]:
    return fp64_deps(dialect, type_name)


def vec_source(dialect: str, type_name: str) -> str:
    """The type (where the toolchain lacks it) plus ``pg_make_<T>(c0, ...)`` and ``pg_splat_<T>(s)``."""
    s, w = split_type(type_name)
    sc = c_type(dialect, s)
    vt = c_type(dialect, type_name)
    params = ", ".join(f"{sc} c{i}" for i in range(w))
    comps = [f"c{i}" for i in range(w)]
    pre = fn_prefix(dialect)
    out = []
    if own_struct(dialect, type_name):
        align = min(bits(s) // 8 * w, 16)
        members = " ".join(f"{sc} {component(dialect, type_name, i)[1:]};" for i in range(w))
        out.append(f"struct alignas({align}) {vt} {{ {members} }};")
        body = f"{vt} v; " + " ".join(f"v{component(dialect, type_name, i)} = c{i};" for i in range(w)) + " return v;"
    else:
        body = f"return {dialect_of(dialect).vector_literal(type_name, comps)};"
    out.append(f"{pre} {vt} pg_make_{type_name}({params}) {{ {body} }}")
    out.append(
        f"{pre} {vt} pg_splat_{type_name}({sc} s) {{ return {make_vector(dialect, type_name, ['s'] * w)}; }}"
    )
    return "\n".join(out) + "\n"


# -- vec_ops:<T> ---------------------------------------------------------------------------------
def vec_ops_deps(dialect, type_name: str) -> list[str]:
    if not dialect_of(dialect).builtin_vectors:
        return [f"vec:{type_name}"]
    return fp64_deps(dialect, type_name)


def vec_ops_source(dialect: str, type_name: str) -> str:
    """C++ operators with scalar broadcast on either side, compound assignment and unary ops.
    Empty for OpenCL (native); for HIP's built-in 2/3/4-wide types only what HIP lacks
    (``Dialect.vector_operator_builtin``). Shifts
    defined here take the count modulo the bit width, as OpenCL does."""
    d = dialect_of(dialect)
    if d.builtin_vectors:
        return ""
    s, w = split_type(type_name)
    sc = c_type(dialect, s)
    vt = c_type(dialect, type_name)
    pre = fn_prefix(dialect)
    mask = bits(s) - 1

    def keep(op: str, form: str) -> bool:
        return not d.vector_operator_builtin(op, form, type_name)

    def comp(var: str, i: int, scalar: bool) -> str:
        return var if scalar else f"{var}{component(dialect, type_name, i)}"

    def expr(op: str, a: str, b: str) -> str:
        if op in ("<<", ">>"):
            return f"({sc})({a} {op} ({b} & {mask}))"
        return f"({sc})({a} {op} {b})"

    lines = []
    ops = ARITH_OPS + (INT_OPS if is_int(type_name) else ())
    for op in ops:
        for form, a_scalar, b_scalar in (("vv", False, False), ("vs", False, True), ("sv", True, False)):
            if not keep(op, form):
                continue
            ta = sc if a_scalar else vt
            tb = sc if b_scalar else vt
            comps = [expr(op, comp("a", i, a_scalar), comp("b", i, b_scalar)) for i in range(w)]
            lines.append(f"{pre} {vt} operator{op}({ta} a, {tb} b) {{ return {make_vector(dialect, type_name, comps)}; }}")
        for form, tb in (("vv=", vt), ("vs=", sc)):
            if keep(op, form):
                comps = [expr(op, comp("a", i, False), comp("b", i, tb == sc)) for i in range(w)]
                lines.append(
                    f"{pre} {vt}& operator{op}=({vt}& a, {tb} b) {{ a = {make_vector(dialect, type_name, comps)}; return a; }}"
                )
    unary = [("-", [f"({sc})(-a{component(dialect, type_name, i)})" for i in range(w)]),
             ("+", [f"a{component(dialect, type_name, i)}" for i in range(w)])]
    if is_int(type_name):
        unary.append(("~", [f"({sc})(~a{component(dialect, type_name, i)})" for i in range(w)]))
    for op, comps in unary:
        if keep(op, "unary"):
            lines.append(f"{pre} {vt} operator{op}({vt} a) {{ return {make_vector(dialect, type_name, comps)}; }}")
    return "\n".join(lines) + "\n" if lines else ""


# -- vec_cmp:<T> ---------------------------------------------------------------------------------
def vec_cmp_deps(dialect, type_name: str) -> list[str]:
    if dialect_of(dialect).builtin_vectors:
        return fp64_deps(dialect, type_name)
    return [f"vec:{type_name}", f"vec:{comparison_type(type_name)}"]


def vec_cmp_source(dialect: str, type_name: str, native: bool = True) -> str:
    """``pg_eq_<T> ... pg_ge_<T>``: component-wise comparisons returning -1 (true) / 0 (false)
    in the signed integer vector of the element size (OpenCL's result type)."""
    _, w = split_type(type_name)
    vt = c_type(dialect, type_name)
    ct = comparison_type(type_name)
    rt = c_type(dialect, ct)
    pre = fn_prefix(dialect)
    lines = []
    for name, op in CMP_FUNCS.items():
        if native and dialect_of(dialect).builtin_vectors:
            body = f"return a {op} b;"
        else:
            comps = [
                f"(a{component(dialect, type_name, i)} {op} b{component(dialect, type_name, i)}) ? -1 : 0"
                for i in range(w)
            ]
            body = f"return {make_vector(dialect, ct, comps)};"
        lines.append(f"{pre} {rt} pg_{name}_{type_name}({vt} a, {vt} b) {{ {body} }}")
    return "\n".join(lines) + "\n"
