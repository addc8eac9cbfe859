"""Static read/write analysis per array: which kernel parameters are read, written or both.

Loads are reads, stores are writes, atomics are both; helper calls contribute their own
summary mapped onto the arrays passed in (interprocedural), and array aliases were
already resolved to their root parameter by the builder. When in doubt: read-write.
"""
from __future__ import annotations

from . import _ir as ir

__all__ = ["analyze_function", "access_word"]


def _walk_expr(e, acc, by_cname):
    if isinstance(e, ir.Load):
        acc.setdefault(e.array.cname, set()).add("r")
        _walk_expr(e.index, acc, by_cname)
        return
    if isinstance(e, ir.Call):
        root = getattr(e, "atomic_root", None)
        helper = getattr(e, "helper", None)
        if root is not None:
            ptr = e.args[0]
            name = ptr.a.array.cname
            acc.setdefault(name, set()).update("rw")
        if helper is not None:
            for p, a in zip(helper.params, e.args):
                if isinstance(a, ir.ArrayRef):
                    acc.setdefault(a.cname, set()).update(helper.access.get(p.name, ()))
        for a in e.args:
            _walk_expr(a, acc, by_cname)
        return
    for attr in ("a", "b", "cond", "index"):
        sub = getattr(e, attr, None)
        if isinstance(sub, ir.Expr):
            _walk_expr(sub, acc, by_cname)
    for sub in getattr(e, "args", ()) or ():
        if isinstance(sub, ir.Expr):
            _walk_expr(sub, acc, by_cname)


def _walk_stmts(body, acc):
    for s in body:
        if isinstance(s, ir.Store):
            acc.setdefault(s.array.cname, set()).add("w")
            _walk_expr(s.index, acc, None)
            _walk_expr(s.value, acc, None)
        elif isinstance(s, ir.Assign):
            _walk_expr(s.value, acc, None)
        elif isinstance(s, ir.ExprStmt):
            _walk_expr(s.value, acc, None)
        elif isinstance(s, ir.Return):
            if s.value is not None:
                _walk_expr(s.value, acc, None)
        elif isinstance(s, ir.If):
            _walk_expr(s.cond, acc, None)
            _walk_stmts(s.body, acc)
            _walk_stmts(s.orelse, acc)
        elif isinstance(s, ir.While):
            _walk_expr(s.cond, acc, None)
            _walk_stmts(s.body, acc)
        elif isinstance(s, ir.For):
            for e in (s.start, s.stop, s.step):
                _walk_expr(e, acc, None)
            _walk_stmts(s.body, acc)


def analyze_function(fn: ir.Function) -> dict:
    """Fill ``fn.access`` (C pointer name -> {"r","w"}) from its body; helpers must be analyzed first."""
    acc: dict = {}
    _walk_stmts(fn.body, acc)
    fn.access = acc
    return acc


def access_word(flags) -> str:
    flags = set(flags or ())
    if flags == {"r"}:
        return "read"
    if flags == {"w"}:
        return "write"
    if not flags:
        return "unused"
    return "readwrite"
