"""``k.split(devices)``: one 1-D launch shared between several devices at once.

The domain ``range(n)`` is cut into one contiguous part per device; each part gets its own
slice of every array the kernel touches, runs on its device from its own thread (drivers
release the GIL while devices work) and writes its slice of the outputs in place, so the
gather is the writes themselves. Scalars pass to every part unchanged.

That is only right when a work item cannot tell which part it is in. The translator proves
it per call signature, on the kernel's IR:

- the domain is 1-D and a loop (``for i in range(...)``), not work-item builtins;
- every array the kernel uses is one of
  - *streamed*: each access is the work item's own element ``a[i]``, outside inner loops,
    helpers and atomics (``_access.streamed_arrays``): a part gets ``a[lo:hi]``;
  - *read with a halo*: only read, only at ``a[i + c]`` for constants ``0 <= c <= h`` (a
    forward stencil ``out[i] = x[i] + x[i + 1] + x[i + 2]``, or a body's own position read
    in an inner loop): a part gets ``a[lo:hi + h]``, the ``h`` rows past its end being the
    halo its last work items read (the neighbour's first rows, copied with the slice);
  - *replicated*: only read, never at an index computed from ``i`` (all positions of an
    n-body step): every part gets the whole array;
- ``i`` itself is used only as such a subscript (``out[i] = i`` would see the part's local
  index), and no length of a sliced array is read in the body (a part sees only its slice's);
- the host-side domain of a part is the part's length (``range(n)`` with a scalar ``n``
  would not shrink with the slices).

A kernel that fails any of these raises ``ValueError`` saying which and why; a stencil reading
behind its element (``x[i - 1]``) is refused with how to write it with forward offsets.
"""
from __future__ import annotations

import itertools
import math
import threading
import weakref

import numpy as np
from pygpgpu_core import registry

from . import _ir as ir

__all__ = ["SplitKernel", "split_proof"]


class SplitProof:
    """What the analysis found for one signature: the arrays to slice and the domain function."""

    __slots__ = ("domain", "halo", "passthrough", "replicated", "sliced")

    def __init__(self, sliced: frozenset, passthrough: frozenset, domain, halo: "dict | None" = None,
                 replicated: frozenset = frozenset()):
        self.sliced = sliced              # Python names of arrays each part gets a slice of
        self.passthrough = passthrough    # arrays the kernel never touches: passed whole
        self.domain = domain              # host function (*params) -> (n,)
        self.halo = dict(halo or {})      # read-only arrays read at i + c: name -> the largest c
        self.replicated = replicated      # read-only arrays read at indices free of i: passed whole


def _refuse(kf, why: str, hint: str = "") -> ValueError:
    text = f"kernel {kf.__name__!r} cannot be split across devices: {why}"
    if hint:
        text += f". {hint}"
    return ValueError(text)


def _bare(e):
    while isinstance(e, ir.Cast):
        e = e.a
    return e


def index_offset(e, index: str) -> "int | None":
    """``c`` where ``e`` is the domain index plus a constant (``i``, ``i + 2``, ``2 + i``, ``i - 1``,
    through the casts the translator adds), None for any other index."""
    e = _bare(e)
    if isinstance(e, ir.Var):
        return 0 if e.name == index else None
    if isinstance(e, ir.Bin) and e.op in ("+", "-"):
        a, b = _bare(e.a), _bare(e.b)
        if isinstance(b, ir.Const) and type(b.value) is int:
            base = index_offset(a, index)
            if base is not None:
                return base + b.value if e.op == "+" else base - b.value
        if e.op == "+" and isinstance(a, ir.Const) and type(a.value) is int:
            base = index_offset(b, index)
            if base is not None:
                return base + a.value
    return None


def _vars(e) -> set:
    if isinstance(e, ir.Var):
        return {e.name}
    found: set = set()
    for sub in ir.operands(e):
        found |= _vars(sub)
    if isinstance(e, ir.Load):
        found |= _vars(e.index)
    return found


def _tainted(assigns: dict, index: str) -> set:
    """The domain index and every local computed from it (through any chain of assignments)."""
    tainted = {index}
    grew = True
    while grew:
        grew = False
        for name, values in assigns.items():
            if name not in tainted and any(_vars(v) & tainted for v in values):
                tainted.add(name)
                grew = True
    return tainted


