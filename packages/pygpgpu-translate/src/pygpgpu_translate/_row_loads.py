"""Row vector loads: ``a[j, 0]`` .. ``a[j, 3]`` of a read-only ``(n, 4)`` float32 array as one
128-bit load of the row (docs/architecture.md#the-launch-path).

An n-body inner loop reads ``pos[j, 0]``, ``pos[j, 1]``, ``pos[j, 2]`` and ``pos[j, 3]``; a
handwritten kernel loads ``float4 q = pos[j]`` once. From the four scalar loads NVRTC made two
(x, y, z merged into one 128-bit load, w loaded apart: the ``asm`` of CUDA's ``gpu.rsqrt`` lies
between them), 70 SASS instructions in the 4-times unrolled loop against the handwritten 66;
with this pass, 66 and the same four ``LDG.E.128``. This pass finds, in each
straight-line run of statements of the kernel, the elements of one row that the run reads and
loads the row once, before the first of them, as an ``ir.WideLoad`` (the dialect's pointer cast,
``Dialect.wide_access``); each element becomes a component of it.

Why it is right:

- the layout is fixed by the signature: the array's last dimension is ``W`` (``known_last``),
  and every array a kernel sees is C-contiguous from its pointer (numpy arrays are staged so, a
  gnp view reaches a kernel as a contiguous copy), so element ``[..., k]`` of a row is
  ``X * W + k`` and the row is ``W`` consecutive elements from ``X * W``;
- at least one element of the row is read unconditionally in the run (not under ``and``/``or``/
  a conditional expression), and nothing in the run can leave it, so the row lies in the array
  whenever the original code reads it; the other elements of the row are in the array too;
- the array is read-only in the kernel (``fn.access``); no store, atomic, barrier, fence or call
  given an array or an address lies between the first read and the last (a written array may be
  the same memory, passed twice), and no variable of ``X`` is assigned in between;
- the vector access needs the pointer aligned to ``W * itemsize`` bytes (``X * W`` elements
  from an aligned pointer are aligned). Where the signature guarantees it (``ArrayType.align``:
  numpy arguments are staged on that boundary, gnp's own memory starts on a driver allocation)
  the load is unconditional. Otherwise (foreign memory: DLPack, CUDA array interface) one test
  of the pointer at the kernel's entry picks, at each row, the vector load or the element loads.

Rows of 2 or 4 elements of 4 bytes (float2/float4, int, uint) and of 2 elements of 8 bytes
(double2, long2): at most 16 bytes, which every dialect loads as one access. Not in the debug
(bounds-checked) mode, whose loads are each checked. ``PYGPGPU_WIDE_LOADS=0`` turns this off
with the wide kernels (``_wide.ENABLED``, part of the generated-source cache key).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import _ir as ir
from ._types import BOOL, ArrayType, Scalar, Vector

__all__ = ["row_loads"]

_ELEMENTS = {4: frozenset({"int32", "uint32", "float32"}), 8: frozenset({"int64", "uint64", "float64"})}
_UINT64 = Scalar("uint64")
MAX_ROWS = 32            # rows per kernel: a versioned row is two loads paths; past this, code size for little gain


@dataclass
class _Row:
    """The elements of one row that a run of statements reads."""
    ref: ir.ArrayRef
    width: int
    start: ir.Expr                     # flat index of the row's first element (X * W)
    x: ir.Expr                         # the row's number X
    names: set                         # variables X reads
    first: int                         # position in the run of the first statement reading it
    last: int = 0
    loads: dict = field(default_factory=dict)    # id(Load) -> component
    seen: set = field(default_factory=set)       # components read
    sure: bool = False                 # some element read unconditionally
    line: int = 0                      # of the first statement reading it


def _row_width(t) -> int:
    """W when ``t`` is a global array whose rows of ``W`` elements load as one vector, else 0."""
    if not (isinstance(t, ArrayType) and t.space == "global" and t.ndim >= 2 and isinstance(t.elem, Scalar)):
        return 0
    w, size = t.known_last, t.elem.dtype.itemsize
    if w not in (2, 4) or w * size > 16 or t.elem.name not in _ELEMENTS.get(size, ()):
        return 0
    return w


def _split_index(index, width: int):
    """(row start ``X * W``, X, component) of a flat index ``X * W + k``, or None."""
    if not (isinstance(index, ir.Bin) and index.op == "+" and isinstance(index.b, ir.Const)):
        return None
    k, start = index.b.value, index.a
    if not (isinstance(k, int) and 0 <= k < width and isinstance(start, ir.Bin) and start.op == "*"
            and isinstance(start.b, ir.Const) and start.b.value == width):
        return None
    return start, start.a, k


_PURE = (ir.Var, ir.Const, ir.Bin, ir.Cast, ir.Load, ir.MathCall, ir.WorkItem, ir.Ternary)


def _pure_names(e, out: set) -> bool:
    """Whether ``e`` has no effect and reads nothing but variables and arrays (``out``: the variables)."""
    if isinstance(e, ir.Var):
        out.add(e.name)
        return True
    if isinstance(e, ir.Un):
        return e.op != "&" and _pure_names(e.a, out)
    if not isinstance(e, _PURE):
        return False
    return all(_pure_names(sub, out) for sub in ir.operands(e))


def _closes(e) -> bool:
    """What memory reads may not be moved across: a write through a pointer (atomics, a helper given
    an array or an address), a barrier or a fence."""
    if isinstance(e, (ir.Barrier, ir.MemFence, ir.ArrayRef, ir.WideLoad)) or getattr(e, "atomic_root", None) is not None:
        return True
    if isinstance(e, ir.Un) and e.op == "&":
        return True
    return any(_closes(sub) for sub in ir.operands(e))


class _Finder:
    def __init__(self, fn: ir.Function):
        self.fn = fn
        self.widths = {p.name: w for p in fn.params if (w := _row_width(p.type)) and fn.access.get(p.name) == {"r"}}
        self.found: list = []          # (run (the statement list), _Row) of rows worth a vector load
        self.stmt = None

    # -- one straight-line run of statements ----------------------------------------------------------
    def run(self, body: list, lo: int, hi: int) -> None:
        open_rows: dict = {}           # (array, repr of X) -> _Row
        for pos in range(lo, hi):
            s = self.stmt = body[pos]
            exprs = [s.value] if isinstance(s, (ir.Assign, ir.ExprStmt)) else [s.index, s.value]
            for e in exprs:
                self.loads(e, pos, open_rows, True)
            if isinstance(s, ir.Store) or any(_closes(e) for e in exprs):
                self.close(body, open_rows, list(open_rows))
            elif isinstance(s, ir.Assign):
                self.close(body, open_rows, [k for k, r in open_rows.items() if s.target.name in r.names])
        self.close(body, open_rows, list(open_rows))

    def loads(self, e, pos: int, open_rows: dict, sure: bool) -> None:
        if isinstance(e, ir.Load):
            self.load(e, pos, open_rows, sure)
            self.loads(e.index, pos, open_rows, sure)
            return
        if isinstance(e, ir.Un) and e.op == "&":
            return                     # an address (an atomic's operand), not a read
        if isinstance(e, ir.Bin) and e.op in ("&&", "||"):
            self.loads(e.a, pos, open_rows, sure)
            self.loads(e.b, pos, open_rows, False)
            return
        if isinstance(e, ir.Ternary):
            self.loads(e.cond, pos, open_rows, sure)
            self.loads(e.a, pos, open_rows, False)
            self.loads(e.b, pos, open_rows, False)
            return
        for sub in ir.operands(e):
            self.loads(sub, pos, open_rows, sure)

    def load(self, e: ir.Load, pos: int, open_rows: dict, sure: bool) -> None:
        width = self.widths.get(e.array.cname)
        if not width or e.member:
            return
        parts = _split_index(e.index, width)
        if parts is None:
            return
        start, x, k = parts
        names: set = set()
        if not _pure_names(x, names):
            return
        key = (e.array.cname, repr(x))
        row = open_rows.get(key)
        if row is None:
            row = open_rows[key] = _Row(e.array, width, start, x, names, pos, line=getattr(self.stmt, "line", 0))
        row.loads[id(e)] = k
        row.seen.add(k)
        row.last = pos
        row.sure = row.sure or sure

    def close(self, body: list, open_rows: dict, keys: list) -> None:
        for key in keys:
            row = open_rows.pop(key)
            if row.sure and len(row.seen) >= 2:         # one element alone: a scalar load is as good
                self.found.append((body, row))

    # -- every statement list of the kernel ---------------------------------------------------------
    def block(self, body: list) -> None:
        lo = 0
        for pos, s in enumerate(body):
            if isinstance(s, (ir.Assign, ir.ExprStmt, ir.Store)):
                continue
            self.run(body, lo, pos)
            lo = pos + 1
            for name in ("body", "orelse"):
                sub = getattr(s, name, None)
                if sub:
                    self.block(sub)
        self.run(body, lo, len(body))


def _replace(node, repl: dict):
    """``node`` with each expression whose id is in ``repl`` replaced (copies on the way, as shared
    nodes may appear elsewhere)."""
    if isinstance(node, ir.Expr) and id(node) in repl:
        return repl[id(node)]
    return ir.rebuilt(node, lambda sub: _replace(sub, repl))


def row_loads(fn: ir.Function, note_type, *, enabled: bool, debug: bool) -> int:
    """Rewrite kernel ``fn`` in place (see the module doc); the number of rows loaded as vectors.
    ``note_type``: the builder's, for the prelude piece of a vector type the code constructs."""
    if not enabled or debug:
        return 0
    finder = _Finder(fn)
    if not finder.widths:
        return 0
    finder.block(fn.body)
    found = finder.found[:MAX_ROWS]
    flags: dict = {}                   # array C name -> Var: its pointer is aligned for the vector (tested once)
    by_body: dict = {}                 # id(statement list) -> (the list, [(load statement, _Row)])
    for n, (body, row) in enumerate(found):
        by_body.setdefault(id(body), (body, []))[1].append((_row_load(fn, row, n, flags, note_type), row))
    for body, rows in by_body.values():
        new: list = []
        for pos, s in enumerate(body):
            new.extend(load for load, row in rows if row.first == pos)
            for load, row in rows:
                if row.first <= pos <= row.last:
                    var = load.target if isinstance(load, ir.Assign) else load.body[0].target
                    s = _replace(s, {i: ir.Swizzle(var, k, row.ref.type.elem) for i, k in row.loads.items()})
            new.append(s)
        body[:] = new
    fn.body[:0] = [ir.Assign(flag, test, fn.line) for flag, test in flags.values()]
    return len(found)


