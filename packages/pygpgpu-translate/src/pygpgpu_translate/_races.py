"""Stores every work item of a parallel loop makes to one shared element (``t[0] += x[i]``).

The iterations of a kernel's magic loop (``for i in range(n)``, ``np.ndindex``...) run at once,
one per work item. A store whose index does not depend on the work item hits the same element
from all of them: ``t[0] += x[i]`` is a read-modify-write race that loses most updates (12500
of 100000) with no error, where Python's loop would sum. Such stores are refused when
translating, with what to write instead (docs/kernels.md#one-element-from-every-work-item).

Still allowed, because the result does not depend on the order the work items run in:
- a store under ``if i == c:`` (the domain index pinned to one value): one work item writes;
- a store of a value that is the same in every work item and reads no array the kernel writes
  (``found[0] = 1`` under any condition: whichever item writes last, the element is 1).

Each work dimension is looked at on its own, so over ``np.ndindex`` ``rowsum[y] += img[y, x]``
(the same element from every ``x``) is refused too, and ``if x == 0: rowsum[y] = s`` is not.
"Depends on the work item" is decided on the kernel's IR, conservatively: a local is *varying*
when a value it is assigned is (work-item ids, loads at varying indices, atomics' results, helper
calls given arrays), when it is assigned under a varying condition and also elsewhere or in a
loop, or when it is assigned in a loop whose trip count may vary. Anything unsure counts as
varying, so a doubtful store is accepted (this check misses races, it never refuses a kernel
whose work items write different elements). Stores inside helpers are not checked.
"""
from __future__ import annotations

import ast

from . import _ir as ir

__all__ = ["refuse_shared_stores"]

_ITEM_IDS = ("global_id", "local_id", "group_id")


def _strip(e):
    while isinstance(e, ir.Cast):
        e = e.a
    return e


