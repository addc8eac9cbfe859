"""Subscripts in kernels: ``x[i, j]`` of an array (a load, a row of width 2/3/4/8/16 as a vector,
a record element), ``x.shape[k]``, ``t[k]`` of a tuple, ``v[k]`` of a vector, and the targets of
``x[i] = ...``. Indices follow Python: a negative one counts from the end (wrapped at run time
unless ``_signs`` proves it non-negative), a constant out of a private array's shape raises as
numpy does, and the debug mode checks every index (``_bounds``). Each function takes the
function builder as its explicit, typed lowering context."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import _ir as ir
from ._bindings import ShapeRef, TupleRef
from ._bounds import BoundsChecks
from ._elements import element_value
from ._records import RecordType, is_record_binding, record_element, record_subscript
from ._signs import is_non_negative
from ._tuple_items import sliced_tuple, tuple_item
from ._types import BOOL, VECTOR_WIDTHS, Scalar, Vector

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["subscript_value", "index_list", "checked_index", "index_array", "subscript_target"]


def subscript_value(fb: FunctionBuilder, node):
    base = fb.expr(node.value)
    if is_record_binding(base):           # p[i]["mass"], p[i].pos[k] (_records)
        return record_subscript(fb, base, node)
    if isinstance(node.slice, ast.Slice):
        return sliced_tuple(fb, base, node)
    if isinstance(base, ShapeRef):
        k = fb.expr(node.slice)
        if not (isinstance(k, ir.Const) and isinstance(k.value, int)):
            raise fb.err(node.slice, "dynamic shape indexing is not supported: x.shape[k] needs a constant k",
                         "use x.shape[0], x.shape[1], ... with literal indices")
        nd = base.array.type.ndim
        kk = k.value + nd if k.value < 0 else k.value
        if not 0 <= kk < nd:
            raise fb.err(node.slice, f"shape index {k.value} is out of range for a {nd}-D array")
        return fb.index_value(base.array.shape[kk])
    if isinstance(base, TupleRef):
        k = fb.expr(node.slice)
        if not (isinstance(k, ir.Const) and isinstance(k.value, int)):
            return tuple_item(fb, base, k, node)
        if not -len(base.items) <= k.value < len(base.items):
            raise fb.err(node.slice, f"tuple index {k.value} is out of range: the tuple has {len(base.items)} items")
        return base.items[k.value]
    if isinstance(base, ir.Expr) and isinstance(base.type, Vector):
        k = fb.expr(node.slice)
        if not (isinstance(k, ir.Const) and isinstance(k.value, int) and 0 <= k.value < base.type.width):
            raise fb.err(node.slice, "vector components are indexed with a constant", "use v.x, v.s0 or v[0]")
        return fb.comp(base, k.value)
    if not isinstance(base, ir.ArrayRef):
        raise fb.err(node, "only arrays, vectors, shapes and tuples can be indexed")
    idx = index_list(fb, node.slice)
    return index_array(fb, base, idx, node)


def index_list(fb: FunctionBuilder, sl):
    fb.index_depth += 1          # index arithmetic stays in the index type (index_value)
    try:
        if isinstance(sl, ast.Tuple):
            items = []
            for e in sl.elts:
                v = fb.expr(e)
                items.extend(v.items if isinstance(v, TupleRef) else [v])
            return items
        v = fb.expr(sl)
        return list(v.items) if isinstance(v, TupleRef) else [v]
    finally:
        fb.index_depth -= 1


def checked_index(fb: FunctionBuilder, arr, idx, node, kind="read"):
    """``(flat index, ok)``: ``ok`` is the debug mode's condition that every index is inside
    its dimension (``_bounds``; the access must be skipped when false), None without debug."""
    it = fb.prog.index_type
    bounds = fb.prog.bounds
    parts = []
    for k, i in enumerate(idx):
        if not isinstance(i, ir.Expr) or isinstance(i, ir.ArrayRef):
            raise fb.err(node, "array indices must be integers")
        if not isinstance(i.type, Scalar) or not (i.type.is_int or i.type.kind == "b"):
            raise fb.type_err(node, f"array index must be an integer, got {i.type}; convert with int(...)")
        n = arr.type.static_shape[k] if arr.type.static_shape else None     # a private or local array's
        if isinstance(i, ir.Const) and n is not None and not -n <= i.value < n and not fb.dead_depth:
            raise fb.err(node, f"index {i.value} is out of bounds for axis {k} with size {n} (numpy "
                         "raises IndexError)", "a private or local array has the shape it was made with")
        if bounds is not None:        # the debug mode checks the index at its full width (_bounds)
            parts.append(bounds.full_width(fb, i, arr.shape[k], i.type.kind == "i"
                                           and not is_non_negative(i, fb.non_negative)))
            continue
        if isinstance(i, ir.Const) and i.value < 0:        # Python negative index from the end
            i = ir.Bin("+", arr.shape[k], ir.Const(i.value, it), it)
        elif i.type.kind == "i" and not is_non_negative(i, fb.non_negative):
            i = fb.materialize(fb.convert(i, it))     # may be negative: wrap as Python does
            i = ir.Ternary(ir.Bin("<", i, ir.Const(0, it), BOOL), ir.Bin("+", i, arr.shape[k], it), i, it)
        parts.append(fb.convert(i, it))
    ok = None
    if bounds is not None:
        parts, ok = bounds.check(fb, arr, parts, node, kind)
        parts = [fb.convert(p, it) for p in parts]       # narrowed for the access only, once checked
    flat = parts[0]
    for k in range(1, len(parts)):
        flat = ir.Bin("+", ir.Bin("*", flat, arr.shape[k], it), parts[k], it)
    return flat, ok


def index_array(fb: FunctionBuilder, arr, idx, node):
    t = arr.type
    if isinstance(t.elem, RecordType):    # p[i] of a structured array: an element, not a value
        return record_element(fb, arr, idx, node)
    if len(idx) == t.ndim:
        flat, ok = checked_index(fb, arr, idx, node)
        return BoundsChecks.load(ok, element_value(arr, flat, t.elem))
    if len(idx) == t.ndim - 1 and t.row_width in VECTOR_WIDTHS and isinstance(t.elem, Scalar):
        flat, ok = checked_index(fb, arr, idx + [ir.Const(0, fb.prog.index_type)], node)
        flat = fb.materialize(flat)
        ok = fb.materialize(ok) if ok is not None else None
        vt = Vector(t.elem, t.row_width)
        return ir.VecCtor([BoundsChecks.load(ok, element_value(arr, fb.add(flat, ir.Const(k, fb.prog.index_type))
                                                               if k else flat, t.elem))
                           for k in range(t.row_width)], vt)
    if len(idx) < t.ndim:
        raise fb.err(node, f"a {t.ndim}-D array needs {t.ndim} ind{'ex' if t.ndim == 1 else 'ices'} here, got {len(idx)}",
                     "index every dimension: x[i, j] (rows of width 2, 3, 4, 8 or 16 load as vectors)")
    raise fb.err(node, f"too many indices ({len(idx)}) for a {t.ndim}-D array")


def subscript_target(fb: FunctionBuilder, target):
    arr = fb.expr(target.value)
    if is_record_binding(arr):            # p[i]["mass"] = ..., p[i].pos[k] = ...: _records stores
        return arr, None, None, None
    if isinstance(arr, ir.ArrayRef) and isinstance(arr.type.elem, RecordType):
        raise fb.err(target, "a whole record cannot be assigned in a kernel",
                     "assign its fields: p[i].mass = ... or p[i]['mass'] = ...")
    if not isinstance(arr, ir.ArrayRef):
        if isinstance(arr, ir.Expr) and isinstance(arr.type, Vector):
            raise fb.err(target, "writing a vector component is not supported",
                         "build a new vector, e.g. v = float4(v.x, 1.0, v.z, v.w)")
        raise fb.err(target, "only arrays can be assigned by index")
    idx = index_list(fb, target.slice)
    t = arr.type
    if len(idx) == t.ndim:
        return (arr, *checked_index(fb, arr, idx, target, "write"), 0)
    if len(idx) == t.ndim - 1 and t.row_width in VECTOR_WIDTHS:
        flat, ok = checked_index(fb, arr, idx + [ir.Const(0, fb.prog.index_type)], target, "write")
        return arr, fb.materialize(flat), ok, t.row_width
    raise fb.err(target, f"too many indices for a {t.ndim}-D array: it needs {t.ndim}, got {len(idx)}"
                 if len(idx) > t.ndim else f"a {t.ndim}-D array needs {t.ndim} indices here, got {len(idx)}")
