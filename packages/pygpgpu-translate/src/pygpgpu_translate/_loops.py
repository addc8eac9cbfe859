"""For loops in kernels: ``for k in range(...)`` (a counted C loop that keeps Python's meaning:
the range evaluated once, the loop variable holding each item in turn and the last one after the
loop), ``for w in (a, b, ...)`` over a tuple, and the kernel's iteration-domain loop (range,
np.ndindex, enumerate, np.ndenumerate: one work item per turn, behind a bounds guard). A loop's
head types its variable; type inference's worklist re-runs it alone (``loop_head``, ``_infer``).
Each function takes the function builder as its explicit, typed lowering context."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import numpy as np

from . import _ir as ir
from ._assignments import store
from ._bindings import ObjectRef, TupleRef
from ._subscripts import index_array
from ._signs import is_non_negative, lower_bound, stores_name
from ._tuple_items import tuple_item
from ._types import BOOL, INT32, INT64, Scalar, binary_result, concrete

if TYPE_CHECKING:
    from ._bindings import Domain
    from ._builder import FunctionBuilder

__all__ = ["for_loop", "range_head", "loop_head", "for_tuple", "tuple_head", "domain_loop", "bind_index"]


def _read_outside(fdef, loop, name: str) -> bool:
    """Whether function ``fdef`` reads ``name`` anywhere but in the body of ``loop`` (a ``for name
    in range(...)``) and of other loops binding the same name: there the value Python leaves in
    the loop variable after the loop is what is read."""
    todo = list(ast.iter_child_nodes(fdef))
    while todo:
        node = todo.pop()
        if node is loop:
            continue
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and node.target.id == name:
            todo.append(node.iter)           # read before that loop binds the name
            todo.extend(node.orelse)
            continue
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def for_loop(fb: FunctionBuilder, s, top):
    if top and fb.is_kernel and fb.domain is not None and fb.domain.node is s:
        return domain_loop(fb, s, fb.domain)
    it = s.iter
    callee = fb.resolve_callee(it.func) if isinstance(it, ast.Call) else None
    if isinstance(it, (ast.Name, ast.Attribute, ast.Tuple, ast.Subscript)):
        items = fb.expr(it) if not isinstance(it, ast.Subscript) or isinstance(it.slice, ast.Slice) else None
        if isinstance(items, TupleRef):
            return for_tuple(fb, s, items)
    if not (isinstance(callee, ObjectRef) and callee.obj is range):
        if isinstance(it, ast.Call) and isinstance(callee, ObjectRef) and callee.obj in (enumerate, np.ndindex, np.ndenumerate):
            raise fb.err(s, f"{callee.obj.__name__}() loops are only supported as the kernel's top-level iteration domain",
                         "use nested 'for j in range(n)' loops inside the kernel")
        if isinstance(callee, ObjectRef) and callee.obj is reversed:
            raise fb.err(s, "reversed() loops are not supported in kernels",
                         "count down instead: for k in range(n - 1, -1, -1)")
        if isinstance(callee, ObjectRef) and callee.obj is zip:
            raise fb.err(s, "zip() loops are not supported in kernels",
                         "loop over an index: for j in range(len(x)): a, b = x[j], y[j]")
        raise fb.err(s, "for loops inside a kernel must iterate over range(...)",
                     "write for i in range(n): ... (lists and arbitrary iterables are not supported)")
    start, stop, step, t, binding = range_head(fb, s)
    if fb.store_counts.get(s.target.id) == 1:     # only this loop binds it: a Python int, weak
        fb.index_names = fb.index_names | {s.target.id}
    if not binding:
        var = None
    else:
        var = binding[0].target
    count_t = var.type if var is not None else None
    if var is not None and not (isinstance(var.type, Scalar) and var.type.is_int):
        # the body made the variable a float (k = k * 0.5): the range still counts in integers
        count_t = concrete(t, fb.prog.default_float) if isinstance(t, Scalar) and t.is_int else INT32
    stop = evaluated_once(fb, fb.materialize(fb.convert(stop, count_t) if var else stop), s)
    step_c = fb.convert(step, count_t) if var else step
    sign = 0
    if isinstance(step_c, ir.Const):
        if step_c.value == 0:
            raise fb.err(it, "range() step must not be zero")
        sign = 1 if step_c.value > 0 else -1
    else:
        step_c = evaluated_once(fb, fb.materialize(step_c), s)
    start_c = fb.convert(start, count_t) if var else start
    # an upward count from >= 0 that the body never reassigns indexes without a wrap
    counts_up = (var is not None and sign > 0 and is_non_negative(start_c, fb.non_negative)
                 and not stores_name(s.body, s.target.id))
    fb.loop_depth += 1
    saved = fb.top_level_of_domain
    fb.top_level_of_domain = False
    # and counts from its start: in range(1, n), y - 1 is >= 0 too
    with fb.non_negative_names([var.name] if counts_up and var is not None else [],
                               lower_bound(start_c, fb.non_negative) if counts_up else None):
        body = fb.stmts(s.body)
    fb.top_level_of_domain = saved
    fb.loop_depth -= 1
    if var is None:
        return []
    counter = var
    if stores_name(s.body, s.target.id) or _read_outside(fb.src.tree, s, s.target.id):
        # Python's loop variable takes each item of the range in turn: assigning it in the body
        # changes neither the next item nor the count, and after the loop it holds the last
        # item (or its old value when the range is empty), not C's counter one step past the end
        counter = fb.temp(count_t)
        body = [ir.Assign(var, fb.convert(counter, var.type), s.lineno)] + body
    return ir.For(counter, start_c, stop, step_c, body, s.lineno, sign)


def range_head(fb: FunctionBuilder, s):
    """The head of ``for k in range(...)``: the range's start, stop and step, the type they count
    in, and the store binding ``k`` (which types it). Also what the worklist re-runs (``loop_head``)."""
    it = s.iter
    if not isinstance(s.target, ast.Name):
        raise fb.err(s.target, "the loop variable of a range loop must be a plain name")
    if it.keywords or not 1 <= len(it.args) <= 3:
        raise fb.err(it, "range() takes 1 to 3 positional arguments")
    vals = [fb.value(a) for a in it.args]
    for v, a in zip(vals, it.args):
        if isinstance(v.type, Scalar) and not (v.type.is_int or v.type.kind == "b"):
            raise fb.type_err(a, f"range() needs integers, got {'a Python float' if v.type.weak else v.type}; "
                                "convert with int(...)")
    if len(vals) == 1:
        vals = [ir.Const(0, Scalar("int32", weak=True))] + vals
    if len(vals) == 2:
        vals.append(ir.Const(1, Scalar("int32", weak=True)))
    start, stop, step = vals
    t = start.type
    for v in (stop, step):
        t = binary_result(t, v.type, fb.prog.default_float)
    binding = store(fb, s.target, _range_item_sign(fb, start, stop, step, t), s)
    return start, stop, step, t, binding


def loop_head(fb: FunctionBuilder, s) -> None:
    """Type the loop variable of ``for`` loop ``s`` as its head does, without the body: type
    inference's worklist runs this again when a local the head reads widens (_infer)."""
    it = s.iter
    if isinstance(it, (ast.Name, ast.Attribute, ast.Tuple, ast.Subscript)):
        items = fb.expr(it) if not isinstance(it, ast.Subscript) or isinstance(it.slice, ast.Slice) else None
        if isinstance(items, TupleRef):
            tuple_head(fb, s, items)
            return
    range_head(fb, s)


