"""Vector values built in kernels: constructors (``float4(x, y, z, w)``, from smaller vectors
plus numbers, one number broadcast, a list or tuple) converting each component by the host's
rule (``_vector_convert``), and swizzles (``.x``, ``.zyx``, ``.s01``, as loads; stores are
``_statements.component_store``). Each takes the function builder as its explicit, typed
lowering context."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import _ir as ir
from ._bindings import SWIZZLE_INDEX
from ._types import VECTOR_WIDTHS, Vector
from ._vector_convert import convert_component

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["swizzle_indices", "swizzle", "vector_ctor"]


def swizzle_indices(fb: FunctionBuilder, vt: Vector, attr: str, node) -> list[int]:
    """The component numbers ``.x``, ``.zyx``, ``.s01`` name in a vector of type ``vt``."""
    if attr.startswith("s") and len(attr) > 1 and all(c in "0123456789abcdefABCDEF" for c in attr[1:]):
        idx = [int(c, 16) for c in attr[1:]]
    elif all(c in "xyzw" for c in attr) or all(c in "rgba" for c in attr):
        idx = [SWIZZLE_INDEX[c] for c in attr]
    else:
        raise fb.err(node, f"vectors have no component {attr!r}", "use .x .y .z .w, .s0 ... .sF or swizzles like .xy")
    if any(i >= vt.width for i in idx):
        raise fb.err(node, f"{vt} has no component {attr!r}")
    return idx


def swizzle(fb: FunctionBuilder, v: ir.Expr, attr: str, node) -> ir.Expr:
    """``v.zyx``: one component, or a vector of the named ones (``v`` evaluated once)."""
    idx = swizzle_indices(fb, v.type, attr, node)
    if len(idx) == 1:
        return fb.comp(v, idx[0])
    if len(idx) not in VECTOR_WIDTHS:
        raise fb.err(node, f"a swizzle of {len(idx)} components is not a vector width")
    v = fb.materialize(v)
    return ir.VecCtor([fb.comp(v, i) for i in idx], Vector(v.type.base, len(idx)))


def vector_ctor(fb: FunctionBuilder, vt: Vector, node: ast.Call) -> ir.Expr:
    """``float4(x, y, z, w)``, ``float4(v2, z, w)``, ``float4(s)`` (broadcast), ``float4()`` (zeros), ``float4([x, y, z, w])``."""
    comps: list[ir.Expr] = []
    # float2([x, y]) and float2((x, y)) as float2(x, y): the items are the arguments
    args = [item for a in node.args for item in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
    for a in args:
        v = fb.value(a)
        if isinstance(v.type, Vector):
            v = fb.materialize(v)
            comps.extend(fb.comp(v, k) for k in range(v.type.width))
        else:
            comps.append(v)
    if len(comps) == 1:
        s = fb.materialize(convert_component(fb, comps[0], vt.base))
        comps = [s] * vt.width
    if len(comps) == 0:
        comps = [ir.Const(0, vt.base)] * vt.width
    if len(comps) != vt.width:
        raise fb.err(node, f"{vt} needs {vt.width} components, got {len(comps)}",
                     f"pass {vt.width} numbers, one number to broadcast, or smaller vectors plus numbers")
    fb.prog.note_type(vt)
    return ir.VecCtor([convert_component(fb, c, vt.base) for c in comps], vt)   # the host's rule
