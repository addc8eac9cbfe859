"""numpy's scalar types, constants and dtype helpers, re-exported as ``gnp.<name>`` the way CuPy
re-exports them (``gnp.float32 is np.float32``, ``gnp.nan``, ``gnp.finfo``, ``gnp.dtype``): code
written for numpy or CuPy spells types and constants through the array module, and these are the
very numpy objects (device arrays use numpy's dtypes), so nothing here wraps them.

The helpers that look at arrays (``can_cast``, ``common_type``, ``min_scalar_type``...) take a
device array by its dtype alone, as numpy 2 types an array (no value-based casting): no data moves.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ._array import DeviceArray

# numpy names CuPy imports from numpy itself (``from numpy import X`` in cupy/__init__.py); gnp takes
# the same objects. The explicit import lets type checkers see them.
from numpy import (  # noqa: E402,F401  (re-exported)
    # constants
    e, euler_gamma, inf, nan, pi,
    # abstract scalar types
    generic, number, integer, signedinteger, unsignedinteger, inexact, floating, complexfloating,
    # concrete scalar types and their C names
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, complex64,
    complex128, byte, short, intc, int_, longlong, intp, ubyte, ushort, uintc, uint, ulonglong, uintp, half, single,
    double, csingle, cdouble,
    # dtype objects and predicates that take no array
    dtype, finfo, iinfo, issubdtype, promote_types, mintypecode, typename,
    # index helpers, iteration and printing (host-side Python objects)
    index_exp, s_, ndindex, iterable, broadcast_shapes, get_printoptions, set_printoptions, printoptions,
    binary_repr, base_repr,
)

NUMPY_OBJECTS = (
    "e", "euler_gamma", "inf", "nan", "pi",
    "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating", "complexfloating",
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
    "float64", "complex64", "complex128", "byte", "short", "intc", "int_", "longlong", "intp", "ubyte", "ushort",
    "uintc", "uint", "ulonglong", "uintp", "half", "single", "double", "csingle", "cdouble",
    "dtype", "finfo", "iinfo", "issubdtype", "promote_types", "mintypecode", "typename",
    "index_exp", "s_", "ndindex", "iterable", "broadcast_shapes", "get_printoptions", "set_printoptions",
    "printoptions", "binary_repr", "base_repr",
)
# numpy 2's names (np.bool, np.long, np.ulong, np.isdtype, np.exceptions), where the installed numpy has them; set
# by name, as a module attribute named bool would shadow the builtin in this module's own code
NUMPY_2_OBJECTS = tuple(name for name in ("bool", "long", "ulong", "isdtype", "exceptions") if hasattr(np, name))

__all__ = list(NUMPY_OBJECTS) + list(NUMPY_2_OBJECTS)
__all__ += ["result_type", "can_cast", "common_type", "min_scalar_type", "isscalar", "shape", "ndim", "size"]


def _dtype_of(x: Any) -> Any:
    return x.dtype if isinstance(x, DeviceArray) else x


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """``np.result_type``; a device array stands for its dtype (numpy 2 types arrays by dtype alone)."""
    return np.result_type(*(_dtype_of(x) for x in arrays_and_dtypes))


def can_cast(from_: Any, to: Any, casting: Any = "safe") -> bool:
    """``np.can_cast``; a device array stands for its dtype."""
    return np.can_cast(_dtype_of(from_), to, casting=casting)


def common_type(*arrays: Any) -> Any:
    """``np.common_type``: the inexact scalar type of the arrays (float64 for integers)."""
    if not arrays:
        return np.float16
    dtypes = []
    for a in arrays:
        dt = a.dtype if isinstance(a, DeviceArray) else np.asarray(a).dtype
        if dt.kind == "b":
            raise TypeError("can't get common type for non-numeric array")
        dtypes.append(np.dtype(np.float64) if dt.kind in "iu" else dt)
    return functools.reduce(np.promote_types, dtypes).type


def min_scalar_type(a: Any) -> np.dtype:
    """``np.min_scalar_type``; a device array is its dtype (numpy reads only a 0-d array's value)."""
    if isinstance(a, DeviceArray):
        return a.dtype if a.ndim else np.min_scalar_type(a.get())
    return np.min_scalar_type(a)


def isscalar(element: Any) -> bool:
    """``np.isscalar``: a device array (even a 0-d one) is not a scalar, as a numpy array is not."""
    return np.isscalar(element)


def shape(a: Any) -> tuple:
    """``np.shape``: a device array's shape, or numpy's for host data."""
    return a.shape if isinstance(a, DeviceArray) else np.shape(a)


def ndim(a: Any) -> int:
    return a.ndim if isinstance(a, DeviceArray) else np.ndim(a)


def size(a: Any, axis: "int | None" = None) -> int:
    if isinstance(a, DeviceArray):
        return a.size if axis is None else a.shape[axis]
    return np.size(a, axis)


def _set_numpy_2_names() -> None:
    module = globals()
    for name in NUMPY_2_OBJECTS:
        module[name] = getattr(np, name)


_set_numpy_2_names()