def _range_item_sign(fb: FunctionBuilder, start, stop, step, t):
    """A stand-in for the items of ``range(start, stop, step)`` that types the loop variable and
    is provably >= 0 only when every item is (counting up from >= 0, or down to a stop >= -1): a
    variable bound only by this loop is then proven >= 0 everywhere (_signs), and ``x[k]`` of
    ``range(-2, 3)`` wraps."""
    if not isinstance(step, ir.Const) or t.kind != "i":
        return ir.Const(0 if t.kind != "i" else -1, t)
    if step.value > 0:
        up = is_non_negative(start, fb.non_negative)
    else:
        up = is_non_negative(stop, fb.non_negative) or (isinstance(stop, ir.Const) and stop.value == -1)
    return ir.Const(0 if up else -1, t)


def for_tuple(fb: FunctionBuilder, s, items):
    """``for w in WEIGHTS:`` over a tuple of numbers or vectors (a module constant, a literal):
    a counted loop that binds ``w`` to each item in turn (``WEIGHTS[k]``, _expressions)."""
    if not items.items:                          # for w in (): no turn
        if not isinstance(s.target, ast.Name):
            raise fb.err(s.target, "the loop variable of a loop over a tuple must be a plain name")
        return []
    counter, python_item, item, head = tuple_head(fb, s, items)
    fb.loop_depth += 1
    saved = fb.top_level_of_domain
    fb.top_level_of_domain = False
    if python_item:         # each use of w is the item itself, WEIGHTS[k]: it meets values as a number does
        fb.item_values[s.target.id] = item
    try:
        body = fb.stmts(s.body)
    finally:
        fb.item_values.pop(s.target.id, None)
    fb.top_level_of_domain = saved
    fb.loop_depth -= 1
    return ir.For(counter, ir.Const(0, INT32), ir.Const(len(items.items), INT32), ir.Const(1, INT32),
                  head + body, s.lineno, 1)


