"""``gpu.local_array``: work-group local memory, of a compile-time shape (a ``LocalArrayDecl``
in the kernel) or sized at each launch by an int parameter or the group's size (a hidden
parameter each: ``_entry.launch_sized_locals``). Takes the function builder as its explicit,
typed lowering context."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import numpy as np

from . import _ir as ir
from ._bindings import TupleRef
from ._dtype_objects import dtype_from_object
from ._launch_checks import local_size_item
from ._types import ArrayType, Scalar

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["local_array", "dynamic_local_array"]


def local_array(fb: FunctionBuilder, name: str, call: ast.Call) -> None:
    """``name = gpu.local_array(shape, dtype)`` in the kernel: binds ``name`` to the local array; emits nothing here."""
    if not fb.is_kernel:
        raise fb.err(call, "gpu.local_array must be declared in the kernel itself",
                     "declare it in the kernel and pass it to the helper")
    kw = {k.arg: k.value for k in call.keywords if k.arg is not None}   # _frontend refuses **kwargs in calls
    unknown = set(kw) - {"shape", "dtype"}
    if unknown:
        raise fb.err(call, f"gpu.local_array takes shape and dtype, not {sorted(unknown)[0]!r}")
    shape_node = call.args[0] if call.args else kw.get("shape")
    if shape_node is None:
        raise fb.err(call, "gpu.local_array(shape, dtype) needs a shape")
    shape_v = fb.expr(shape_node)
    if isinstance(shape_node, ast.Name) and shape_node.id in fb.params and isinstance(shape_v, ir.Var):
        return dynamic_local_array(fb, name, call, shape_node.id, shape_v, kw)
    group_dims = _local_size_dims(shape_v)          # the launch's group shape
    if group_dims:
        return dynamic_local_array(fb, name, call, local_size_item(group_dims), shape_v, kw)
    dims = shape_v.items if isinstance(shape_v, TupleRef) else [shape_v]
    shape = []
    for d in dims:
        if not (isinstance(d, ir.Const) and isinstance(d.value, int) and d.value > 0):
            raise fb.err(shape_node, "gpu.local_array needs a compile-time shape",
                         "use int literals, int constants of the module or of the enclosing function, "
                         "or a tuple of them (TILE = (16, 16)); or, for a 1-D array sized at each launch, "
                         "an int parameter of the kernel itself (gpu.local_array(n, dtype)) or the group's "
                         "size along one dimension (gpu.local_array(gpu.get_local_size(0), dtype))")
        shape.append(d.value)
    dt_node = call.args[1] if len(call.args) > 1 else kw.get("dtype")
    elem = fb.prog.default_float
    if dt_node is not None:
        obj = fb.expr(dt_node)
        elem = dtype_from_object(fb, obj, dt_node)
    fb.prog.note_type(elem)
    t = ArrayType(elem, len(shape), space="local", static_shape=tuple(shape))
    ref = ir.ArrayRef(name, fb.cname(name), [ir.Const(n, fb.prog.index_type) for n in shape], t)
    fb.array_locals[name] = ref
    fb.prog.local_arrays.append(ir.LocalArrayDecl(ref, int(np.prod(shape)), call.lineno))
    return None


def dynamic_local_array(fb: FunctionBuilder, name: str, call: ast.Call, size_name: str, size, kw: dict) -> None:
    """``gpu.local_array(n, dtype)`` with ``n`` an int parameter of the kernel: local memory sized
    at each launch (OpenCL: a __local pointer argument; CUDA/HIP: the dynamic shared memory)."""
    if not (isinstance(size.type, Scalar) and size.type.kind in "iu"):
        raise fb.err(call, f"gpu.local_array({size_name}, ...): the size parameter {size_name!r} is a "
                     f"{size.type}, not an int", f"pass the number of elements as an int: {size_name}=256")
    dt_node = call.args[1] if len(call.args) > 1 else kw.get("dtype")
    elem = dtype_from_object(fb, fb.expr(dt_node), dt_node) if dt_node is not None else fb.prog.default_float
    if not isinstance(elem, Scalar):
        raise fb.err(dt_node or call, "a local array sized at launch holds numbers", "use a numpy dtype")
    fb.prog.note_type(elem)
    idx = fb.prog.index_type
    t = ArrayType(elem, 1, space="local")
    ref = ir.ArrayRef(name, fb.cname(name), [ir.Cast(size, idx)], t)
    fb.array_locals[name] = ref
    fb.prog.dynamic_locals[ref.cname] = (ref, size_name)
    return None


def _local_size_dims(e) -> list[int] | None:
    """The dimensions ``e`` multiplies the group's sizes along (``gpu.get_local_size(0) *
    gpu.get_local_size(1)``: [0, 1]), each once; None for any other expression."""
    while isinstance(e, ir.Cast):           # the index type's widening, the wrapping product's casts
        e = e.a
    if isinstance(e, ir.WorkItem):
        return [e.dim] if e.what == "local_size" else None
    if isinstance(e, ir.Bin) and e.op == "*":
        a, b = _local_size_dims(e.a), _local_size_dims(e.b)
        if a is None or b is None or set(a) & set(b):
            return None
        return sorted(a + b)
    return None
