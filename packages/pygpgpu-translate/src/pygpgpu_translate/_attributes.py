"""Attribute reads in kernels: ``p[i].mass`` (``_records``), ``z.real`` (``_complex``), an array's
``.shape``/``.size``/``.ndim``, ``self.x`` of a kernel method, module attributes and attributes of
other objects (read once, ``_attr_refs``), vector swizzles (``_vector_values``), and the refusals
that say what to write instead. Each function takes the function builder as its explicit, typed
lowering context."""
from __future__ import annotations

import ast
import types as _pytypes
from typing import TYPE_CHECKING

from . import _ir as ir
from ._attr_refs import attribute_value
from ._bindings import ObjectRef, ShapeRef
from ._builtins import lookup_namespace
from ._complex import complex_attribute, is_complex
from ._records import is_record_binding, record_attribute
from ._types import Scalar, Vector
from ._vector_values import swizzle

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["attribute", "self_attribute"]


def attribute(fb: FunctionBuilder, node):
    base = fb.expr(node.value)
    attr = node.attr
    if is_record_binding(base):           # p[i].mass (_records)
        return record_attribute(fb, base, attr, node)
    if isinstance(base, ir.Expr) and (is_complex(base.type) or (attr in ("real", "imag") and isinstance(base.type, Scalar))):
        return complex_attribute(fb, base, attr, node)      # z.real, z.imag (_complex)
    if isinstance(base, ir.ArrayRef):
        if attr == "shape":
            return ShapeRef(base)
        if attr == "size":
            out = base.shape[0]
            for s in base.shape[1:]:
                out = ir.Bin("*", out, s, fb.prog.index_type)
            return fb.index_value(out)
        if attr == "ndim":
            return ir.Const(base.type.ndim, Scalar("int32", weak=True))
        raise fb.err(node, f"arrays have no attribute {attr!r} in kernels", "use .shape, .size, .ndim or len()")
    if isinstance(base, ObjectRef):
        obj = base.obj
        if fb.is_kernel and obj is fb.self_obj and fb.self_obj is not None:
            return self_attribute(fb, attr, node)
        if not hasattr(obj, attr):
            raise fb.err(node, f"{getattr(obj, '__name__', type(obj).__name__)} has no attribute {attr!r}")
        what = f"{getattr(obj, '__name__', None) or ast.unparse(node.value)}.{attr}"
        if isinstance(obj, _pytypes.ModuleType):
            b = lookup_namespace(obj.__name__, attr)
            if b is not None:
                return ObjectRef(getattr(obj, attr))
            value = getattr(obj, attr)
            fb.prog.global_refs[(id(obj.__dict__), attr)] = (obj.__dict__, attr, value)
            return fb.object_value(value, node, what, (obj.__dict__.get("__name__", "?"), attr))
        value, path = attribute_value(fb, base, attr, node)
        return fb.object_value(value, node, what, path)
    if isinstance(base, ir.Expr) and attr in ("shape", "size", "ndim"):
        # an array's attribute read from a number (a scalar passed for an array parameter) or a
        # vector (the row m[i] of an (n, 4) array, which reads as a float4)
        what = ast.unparse(node.value)
        if isinstance(base.type, Vector):
            raise fb.err(node, f"{what} is a {base.type} vector here, which has no .{attr}",
                         f"a row of an (n, {base.type.width}) array reads as a vector: use len({what}) "
                         f"({base.type.width}) and its components, or index the array itself")
        number = (f"a Python {'float' if base.type.is_float else 'int'}" if getattr(base.type, "weak", False)
                  else f"a {getattr(base.type, 'name', base.type)} number")
        raise fb.err(node, f"{what} is {number} here, which has no .{attr}",
                     f"pass an array for {what!r}" if what in fb.params else "use .shape on an array")
    if isinstance(base, ir.Expr) and isinstance(base.type, Vector):
        return swizzle(fb, base, attr, node)
    if isinstance(base, ir.Expr) and attr in ("astype", "item", "view"):     # numpy's conversions of a value
        raise fb.err(node, f"numbers have no .{attr}() in kernels",
                     "convert with np.int32(v), np.float64(v)..., or int(v), float(v), bool(v)")
    raise fb.err(node, f"attribute {attr!r} is not supported here",
                 "attributes work on vectors (.x, .xy, .s0), arrays (.shape, .size, .ndim) and self")


def self_attribute(fb: FunctionBuilder, attr, node):
    binding = fb.self_attrs.get(attr)
    if binding is None:
        raise fb.err(node, f"self.{attr} is not usable in a kernel",
                     "self attributes must be numpy/device arrays, numbers or vectors")
    return binding