def tuple_head(fb: FunctionBuilder, s, items):
    """The head of ``for w in (a, b, ...)``: the loop's counter, whether ``w`` stands for the item
    itself (a Python number), the item, and the statements binding ``w`` (which type it)."""
    if not isinstance(s.target, ast.Name):
        raise fb.err(s.target, "the loop variable of a loop over a tuple must be a plain name")
    counter = fb.temp(INT32)
    outer, fb.pre = fb.pre, []
    python_item = _item_is_a_python_number(fb, s, items)
    with fb.non_negative_names([counter.name]):
        item = tuple_item(fb, items, counter, s.iter, where=s.iter)
        head = [] if python_item else store(fb, s.target, item, s)
        head = fb.pre + list(head or [])
    fb.pre = outer
    return counter, python_item, item, head


def _item_is_a_python_number(fb: FunctionBuilder, loop, items) -> bool:
    """``for w in (0.1, 0.2):`` binds ``w`` to Python numbers of one kind: a local would fix its
    type (float32 0.1 times float64 data, int32 where 2 * int8 data wraps in int8), so where
    nothing else assigns ``w`` or reads it after the loop, ``w`` stands for the item."""
    name = loop.target.id
    kinds = {v.type.kind if isinstance(v, ir.Expr) and isinstance(v.type, Scalar) and v.type.weak else None
             for v in items.items}
    return (kinds in ({"i"}, {"f"}) and fb.store_counts.get(name) == 1
            and not _read_outside(fb.src.tree, loop, name))


def evaluated_once(fb: FunctionBuilder, e, loop):
    """``e``, a bound of ``loop``'s range(), as the loop's test reads it: Python evaluates
    range() once, so a variable the loop assigns (``for k in range(n): n += 1``, or
    ``for n in range(n)``) is copied before the loop."""
    if isinstance(e, ir.Var):
        pynames = {c: p for p, c in fb.cnames.items()}
        name = pynames.get(e.name)
        if name is not None and (name == loop.target.id or stores_name(loop.body, name)):
            held = fb.temp(e.type)
            fb.pre.append(ir.Assign(held, e, fb.line))
            return held
    return e


