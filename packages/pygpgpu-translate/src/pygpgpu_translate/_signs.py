"""Which integer index expressions are provably non-negative.

Python reads ``x[i]`` with a negative ``i`` from the end; C reads before the array. Indices
that are not provably non-negative are therefore wrapped (``i < 0 ? i + n : i``, see
``_subscripts.checked_index``); this proof keeps the usual ones (loop counters, work-item ids,
their sums and products) free of that compare. It is structural and conservative: anything it
cannot see through counts as possibly negative.

Some variables are known to be larger than zero: the counter of ``for y in range(1, h - 1)``, or
``i`` under ``if i > 0:`` / ``if i >= 1:`` / the ``else`` of ``if i == 0 or ...:`` when ``i`` is
already known to be >= 0. ``KnownSigns.lower`` holds those bounds, so that ``y - 1`` there is
proven >= 0 too (a constant subtracted from a value at least that large).
"""
from __future__ import annotations

import ast

from . import _ir as ir

__all__ = ["KnownSigns", "is_non_negative", "lower_bound", "guard_bounds", "stores_name"]

_CLOSED_OPS = {"+", "*", "/", ">>", "%"}    # non-negative operands give a non-negative result


class KnownSigns(set):
    """The C names of variables proven >= 0 where an expression is evaluated (the set itself), and
    ``lower``: for some of them a larger proven lower bound (name -> k >= 1)."""

    def __init__(self, names=()):
        super().__init__(names)
        self.lower: dict[str, int] = {}


def is_non_negative(e: ir.Expr, known: "set[str]") -> bool:
    """``e`` (an integer IR expression) is >= 0 whatever the run-time values; ``known``: the C
    names of variables proven non-negative where ``e`` is evaluated."""
    if isinstance(e, ir.Const):
        return isinstance(e.value, (bool, int)) and e.value >= 0
    if isinstance(e, ir.Var):
        return e.name in known
    if isinstance(e, (ir.Raw, ir.WorkItem)):
        return e.non_negative
    if isinstance(e, ir.Cast):
        a, t, src = e.a, e.type, getattr(e.a, "type", None)
        if isinstance(a, (ir.Raw, ir.WorkItem)):
            return a.non_negative
        if src is None or not (getattr(t, "is_int", False) and getattr(src, "is_int", False)):
            return False
        if src.kind == "u":
            # int32 arithmetic wraps like numpy's, spelled ((int)((uint)a + (uint)b)): a sum or
            # product of non-negative values (an index that overflowed is out of range anyway);
            # a subtraction, as in "i - 1", stays unproven
            if isinstance(a, ir.Bin) and a.op == "-":     # y - 1 where y >= 1 is known
                return _difference_non_negative(a.a, a.b, known)
            return (isinstance(a, ir.Bin) and a.op in ("+", "*")
                    and _unsigned_of_non_negative(a.a, known) and _unsigned_of_non_negative(a.b, known))
        return t.bits >= src.bits and is_non_negative(a, known)
    if isinstance(e, ir.Bin):
        if e.op in _CLOSED_OPS:
            return is_non_negative(e.a, known) and is_non_negative(e.b, known)
        if e.op == "&":
            return is_non_negative(e.a, known) or is_non_negative(e.b, known)
        if e.op == "-":
            return _difference_non_negative(e.a, e.b, known)
        return False
    if isinstance(e, ir.Ternary):
        return is_non_negative(e.a, known) and is_non_negative(e.b, known)
    if isinstance(e, ir.Call) and e.fn.startswith("pg_pymod_") and len(e.args) == 2:
        return is_non_negative(e.args[1], known)   # Python's % takes the divisor's sign
    return False


def _difference_non_negative(a: ir.Expr, b: ir.Expr, known: "set[str]") -> bool:
    """``a - b`` is >= 0: ``b`` a constant c >= 0 and ``a`` proven >= c (no wrap either way)."""
    c = _int_const(b)
    low = lower_bound(a, known)
    return c is not None and c >= 0 and low is not None and low >= c


