"""Compile-time values the builder passes around besides IR expressions: Python objects
(modules, self, functions), array shapes, index tuples, and the iteration domain."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _ir as ir
from ._names import RESERVED
from ._types import VECTOR_WIDTHS

__all__ = ["KernelParamSpec", "C_RESERVED", "SWIZZLE_INDEX", "NP_TYPES", "vector_class_info", "ObjectRef", "ShapeRef", "TupleRef", "Domain"]

C_RESERVED = RESERVED          # every word some dialect reserves (see _names, _c_words)
SWIZZLE_INDEX = {**{c: i for i, c in enumerate("xyzw")}, **{c: i for i, c in enumerate("rgba")}}
NP_TYPES = {np.dtype(t).name for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                        "uint64", "float16", "float32", "float64")}


def vector_class_info(obj):
    """(base numpy name, width) when ``obj`` is one of the host vector classes (float4, int3, ...)."""
    if not isinstance(obj, type):
        return None
    mod = getattr(obj, "__module__", "") or ""
    if not mod.startswith("pygpgpu"):
        return None
    width = getattr(obj, "width", None)
    base = getattr(obj, "base", None)
    if isinstance(width, int) and width in VECTOR_WIDTHS and base is not None:
        try:
            return np.dtype(base).name, width
        except TypeError:
            return None
    name = obj.__name__
    for short, npname in (("uchar", "uint8"), ("ushort", "uint16"), ("uint", "uint32"), ("ulong", "uint64"),
                          ("char", "int8"), ("short", "int16"), ("int", "int32"), ("long", "int64"),
                          ("float", "float32"), ("double", "float64")):
        if name.startswith(short) and name[len(short):].isdigit() and int(name[len(short):]) in VECTOR_WIDTHS:
            return npname, int(name[len(short):])
    return None


@dataclass
class ObjectRef:
    """A compile-time Python object: a module, ``self``, a function, a class, an instance."""
    obj: object
    path: "tuple[str, str] | None" = field(default=None, compare=False)   # how a later process finds it again (_attr_refs), if it can


@dataclass
class ShapeRef:
    array: ir.ArrayRef


@dataclass
class TupleRef:
    items: list


@dataclass
class Domain:
    kind: str                     # "range" | "ndindex" | "ndenumerate" | "enumerate" | "work_size"
    ndim: int
    host_exprs: list              # Python source strings evaluated on the host (sizes per dim)
    node: object = None           # the For statement (None for work_size)
    covers: dict = field(default_factory=dict)   # array -> row width (0: one element) stored unconditionally
                                                 # at the domain index


@dataclass
class KernelParamSpec:
    """One Python-level kernel input: a parameter or a ``self.attr``."""
    name: str                 # Python name ("x", "self.weights")
    kind: str                 # "array" | "scalar" | "vector" | "self"
    type: object = None       # ArrayType / Scalar (weak for Python scalars) / Vector
