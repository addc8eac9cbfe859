"""Which integer scalar parameters the kernel converts to a narrower integer type.

A Python int argument is weak: ``int8_data[i] + c`` computes in int8 and ``out_int32[i] = c``
stores an int32, as in numpy. numpy raises OverflowError when the Python int does not fit that
type (``2**31`` meeting int32 data, ``300`` meeting int8); the kernel would silently wrap it. This
analysis lists, per scalar parameter, the integer types it is converted to, so the launch can
range-check the Python int on the host (``_launch_checks.int_range_checks``).

Conversions of the parameter itself and of locals that copy it (``k = c``) are found; a value
computed from it (``c + 1``) is not.
"""
from __future__ import annotations

import numpy as np

from . import _ir as ir
from ._types import Scalar

__all__ = ["int_meets"]


def _fits(inner: Scalar, outer: Scalar) -> bool:
    """Whether every value of ``inner`` is a value of ``outer``."""
    a, b = np.iinfo(inner.dtype), np.iinfo(outer.dtype)
    return b.min <= a.min and a.max <= b.max


def _is_int(t) -> bool:
    return isinstance(t, Scalar) and t.is_int


def _exprs(e):
    yield e
    for sub in ir.operands(e):
        yield from _exprs(sub)


_WRAP_OPS = ("+", "-", "*", "<<")


def _wrap_leaves(e):
    """The operands of the translator's wrapping arithmetic ``e`` (``_expressions.wrap_narrow``),
    or None when ``e`` is not one. Signed ints (and narrow ones) compute + - * << in the unsigned
    type of at least 32 bits, because signed overflow is undefined in C: ``(int)((uint)a + (uint)b)``,
    ``(short)((uint)a * (uint)b)``, chains ``(int)((uint)a + (uint)b + (uint)c)``, ``(int)(0u - (uint)a)``.
    Those inner casts to the unsigned type reinterpret bits; they convert no value."""
    if not (isinstance(e, ir.Cast) and _is_int(e.type) and (e.type.kind == "i" or e.type.bits < 32)
            and isinstance(e.a, ir.Bin)):
        return None
    u = Scalar(f"uint{max(e.type.bits, 32)}")
    if not (e.a.type == u and e.a.op in _WRAP_OPS):
        return None
    leaves: list = []

    def walk(b):
        if isinstance(b, ir.Bin) and b.type == u and b.op in _WRAP_OPS:
            walk(b.a)
            walk(b.b)             # for << the count, an operand like any other here
        elif isinstance(b, ir.Cast) and b.type == u:
            leaves.append(b.a)    # the reinterpretation itself is no conversion; what it wraps may hold some
        else:
            leaves.append(b)

    walk(e.a)
    return leaves


def _conversions(e):
    """The integer conversions in ``e`` that change a value's type (not the wrap reinterpretations)."""
    leaves = _wrap_leaves(e)
    if leaves is not None:
        for o in leaves:
            yield from _conversions(o)
        return
    if isinstance(e, ir.Cast):
        yield e
    for sub in ir.operands(e):
        yield from _conversions(sub)


def _stmt_exprs(body):
    for s in body:
        for attr in ("value", "index", "cond", "start", "stop", "step"):
            e = getattr(s, attr, None)
            if isinstance(e, ir.Expr):
                yield s, e
        for attr in ("body", "orelse"):
            yield from _stmt_exprs(getattr(s, attr, None) or ())


def int_meets(fn: ir.Function, layout: list) -> list:
    """``[python name, dtype name]`` for each narrower integer type a scalar parameter (or a local
    copy of it, or a helper's parameter it is passed as) is converted to."""
    if len(fn.params) != len(layout):
        return []
    params = {}                                   # C name -> (Python name, C type)
    for p, item in zip(fn.params, layout):
        if item[0] == "scalar" and _is_int(p.type):
            params[p.name] = (item[1], p.type)
    if not params:
        return []
    found: set = set()
    _walk(fn, {c: {c} for c in params}, params, found, set())
    return sorted([n, t] for n, t in found)


def _walk(fn, sources, params, found, seen) -> None:
    """Record in ``found`` the narrowing conversions in ``fn`` of the values in ``sources``
    (C name -> the kernel parameters its value is a copy of), following helper calls."""
    sources = {k: set(v) for k, v in sources.items()}
    changed = True
    while changed:                                # copies: k = c, k2 = k, widening casts included
        changed = False
        for s, e in _stmt_exprs(fn.body):
            if not isinstance(s, ir.Assign) or e is not s.value:
                continue
            v = _copied(e, sources, params)
            if v is not None:
                have = sources.setdefault(s.target.name, set())
                if not sources[v] <= have:
                    have |= sources[v]
                    changed = True
    for _s, top in _stmt_exprs(fn.body):
        for e in _conversions(top):
            if _is_int(e.type) and isinstance(e.a, ir.Var) and e.a.name in sources:
                for c in sources[e.a.name]:
                    pyname, ptype = params[c]
                    if not _fits(ptype, e.type.strong()):
                        found.add((pyname, e.type.name))
        for e in _exprs(top):
            helper = getattr(e, "helper", None) if isinstance(e, ir.Call) else None
            if helper is not None:
                passed = {}
                for p, a in zip(helper.params, e.args):
                    v = _copied(a, sources, params)
                    if v is not None:
                        passed[p.name] = sources[v]
                key = (id(helper), tuple(sorted((k, tuple(sorted(v))) for k, v in passed.items())))
                if passed and key not in seen:
                    seen.add(key)
                    _walk(helper, passed, params, found, seen)


def _copied(e, sources, params):
    """The C name whose value ``e`` carries unchanged (a variable, or a widening integer cast of
    one), if it is a copy of a kernel parameter; else None."""
    v = e
    if isinstance(e, ir.Cast) and _is_int(e.type) and _is_int(e.a.type):
        v = e.a
    if not (isinstance(v, ir.Var) and v.name in sources):
        return None
    if v is not e and not all(_fits(params[c][1], e.type.strong()) for c in sources[v.name]):
        return None
    return v.name