def _loads(fn: ir.Function) -> "tuple[dict, set, dict]":
    """``({C name: [index of every load]}, C names used otherwise, {local: [assigned values]})``:
    the second are passed whole to a helper or an atomic, or their element's address taken."""
    loads: dict = {}
    escaped: set = set()
    assigns: dict = {}

    def expr(e):
        if isinstance(e, ir.Load):
            loads.setdefault(e.array.cname, []).append(e.index)
            expr(e.index)
            return
        if isinstance(e, ir.ArrayRef):
            escaped.add(e.cname)
            return
        if isinstance(e, ir.Un) and isinstance(e.a, ir.Load):
            escaped.add(e.a.array.cname)
        for sub in ir.operands(e):
            expr(sub)

    def stmts(body):
        for s in body:
            if isinstance(s, ir.Store):
                expr(s.index)
                expr(s.value)
            elif isinstance(s, (ir.Assign, ir.ExprStmt)):
                if isinstance(s, ir.Assign):
                    assigns.setdefault(s.target.name, []).append(s.value)
                expr(s.value)
            elif isinstance(s, ir.Return):
                if s.value is not None:
                    expr(s.value)
            elif isinstance(s, ir.If):
                expr(s.cond)
                stmts(s.body)
                stmts(s.orelse)
            elif isinstance(s, ir.While):
                expr(s.cond)
                stmts(s.body)
            elif isinstance(s, ir.For):
                assigns.setdefault(s.var.name, []).extend((s.start, s.stop))
                for e in (s.start, s.stop, s.step):
                    expr(e)
                stmts(s.body)

    stmts(fn.body)
    return loads, escaped, assigns


def _behind(indices: list, assigns: dict, index: str) -> int:
    """How far behind its own element an index reads (``x[i - 1]``: 1; the translator computes a
    possibly negative index into a temporary first), 0 when none does."""
    worst = 0
    for e in indices:
        candidates = [e] + [v for name in _vars(e) if name != index for v in assigns.get(name, ())]
        for c in candidates:
            off = index_offset(c, index)
            if off is not None and off < 0:
                worst = max(worst, -off)
    return worst


def _position_free(kf, fn: ir.Function, index: str, shape_vars: dict, halo: "frozenset" = frozenset()) -> None:
    """Raise unless ``index`` is used only as an own-element subscript (or ``i + c`` into an array
    read with a halo, C names ``halo``), the work-item builtins only to set it and in the domain
    guard, and no length of a sliced array is read in the body."""
    guards = {id(s) for s in fn.body if isinstance(s, ir.If)}     # the bounds guard is top level
    assigned = 0

    def own(index_expr) -> bool:
        return isinstance(index_expr, ir.Var) and index_expr.name == index

    def expr(e, where="body"):
        if isinstance(e, ir.ArrayRef):
            return
        if isinstance(e, ir.Load):
            if not own(e.index) and not (e.array.cname in halo and index_offset(e.index, index) is not None):
                expr(e.index, where)
            return
        if isinstance(e, ir.Var):
            if e.name == index and where != "guard":
                raise _refuse(kf, f"it uses the loop index {index!r} as a value, not only as a[{index}]",
                              "Each part would see its own local index; pass the positions as an array")
            if e.name in shape_vars:
                raise _refuse(kf, f"it reads the length of {shape_vars[e.name]!r} (.shape or len()) in the loop",
                              "Each part sees only its own slice; pass the length as a scalar")
            if e.name.startswith("_pyg_n") and where != "guard":
                raise _refuse(kf, "it uses the size of its domain in the loop body")
            return
        if isinstance(e, ir.WorkItem):
            if where == "body":
                raise _refuse(kf, "it calls work-item builtins (gpu.get_global_id and friends)")
            return
        for sub in ir.operands(e):          # a Load's index was handled above
            expr(sub, where)

    def stmts(body):
        nonlocal assigned
        for s in body:
            if isinstance(s, ir.Assign):
                if s.target.name == index:
                    assigned += 1
                expr(s.value, "index-set" if s.target.name == index else "body")
            elif isinstance(s, ir.Store):
                if not own(s.index):
                    expr(s.index)
                expr(s.value)
            elif isinstance(s, ir.ExprStmt):
                expr(s.value)
            elif isinstance(s, ir.Return):
                if s.value is not None:
                    expr(s.value)
            elif isinstance(s, ir.If):
                expr(s.cond, "guard" if id(s) in guards else "body")
                stmts(s.body)
                stmts(s.orelse)
            elif isinstance(s, ir.While):
                expr(s.cond)
                stmts(s.body)
            elif isinstance(s, ir.For):
                if s.var.name == index:
                    assigned += 1
                for e in (s.start, s.stop, s.step):
                    expr(e)
                stmts(s.body)
            elif isinstance(s, ir.LocalArrayDecl):
                raise _refuse(kf, "it uses local (shared) memory")

    stmts(fn.body)
    if assigned != 1:
        raise _refuse(kf, f"it assigns to the loop index {index!r} in the loop body")


