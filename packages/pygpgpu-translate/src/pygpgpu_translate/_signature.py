"""Argument classification: from call arguments to a hashable signature key and kernel specs.

The key is built from cheap attribute reads (dtype, ndim, a vector row width, the
magnitude class of Python ints) so a warm call is a tuple build and a dict lookup.
"""
from __future__ import annotations

import numpy as np

from ._bindings import KernelParamSpec, vector_class_info
from ._types import VECTOR_WIDTHS, ArrayType, Scalar, Vector

__all__ = ["base_view", "vector_dtype_info", "arg_token", "spec_from_token", "is_device_array", "vector_value_info", "INDEX_LIMIT"]

INDEX_LIMIT = 2**31 - 1
_SUPPORTED = {"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "float16", "float32", "float64"}


def is_device_array(value) -> bool:
    return hasattr(value, "buffer") and hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, np.ndarray)


def vector_value_info(value):
    """(base numpy name, width) for a host vector object (pygpgpu float4 instance etc)."""
    return vector_class_info(type(value))


def _row(shape, ndim):
    if ndim >= 2:
        w = shape[-1]
        if w in VECTOR_WIDTHS:
            return w
    return 0


def vector_dtype_info(dtype):
    """(base dtype, width, slots) for an array-of-vectors dtype (``float4.dtype``), else None."""
    if dtype.fields is None:
        return None
    names = dtype.names
    if not names:
        return None
    base = dtype.fields[names[0]][0]
    width = len(names)
    if width not in VECTOR_WIDTHS or any(dtype.fields[n][0] != base for n in names) or base.kind not in "iuf":
        return None
    if any(dtype.fields[n][1] != k * base.itemsize for k, n in enumerate(names)):
        return None
    slots, rem = divmod(dtype.itemsize, base.itemsize)
    if rem or slots < width:
        return None
    return base, width, slots


def base_view(a):
    """An array of vectors seen as its base type with one more dimension (the vector slots)."""
    base, width, slots = vector_dtype_info(a.dtype)
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return a.view(base).reshape(a.shape + (slots,))


def arg_token(value, name: str):
    """Hashable description of one argument; raises TypeError naming the parameter."""
    t = type(value)
    if t is np.ndarray:
        if value.dtype.fields is not None:
            vi = vector_dtype_info(value.dtype)
            if vi is not None:
                return ("av", vi[0], value.ndim + 1, vi[1], vi[2])
        return ("a", value.dtype, value.ndim, _row(value.shape, value.ndim))
    if t is float:
        return "f"
    if t is bool:
        return "b"
    if t is int:
        if -2**31 <= value < 2**31:
            return "i"
        if -2**63 <= value < 2**63:
            return "l"
        if 0 <= value < 2**64:
            return "L"
        raise ValueError(f"argument {name!r}: the integer {value} does not fit in 64 bits")
    if isinstance(value, np.generic):
        if value.dtype.name not in _SUPPORTED:
            raise TypeError(f"argument {name!r}: numpy scalars of type {value.dtype} are not supported")
        return ("s", value.dtype)
    if isinstance(value, np.ndarray):
        return ("a", value.dtype, value.ndim, _row(value.shape, value.ndim))
    if is_device_array(value):
        return ("d", np.dtype(value.dtype), len(value.shape), _row(value.shape, len(value.shape)))
    vi = vector_value_info(value)
    if vi:
        return ("v", vi)
    hint = ""
    if isinstance(value, (list, tuple)):
        hint = "; convert it with np.asarray(..., dtype=np.float32)"
    raise TypeError(f"argument {name!r}: a {t.__name__} cannot be passed to a kernel (pass numpy arrays, "
                    f"pygpgpu device arrays, numbers or vector values){hint}")


def spec_from_token(token, name: str, default_float: Scalar) -> KernelParamSpec:
    if token == "f":
        return KernelParamSpec(name, "scalar", Scalar("float32", weak=True))
    if token == "b":
        return KernelParamSpec(name, "scalar", Scalar("bool"))
    if token == "i":
        return KernelParamSpec(name, "scalar", Scalar("int32", weak=True))
    if token == "l":
        return KernelParamSpec(name, "scalar", Scalar("int64", weak=True))
    if token == "L":
        return KernelParamSpec(name, "scalar", Scalar("uint64", weak=True))
    kind = token[0]
    if kind == "s":
        return KernelParamSpec(name, "scalar", Scalar(token[1].name))
    if kind == "v":
        base, width = token[1]
        return KernelParamSpec(name, "vector", Vector(Scalar(base), width))
    if kind == "av":
        base, ndim, width = token[1], token[2], token[3]
        if ndim - 1 > 3:
            raise ValueError(f"argument {name!r}: arrays must have 1 to 3 dimensions, got {ndim - 1}")
        return KernelParamSpec(name, "array", ArrayType(Scalar(base.name), ndim, row_width=width))
    dtype, ndim, row = token[1], token[2], token[3]
    if ndim < 1 or ndim > 3:
        raise ValueError(f"argument {name!r}: arrays must have 1 to 3 dimensions, got {ndim}")
    if dtype.fields is not None or dtype.subdtype is not None:
        raise TypeError(f"argument {name!r}: structured dtype {dtype} is not supported; pass a plain numeric array "
                        "(an (N, 4) float32 array indexes as float4 rows)")
    if dtype.name not in _SUPPORTED:
        raise TypeError(f"argument {name!r}: arrays of {dtype} are not supported; use bool, int8..uint64, "
                        "float16, float32 or float64")
    return KernelParamSpec(name, "array", ArrayType(Scalar(dtype.name), ndim, row_width=row))
