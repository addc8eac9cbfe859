"""Helpers that return tuples: ``lo, hi = minmax(a, b)``.

A helper whose returns are tuples (of scalars and vectors, one length on every path) becomes a
void C function with one out-parameter per item, ``_pyg_r0``, ``_pyg_r1``... (pointers into the
caller's private memory); ``return b, a`` stores the items and returns. The caller passes the
addresses of fresh temporaries and sees the call as a tuple of them, which unpacks, indexes
(``minmax(a, b)[0]``) and binds to a name like any tuple. Each item's type is the join of what
the returns put there, as for a helper's single return value.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

from . import _ir as ir
from ._bindings import TupleRef
from ._types import VOID, ArrayType, JoinConflict, Scalar, Vector, concrete, join

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["TupleTypes", "TupleReturn", "tuple_return", "lower_tuple_returns", "tuple_result", "OUT_PREFIX"]

OUT_PREFIX = "_pyg_r"


@dataclass(frozen=True)
class TupleTypes:
    """What one ``return a, b`` put in each item (the helper's returns list holds these)."""
    items: tuple
    weak = False


@dataclass
class TupleReturn(ir.Stmt):
    """``return a, b`` until the helper's item types are known (then: stores and a return)."""
    items: list
    line: int = 0


def tuple_return(fb: FunctionBuilder, value: TupleRef, s) -> TupleReturn:
    items = []
    for k, item in enumerate(value.items):
        if isinstance(item, ir.ArrayRef):
            raise fb.err(s, "helpers cannot return arrays", "write into an array argument instead")
        if isinstance(item, TupleRef):
            raise fb.err(s, f"item {k} of the returned tuple is a tuple; helpers return flat tuples of numbers "
                         "and vectors", "return the inner items one by one")
        if not isinstance(item, ir.Expr):
            raise fb.err(s, f"item {k} of the returned tuple is not a number or a vector",
                         "helpers return numbers, vectors or tuples of them")
        items.append(item)
    fb.returns.append(TupleTypes(tuple(i.type for i in items)))
    return TupleReturn(items, s.lineno)


def lower_tuple_returns(fb: FunctionBuilder, body):
    """The helper's body with its tuple returns lowered to out-parameter stores (the parameters
    are appended to ``fb.fn_params``), and the item types; None when it returns no tuple."""
    tuples = [t for t in fb.returns if isinstance(t, TupleTypes)]
    if not tuples:
        return None
    fdef = fb.src.tree
    name = fdef.name
    if len(tuples) != len(fb.returns):
        raise fb.err(fdef, f"helper {name}() returns a tuple on some paths and something else on others",
                     "return a tuple of the same length on every path")
    lengths = {len(t.items) for t in tuples}
    if len(lengths) > 1:
        raise fb.type_err(fdef, f"helper {name}() returns tuples of {' and '.join(map(str, sorted(lengths)))} items; "
                          "return the same number of items on every path")
    if not _always_returns(body):
        raise fb.err(fdef, f"helper {name}() returns a tuple on some paths and nothing on others",
                     "return a tuple on every path")
    n = lengths.pop()
    types: list[Scalar | Vector] = []
    for k in range(n):
        t: object = tuples[0].items[k]
        for tt in tuples[1:]:
            try:
                t = join(t, tt.items[k], fb.prog.default_float)
            except JoinConflict as exc:
                raise fb.type_err(fdef, f"helper {name}() returns both {exc.a} and {exc.b} as item {k}; convert one "
                                  "explicitly (e.g. float(...))") from None
        t = concrete(t, fb.prog.default_float)
        if not isinstance(t, (Scalar, Vector)):
            raise fb.type_err(fdef, f"item {k} of what helper {name}() returns has no value type ({t})")
        fb.prog.note_type(t)
        types.append(t)
    outs = []
    for k, t in enumerate(types):
        pname = f"{OUT_PREFIX}{k}"
        at = ArrayType(t, 1, space="private")
        fb.fn_params.append(ir.Param(pname, at))
        outs.append(ir.ArrayRef(pname, pname, [ir.Const(1, fb.prog.index_type)], at))
    fb.returns = []
    return _rewrite(fb, body, outs), tuple(types)


def _rewrite(fb: FunctionBuilder, body, outs):
    out: list[ir.Stmt] = []
    zero = ir.Const(0, fb.prog.index_type)
    for s in body:
        if isinstance(s, TupleReturn):
            out.extend(ir.Store(o, zero, fb.convert(v, o.type.elem), s.line) for o, v in zip(outs, s.items))
            out.append(ir.Return(None, s.line))
            continue
        if isinstance(s, ir.If):
            s.body = _rewrite(fb, s.body, outs)
            s.orelse = _rewrite(fb, s.orelse, outs)
        elif isinstance(s, (ir.While, ir.For)):
            s.body = _rewrite(fb, s.body, outs)
        out.append(s)
    return out


def _always_returns(body) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (TupleReturn, ir.Return)):
        return True
    if isinstance(last, ir.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    if isinstance(last, ir.While) and isinstance(last.cond, ir.Const) and last.cond.value:
        return True
    return False


def tuple_result(fb: FunctionBuilder, call: ir.Call, fn) -> TupleRef:
    """The call of a tuple-returning helper as a statement; its value: the temporaries it fills."""
    temps = [fb.temp(t) for t in fn.tuple_returns]
    call.args = list(call.args) + [ir.Un("&", t, t.type) for t in temps]
    call.type = VOID
    fb.pre.append(ir.ExprStmt(call, fb.line))
    return TupleRef(list(temps))