def lower_bound(e: ir.Expr, known: "set[str]") -> "int | None":
    """A proven lower bound of ``e`` that is >= 0, or None: constants, variables from ``known``
    (``KnownSigns.lower``, else 0), value-keeping integer casts and sums of such values."""
    c = _int_const(e)
    if c is not None:
        return c if c >= 0 else None
    if isinstance(e, ir.Var):
        low = getattr(known, "lower", {}).get(e.name)
        return low if low is not None else (0 if e.name in known else None)
    if isinstance(e, ir.Cast):
        a, t, src = e.a, e.type, getattr(e.a, "type", None)
        if src is None or not (getattr(t, "is_int", False) and getattr(src, "is_int", False)):
            return None
        if src.kind == "u" and isinstance(a, ir.Bin) and a.op in ("+", "-"):   # ((int)((uint)a + (uint)b))
            if a.op == "+":
                return _sum_bound(a, known)
            low, k = lower_bound(a.a, known), _int_const(a.b)
            return low - k if low is not None and k is not None and 0 <= k <= low else None
        # a non-negative value keeps its value in a type as wide ((unsigned int)y) or wider ((long)y);
        # an unsigned one only in a wider signed type
        keeps = t.bits > src.bits or (t.bits == src.bits and (t.kind == src.kind or src.kind != "u"))
        return lower_bound(a, known) if keeps else None
    if isinstance(e, ir.Bin) and e.op == "+":
        return _sum_bound(e, known)
    return None if not is_non_negative(e, known) else 0


def _sum_bound(e: ir.Bin, known: "set[str]") -> "int | None":
    a, b = lower_bound(e.a, known), lower_bound(e.b, known)
    return a + b if a is not None and b is not None else None


def _int_const(e: ir.Expr) -> "int | None":
    """The value of an integer constant, also behind casts (``(unsigned int)(1)``), else None."""
    while isinstance(e, ir.Cast) and getattr(e.type, "is_int", False):
        e = e.a
    if isinstance(e, ir.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


# comparison operators as seen from the other side, and when the comparison is false
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def guard_bounds(cond: ir.Expr, known: "set[str]") -> "tuple[dict[str, int], dict[str, int]]":
    """``(where cond is true, where it is false)``: lower bounds of integer variables an ``if``
    test implies, e.g. ``i > 0`` -> {i: 1} in its body, ``y == 0 || x == 0`` -> {y: 1, x: 1} in
    its ``else`` when y and x are known >= 0. Bounds below 0 are not kept."""
    return _bounds_where(cond, known, True), _bounds_where(cond, known, False)


def _bounds_where(c: ir.Expr, known: "set[str]", holds: bool) -> "dict[str, int]":
    if isinstance(c, ir.Un) and c.op == "!":
        return _bounds_where(c.a, known, not holds)
    if not isinstance(c, ir.Bin):
        return {}
    if (c.op == "&&" and holds) or (c.op == "||" and not holds):      # both operands hold (or fail)
        out = _bounds_where(c.a, known, holds)
        for var, low in _bounds_where(c.b, known, holds).items():
            out[var] = max(low, out.get(var, low))
        return out
    if c.op not in _NEGATED:
        return {}
    op = c.op if holds else _NEGATED[c.op]      # integers only: not (i < 1) is i >= 1 (no NaN)
    name, k = _int_var(c.a), _int_const(c.b)
    if name is None:
        name, k, op = _int_var(c.b), _int_const(c.a), _FLIPPED[op]
    if name is None or k is None:
        return {}
    if op == ">":
        low = k + 1
    elif op in (">=", "=="):
        low = k
    elif op == "!=" and lower_bound(ir.Var(name, None), known) == k:   # i >= 0 and i != 0: i >= 1
        low = k + 1
    else:
        return {}
    return {name: low} if low >= 0 else {}


def _int_var(e: ir.Expr) -> "str | None":
    return e.name if isinstance(e, ir.Var) and getattr(e.type, "is_int", False) else None


def _unsigned_of_non_negative(e: ir.Expr, known: "set[str]") -> bool:
    """An operand of a wrapped unsigned chain that is a non-negative value: a constant, a cast of
    a proven value, or (flat chains such as ``(uint)i + (uint)i + 1u``) a nested ``+``/``*``."""
    if isinstance(e, ir.Const):
        return isinstance(e.value, (bool, int)) and e.value >= 0
    if isinstance(e, ir.Bin) and e.op in ("+", "*"):
        return _unsigned_of_non_negative(e.a, known) and _unsigned_of_non_negative(e.b, known)
    return isinstance(e, ir.Cast) and is_non_negative(e.a, known)


def stores_name(body: "list[ast.stmt]", name: str) -> bool:
    """Whether any statement of ``body`` (nested ones included) assigns ``name``."""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
                return True
    return False