class _Varying:
    """What may differ between the work items along work dimension ``dim`` (the others held)."""

    def __init__(self, body, dim: int):
        self.dim = dim
        self.names: set[str] = set()
        self.counts: dict[str, int] = {}
        self.written: set[str] = set()               # roots of arrays the kernel stores to
        self._count(body)

    def _count(self, stmts):
        for s in stmts:
            if isinstance(s, ir.Assign):
                self.counts[s.target.name] = self.counts.get(s.target.name, 0) + 1
            elif isinstance(s, ir.Store):
                self.written.add(s.array.root)
            elif isinstance(s, ir.For):
                self.counts[s.var.name] = self.counts.get(s.var.name, 0) + 2
            for sub in _children(s):
                self._count(sub)

    def expr(self, e) -> bool:
        """Whether ``e`` may differ between work items (a stack, not recursion: sums of thousands
        of terms nest that deep)."""
        stack = [e]
        while stack:
            e = _strip(stack.pop())
            if isinstance(e, ir.WorkItem):
                if e.what in _ITEM_IDS and e.dim == self.dim:
                    return True
                continue
            if isinstance(e, ir.Var):
                if e.name in self.names:
                    return True
                continue
            if isinstance(e, ir.Call) and ("atomic" in e.fn or any(isinstance(a, ir.ArrayRef) for a in e.args)):
                return True                           # an atomic's old value, a helper reading arrays
            if isinstance(e, ir.Load) and e.array.type.space != "global":
                return True                           # private and local memory differ per item/group
            stack.extend(ir.operands(e))
        return False

    def reads_written(self, e) -> bool:
        """Whether ``e`` loads an element of an array the kernel stores to (t[0] + x[i] reads t)."""
        stack = [e]
        while stack:
            e = _strip(stack.pop())
            if isinstance(e, ir.Load) and e.array.root in self.written:
                return True
            if isinstance(e, ir.Call) and any(isinstance(a, ir.ArrayRef) for a in e.args):
                return True
            stack.extend(ir.operands(e))
        return False

    def settle(self, body):
        """Find every varying local at once. Each fact about a local (``_facts``: a value it is
        assigned, the conditions and loop bounds around it) either varies by itself (a work-item
        id, an atomic, a private load, a loop that may exit early) or once a local it reads does, so
        the varying locals are those reachable from the first kind along "is read by" edges: one
        visit per fact, where walking the whole body again until nothing changed took one walk per
        link of a chain of locals (benchmarks/translate_time.py)."""
        facts: list[tuple[str, list, bool]] = []
        self._facts(body, [], False, False, facts)
        readers: dict[str, list[str]] = {}
        todo: list[str] = []
        for target, exprs, always in facts:
            if always or any(self.expr(e) for e in exprs):     # self.names is empty: what varies by itself
                todo.append(target)
                continue
            for name in _var_names(exprs):
                readers.setdefault(name, []).append(target)
        while todo:
            name = todo.pop()
            if name not in self.names:
                self.names.add(name)
                todo.extend(readers.get(name, ()))

    def _facts(self, stmts, ctx: list, ctx_always: bool, in_loop: bool, out: list) -> None:
        """(local, expressions, always) per assignment and loop variable of ``stmts``: the local
        varies when ``always`` or any of the expressions does. ``ctx``/``ctx_always``: the
        conditions and loop bounds around ``stmts``, which make a local assigned under them vary
        when it is also assigned elsewhere or in a loop."""
        for s in stmts:
            if isinstance(s, ir.Assign):
                name = s.target.name
                if in_loop or self.counts.get(name, 0) > 1:
                    out.append((name, [s.value] + ctx, ctx_always))
                else:
                    out.append((name, [s.value], False))
            elif isinstance(s, ir.If):
                inner = ctx if _is_domain_guard(s.cond) else ctx + [s.cond]
                self._facts(s.body, inner, ctx_always, in_loop, out)
                self._facts(s.orelse, inner, ctx_always, in_loop, out)
            elif isinstance(s, ir.For):
                inner = ctx + [s.start, s.stop, s.step]
                inner_always = ctx_always or _exits(s.body)
                out.append((s.var.name, inner, inner_always))
                self._facts(s.body, inner, inner_always, True, out)
            elif isinstance(s, ir.While):
                self._facts(s.body, ctx + [s.cond], ctx_always or _exits(s.body), True, out)


def _var_names(exprs) -> set[str]:
    """The locals ``exprs`` read (what ``_Varying.expr`` looks up in its names)."""
    names = set()
    stack = list(exprs)
    while stack:
        e = stack.pop()
        if isinstance(e, ir.Var):
            names.add(e.name)
        stack.extend(ir.operands(e))
    return names


def _children(s):
    if isinstance(s, ir.If):
        return [s.body, s.orelse]
    if isinstance(s, (ir.For, ir.While)):
        return [s.body]
    return []


def _exits(stmts) -> bool:
    for s in stmts:
        if isinstance(s, (ir.Break, ir.Return)):
            return True
        if any(_exits(sub) for sub in _children(s)):
            return True
    return False


def _is_domain_guard(cond) -> bool:
    """The bounds guard the entry puts around the loop body (``gid < _pyg_n0``): inside it every
    work item of the domain runs, so it is no condition on the work item's data."""
    stack = [cond]
    while stack:
        e = stack.pop()
        if isinstance(e, ir.Var) and e.name.startswith("_pyg_n"):
            return True
        stack.extend(ir.operands(e))
    return False


def _pinned(cond, v: _Varying, aliases: dict) -> set:
    """The domain indices ``cond`` pins to one value (``i == 0``, ``y == 0 and x == k``)."""
    cond = _strip(cond)
    if isinstance(cond, ir.Bin) and cond.op == "&&":
        return _pinned(cond.a, v, aliases) | _pinned(cond.b, v, aliases)
    if isinstance(cond, ir.Bin) and cond.op == "==":
        for x, y in ((cond.a, cond.b), (cond.b, cond.a)):
            x = _strip(x)
            if isinstance(x, ir.Var) and x.name in aliases and not v.expr(y):
                return {aliases[x.name]}
    return set()