def _row_load(fn: ir.Function, row: _Row, n: int, flags: dict, note_type) -> ir.Stmt:
    """The statement loading ``row`` into a new vector local: the vector access, or, where the pointer
    is not known to be aligned, the vector access if the entry's test found it aligned, else the
    elements the code reads (the others zero)."""
    elem = row.ref.type.elem
    vec_t = Vector(elem, row.width)
    var = ir.Var(f"_pyg_row{n}", vec_t)
    fn.locals[var.name] = vec_t
    load = ir.Assign(var, ir.WideLoad(row.ref, row.x, vec_t, in_vectors=True), row.line)
    vector_bytes = row.width * elem.dtype.itemsize
    if row.ref.type.align >= vector_bytes:
        return load
    flag = flags.get(row.ref.cname, (None,))[0]
    if flag is None:
        flag = ir.Var(f"_pyg_rows_aligned{len(flags)}", BOOL)
        fn.locals[flag.name] = BOOL
        low = ir.Bin("&", ir.Cast(row.ref, _UINT64), ir.Const(vector_bytes - 1, _UINT64), _UINT64)
        flags[row.ref.cname] = (flag, ir.Bin("==", low, ir.Const(0, _UINT64), BOOL))
    it = row.start.type
    note_type(vec_t)                   # the element loads build the vector (pg_make_float4 on CUDA)
    scalars = [ir.Load(row.ref, ir.Bin("+", row.start, ir.Const(k, it), it), elem) if k in row.seen
               else ir.Const(0, elem) for k in range(row.width)]
    return ir.If(flag, [load], [ir.Assign(var, ir.VecCtor(scalars, vec_t), row.line)], row.line)