def split_proof(kf, tokens, bits) -> SplitProof:
    """Analyse ``kf`` for one signature (tokens and index bits of the full call); ValueError if it
    cannot be split. Runs the translator's front end once (no code is emitted or compiled)."""
    from ._access import analyze_function, streamed_arrays
    from ._builder import ProgramBuilder
    from ._domain import build_function
    from ._entry import build_kernel
    from ._types import ArrayType

    if kf._is_method:
        raise _refuse(kf, "it is a method: its self arrays are not split",
                      "Write a module-level kernel that takes those arrays as arguments")
    prog = ProgramBuilder(kf.default_float, bits, kf.__name__)   # analysis only: nothing is printed
    kir = build_kernel(prog, kf.py_func, kf._specs(tokens), None)
    if kir.domain is None or not kir.domain_index or not kir.domain_plan:
        raise _refuse(kf, "it has no loop domain (it indexes with work-item builtins or gpu.work_size)",
                      "Only kernels written as `for i in range(...)` over their arrays can be split")
    if len(kir.domain_index) != 1:
        raise _refuse(kf, f"its domain has {len(kir.domain_index)} dimensions; only 1-D domains are split")
    if kir.uses_barrier or prog.local_arrays:
        raise _refuse(kf, "it uses barriers or local memory")
    for h in prog.helpers.values():
        analyze_function(h)
    access = analyze_function(kir.function)
    streamed = streamed_arrays(kir.function, kir.domain_index)
    index = kir.domain_index[0]
    loads, escaped, assigns = _loads(kir.function)
    tainted = _tainted(assigns, index)
    sliced, passthrough, replicated, shape_vars = set(), set(), set(), {}
    halo: dict = {}
    halo_cnames: set = set()
    for p in kir.function.params:
        if not (p.root and isinstance(p.type, ArrayType)):
            continue
        shapes = {f"{p.name}_shape{k}": p.root for k in range(p.type.ndim)}
        if not access.get(p.name):
            passthrough.add(p.root)
            continue
        if p.name in streamed:
            sliced.add(p.root)
            shape_vars.update(shapes)
            continue
        read_only = set(access[p.name]) == {"r"} and p.name not in escaped
        indices = loads.get(p.name, [])
        offsets = [index_offset(e, index) for e in indices]
        if read_only and p.type.ndim == 1 and indices and all(c is not None and c >= 0 for c in offsets):
            halo[p.root] = max(c for c in offsets if c is not None)
            halo_cnames.add(p.name)
            shape_vars.update(shapes)
            continue
        if read_only and not any(_vars(e) & tainted for e in indices):
            replicated.add(p.root)         # its length is the same in every part: reading it is fine
            continue
        behind = _behind(indices, assigns, index)
        if read_only and behind:
            raise _refuse(kf, f"array {p.root!r} is read behind the work item's own element "
                          f"({p.root}[{index} - {behind}]): a part cannot reach "
                          "the rows before its slice",
                          f"Write the stencil with forward offsets over the output's rows, e.g. "
                          f"out[{index}] = f({p.root}[{index}], {p.root}[{index} + 1], {p.root}[{index} + 2]) with "
                          f"out holding the interior points: each part then gets its slice of {p.root!r} plus a halo "
                          "of the rows after it")
        raise _refuse(kf, f"array {p.root!r} is not accessed only at each work item's own element "
                      f"{p.root}[{index}] (it is written at another index, read at an index computed from {index!r} "
                      f"other than {index} + a constant, or used through a helper or by an atomic)",
                      "A part holds only its own slice of each array (plus a halo for forward reads "
                      f"{p.root}[{index} + c]), or the whole of an array it only reads at indices free of {index!r}")
    _position_free(kf, kir.function, index, shape_vars, frozenset(halo_cnames))
    return SplitProof(frozenset(sliced), frozenset(passthrough), build_function(kir.domain_plan, kf.py_func),
                      halo, frozenset(replicated))


_proofs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # kernel -> {(tokens, bits): proof}
_proofs_lock = threading.Lock()


def _proof(kf, tokens, bits) -> SplitProof:
    with _proofs_lock:
        per_kernel = _proofs.setdefault(kf, {})
        proof = per_kernel.get((tokens, bits))
    if proof is None:
        proof = split_proof(kf, tokens, bits)       # ValueError: not cached, raised again next time
        with _proofs_lock:
            per_kernel[(tokens, bits)] = proof
    return proof


def _bounds(n: int, weights: list) -> list:
    total = float(sum(weights))
    cuts = [0]
    acc = 0.0
    for w in weights[:-1]:
        acc += w
        cuts.append(round(n * acc / total))
    cuts.append(n)
    return list(itertools.pairwise(cuts))


