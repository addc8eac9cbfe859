"""Private arrays: ``t = np.zeros(8, np.float32)`` inside a kernel or helper is an array of each
work item's own, declared at the top of the C function (``float t[8];``).

The shape must be known when translating: int literals, constants of the module or of the
enclosing function, arithmetic on them, tuples of them (``np.zeros((N, 3))``: its rows read
and store as ``float3``). ``np.zeros``/``np.ones``/``np.full`` fill it where the assignment
stands (so one inside a loop starts over each turn), ``np.empty`` leaves it as it is. The
element type is the ``dtype`` argument; without one, the kernel's default float (``np.full``:
the fill value's type, a Python int being int64 as numpy's). Indexing, loops, ``len``,
``.shape`` and passing it to helpers (a pointer into the work item's memory) work as for
array arguments.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import _ir as ir
from ._dtype_objects import dtype_from_object
from ._bindings import TupleRef
from ._types import INT64, VECTOR_WIDTHS, ArrayType, Scalar, Vector, concrete

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["CONSTRUCTORS", "private_array", "misused_constructor"]

# function -> (name, position of its dtype argument, whether it fills)
CONSTRUCTORS = {np.zeros: ("np.zeros", 1), np.ones: ("np.ones", 1), np.empty: ("np.empty", 1), np.full: ("np.full", 2)}
MAX_BYTES = 64 << 10      # per work item: past this, registers and the stack spill or overflow


def misused_constructor(fb: FunctionBuilder, obj, node):
    """The error for ``np.zeros(...)`` anywhere but on the right of ``name = ...``."""
    name = CONSTRUCTORS[obj][0]
    example = f"{name}(8, 0.0, np.float32)" if obj is np.full else f"{name}(8, np.float32)"
    return fb.err(node, f"{name}(...) in a kernel makes a private array, which must be assigned to a name",
                  f"write t = {example} on its own line, then use t")


def private_array(fb: FunctionBuilder, name: str, call, obj) -> list:
    """The statements of ``name = np.zeros(...)`` (and np.ones/np.empty/np.full): bind ``name``
    to a private array of the function and fill it."""
    what, dtype_pos = CONSTRUCTORS[obj]
    allowed = {"shape", "dtype"} | ({"fill_value"} if obj is np.full else set())
    for kw in call.keywords:
        if kw.arg not in allowed:
            raise fb.err(kw.value, f"{what}() in a kernel takes {', '.join(sorted(allowed))}, not {kw.arg!r}")
    kw = {k.arg: k.value for k in call.keywords}
    args = list(call.args)
    if len(args) > dtype_pos + 1:
        raise fb.err(call, f"{what}() in a kernel takes at most {dtype_pos + 1} positional arguments")
    shape_node = args[0] if args else kw.get("shape")
    if shape_node is None:
        raise fb.err(call, f"{what}() needs a shape")
    shape = _static_shape(fb, shape_node, what)
    fill_node = (args[1] if len(args) > 1 else kw.get("fill_value")) if obj is np.full else None
    if obj is np.full and fill_node is None:
        raise fb.err(call, "np.full() needs a fill value")
    fill = fb.value(fill_node) if fill_node is not None else None
    dt_node = args[dtype_pos] if len(args) > dtype_pos else kw.get("dtype")
    if dt_node is not None:
        elem = dtype_from_object(fb, fb.expr(dt_node), dt_node)
    elif fill is not None:
        elem = _type_of_fill(fb, fill, fill_node)
    else:
        elem = fb.prog.default_float
    if not isinstance(elem, Scalar):
        raise fb.err(dt_node or call, f"a private array holds numbers, not {elem}",
                     f"give it one more dimension for the components: {what}((n, {getattr(elem, 'width', 4)}), ...)"
                     if isinstance(elem, Vector) else "use a numpy dtype such as np.float32")
    size = int(np.prod(shape))
    if size * elem.dtype.itemsize > MAX_BYTES:
        raise fb.err(shape_node, f"a private array of {size * elem.dtype.itemsize} bytes is too large for one work "
                     f"item (at most {MAX_BYTES})",
                     "use gpu.local_array for memory shared by a group, or an array argument")
    fb.prog.note_type(elem)
    row = shape[-1] if len(shape) >= 2 and shape[-1] in VECTOR_WIDTHS else 0
    t = ArrayType(elem, len(shape), space="private", row_width=row, static_shape=tuple(shape))
    cname = fb.cname(name)
    prev = fb.array_locals.get(name)
    if prev is not None and (not isinstance(prev, ir.ArrayRef) or prev.cname != cname or prev.type != t):
        raise fb.err(call, f"{name!r} refers to two different arrays",
                     "use one name per array; a private array keeps its shape and dtype")
    ref = ir.ArrayRef(name, cname, [ir.Const(n, fb.prog.index_type) for n in shape], t)
    fb.array_locals[name] = ref
    fb.temp_types[cname] = t                  # declared with the function's locals (the emitter)
    if obj is np.empty:
        return []
    value = fill if fill is not None else ir.Const(1 if obj is np.ones else 0, elem)
    value = fb.materialize(fb.convert(value, elem))
    k = fb.temp(fb.prog.index_type)
    line = call.lineno
    store = ir.Store(ref, k, value, line)
    return [ir.For(k, ir.Const(0, k.type), ir.Const(size, k.type), ir.Const(1, k.type), [store], line, 1)]


def _static_shape(fb: FunctionBuilder, node, what) -> list:
    v = fb.expr(node)
    dims = v.items if isinstance(v, TupleRef) else [v]
    shape = []
    for d in dims:
        if not (isinstance(d, ir.Const) and isinstance(d.value, int) and not isinstance(d.value, bool) and d.value > 0):
            raise fb.err(node, f"{what}() in a kernel needs a compile-time shape",
                         "use int literals, int constants of the module or of the enclosing function, or a tuple "
                         "of them; for a size known only at run time, pass an array argument")
        shape.append(d.value)
    if not 1 <= len(shape) <= 3:
        raise fb.err(node, f"a private array has 1 to 3 dimensions, not {len(shape)}")
    return shape


def _type_of_fill(fb: FunctionBuilder, fill, node):
    t = fill.type
    if isinstance(t, Vector):
        raise fb.err(node, "np.full() fills with a number, not a vector",
                     "give the array a dimension for the components and fill it in a loop")
    if isinstance(t, Scalar) and t.weak:
        return INT64 if t.is_int else concrete(t, fb.prog.default_float)
    return t
