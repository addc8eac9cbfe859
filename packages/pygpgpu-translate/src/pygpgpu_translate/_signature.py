"""Argument classification: from call arguments to a hashable signature key and kernel specs.

The key is built from cheap attribute reads (dtype, ndim, a vector row width, the
magnitude class of Python ints) so a warm call is a tuple build and a dict lookup.
"""
from __future__ import annotations

import numpy as np

from ._bindings import KernelParamSpec, vector_class_info
from ._complex import ComplexType, complex_type_of
from ._records import record_type
from ._types import VECTOR_WIDTHS, ArrayType, Scalar, Vector

__all__ = ["base_view", "vector_dtype_info", "arg_token", "spec_from_token", "is_device_array", "vector_value_info",
           "plain_ndarray", "INDEX_LIMIT"]

INDEX_LIMIT = 2**31 - 1
# The field names of the host vector classes' dtypes (float4.dtype: x y z w; wider ones: s0 ... sf):
# a structured dtype with other names is a record array, not an array of vectors
_VECTOR_NAMES = {w: {tuple("xyzw"[:w]), tuple(f"s{k:x}" for k in range(w)), tuple(f"s{k:X}" for k in range(w))}
                 for w in VECTOR_WIDTHS}
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


def _row_align(row, dtype) -> int:
    """The alignment a row of ``row`` elements may be loaded with as one vector (8 or 16 bytes),
    0 for none. Numpy arguments are staged with this alignment (stage_numpy's ``align``)."""
    size = row * dtype.itemsize
    return size if size in (8, 16) and dtype.kind in "iuf" else 0


def vector_dtype_info(dtype):
    """(base dtype, width, slots) for an array-of-vectors dtype (``float4.dtype``), else None."""
    if dtype.fields is None:
        return None
    names = dtype.names
    if not names:
        return None
    base = dtype.fields[names[0]][0]
    width = len(names)
    if width in VECTOR_WIDTHS and names not in _VECTOR_NAMES[width]:
        return None                        # a record with fields of one type (p[i].mass): not a vector
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


def plain_ndarray(value, name: str):
    """A numpy array subclass as the plain ndarray a kernel takes (``np.memmap``: a view of the
    same memory, so the kernel's writes land in the mapped file); TypeError for the subclasses
    whose elements do not mean what a kernel would see (masked arrays, np.matrix)."""
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"argument {name!r}: masked arrays cannot be passed to a kernel (the kernel would ignore the "
                        f"mask); pass {name}.data to use every element, or {name}.filled(value) to replace the "
                        "masked ones")
    if isinstance(value, np.matrix):
        raise TypeError(f"argument {name!r}: np.matrix cannot be passed to a kernel (it is always 2-D and indexes "
                        f"differently); pass np.asarray({name}) for the 2-D array, or np.asarray({name}).ravel() "
                        "for a vector")
    return np.asarray(value)


def _int_token(value):
    return "i" if -2**31 <= value < 2**31 else None


def _ndarray_token(value):
    if value.dtype.fields is not None:
        return None
    ndim = value.ndim
    row = _row(value.shape, ndim)
    return ("a", value.dtype, ndim, row, _row_align(row, value.dtype) if row else 0)


def _device_token(value):
    shape = value.shape
    ndim = len(shape)
    row = _row(shape, ndim) if ndim >= 2 else 0         # (the warm path: 1-D arrays skip the call)
    dt = value.dtype
    return ("d", dt, ndim, row, _row_align(row, dt) if row and value.owns_memory else 0)


# Exact type -> token function for the common arguments (warm calls); None falls back to arg_token.
FAST_TOKENS = {float: lambda v: "f", bool: lambda v: "b", int: _int_token, np.ndarray: _ndarray_token}
# numpy scalars (np.float32(2.0) and friends): the token is fixed per type
for _name in _SUPPORTED | {"complex64", "complex128"}:
    FAST_TOKENS[np.dtype(_name).type] = (lambda tok: lambda v: tok)(("s", np.dtype(_name)))
FAST_TOKENS[complex] = lambda v: "c"


def register_device_array_type(cls) -> None:
    """gnp's DeviceArray (its dtype is always a np.dtype) takes the fast path once gnp is loaded."""
    FAST_TOKENS.setdefault(cls, _device_token)


def fast_token(value, name: str):
    fn = FAST_TOKENS.get(type(value))
    if fn is not None:
        tok = fn(value)
        if tok is not None:
            return tok
    return arg_token(value, name)