class SplitKernel:
    """``k.split(devices, weights=None)``: call it like the kernel, with numpy arrays; the 1-D domain
    is divided among ``devices`` (in proportion to ``weights``), the parts run concurrently and the
    outputs are written in place. Raises ValueError for kernels that cannot be split (see module doc)."""

    def __init__(self, kf, devices, weights=None):
        if isinstance(devices, str) or not devices:
            raise TypeError("split() takes a list of devices, e.g. k.split(['opencl:0', 'opencl:1'])")
        self._kf = kf
        self.devices = [registry.select_device(d) if isinstance(d, str) else d for d in devices]
        for d in self.devices:
            if not hasattr(d, "selector"):
                raise TypeError(f"split(): {d!r} is not a device or a selector string such as 'opencl:1'")
        if weights is None:
            weights = [1.0] * len(self.devices)
        try:
            weights = [float(w) for w in weights]
        except (TypeError, ValueError):
            raise ValueError(f"split(): weights must be {len(self.devices)} positive finite numbers, got "
                             f"{weights!r}") from None
        if len(weights) != len(self.devices) or any(not (0 < w < math.inf) for w in weights):
            raise ValueError(f"split(): weights must be {len(self.devices)} positive finite numbers (the shares of "
                             f"the domain each device gets, e.g. [3, 1]), got {weights}")
        top = max(weights)       # shares of the largest: a sum of weights near 1e308 must not overflow to inf
        self.weights = [w / top for w in weights]
        self._views = [kf[d.selector] for d in self.devices]

    def __repr__(self):
        return f"<{self._kf.__name__} split across {', '.join(d.selector for d in self.devices)}>"

    def parts(self, *args, **kwargs) -> list:
        """``[(device, start, stop), ...]``: how a call with these arguments would be divided."""
        return [(self.devices[k], lo, hi) for k, (lo, hi), _ in self._plan(args, kwargs)]

    def _plan(self, args, kwargs):
        kf = self._kf
        args = kf._bind(args, kwargs) if kwargs else tuple(args)
        values = kf._call_values(args)
        if kf._cells and not kf._is_method:       # names of the enclosing function ride along last (_captures)
            if any(v is not None for v in values[len(kf._param_names):]):
                raise _refuse(kf, "it reads arrays from its enclosing function or its module, which would not be split",
                              "Pass those arrays as arguments")
            values = values[:len(kf._param_names)]
        for name, v in zip(kf._param_names, values):
            if not isinstance(v, (np.ndarray, np.generic, int, float, complex, bool)) and hasattr(v, "shape"):
                raise TypeError(f"split(): argument {name!r} is a {type(v).__name__}; split launches take numpy "
                                "arrays and scale them out to the devices themselves (use g.get() for device arrays)")
        tokens, bits = kf._signature(values)
        proof = _proof(kf, tokens, bits)
        (n,) = proof.domain(*values)
        names = kf._param_names
        halo = proof.halo
        for name, v in zip(names, values):
            if name in proof.sliced and v.shape[0] < n:
                raise ValueError(f"split(): array {name!r} has {v.shape[0]} rows, fewer than the {n} work items")
            if name in halo and v.shape[0] < n + halo[name]:
                raise ValueError(f"split(): array {name!r} has {v.shape[0]} rows; the kernel reads up to "
                                 f"{name}[i + {halo[name]}] for each of the {n} work items, so it needs "
                                 f"{n + halo[name]}")
        plan = []
        for k, (lo, hi) in enumerate(_bounds(n, self.weights)):
            if hi <= lo:
                continue
            part = tuple(v[lo:hi] if name in proof.sliced else v[lo:hi + halo[name]] if name in halo else v
                         for name, v in zip(names, values))
            got = proof.domain(*part)
            if tuple(got) != (hi - lo,):
                raise _refuse(kf, f"its domain ({got[0]} work items for a part of {hi - lo}) does not follow the "
                              "length of the sliced arrays (a scalar sets it?)",
                              "Write the loop over an array, e.g. range(out.shape[0])")
            plan.append((k, (lo, hi), part))
        return plan

    def __call__(self, *args, **kwargs) -> None:
        plan = self._plan(args, kwargs)
        errors: list = []

        def run(k, part):
            try:
                self._views[k](*part)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(k, part), name=f"pygpgpu-split-{self.devices[k].selector}",
                                    daemon=True) for k, _, part in plan[1:]]
        for t in threads:
            t.start()
        if plan:
            run(plan[0][0], plan[0][2])
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
