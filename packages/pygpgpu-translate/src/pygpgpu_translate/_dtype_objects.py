"""The element type a dtype argument names (``dtype=np.float32``, ``float``, ``int``, a vector
class, a complex dtype): one rule for ``gpu.local_array``, the private ``np.zeros``/``np.empty``/
``np.full`` arrays and ``gpu_random``'s ``dtype=``. Takes the function builder as its explicit,
typed lowering context."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ._bindings import NP_TYPES, ObjectRef, vector_class_info
from ._builtins import CAST_TYPES
from ._complex import complex_type_of
from ._types import INT32, Scalar, Vector

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["dtype_from_object"]


def dtype_from_object(fb: FunctionBuilder, obj, node):
    """The type ``obj`` (the evaluated dtype argument at ``node``) names; a SyntaxError where it names none."""
    if isinstance(obj, ObjectRef):
        o = obj.obj
        if o in CAST_TYPES and CAST_TYPES[o] in NP_TYPES:
            return Scalar(CAST_TYPES[o])
        if o is float:
            return fb.prog.default_float
        if o is int:
            return INT32
        vi = vector_class_info(o)
        if vi:
            return Vector(Scalar(vi[0]), vi[1])
        try:
            dt = np.dtype(cast(Any, o))          # any object: numpy says whether it names a dtype
            return complex_type_of(dt) if dt.kind == "c" else Scalar(dt.name)
        except TypeError:
            pass
    raise fb.err(node, "expected a numpy dtype such as np.float32")