def arg_token(value, name: str):
    """Hashable description of one argument; raises TypeError naming the parameter."""
    t = type(value)
    if t is np.ndarray:
        if value.dtype.fields is not None:
            vi = vector_dtype_info(value.dtype)
            if vi is not None:
                return ("av", vi[0], value.ndim + 1, vi[1], vi[2])
            return ("a", value.dtype, value.ndim, 0, 0)     # a record array: its rows are never vectors
        row = _row(value.shape, value.ndim)
        return ("a", value.dtype, value.ndim, row, _row_align(row, value.dtype) if row else 0)
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
        raise OverflowError(f"argument {name!r}: Python integer {value} out of bounds for int64 and uint64 "
                            "(kernels take integers from -2**63 to 2**64 - 1, as numpy does)")
    if t is complex:
        return "c"
    if isinstance(value, np.generic):
        if value.dtype.kind == "c" and value.dtype.itemsize <= 16:
            return ("s", value.dtype)
        if value.dtype.name not in _SUPPORTED:
            raise TypeError(f"argument {name!r}: numpy scalars of type {value.dtype} are not supported")
        return ("s", value.dtype)
    if isinstance(value, np.ndarray):
        if value.dtype.fields is not None and vector_dtype_info(value.dtype) is None:
            return ("a", value.dtype, value.ndim, 0, 0)     # a record array subclass (np.recarray)
        row = _row(value.shape, value.ndim)
        return ("a", value.dtype, value.ndim, row, _row_align(row, value.dtype) if row else 0)
    if is_device_array(value):
        dt = np.dtype(value.dtype)
        row = _row(value.shape, len(value.shape))
        # gnp's own memory starts on a driver allocation (>= 256-byte aligned); foreign memory
        # (a torch slice, say) may start anywhere, so it gets no alignment promise
        al = _row_align(row, dt) if row and getattr(value, "owns_memory", False) else 0
        return ("d", dt, len(value.shape), row, al)
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
    if token == "b":        # a Python bool, as on the host: flag + flag is 2 (numpy's np.True_ + np.True_ is True)
        return KernelParamSpec(name, "scalar", Scalar("bool", weak=True))
    if token == "i":
        return KernelParamSpec(name, "scalar", Scalar("int32", weak=True))
    if token == "l":
        return KernelParamSpec(name, "scalar", Scalar("int64", weak=True))
    if token == "L":
        return KernelParamSpec(name, "scalar", Scalar("uint64", weak=True))
    if token == "c":                       # a Python complex: the default float's complex type
        return KernelParamSpec(name, "vector", ComplexType(default_float))
    kind = token[0]
    if kind == "s":
        if token[1].kind == "c":           # two hidden real parameters, like a vector's components
            return KernelParamSpec(name, "vector", complex_type_of(token[1]))
        return KernelParamSpec(name, "scalar", Scalar(token[1].name))
    if kind == "v":
        base, width = token[1]
        return KernelParamSpec(name, "vector", Vector(Scalar(base), width))
    if kind == "av":
        base, ndim, width = token[1], token[2], token[3]
        if ndim - 1 > 3:
            raise ValueError(f"argument {name!r}: arrays must have 1 to 3 dimensions, got {ndim - 1}")
        return KernelParamSpec(name, "array", ArrayType(Scalar(base.name), ndim, row_width=width,
                                                        known_last=token[4]))
    dtype, ndim, row = token[1], token[2], token[3]
    if ndim < 1 or ndim > 3:
        # a 0-d array (np.array(2.0)) is most often a number meant for a scalar parameter
        hint = f"; to pass it as a number, index it with [()] or convert it with np.{dtype.type.__name__}(...)" if ndim == 0 else ""
        raise ValueError(f"argument {name!r}: arrays must have 1 to 3 dimensions, got {ndim}{hint}")
    if dtype.fields is not None:           # a record array: C structs in numpy's layout (_records)
        return KernelParamSpec(name, "array", ArrayType(record_type(dtype, name), ndim))
    if dtype.subdtype is not None:
        raise TypeError(f"argument {name!r}: subarray dtype {dtype} is not supported; pass a plain numeric array "
                        "with one more dimension")
    if dtype.kind == "c" and dtype.itemsize <= 16:     # complex64/complex128: the complex struct (_complex)
        return KernelParamSpec(name, "array", ArrayType(complex_type_of(dtype), ndim))
    if dtype.name not in _SUPPORTED:
        raise TypeError(f"argument {name!r}: arrays of {dtype} are not supported; use bool, int8..uint64, "
                        "float16, float32, float64, complex64, complex128 or a record dtype of those")
    return KernelParamSpec(name, "array", ArrayType(Scalar(dtype.name), ndim, row_width=row, known_last=row,
                                                    align=token[4]))
