"""Static read/write analysis per array: which kernel parameters are read, written or both.

Loads are reads, stores are writes, atomics are both; helper calls contribute their own
summary mapped onto the arrays passed in (interprocedural), and array aliases were
already resolved to their root parameter by the builder. When in doubt: read-write.
"""
from __future__ import annotations

from . import _ir as ir

__all__ = ["analyze_function", "access_word", "streamed_arrays", "own_index_accesses"]


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
    for sub in ir.operands(e):
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


def _at_own_index(array: ir.ArrayRef, flat: ir.Expr, names: tuple) -> bool:
    """Whether ``flat`` is exactly the element of ``array`` at the domain indices ``names``."""
    if len(array.shape) != len(names):
        return False
    it = flat.type
    want: ir.Expr = ir.Var(names[0], it)
    for k in range(1, len(names)):
        want = ir.Bin("+", ir.Bin("*", want, array.shape[k], it), ir.Var(names[k], it), it)
    return flat == want


def streamed_arrays(fn: ir.Function, index: "tuple | None") -> set:
    """C pointer names whose every access is the work item's own element (``x[i]``, ``img[y, x]``
    at the domain indices ``index``, C names), outside any inner loop: each work item touches its
    own element about once. Such arrays may stay in host memory the kernel reads over the bus
    (small launches on CUDA)."""
    if not index:
        return set()
    seen: set = set()
    other: set = set()

    def expr(e, depth):
        if isinstance(e, ir.Load):
            ok = depth == 0 and _at_own_index(e.array, e.index, index)
            (seen if ok else other).add(e.array.cname)
            expr(e.index, depth)
            return
        if isinstance(e, ir.ArrayRef):
            other.add(e.cname)            # passed whole (helper, atomic): anything may happen
            return
        if isinstance(e, ir.Un) and isinstance(e.a, ir.Load):
            other.add(e.a.array.cname)    # an element's address (atomics): keep it in device memory
        for sub in ir.operands(e):
            expr(sub, depth)

    def stmts(body, depth):
        for s in body:
            if isinstance(s, ir.Store):
                ok = depth == 0 and _at_own_index(s.array, s.index, index)
                (seen if ok else other).add(s.array.cname)
                expr(s.index, depth)
                expr(s.value, depth)
            elif isinstance(s, (ir.Assign, ir.ExprStmt)):
                expr(s.value, depth)
            elif isinstance(s, ir.Return):
                if s.value is not None:
                    expr(s.value, depth)
            elif isinstance(s, ir.If):
                expr(s.cond, depth)
                stmts(s.body, depth)
                stmts(s.orelse, depth)
            elif isinstance(s, ir.While):
                expr(s.cond, depth + 1)
                stmts(s.body, depth + 1)
            elif isinstance(s, ir.For):
                for e in (s.start, s.stop, s.step):
                    expr(e, depth)
                stmts(s.body, depth + 1)

    stmts(fn.body, 0)
    return seen - other


def _exits(body) -> bool:
    """Whether ``body`` (at any depth) may end the work item early (``continue``/``break`` of the
    domain loop are lowered to returns)."""
    for s in body:
        if isinstance(s, ir.Return):
            return True
        if isinstance(s, ir.If) and (_exits(s.body) or _exits(s.orelse)):
            return True
        if isinstance(s, (ir.While, ir.For)) and _exits(s.body):
            return True
    return False


def _assigned_names(body, out: dict) -> dict:
    """C name -> how often it is assigned (loop variables included), at any depth."""
    for s in body:
        if isinstance(s, ir.Assign):
            out[s.target.name] = out.get(s.target.name, 0) + 1
        elif isinstance(s, ir.For):
            out[s.var.name] = out.get(s.var.name, 0) + 1
        if isinstance(s, ir.If):
            _assigned_names(s.body, out)
            _assigned_names(s.orelse, out)
        elif isinstance(s, (ir.While, ir.For)):
            _assigned_names(s.body, out)
    return out


def _mentions(e, name: str) -> bool:
    if isinstance(e, ir.Var):
        return e.name == name
    for attr in ("a", "b", "cond"):
        sub = getattr(e, attr, None)
        if isinstance(sub, ir.Expr) and _mentions(sub, name):
            return True
    return False


