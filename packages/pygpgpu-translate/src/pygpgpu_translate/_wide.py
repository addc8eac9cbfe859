"""Wide kernels: a streamed 1-D kernel whose work items each handle several consecutive elements,
loading and storing them as one vector access (docs/architecture.md#the-launch-path).

A memory-bound kernel such as ``out[i] = a * x[i] + y[i]`` moves 4 bytes per array per work item;
GPUs reach their copy bandwidth only with more bytes in flight per thread (torch and handwritten
code use ``float4``). When the analyses prove it safe, the kernel's domain body is rewritten so
that work item ``g`` handles elements ``i0 = g * LANES`` .. ``i0 + LANES - 1``:

- the whole group in range (of the domain and of every array), and every array's pointer
  aligned to the vector's size (checked in the kernel, so views, staging slots and foreign
  pointers at any offset are safe): one vector load per array first, the body once per lane on
  registers, one vector store per written array last;
- otherwise (the last, partial group; a misaligned pointer): the original body, lane by lane.

Proven safe means: the domain is ``for i in range(n)`` (start 0, step 1) of one dimension; every
array the kernel touches is *streamed* (``_access.streamed_arrays``: each access is the work
item's own element ``a[i]``), 1-D, of a plain numeric element type; the body has no inner loop,
``break``/``continue``/``return``, barrier, fence, atomic, local or private array, work-item
builtin, or helper that has any of these. ``i`` itself may be used as a value: each lane sets
its own. A local the body reassigns that held a value before the loop (a scalar parameter,
``s = 0`` above the loop) is restored before each lane, as each work item would see it. An
array written only under a condition is loaded first and stored back whole (this work item
owns those elements). Anything else: not widened.

One array may be passed as two parameters (``k(x, x)``, in place). Loading every array before
any store keeps ``out[i] = x[i] + 1`` right when ``out`` is ``x``; where the registers would
not (an array read after *another* was written, two written arrays), the vector path also
requires those pointers to differ, so an aliased call takes the lane-by-lane path, which runs
the body as written.

``PYGPGPU_WIDE_LOADS=0`` (read at import) turns widening off, e.g. to compare; it is part of the
generated-source cache key.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import _ir as ir
from ._types import BOOL, INT64, ArrayType, Scalar, Vector

__all__ = ["ENABLED", "WidePlan", "plan_wide", "widen"]

VECTOR_BYTES = 16        # one 128-bit access per array and work item
MAX_LANES = 4            # CUDA and HIP build in 2- and 4-wide vectors of every element type, not 8 or 16
MAX_BODY_NODES = 400     # a larger body is copied LANES + 1 times for little gain: such kernels compute more than they move
MAX_APART = 16           # pointer comparisons the vector path may need (pairs of arrays that must not alias)
_ELEMENTS = frozenset({"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"})
_UINT64 = Scalar("uint64")


def _switched_on() -> bool:
    return os.environ.get("PYGPGPU_WIDE_LOADS", "1").strip().lower() not in ("0", "off", "false", "no")


ENABLED = _switched_on()


@dataclass
class WidePlan:
    lanes: int
    guard: ir.If           # the domain guard: if (gid < _pyg_n0) { i = gid; ... }
    gid: ir.Expr           # the global id in it (int64)
    bound: ir.Expr         # _pyg_n0
    refs: dict             # C pointer name -> ir.ArrayRef, every array the body touches, first use first
    loaded: set            # C names read (or written only under a condition): loaded before the lanes
    written: list          # C names written, in the order their stores must happen
    kept: dict             # C name -> type: values set before the loop that the body reassigns
    apart: list            # (C name, C name): arrays the vector path needs to be different memory
    short: list = field(default_factory=list)   # C names of arrays that may be shorter than the domain


class _NotWide(Exception):
    """Some construct makes lanes of one work item differ from separate work items."""


def _guard_of(fn: ir.Function, index: tuple):
    """The domain guard ``if ((idx)gid0 < _pyg_n0) { i = (idx)gid0; ... }`` as ``_entry`` builds it."""
    if len(index) != 1 or not fn.body:
        return None
    g = fn.body[-1]
    if not (isinstance(g, ir.If) and not g.orelse and len(g.body) >= 2):
        return None
    c = g.cond
    if not (isinstance(c, ir.Bin) and c.op == "<" and isinstance(c.a, ir.Cast) and isinstance(c.a.a, ir.WorkItem)
            and c.a.a.what == "global_id" and c.a.a.dim == 0 and isinstance(c.b, ir.Var) and c.b.name == "_pyg_n0"):
        return None
    first = g.body[0]
    if not (isinstance(first, ir.Assign) and first.target.name == index[0] and first.value == c.a):
        return None
    return g


def _forbidden(e) -> bool:
    """Work-item ids, barriers, fences, atomics, addresses of elements: what differs between lanes;
    and ``print``, whose lines are for reading, not speed (one printf per lane and path would only
    bloat the kernel)."""
    return (isinstance(e, (ir.WorkItem, ir.Barrier, ir.MemFence, ir.WideLoad, ir.Printf))
            or getattr(e, "atomic_root", None) is not None
            or (isinstance(e, ir.Un) and e.op == "&"))


def _plain(e) -> bool:
    return not _forbidden(e) and all(_plain(sub) for sub in ir.operands(e))


def _plain_body(body) -> bool:
    """Whether statements use none of what makes lanes differ (a helper's body, the kernel's lines
    above the loop; arrays reach a helper only as arguments, which the kernel's scan refuses)."""
    for s in body:
        if isinstance(s, (ir.LocalArrayDecl, ir.WideStore)):
            return False
        for name in ("value", "cond", "index", "start", "stop", "step"):
            sub = getattr(s, name, None)
            if isinstance(sub, ir.Expr) and not _plain(sub):
                return False
        for name in ("body", "orelse"):
            if not _plain_body(getattr(s, name, None) or ()):
                return False
    return True


def plan_wide(fn: ir.Function, helpers: list, index, domain_kind: str, streamed: set, *, extents=(),
              uses_barrier: bool, local_arrays: list, debug: bool) -> "WidePlan | None":
    """How to widen kernel ``fn`` (its IR after the analyses), or None where that is not proven safe.
    ``extents``: C names of the arrays whose extent the launch checks against the domain on the host
    (``_access.own_index_accesses``); the others are checked in the kernel."""
    if not ENABLED or debug or uses_barrier or local_arrays or domain_kind != "range" or not index:
        return None
    guard = _guard_of(fn, index)
    if guard is None:
        return None
    arrays = {p.name: p.type for p in fn.params if isinstance(p.type, ArrayType)}
    for name, t in arrays.items():
        if not fn.access.get(name):
            continue                                   # passed, never touched
        elem = t.elem
        if (name not in streamed or t.ndim != 1 or t.space != "global" or t.row_width
                or not isinstance(elem, Scalar) or elem.name not in _ELEMENTS):
            return None
    if not all(_plain_body(h.body) for h in helpers) or not _plain_body(fn.body[:-1]):
        return None
    try:
        plan = _scan(fn, guard, index[0], arrays)
    except _NotWide:
        return None
    if plan is not None:
        plan.short = [name for name in plan.refs if name not in extents]
    return plan


def _scan(fn: ir.Function, guard: ir.If, i_name: str, arrays: dict) -> "WidePlan | None":
    refs: dict = {}
    reads: set = set()
    unconditional: set = set()  # C names stored at the top level of the body: on every lane
    order: list = []            # C names in the order of their first store
    stored: set = set()         # written so far, in program order
    apart: set = set()          # pairs of C names that must not be one array for the registers to be right
    assigned: dict = {}         # C name -> type of every variable the body assigns
    nodes = 0

    def array_of(ref: ir.ArrayRef, index) -> str:
        name = ref.cname
        if name not in arrays or not (isinstance(index, ir.Var) and index.name == i_name):
            raise _NotWide
        refs.setdefault(name, ref)
        return name

    def expr(e):
        nonlocal nodes
        nodes += 1
        if _forbidden(e) or isinstance(e, ir.ArrayRef):
            raise _NotWide                       # an array passed whole (a helper), an id, an atomic
        if isinstance(e, ir.Load):
            if e.member:
                raise _NotWide
            name = array_of(e.array, e.index)
            # read after another array was written: if that is the same memory, this read must see
            # the write, which the registers (loaded first) do not
            apart.update(frozenset((name, other)) for other in stored if other != name)
            reads.add(name)
            return
        for sub in ir.operands(e):
            expr(sub)

    def stmts(body, top):
        for s in body:
            if isinstance(s, ir.Store):
                if s.member:
                    raise _NotWide
                expr(s.value)
                name = array_of(s.array, s.index)
                if top:
                    unconditional.add(name)
                if name not in order:
                    order.append(name)
                stored.add(name)
            elif isinstance(s, ir.Assign):
                if s.target.name == i_name:
                    raise _NotWide
                assigned[s.target.name] = s.target.type
                expr(s.value)
            elif isinstance(s, ir.ExprStmt):
                expr(s.value)
            elif isinstance(s, ir.If):
                expr(s.cond)
                stmts(s.body, False)
                stmts(s.orelse, False)
            else:                                # loops, exits, local arrays: lanes would not run alike
                raise _NotWide

    stmts(guard.body[1:], True)
    if not refs or nodes > MAX_BODY_NODES:
        return None
    # two outputs in one memory: the last store wins per element, which separate registers lose
    apart.update(frozenset((a, b)) for k, a in enumerate(order) for b in order[k + 1:])
    before = {p.name for p in fn.params} | _assigned_names(fn.body[:-1])
    kept = {name: t for name, t in assigned.items() if name in before}
    widest = max(refs[name].type.elem.dtype.itemsize for name in refs)
    lanes = min(MAX_LANES, VECTOR_BYTES // widest)
    if lanes < 2:
        return None
    if len(apart) > MAX_APART:
        return None
    loaded = reads | (set(order) - unconditional)
    cond = guard.cond
    assert isinstance(cond, ir.Bin) and isinstance(cond.a, ir.Cast)          # _guard_of matched it
    return WidePlan(lanes, guard, cond.a.a, cond.b, refs, loaded, order, kept, sorted(tuple(sorted(p)) for p in apart))


def _assigned_names(body) -> set:
    out: set = set()
    for s in body:
        if isinstance(s, ir.Assign):
            out.add(s.target.name)
        elif isinstance(s, ir.For):
            out.add(s.var.name)
        for name in ("body", "orelse"):
            out |= _assigned_names(getattr(s, name, None) or ())
    return out


def _on_registers(node, regs: dict, k: int):
    """``node`` with every access to an array in ``regs`` replaced by lane ``k``'s register."""
    if isinstance(node, ir.Load) and node.array.cname in regs:
        return regs[node.array.cname][k]
    if isinstance(node, ir.Store) and node.array.cname in regs:
        return ir.Assign(regs[node.array.cname][k], _on_registers(node.value, regs, k), node.line)
    return ir.rebuilt(node, lambda sub: _on_registers(sub, regs, k))


def widen(fn: ir.Function, plan: WidePlan) -> None:
    """Rewrite ``fn``'s domain guard in place for ``plan`` (see the module doc)."""
    guard = plan.guard
    i_var = guard.body[0].target
    idx = i_var.type
    gid, n = plan.gid, plan.bound
    rest = guard.body[1:]
    lanes = plan.lanes
    line = guard.line

    def local(name, t):
        fn.locals[name] = t
        return ir.Var(name, t)

    i0 = local("_pyg_i0", idx)
    first = ir.Bin("*", gid, ir.Const(lanes, INT64), INT64)      # in 64 bits: past 2**31 near the top
    keep = [(ir.Var(name, t), local(f"_pyg_keep{m}", t)) for m, (name, t) in enumerate(plan.kept.items())]

    def lane_start(value):
        return [ir.Assign(var, saved, line) for var, saved in keep] + [ir.Assign(i_var, value, line)]

    # the whole group in range: of the domain, and of each array the host does not check (one read
    # under a condition may be shorter than the domain)
    full = ir.Bin(">=", ir.Bin("-", n, i0, idx), ir.Const(lanes, idx), BOOL)
    for name in plan.short:
        full = ir.Bin("&&", full, ir.Bin(">=", ir.Bin("-", plan.refs[name].shape[0], i0, idx), ir.Const(lanes, idx),
                                         BOOL), BOOL)
    lows = [ir.Bin("&", ir.Cast(ref, _UINT64), ir.Const(lanes * ref.type.elem.dtype.itemsize - 1, _UINT64), _UINT64)
            for ref in plan.refs.values()]
    aligned = lows[0]
    for low in lows[1:]:
        aligned = ir.Bin("|", aligned, low, _UINT64)
    full = ir.Bin("&&", full, ir.Bin("==", aligned, ir.Const(0, _UINT64), BOOL), BOOL)
    for a, b in plan.apart:     # one array passed twice: the lanes in program order
        full = ir.Bin("&&", full, ir.Bin("!=", ir.Cast(plan.refs[a], _UINT64), ir.Cast(plan.refs[b], _UINT64), BOOL),
                      BOOL)

    vector_path: list = []
    regs: dict = {}
    for j, (name, ref) in enumerate(plan.refs.items()):
        elem = ref.type.elem
        regs[name] = [local(f"_pyg_w{j}_{k}", elem) for k in range(lanes)]
        if name in plan.loaded:
            vec = local(f"_pyg_w{j}", Vector(elem, lanes))
            vector_path.append(ir.Assign(vec, ir.WideLoad(ref, i0, vec.type), line))
            vector_path.extend(ir.Assign(regs[name][k], ir.Swizzle(vec, k, elem), line) for k in range(lanes))
    for k in range(lanes):
        vector_path.extend(lane_start(i0 if k == 0 else ir.Bin("+", i0, ir.Const(k, idx), idx)))
        vector_path.extend(_on_registers(rest, regs, k))
    for name in plan.written:
        ref = plan.refs[name]
        vector_path.append(ir.WideStore(ref, i0, list(regs[name]), Vector(ref.type.elem, lanes), line))

    lane = local("_pyg_lane", idx)
    at = ir.Bin("+", i0, lane, idx)
    scalar_path = [ir.For(lane, ir.Const(0, idx), ir.Const(lanes, idx), ir.Const(1, idx),
                          [ir.If(ir.Bin("<", at, n, BOOL), lane_start(at) + list(rest), [], line)], line, 1)]
    saves = [ir.Assign(saved, var, line) for var, saved in keep]
    guard.cond = ir.Bin("<", first, ir.Cast(n, INT64), BOOL)
    guard.body = [ir.Assign(i0, ir.Cast(first, idx), line)] + saves + [ir.If(full, vector_path, scalar_path, line)]
