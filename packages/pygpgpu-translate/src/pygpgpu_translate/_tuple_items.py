"""Reading tuples (and shapes) in kernels: a constant slice (``x.shape[:2]``, ``t[1:]``) and an
item picked by an index known only at run time (``W[k]``, ``for w in W`` over a tuple). Each
takes the function builder as its explicit, typed lowering context."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import _ir as ir
from ._bindings import ShapeRef, TupleRef
from ._choices import common_type
from ._signs import is_non_negative
from ._types import BOOL, Scalar, concrete

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["sliced_tuple", "tuple_item"]


def sliced_tuple(fb: FunctionBuilder, base, node) -> TupleRef:
    """``x.shape[:2]``, ``t[1:]``: the tuple of the items a constant slice picks, as Python's."""
    if isinstance(base, ShapeRef):
        base = TupleRef([fb.index_value(n) for n in base.array.shape])
    if not isinstance(base, TupleRef):
        raise fb.err(node, "slices are not supported in kernels",
                     "index one element at a time inside a loop (a shape or a tuple may be sliced)")
    bounds = []
    for part in (node.slice.lower, node.slice.upper, node.slice.step):
        v = fb.expr(part) if part is not None else None
        if v is not None and not (isinstance(v, ir.Const) and isinstance(v.value, int)):
            raise fb.err(part, "a slice of a tuple or a shape needs constant bounds")
        bounds.append(None if v is None else v.value)
    if bounds[2] == 0:
        raise fb.err(node.slice, "slice step cannot be zero")
    return TupleRef(base.items[slice(*bounds)])


def tuple_item(fb: FunctionBuilder, tup: TupleRef, k, node, where=None) -> ir.Expr:
    """``t[k]`` with ``k`` known only at run time (``W[k]`` in ``for k in range(len(W))``): a
    chain of tests picks the item, in the items' common type (Python numbers stay weak). A
    negative ``k`` counts from the end as in Python; one out of range, Python's IndexError,
    gives the last item. ``where``: the node errors point at (the subscript's index)."""
    items = tup.items
    where = where or node.slice
    if not (isinstance(k, ir.Expr) and isinstance(k.type, Scalar) and k.type.is_int):
        raise fb.err(where, "a tuple index must be an integer")
    if not items or not all(isinstance(v, ir.Expr) and not isinstance(v, ir.ArrayRef) for v in items):
        raise fb.err(where, "only tuples of numbers or vectors can be indexed with a variable or looped over",
                     "index it with a constant, or pass the values as an array argument")
    t = items[0].type
    for v in items[1:]:
        t = common_type(fb, t, v.type, node)
    ct = concrete(t, fb.prog.default_float)
    k = fb.materialize(k)
    n = len(items)
    if not is_non_negative(k, fb.non_negative):
        k = fb.materialize(ir.Ternary(ir.Bin("<", k, ir.Const(0, k.type), BOOL),
                                      ir.Bin("+", k, ir.Const(n, k.type), k.type), k, k.type))
    out = fb.convert(items[-1], ct)
    for j in range(n - 2, -1, -1):
        out = ir.Ternary(ir.Bin("==", k, ir.Const(j, k.type), BOOL), fb.convert(items[j], ct), out, t)
    return out
