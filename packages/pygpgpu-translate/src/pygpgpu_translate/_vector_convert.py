"""Converting vectors between base types inside kernels, by the host's rule.

``float3.convert(v)`` and ``float3(uchar3_value)`` mean the same on the host (``vec_types``)
and in a kernel: component by component, ints wrap, floats truncate toward zero. A float
component bound for an integer type goes through int64 first (the host truncates to int64,
then wraps into the narrower type): a C cast of a float straight to a narrow or unsigned type
is undefined past the type's range, and compilers disagree there (x86 wraps, GPUs saturate).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pygpgpu_core.vec_types import NUMPY_SCALAR_CLASHES

from . import _ir as ir
from ._bindings import vector_class_info
from ._types import INT64, Scalar, Vector, concrete

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["convert_component", "vector_convert_call", "vector_method", "vector_for_scalar"]


def convert_component(fb: FunctionBuilder, c: ir.Expr, base: Scalar) -> ir.Expr:
    """Scalar ``c`` as vector component type ``base``, as the host vector classes convert it."""
    src = concrete(c.type, fb.prog.default_float)
    if (isinstance(src, Scalar) and src.is_float and base.is_int and base != INT64
            and not isinstance(c, ir.Const)):
        return ir.Cast(ir.Cast(c, INT64), base)
    return fb.convert(c, base)


def vector_for_scalar(src: Vector, want) -> str:
    """The message for vector ``src`` where scalar ``want`` is expected. Five vector names are also
    numpy's scalar names (int8, int16, uint8, uint16, float16: 8 or 16 components there), so the
    likely slip, ``int8(1)`` meant as numpy's scalar, is named with its fix."""
    def a(word) -> str:
        return f"{'an' if str(word)[:1] in 'aeiou' else 'a'} {word}"

    text = (f"{a(src)} vector ({src.width} x {src.base.name}) is used where {a(want)} scalar is expected; "
            "pick a component (v.x) or reduce it (funcs.dot)")
    if src.name in NUMPY_SCALAR_CLASHES:
        text += (f". Note: {src.name} here is the {src.width}-wide vector pygpgpu.vec.{src.name}, which shares its "
                 f"name with numpy's scalar type np.{src.name}; for one {src.name} number write "
                 f"np.{src.name}(...)")
    return text


def vector_method(obj):
    """``(Vector type, method name)`` when ``obj`` is a classmethod of a host vector class
    (``float3.convert``), else None."""
    owner = getattr(obj, "__self__", None)
    info = vector_class_info(owner) if isinstance(owner, type) else None
    if info is None:
        return None
    return Vector(Scalar(info[0]), info[1]), getattr(obj, "__name__", "")


def vector_convert_call(fb: FunctionBuilder, vt: Vector, node):
    """``T.convert(v)``: ``v`` a vector (or a row of an array) of ``T``'s width, any base type."""
    if len(node.args) != 1 or node.keywords:
        raise fb.err(node, f"{vt}.convert() takes one vector")
    v = fb.value(node.args[0])
    if not isinstance(v.type, Vector):
        raise fb.err(node.args[0], f"{vt}.convert() takes a vector of {vt.width} components, got a {v.type} scalar",
                     f"broadcast a scalar with {vt}(x)")
    if v.type.width != vt.width:
        raise fb.err(node.args[0], f"{vt}.convert() needs {vt.width} components, got a {v.type}",
                     f"pick {vt.width} components with a swizzle, e.g. v.{'xyzw'[:vt.width] if vt.width <= 4 else 's0'}")
    v = fb.materialize(v)
    fb.prog.note_type(vt)
    return ir.VecCtor([convert_component(fb, fb.comp(v, k), vt.base) for k in range(vt.width)], vt)
