"""How deeply an IR expression nests, so the builder can keep it shallow.

A flat Python sum of 300 terms is a 300-deep tree; printed as C it exceeded clang's limit of
256 nested brackets, and every recursive walk (analyses, emitter) grows the Python stack with
it. The builder moves a subexpression deeper than ``MAX_DEPTH`` into a temporary
(``_t1 = ...;``), which bounds both: C nests at most about two brackets per level.
"""
from __future__ import annotations

from . import _ir as ir

__all__ = ["MAX_DEPTH", "deeper_than"]

MAX_DEPTH = 64


def _children(e):
    if isinstance(e, ir.Bin):
        return (e.a, e.b)
    if isinstance(e, (ir.Un, ir.Cast, ir.Swizzle)):
        return (e.a,)
    if isinstance(e, ir.Ternary):
        return (e.cond, e.a, e.b)
    if isinstance(e, (ir.Call, ir.VecCtor)):
        return tuple(e.args)
    if isinstance(e, ir.Load):
        return (e.index,)
    return ()


def deeper_than(e, limit: int = MAX_DEPTH) -> bool:
    """Whether expression ``e`` nests more than ``limit`` levels (iterative: any depth is fine)."""
    stack = [(e, 1)]
    while stack:
        x, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in _children(x))
    return False
