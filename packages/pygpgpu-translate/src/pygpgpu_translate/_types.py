"""The translator's type system: scalars (weak or strong), vectors, arrays.

One rule set for every backend (docs/architecture.md#type-rules). Python scalars and literals are *weak*: they
adopt the other operand's type. A weak float alone is the kernel's default float; a weak
int alone is int32 (int64 when the value needs it). A *local* first bound to a weak value
(``acc = 0``) is concrete from the start (``literal_default``): weakness is for operands.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from .prelude._types import WIDTHS

if TYPE_CHECKING:
    from ._complex import ComplexType
    from ._records import RecordType

__all__ = [
    "Scalar", "Vector", "ArrayType", "VOID", "UNKNOWN", "BOOL", "INT32", "INT64", "UINT32",
    "FLOAT32", "FLOAT64", "scalar_of", "binary_result", "join", "JoinConflict", "concrete",
    "VECTOR_WIDTHS", "VECTOR_BASES", "SHORT_NAMES", "TYPE_LATTICE_HEIGHT",
    "literal_default", "wider_int", "literal_join", "UINT64", "is_signed_and_uint64", "PYBOOL",
]

# numpy dtype name -> the OpenCL-style name the prelude library and the host vector classes use
# ("long" is always 64-bit). bool and float16 have none: no vectors, no prelude pieces.
SHORT_NAMES = {"int8": "char", "uint8": "uchar", "int16": "short", "uint16": "ushort", "int32": "int",
               "uint32": "uint", "int64": "long", "uint64": "ulong", "float32": "float", "float64": "double"}
VECTOR_WIDTHS = WIDTHS           # the prelude defines every vector type
VECTOR_BASES = tuple(SHORT_NAMES)


@dataclass(frozen=True)
class Scalar:
    name: str                 # numpy dtype name: bool, int8 ... uint64, float16, float32, float64
    weak: bool = False

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.name)

    @property
    def kind(self) -> str:    # 'b', 'i', 'u', 'f'
        return self.dtype.kind

    @property
    def bits(self) -> int:
        return 8 if self.name == "bool" else self.dtype.itemsize * 8

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def short_name(self) -> str | None:
        """The prelude's name of this type (``int32`` -> ``"int"``); None for bool and float16."""
        return SHORT_NAMES.get(self.name)

    def strong(self) -> "Scalar":
        return replace(self, weak=False) if self.weak else self

    def __str__(self) -> str:
        return ("weak " if self.weak else "") + self.name


@dataclass(frozen=True)
class Vector:
    base: Scalar
    width: int

    @property
    def name(self) -> str:    # OpenCL-style name, also the host class name: float4, int3
        return f"{SHORT_NAMES[self.base.name]}{self.width}"

    @property
    def short_name(self) -> str:
        return self.name

    weak = False

    def strong(self) -> "Vector":
        return self

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ArrayType:
    elem: Scalar | Vector | RecordType | ComplexType
    ndim: int
    space: str = "global"     # "global" | "local"
    row_width: int = 0        # last dim when it is a vector width (2,3,4,8,16): a[i] of a 2-D array is a vector
    static_shape: tuple = ()  # local arrays: compile-time shape
    known_last: int = 0       # the last dimension's size when the signature fixes it (row arrays): a constant stride
    align: int = 0            # bytes the pointer is known to be aligned to beyond its element (16 for float rows of 4)

    weak = False

    def strong(self) -> "ArrayType":
        return self

    def __str__(self) -> str:
        return f"{self.ndim}-D {self.space} array of {self.elem}"


@dataclass(frozen=True)
class _Special:
    name: str
    weak = False

    def strong(self):
        return self

    def __str__(self) -> str:
        return self.name


VOID = _Special("void")
UNKNOWN = _Special("unknown")   # a local whose type inference has not reached yet
BOOL = Scalar("bool")
PYBOOL = Scalar("bool", weak=True)  # a Python bool (True + True is 2), where BOOL is numpy's (True)
INT32 = Scalar("int32")
UINT32 = Scalar("uint32")
INT64 = Scalar("int64")
UINT64 = Scalar("uint64")
FLOAT32 = Scalar("float32")
FLOAT64 = Scalar("float64")


# The longest chain of distinct types one local can move through as assignments widen it:
# unknown, then any of the 12 strong scalars and 4 weak ones (int32, int64, uint64, float32);
# vectors only join with themselves. Bounds the passes of type inference (_builder.run_passes).
TYPE_LATTICE_HEIGHT = 1 + 12 + 4


def scalar_of(dtype) -> Scalar:
    return Scalar(np.dtype(dtype).name)


def concrete(t, default_float: Scalar):
    """Drop weakness: a weak scalar becomes the concrete type it would have on its own."""
    if isinstance(t, Scalar) and t.weak:
        if t.kind == "f":
            return default_float if t.name == "float32" else Scalar(t.name)
        return Scalar(t.name)
    return t


