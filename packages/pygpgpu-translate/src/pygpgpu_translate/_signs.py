"""Which integer index expressions are provably non-negative.

Python reads ``x[i]`` with a negative ``i`` from the end; C reads before the array. Indices
that are not provably non-negative are therefore wrapped (``i < 0 ? i + n : i``, see
``ExpressionRules.flat_index``); this proof keeps the usual ones (loop counters, work-item ids,
their sums and products) free of that compare. It is structural and conservative: anything it
cannot see through counts as possibly negative.
"""
from __future__ import annotations

import ast

from . import _ir as ir

__all__ = ["is_non_negative", "stores_name"]

_CLOSED_OPS = {"+", "*", "/", ">>", "%"}    # non-negative operands give a non-negative result


def is_non_negative(e: ir.Expr, known: "set[str]") -> bool:
    """``e`` (an integer IR expression) is >= 0 whatever the run-time values; ``known``: the C
    names of variables proven non-negative where ``e`` is evaluated."""
    if isinstance(e, ir.Const):
        return isinstance(e.value, (bool, int)) and e.value >= 0
    if isinstance(e, ir.Var):
        return e.name in known
    if isinstance(e, ir.Raw):
        return e.non_negative
    if isinstance(e, ir.Cast):
        a, t, src = e.a, e.type, getattr(e.a, "type", None)
        if isinstance(a, ir.Raw):
            return a.non_negative
        if src is None or not (getattr(t, "is_int", False) and getattr(src, "is_int", False)):
            return False
        if src.kind == "u":
            # int32 arithmetic wraps like numpy's, spelled ((int)((uint)a + (uint)b)): a sum or
            # product of non-negative values (an index that overflowed is out of range anyway);
            # a subtraction, as in "i - 1", stays unproven
            return (isinstance(a, ir.Bin) and a.op in ("+", "*")
                    and _unsigned_of_non_negative(a.a, known) and _unsigned_of_non_negative(a.b, known))
        return t.bits >= src.bits and is_non_negative(a, known)
    if isinstance(e, ir.Bin):
        if e.op in _CLOSED_OPS:
            return is_non_negative(e.a, known) and is_non_negative(e.b, known)
        if e.op == "&":
            return is_non_negative(e.a, known) or is_non_negative(e.b, known)
        return False
    if isinstance(e, ir.Ternary):
        return is_non_negative(e.a, known) and is_non_negative(e.b, known)
    if isinstance(e, ir.Call) and e.fn.startswith("pg_pymod_") and len(e.args) == 2:
        return is_non_negative(e.args[1], known)   # Python's % takes the divisor's sign
    return False


def _unsigned_of_non_negative(e: ir.Expr, known: "set[str]") -> bool:
    if isinstance(e, ir.Const):
        return isinstance(e.value, (bool, int)) and e.value >= 0
    return isinstance(e, ir.Cast) and is_non_negative(e.a, known)


def stores_name(body: "list[ast.stmt]", name: str) -> bool:
    """Whether any statement of ``body`` (nested ones included) assigns ``name``."""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                return True
    return False
