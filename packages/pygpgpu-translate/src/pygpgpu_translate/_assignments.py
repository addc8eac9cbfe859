"""Assignments in kernels: ``a = e`` (a local typed by the join of its values, ``_infer.widen_local``,
the value converted to it), ``a, b = b, a`` (every value read before any is stored), ``x[i] = e``
(rows of width 2/3/4/8/16 from a vector or a broadcast number, the domain's full overwrite noted
for the launch), ``v.x = e`` (a new vector, its other components kept), ``p[i].mass = e``
(``_records``), names bound instead of assigned (array aliases, tuples, ``gpu.local_array``,
private arrays), and ``x[k] += e`` with ``k`` evaluated once. Each function takes the function
builder as its explicit, typed lowering context."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import _ir as ir
from ._bindings import ObjectRef, ShapeRef, TupleRef
from ._bounds import BoundsChecks
from ._infer import widen_local
from ._local_arrays import local_array
from ._private_arrays import CONSTRUCTORS as PRIVATE_CONSTRUCTORS, private_array
from ._records import is_record_binding, record_alias, record_store, record_value
from ._signs import is_non_negative
from ._subscripts import subscript_target
from ._types import ArrayType, Vector, concrete
from ._vector_values import swizzle_indices

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["assign_to", "store", "augmented_assignment"]


def assign_to(fb: FunctionBuilder, target, value_node, s):
    if isinstance(target, ast.Tuple):
        if isinstance(value_node, ast.Tuple):
            vals = [fb.value(v) for v in value_node.elts]
        else:                        # h, w = x.shape  /  a, b = some_tuple
            whole = fb.expr(value_node)
            if isinstance(whole, ShapeRef):
                vals = list(whole.array.shape)
            elif isinstance(whole, TupleRef):
                vals = list(whole.items)
            else:
                vals = None
        if vals is None or len(vals) != len(target.elts):
            raise fb.err(s, "tuple unpacking needs a tuple of the same length on the right",
                         "write a, b = x, y, h, w = arr.shape, or assign one name per statement")
        vals = [materialize_for_swap(fb, v) for v in vals]
        out = []
        for t, v in zip(target.elts, vals):
            out.extend(store(fb, t, v, s))
        return out
    # gpu.local_array(...) and array aliases bind names instead of assigning values
    if isinstance(target, ast.Name) and isinstance(value_node, ast.Call):
        callee = fb.resolve_callee(value_node.func)
        b = fb.builtin_of(callee)
        if b is not None and b.name == "gpu.local_array":
            return local_array(fb, target.id, value_node)
        if isinstance(callee, ObjectRef) and any(callee.obj is c for c in PRIVATE_CONSTRUCTORS):
            return private_array(fb, target.id, value_node, callee.obj)    # t = np.zeros(8, ...)
    value = fb.no_void(fb.expr(value_node), value_node)
    if is_record_binding(value):             # v = p[i].pos: a vector, or an error saying what to read
        if isinstance(target, ast.Name) and record_alias(fb, target.id, value, value_node):
            return None                      # r = p[i]: r names the element, as numpy's view does
        value = record_value(fb, value, value_node)
    if isinstance(value, ir.ArrayRef):
        if not isinstance(target, ast.Name):
            raise fb.err(s, "arrays cannot be stored into other arrays", "copy element by element in a loop")
        prev = fb.array_locals.get(target.id)
        if prev is not None and (not isinstance(prev, ir.ArrayRef) or prev.root != value.root):   # or a record
            raise fb.err(s, f"{target.id!r} refers to two different arrays",
                         "use one name per array; an array name cannot be rebound conditionally")
        fb.array_locals[target.id] = value
        return None
    if isinstance(value, TupleRef) and isinstance(target, ast.Name):
        fb.tuple_locals[target.id] = value
        return None
    if not isinstance(value, ir.Expr):
        raise fb.err(value_node, "this value cannot be stored in a variable",
                     "kernel variables hold numbers, vectors or arrays")
    return store(fb, target, value, s)


def materialize_for_swap(fb: FunctionBuilder, v):
    if isinstance(v, ir.Const):
        return v
    t = fb.temp(v.type)
    fb.pre.append(ir.Assign(t, v, fb.line))
    return ir.Var(t.name, v.type)


def store(fb: FunctionBuilder, target, value: ir.Expr, s):
    if isinstance(target, ast.Name):
        name = target.id
        if is_record_binding(value) and record_alias(fb, name, value, target):
            return []                        # for i, r in enumerate(p): r names the element p[i]
        if name in fb.params or name in fb.array_locals:
            b = fb.params.get(name) or fb.array_locals.get(name)
            if isinstance(b, ir.ArrayRef):
                raise fb.err(target, f"cannot assign to array {name!r}", f"write elements: {name}[i] = ...")
            if is_record_binding(b):
                raise fb.err(target, f"{name!r} names a record element and cannot be assigned a value",
                             f"assign its fields ({name}.field = ...) or use another name")
        if name in fb.domain_vars:
            raise fb.err(target, f"cannot assign to the loop index {name!r}", "use another variable")
        if name in fb.params:                          # a scalar parameter keeps its declared type
            pv = fb.params[name]
            if not isinstance(pv, ir.Var):             # an ObjectRef (arrays and records are refused above)
                raise fb.err(target, f"cannot assign to {name!r}")
            var = ir.Var(pv.name, concrete(pv.type, fb.prog.default_float))
            return [ir.Assign(var, fb.convert(value, var.type), s.lineno)]
        if isinstance(value.type, ArrayType):
            raise fb.err(target, "cannot assign an array here")
        t = widen_local(fb, name, value.type, s)        # the join of its values (_infer)
        var = ir.Var(fb.cname(name), concrete(t, fb.prog.default_float))
        converted = fb.convert(value, var.type)
        if fb.store_counts.get(name) == 1 and is_non_negative(converted, fb.non_negative):
            fb.non_negative.add(var.name)      # its only value, e.g. i = gpu.global_id(0)
        return [ir.Assign(var, converted, s.lineno)]
    if isinstance(target, ast.Subscript):
        arr, index, ok, row = subscript_target(fb, target)
        if is_record_binding(arr):
            return record_store(fb, arr, target.slice, value, s)
        full = (fb.top_level_of_domain and not fb.seen_exit and fb.is_domain_index(target)
                and fb.loop_depth == 0 and fb.domain_identity)
        if full and fb.domain is not None:       # full: is_domain_index found the domain
            fb.domain.covers[arr.root] = row
        if row:
            elem = arr.type.elem
            if not isinstance(value.type, Vector):
                value_b = fb.convert(value, elem)
                comps = [value_b] * row
            else:
                if value.type.width != row:
                    raise fb.type_err(target, f"cannot store a {value.type} into a row of width {row}")
                v = fb.materialize(value)
                comps = [fb.convert(fb.comp(v, k), elem) for k in range(row)]
            return BoundsChecks.stores(ok, [ir.Store(arr, fb.add(index, ir.Const(k, fb.prog.index_type)) if k else index,
                                                     c, s.lineno, full) for k, c in enumerate(comps)], s.lineno)
        return BoundsChecks.stores(ok, [ir.Store(arr, index, fb.convert(value, arr.type.elem), s.lineno, full)], s.lineno)
    if isinstance(target, ast.Attribute):
        base = fb.expr(target.value)
        if is_record_binding(base):           # p[i].mass = ... (_records)
            return record_store(fb, base, target.attr, value, s)
        if isinstance(base, ir.ArrayRef):
            raise fb.err(target, f"cannot set attribute {target.attr!r} of array {ast.unparse(target.value)!r}: "
                         "arrays have no attributes to assign in a kernel",
                           f"write elements instead, e.g. {ast.unparse(target.value)}[i] = ...")
        if isinstance(base, ir.Expr) and isinstance(base.type, Vector):
            return component_store(fb, target, base, value, s)
        raise fb.err(target, f"cannot set attribute {target.attr!r} of {ast.unparse(target.value)!r} in a kernel",
                     "kernels cannot change Python objects; write results into an output array")
    raise fb.err(target, "cannot assign to this target")


def component_store(fb: FunctionBuilder, target, base, value, s):
    """``v.x = e`` / ``v.xy = w``: ``v`` gets a new vector, its other components kept."""
    if not isinstance(target.value, ast.Name):
        raise fb.err(target, "writing a vector component needs a vector variable",
                     "assign the vector to a name first, then set its component")
    picked = swizzle_indices(fb, base.type, target.attr, target)
    if len(set(picked)) != len(picked):
        raise fb.err(target, f"swizzle .{target.attr} names a component twice and cannot be assigned")
    old = fb.materialize(base)
    comps = [fb.comp(old, k) for k in range(base.type.width)]
    if isinstance(value.type, Vector):
        if value.type.width != len(picked):
            raise fb.type_err(target, f"cannot assign a {value.type} to .{target.attr} "
                                        f"({len(picked)} component{'s' if len(picked) > 1 else ''})")
        v = fb.materialize(value)
        new = [fb.comp(v, j) for j in range(len(picked))]
    else:
        new = [value] * len(picked)          # a number to every component named, as numpy broadcasts
    for k, c in zip(picked, new):
        comps[k] = fb.convert(c, base.type.base)
    whole = ast.copy_location(ast.Name(target.value.id, ast.Store()), target)
    return store(fb, whole, ir.VecCtor(comps, base.type), s)


def augmented_assignment(fb: FunctionBuilder, s, top):
    once = indices_evaluated_once(fb, s.target)
    try:
        return augmented(fb, s)
    finally:
        for node in once:
            del fb.evaluated[id(node)]


def indices_evaluated_once(fb: FunctionBuilder, target):
    """The index expressions of ``target`` that call something (``out[gpu.atomic_add(c, 0, 1)]``),
    evaluated now into temporaries: ``x[k] += v`` reads and writes ``x[k]``, and Python
    evaluates ``k`` once. The nodes' values stay in ``fb.evaluated`` until the caller drops them."""
    once: list = []
    todo = [target]
    while todo:
        node = todo.pop()
        if not isinstance(node, ast.Subscript):
            todo.extend(ast.iter_child_nodes(node))
            continue
        todo.append(node.value)
        for e in node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]:
            if not any(isinstance(n, ast.Call) for n in ast.walk(e)):
                continue
            fb.index_depth += 1                # typed as an index, as index_list would
            try:
                v = fb.expr(e)                 # x[a[f()]]: the inner f() with it, once
            finally:
                fb.index_depth -= 1
            if isinstance(v, ir.Expr) and not isinstance(v, ir.ArrayRef):
                fb.evaluated[id(e)] = fb.materialize(v)
                once.append(e)
    return once


def augmented(fb: FunctionBuilder, s):
    if isinstance(s.target, ast.Subscript):
        current = fb.expr(ast.Subscript(value=s.target.value, slice=s.target.slice, ctx=ast.Load(),
                                        lineno=s.lineno, col_offset=s.target.col_offset))
    else:
        current = fb.value(ast.Name(id=s.target.id, ctx=ast.Load(), lineno=s.lineno, col_offset=s.col_offset)) \
            if isinstance(s.target, ast.Name) else None
        if isinstance(s.target, ast.Attribute):       # p[i].mass += ... (record fields)
            current = fb.value(ast.Attribute(value=s.target.value, attr=s.target.attr, ctx=ast.Load(),
                                             lineno=s.lineno, col_offset=s.target.col_offset))
        if current is None:
            raise fb.err(s, "augmented assignment to this target is not supported")
    result = fb.binop(s.op, current, fb.value(s.value), s)
    saved = fb.top_level_of_domain
    fb.top_level_of_domain = False     # a read-modify-write never fully overwrites
    out = store(fb, s.target, result, s)
    fb.top_level_of_domain = saved
    return out