def domain_loop(fb: FunctionBuilder, s, d: Domain):
    idx = fb.prog.index_type
    gid = [ir.Cast(ir.WorkItem("global_id", d.ndim - 1 - k, INT64), idx)
           for k in range(d.ndim)]
    bounds = [ir.Var(f"_pyg_n{k}", idx) for k in range(d.ndim)]
    out: list[ir.Stmt] = []
    guarded: list[ir.Stmt] = []
    it = s.iter
    names: list[str] = []
    if d.kind == "range":
        vals = [fb.value(a) for a in it.args]
        start = vals[0] if len(vals) >= 2 else ir.Const(0, idx)
        step = vals[2] if len(vals) == 3 else ir.Const(1, idx)
        if not isinstance(s.target, ast.Name):
            raise fb.err(s.target, "the loop variable must be a plain name")
        names = [s.target.id]
        bind_index(fb, names[0], idx)
        value = gid[0]
        fb.domain_identity = (isinstance(start, ir.Const) and start.value == 0
                                and isinstance(step, ir.Const) and step.value == 1)
        if not fb.domain_identity:
            value = fb.add(fb.convert(start, idx), ir.Bin("*", gid[0], fb.convert(step, idx), idx))
        out.append(ir.Assign(ir.Var(fb.cname(names[0]), idx), value, s.lineno))
    elif d.kind == "ndindex":
        tgt = s.target
        if not isinstance(tgt, ast.Tuple) or len(tgt.elts) != d.ndim or not all(isinstance(e, ast.Name) for e in tgt.elts):
            raise fb.err(tgt, f"unpack np.ndindex into {d.ndim} names, e.g. for y, x in np.ndindex(out.shape)")
        names = [e.id for e in tgt.elts if isinstance(e, ast.Name)]     # all are (checked above)
        for k, n in enumerate(names):
            bind_index(fb, n, idx)
            out.append(ir.Assign(ir.Var(fb.cname(n), idx), gid[k], s.lineno))
    else:   # enumerate / ndenumerate: index names + value snapshot
        tgt = s.target
        if not isinstance(tgt, ast.Tuple) or len(tgt.elts) != 2:
            raise fb.err(tgt, f"unpack {d.kind}() as: for index, value in {d.kind}(arr)")
        arr = fb.expr(it.args[0])
        itarget, vtarget = tgt.elts
        if d.kind == "enumerate" or d.ndim == 1 and isinstance(itarget, ast.Name):
            if isinstance(itarget, ast.Name):
                names = [itarget.id]
            elif isinstance(itarget, ast.Tuple) and all(isinstance(e, ast.Name) for e in itarget.elts):
                names = [e.id for e in itarget.elts if isinstance(e, ast.Name)]
            else:
                raise fb.err(itarget, f"the index of {d.kind}() must be a name or a tuple of names")
        elif isinstance(itarget, ast.Tuple) and all(isinstance(e, ast.Name) for e in itarget.elts):
            names = [e.id for e in itarget.elts if isinstance(e, ast.Name)]
        elif isinstance(itarget, ast.Name):
            names = [f"{itarget.id}_{k}" for k in range(d.ndim)]
        else:
            raise fb.err(itarget, "the index of ndenumerate must be a name or a tuple of names")
        if len(names) != d.ndim:
            raise fb.err(itarget, f"ndenumerate over a {d.ndim}-D array yields {d.ndim} indices")
        for k, n in enumerate(names):
            bind_index(fb, n, idx)
            out.append(ir.Assign(ir.Var(fb.cname(n), idx), gid[k], s.lineno))
        if isinstance(itarget, ast.Name) and d.kind == "ndenumerate" and d.ndim > 1:
            fb.tuple_locals[itarget.id] = TupleRef([ir.Var(fb.cname(n), idx) for n in names])
        snapshot = index_array(fb, arr, [ir.Var(fb.cname(n), idx) for n in names], it)
        fb.line = s.lineno
        guarded.extend(fb.pre)           # the value snapshot is a load: only inside the bounds guard
        fb.pre = []
        guarded.extend(store(fb, vtarget, snapshot, s))
    fb.domain_vars = names
    if d.kind == "range":
        cond: ir.Expr = ir.Bin("<", gid[0], bounds[0], BOOL)
    else:
        cond = ir.Bin("<", ir.Var(fb.cname(names[0]), idx), bounds[0], BOOL)
        for k in range(1, d.ndim):
            cond = ir.Bin("&&", cond, ir.Bin("<", ir.Var(fb.cname(names[k]), idx), bounds[k], BOOL), BOOL)
    saved = fb.top_level_of_domain
    fb.top_level_of_domain = fb.prog.in_domain_body = True
    counts_up = d.kind != "range" or (is_non_negative(fb.convert(start, idx), fb.non_negative)
                                      and isinstance(step, ir.Const) and step.value > 0)
    proven = [fb.cname(n) for n in names if counts_up and not stores_name(s.body, n)]
    first = lower_bound(fb.convert(start, idx), fb.non_negative) if d.kind == "range" and counts_up else None
    with fb.non_negative_names(proven, first):
        body = fb.stmts(s.body)
    fb.top_level_of_domain = saved
    fb.prog.in_domain_body = False
    if d.kind == "range":
        return [ir.If(cond, out + body, [], s.lineno)]
    return out + [ir.If(cond, guarded + body, [], s.lineno)]


def bind_index(fb: FunctionBuilder, name, idx):
    fb.local_types[name] = idx
    fb.index_names = fb.index_names | {name}     # weak in arithmetic with data (index_value)