def _leads_with_own_index(array: ir.ArrayRef, flat: ir.Expr, names: tuple) -> bool:
    """Whether ``flat`` indexes ``array`` with the domain indices ``names`` as its leading
    subscripts (``x[i]``, ``v[i, 0]``, a row ``v[i]`` of an (N, 4) array, ``img[y, x, c]`` under
    ``np.ndindex``): the trailing subscripts, whatever they are, were added as ``* shape[k] + rest``."""
    lead = len(names)
    nd = len(array.shape)
    if nd < lead:
        return False
    for k in range(nd - 1, lead - 1, -1):           # peel the trailing dimensions
        if isinstance(flat, ir.Bin) and flat.op == "+" and isinstance(flat.a, ir.Bin) and flat.a.op == "*" \
                and flat.a.b == array.shape[k]:
            flat = flat.a.a
        elif isinstance(flat, ir.Bin) and flat.op == "*" and flat.b == array.shape[k]:
            flat = flat.a                            # the trailing subscript was 0, folded away
        else:
            return False
    lead_ref = array if nd == lead else ir.ArrayRef(array.root, array.cname, array.shape[:lead], array.type)
    return _at_own_index(lead_ref, flat, names)


def _substituted(e, values: dict):
    """``e`` with each temporary in ``values`` replaced by the expression it was assigned."""
    if isinstance(e, ir.Var) and e.name in values:
        return values[e.name]
    if isinstance(e, ir.Bin):
        a, b = _substituted(e.a, values), _substituted(e.b, values)
        return e if a is e.a and b is e.b else ir.Bin(e.op, a, b, e.type)
    return e


def own_index_accesses(fn: ir.Function, index: "tuple | None") -> dict:
    """C pointer name -> Python line, for arrays that *every* work item of the domain reads or
    writes at its own index (``out[i] = x[i]`` at the top of the domain loop, before anything that
    may end the work item, outside branches, loops and short-circuit operands).

    For these the whole domain must lie inside the array, exactly as the Python loop would index
    it, so the launch checks their extents on the host (a shorter array would be read past its
    end or written past it). Conditional accesses (``if i < len(x): x[i]``) are not included:
    a shorter array is legitimate there."""
    if not index or not fn.body:
        return {}
    guard = fn.body[-1]             # the domain loop is the kernel's last statement: if (id < _pyg_n0) {...}
    if not (isinstance(guard, ir.If) and _mentions(guard.cond, "_pyg_n0")):
        return {}
    counts = _assigned_names(fn.body, {})
    if any(counts.get(n, 0) != 1 for n in index):     # an index name rebound in the body: not the own index
        return {}
    found: dict = {}
    values: dict = {}             # temporaries assigned once, unconditionally, above: name -> expression

    def own(array, flat):
        return _leads_with_own_index(array, _substituted(flat, values), index)

    def expr(e, line):
        if isinstance(e, ir.Load):
            if own(e.array, e.index):
                found.setdefault(e.array.cname, line)
            expr(e.index, line)
            return
        if isinstance(e, ir.Ternary):
            expr(e.cond, line)            # only one branch runs
            return
        if isinstance(e, ir.Bin) and e.op in ("&&", "||"):
            expr(e.a, line)               # the right operand may not be evaluated
            return
        for sub in ir.operands(e):
            expr(sub, line)

    for s in guard.body:
        line = getattr(s, "line", 0)
        if isinstance(s, ir.Store):
            expr(s.index, line)
            expr(s.value, line)
            if own(s.array, s.index):
                found.setdefault(s.array.cname, line)
        elif isinstance(s, (ir.Assign, ir.ExprStmt)):
            expr(s.value, line)
            if isinstance(s, ir.Assign) and counts.get(s.target.name) == 1 and s.target.name not in index:
                values[s.target.name] = _substituted(s.value, values)
        elif isinstance(s, ir.If):
            expr(s.cond, line)
            if _exits(s.body) or _exits(s.orelse):
                break
        elif isinstance(s, ir.While):
            expr(s.cond, line)
            if _exits(s.body):
                break
        elif isinstance(s, ir.For):
            for e in (s.start, s.stop, s.step):
                expr(e, line)
            if _exits(s.body):
                break
        elif isinstance(s, (ir.Return, ir.Break, ir.Continue)):
            break
    return found