def _aliases(body, domain_vars, v: _Varying) -> dict:
    """Locals that are one domain index plus or minus a uniform value (j = i + 1): pinning one pins
    the index. Maps local -> domain index."""
    out = {d: d for d in domain_vars}
    changed = True
    while changed:
        changed = False
        for s in _all_stmts(body):
            if not (isinstance(s, ir.Assign) and v.counts.get(s.target.name) == 1) or s.target.name in out:
                continue
            e = _strip(s.value)
            if isinstance(e, ir.Var) and e.name in out:
                out[s.target.name] = out[e.name]
                changed = True
            elif isinstance(e, ir.Bin) and e.op in ("+", "-"):
                a, b = _strip(e.a), _strip(e.b)
                for x, y in [(a, b)] + ([(b, a)] if e.op == "+" else []):
                    if isinstance(x, ir.Var) and x.name in out and not v.expr(y):
                        out[s.target.name] = out[x.name]
                        changed = True
                        break
    return out


def _all_stmts(stmts):
    for s in stmts:
        yield s
        for sub in _children(s):
            yield from _all_stmts(sub)


def _dims_of(body, domain_vars) -> dict:
    """domain index (C name) -> the work dimension its value comes from (y of np.ndindex: 1)."""
    out = {}
    for s in _all_stmts(body):
        if isinstance(s, ir.Assign) and s.target.name in domain_vars:
            stack = [s.value]
            while stack:
                e = stack.pop()
                if isinstance(e, ir.WorkItem):
                    out[s.target.name] = e.dim
                    break
                stack.extend(ir.operands(e))
    return out


def refuse_shared_stores(body, domain_vars, src, kernel_name: str, loop_text: str) -> None:
    """Raise SyntaxError at the first store of ``body`` (a magic loop kernel's IR) that the work
    items along some dimension of the loop all make to one element of a global array, racing (see
    the module docstring): ``t[0] += x[i]``, and over ``np.ndindex`` also ``rowsum[y] += img[y, x]``."""
    from ._source import syntax_error
    dims = _dims_of(body, domain_vars)
    for dim in sorted(set(dims.values())) or [0]:
        v = _Varying(body, dim)
        v.settle(body)
        aliases = _aliases(body, [d for d, k in dims.items() if k == dim], v)

        def check(stmts, pinned, v=v, aliases=aliases):
            for s in stmts:
                if isinstance(s, ir.Store) and not pinned and s.array.type.space == "global":
                    if not v.expr(s.index) and (v.expr(s.value) or v.reads_written(s.value)):
                        _refuse(s, src, kernel_name, loop_text, syntax_error)
                elif isinstance(s, ir.If):
                    check(s.body, pinned or bool(_pinned(s.cond, v, aliases)), v, aliases)
                    check(s.orelse, pinned, v, aliases)
                else:
                    for sub in _children(s):
                        check(sub, pinned, v, aliases)

        check(body, False)


def _refuse(store, src, kernel_name, loop_text, syntax_error):
    node = next((n for n in ast.walk(src.tree) if isinstance(n, ast.stmt) and getattr(n, "lineno", 0) == store.line
                 and not isinstance(n, (ast.If, ast.For, ast.While))), None)
    line = store.line           # a file line, as src.lines is indexed (syntax_error)
    text = src.lines[line - 1].strip() if 0 < line <= len(src.lines) else "this store"
    name = store.array.root
    raise syntax_error(
        src, node if node is not None else src.tree,
        f"`{text}` writes one element of {name!r} from every work item of the parallel loop {loop_text}: the "
        f"iterations run at once, so their updates race and most are lost (no error, a wrong result)",
        f"for a sum into one element use gpu.atomic_add({name}, index, value) (gpu.atomic_max/min for extremes); "
        f"for a whole reduction use gnp's x.sum() or @pygpgpu.reduce; if one work item should write, guard it "
        f"with `if i == 0:` (docs/kernels.md)", kernel_name)