def literal_default(t: Scalar, default_float: Scalar, index_type: Scalar) -> Scalar:
    """The concrete type of a local first bound to a bare Python number (``acc = 0``): an int
    literal is int32 (the index type, int64, under 64-bit indexing; int64/uint64 when the value
    needs it), a float literal the kernel's default float, a Python bool stays one. Later
    assignments widen it by ``join``."""
    if t.kind == "f":
        return default_float
    if t.kind == "b":
        return t           # a Python bool stays one (c = i > 0; c + c is 2): C has one bool either way
    if t.name == "int32":
        return index_type
    return t.strong()


def wider_int(a, b):
    """The smallest signed int type holding every value of ints ``a`` and ``b`` (int32 and
    uint32 -> int64), or None when there is none (a uint64 and a signed int)."""
    if not (isinstance(a, Scalar) and isinstance(b, Scalar) and a.is_int and b.is_int):
        return None
    p = np.promote_types(a.dtype, b.dtype)
    return Scalar(p.name) if p.kind in "iu" else None


def literal_join(a, b):
    """The type of a local first bound to a bare Python number (``acc = 0``) and later assigned
    ints ``a`` and ``b`` that ``join`` cannot hold in one of them: the smallest int type holding
    both (int32 and uint32: int64), or uint64 when one is uint64, which is what numpy makes of
    the Python int ``acc`` is on the host (``0 + x_u64[j]`` is uint64); None for other types."""
    wide = wider_int(a, b)
    if wide is None and is_signed_and_uint64(a, b):
        return UINT64
    return wide


def is_signed_and_uint64(a, b) -> bool:
    """One of scalars ``a`` and ``b`` is uint64 and the other a signed int: no int type holds
    both, numpy computes them in float64 and compares them exactly."""
    return (isinstance(a, Scalar) and isinstance(b, Scalar) and {a.kind, b.kind} == {"i", "u"}
            and UINT64 in (a.strong(), b.strong()))


def _promote_strong(a: Scalar, b: Scalar) -> Scalar:
    """numpy's promotion (int64 op uint64 is float64), except that int op float keeps the float
    type (the C/OpenCL rule, so a float32 kernel never drifts into float64 because of an int
    index)."""
    if a == b:
        return a
    if a.is_float != b.is_float:
        return a if a.is_float else b
    return Scalar(np.promote_types(a.dtype, b.dtype).name)


def binary_result(a: Scalar, b: Scalar, default_float: Scalar) -> Scalar:
    """Type of an arithmetic operation between two scalars (before Python-semantics lowering)."""
    if a.weak and b.weak:
        if a.is_float or b.is_float:
            return Scalar("float32", weak=True)   # a weak float; concrete() makes it the default float
        bits = max(a.bits, b.bits, 32)
        return Scalar(f"int{bits}", weak=True)
    if a.weak or b.weak:
        weak, strong = (a, b) if a.weak else (b, a)
        if weak.is_float and not strong.is_float:
            return default_float           # int32_array * 2.0 -> default float
        if strong.kind == "b":
            return Scalar("int32") if weak.is_int else default_float
        return strong
    if a.kind == "b" and b.kind == "b":
        return INT32
    return _promote_strong(a, b)


class JoinConflict(Exception):
    def __init__(self, a, b):
        self.a, self.b = a, b
        super().__init__(f"{a} vs {b}")


def join(a, b, default_float=None):
    """The type of a local assigned both an ``a`` and a ``b`` value. An int and a float join as
    in Numba: the float where it holds every value of the int (int32 and float32 give float32),
    else float64, or the kernel's default float (``default_float``, float32 unless the kernel
    says otherwise) where that is float32, as any bare float literal is."""
    if a is UNKNOWN:
        return b
    if b is UNKNOWN or a == b:
        return a
    if getattr(a, "kind", "") == "c" or getattr(b, "kind", "") == "c":     # a complex local (_complex)
        from ._complex import join_complex
        return join_complex(a, b)
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        if a.weak and b.weak:
            if a.is_float or b.is_float:
                return Scalar("float32", weak=True)
            return Scalar(f"int{max(a.bits, b.bits, 32)}", weak=True)
        if a.weak or b.weak:
            weak, strong = (a, b) if a.weak else (b, a)
            if weak.is_float and not strong.is_float:
                return Scalar("float32", weak=True)       # a bare float: the default float, whatever the int
            return strong
        if a.is_float != b.is_float:       # t = i64[i] on one path, t = f32[i] on another
            i, f = (a, b) if b.is_float else (b, a)
            if f.bits > i.bits or (f.name == "float32" and i.bits <= 32):
                return f
            df = default_float if default_float is not None else Scalar("float64")
            return f if f.bits >= df.bits else Scalar(df.name)
        p = _promote_strong(a, b)
        if p == a or p == b:
            return p
        raise JoinConflict(a, b)
    if isinstance(a, Vector) and isinstance(b, Vector) and a == b:
        return a
    raise JoinConflict(a, b)
