"""Operands of array operations: which are device arrays and which are scalars, numpy's
broadcasting, and the layout a kernel sees (a flat run of elements, or a base array indexed
through an element offset and strides).

Scalars follow NEP 50 (numpy 2): Python ``bool``/``int``/``float``/``complex`` are *weak* (they take the
array's type: ``int8_array + 1`` is int8), numpy scalars and 0-d numpy arrays are strong.
Host arrays are not operands: data moves to the device only when the user says so
(``gnp.asarray``)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray, DeviceArrayView
from pygpgpu_core.protocols import option

__all__ = ["Scalar", "classify", "check_same_device", "broadcast_shapes", "check_dtype", "ELEMENT_KINDS",
           "Strided", "strided", "collapse", "flat", "contiguous", "normalize_axis", "normalize_axes",
           "describe", "shape_text"]

ELEMENT_KINDS = "biufc"


class Scalar:
    """A scalar operand: ``value`` and what numpy's type resolution is given for it (the Python
    type for weak scalars, a dtype for strong ones)."""

    __slots__ = ("value", "key", "weak")

    def __init__(self, value: Any, key: Any, weak: bool):
        self.value = value
        self.key = key
        self.weak = weak

    @property
    def dtype(self) -> np.dtype:
        return self.key if not self.weak else np.asarray(self.value).dtype


def describe(x: Any) -> str:
    if isinstance(x, DeviceArray):
        return f"a {x.dtype} device array of shape {x.shape}"
    if isinstance(x, Scalar):
        return f"the {'Python' if x.weak else 'numpy'} scalar {x.value!r}"
    return f"a {type(x).__name__}"


def classify(x: Any, op: str, position: int) -> "DeviceArray | Scalar | None":
    """``x`` as an operand: a DeviceArray, a Scalar, or None when it is not something gnp
    operations take (the caller returns NotImplemented or raises)."""
    if isinstance(x, DeviceArray):
        return x
    t = type(x)
    if t is int or t is float or t is complex:
        return Scalar(x, t, True)
    if t is bool:                     # numpy 2 treats Python bools as np.bool_ (the lowest type anyway)
        return Scalar(x, np.dtype(bool), False)
    if isinstance(x, np.generic):
        if x.dtype.kind not in ELEMENT_KINDS:
            raise TypeError(f"gnp.{op}: operand {position} is a numpy {x.dtype} scalar; device operations take bool, "
                            "integer, float and complex values")
        return Scalar(x, x.dtype, False)
    if isinstance(x, np.ndarray):
        if x.ndim == 0 and x.dtype.kind in ELEMENT_KINDS:
            return Scalar(x[()], x.dtype, False)
        raise TypeError(
            f"gnp.{op}: operand {position} is a host (numpy) array of shape {x.shape}; device operations do not move "
            f"host data implicitly. Upload it once with gnp.asarray(x) (or bring the device array back with g.get())")
    if isinstance(x, (int, float)):           # subclasses (IntEnum...): as the Python number
        return classify(bool(x) if isinstance(x, bool) else (int(x) if isinstance(x, int) else float(x)), op,
                        position)
    if isinstance(x, complex):
        return classify(complex(x), op, position)
    if isinstance(x, (list, tuple)):
        raise TypeError(f"gnp.{op}: operand {position} is a Python {t.__name__}; upload it first with "
                        "gnp.asarray(...) (host data is not moved implicitly)")
    return None


def check_dtype(dtype: np.dtype, op: str, position: "int | str", device: Any = None) -> None:
    """TypeError unless the device can compute on ``dtype``."""
    if dtype.kind not in ELEMENT_KINDS:
        raise TypeError(f"gnp.{op}: operand {position} has dtype {dtype}, which device operations do not support "
                        "(bool, int8..int64, uint8..uint64, float16, float32, float64, complex64, complex128)")
    if dtype == np.float16 and device is not None and not (getattr(device, "fp16", False) and _dialect_has_float16(device)):
        raise _lacking(f"gnp.{op}: operand {position} is float16, which {device.selector} does not compute with "
                       "(float16 needs an OpenCL device with cl_khr_fp16); convert with .astype(np.float32)", "fp16")
    if dtype in (np.float64, np.complex128) and device is not None and not getattr(device, "fp64", True):
        raise _lacking(f"gnp.{op}: operand {position} is {dtype}, which {device.selector} does not support; use "
                       f"{'float32' if dtype.kind == 'f' else 'complex64'}", "fp64")
    if dtype.kind in "iu" and dtype.itemsize == 8 and device is not None and not option(device, "int64"):
        _refuse_int64(dtype, op, position, device)


def _lacking(message: str, capability: str) -> TypeError:
    """The TypeError of a type the device lacks, naming the device capability (``fp64``, ``int64``:
    the shared test suite skips such a test on a device declaring it False)."""
    exc = TypeError(message)
    exc.capability = capability  # type: ignore[attr-defined]
    return exc


def _refuse_int64(dtype: np.dtype, op: str, position: "int | str", device: Any) -> None:
    narrow = "np.uint32" if dtype.kind == "u" else "np.int32"
    if position == "result":        # numpy's result type of an operation on 32-bit numbers (a sum)
        raise _lacking(f"gnp.{op}: the result would be {dtype} (numpy's type for it), and {device.selector} has no "
                       f"64-bit integers; pass dtype={narrow} (wraps past its range) or dtype=np.float32", "int64")
    what = "dtype=" if position == "dtype" else f"operand {position}"
    raise _lacking(f"gnp.{op}: {what} is {dtype}, and {device.selector} has no 64-bit integers; use {narrow} "
                   "(.astype) or a device that has them (cuda, hip, opencl)", "int64")


def _dialect_has_float16(device: Any) -> bool:
    """Whether kernels written for the device's dialect may take float16 (OpenCL's may)."""
    from .._dialects import dialect_for
    try:
        return dialect_for(getattr(device.backend, "dialect", "")).float16
    except ValueError:       # UnknownDialect: the launch says so; here it only cannot compute in float16
        return False


def check_same_device(arrays: list, op: str) -> Any:
    """The device all ``arrays`` live on (ValueError naming both devices otherwise)."""
    first = arrays[0]
    ctx = first.context
    dev = first.device
    if ctx is not dev.context():
        raise ValueError(f"gnp.{op}: an operand lives in a private context of {dev.selector}; operations run in the "
                         f"device's shared context: move it there with g.to({dev.selector!r})")
    for a in arrays[1:]:
        if a.context is not ctx:
            other = a.device.selector
            where = (f"{dev.selector} and {other}" if other != dev.selector else
                     f"two different contexts of {other}")
            raise ValueError(f"gnp.{op}: operands live on {where}; move one to the other's device first, e.g. "
                             f"h = h.to({dev.selector!r}) (or g.to(device) for a selector, Device or Context)")
    return dev


def broadcast_shapes(shapes: list) -> tuple:
    """numpy's broadcast shape, with numpy's error message."""
    if len(shapes) == 1:
        return tuple(shapes[0])
    ndim = max(len(s) for s in shapes)
    out = []
    for k in range(ndim):
        n = 1
        for s in shapes:
            d = s[k - ndim + len(s)] if k - ndim + len(s) >= 0 else 1
            if d != 1:
                if n != 1 and d != n:
                    text = " ".join(shape_text(s) for s in shapes)
                    raise ValueError(f"operands could not be broadcast together with shapes {text} ")
                n = d
        out.append(n)
    return tuple(out)


def shape_text(shape) -> str:
    """A shape as numpy's messages print it: ``(2,3)``, ``(5,)``, ``()``."""
    shape = tuple(shape)
    return "(" + ",".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


class Strided:
    """How a kernel addresses an array: ``base`` (a 1-D array over the whole allocation),
    element ``offset`` and element ``strides`` per dimension of the iteration shape."""

    __slots__ = ("base", "offset", "strides")

    def __init__(self, base, offset, strides):
        self.base = base
        self.offset = offset
        self.strides = strides


def _base_1d(a: DeviceArray) -> DeviceArray:
    """A 1-D array over ``a``'s allocation, long enough for every element ``a`` reaches."""
    item = a.dtype.itemsize
    if isinstance(a, DeviceArrayView):      # a view's elements may lie past its own size
        lo, hi = a.span()
        n = hi // item
    else:
        n = a.size
    return DeviceArray._wrap((max(n, 1),), a.dtype, a.device, a.buffer, a._owner, a._host)


def strided(a: DeviceArray, shape: tuple) -> Strided:
    """``a`` broadcast to ``shape`` as element offset/strides over its base (0 strides where it
    broadcasts)."""
    item = a.dtype.itemsize
    st = a.strides
    nd = len(shape)
    strides = []
    for k in range(nd):
        j = k - nd + a.ndim
        if j < 0 or a.shape[j] == 1:
            strides.append(0)
        else:
            strides.append(st[j] // item)
    return Strided(_base_1d(a), a.offset // item, strides)


def collapse(shape: tuple, layouts: list) -> "tuple[tuple, list]":
    """Drop axes of length 1 and merge neighbouring axes that every layout steps through
    contiguously, so a kernel loops over as few dimensions as possible."""
    keep = [k for k, n in enumerate(shape) if n != 1]
    dims = [shape[k] for k in keep]
    strides = [[s.strides[k] for k in keep] for s in layouts]
    k = len(dims) - 1
    while k > 0:
        if all(st[k - 1] == st[k] * dims[k] for st in strides):
            dims[k - 1] *= dims[k]
            del dims[k]
            for st in strides:
                st[k - 1] = st[k]
                del st[k]
        k -= 1
    for s, st in zip(layouts, strides, strict=True):
        s.strides = st
    return tuple(dims), layouts


def flat(a: DeviceArray) -> DeviceArray:
    """A C-contiguous array from byte 0 as the 1-D array kernels index with one subscript."""
    if a.ndim == 1:
        return a
    return DeviceArray._wrap((a.size,), a.dtype, a.device, a.buffer, a._owner, a._host)


def contiguous(a: DeviceArray) -> DeviceArray:
    """``a`` itself when it is a plain C-contiguous array, else a device copy that is."""
    return a if type(a) is DeviceArray else a.copy()


def normalize_axis(axis: Any, ndim: int, op: str) -> int:
    try:
        a = operator.index(axis)        # as numpy: 1.5 is refused, not truncated to 1
    except TypeError:
        raise TypeError(f"gnp.{op}: axis must be an integer, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(a, ndim)
    return a % ndim


def normalize_axes(axis: Any, ndim: int, op: str) -> tuple:
    """A tuple of distinct non-negative axes (all of them for None)."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = tuple(normalize_axis(a, ndim, op) for a in items)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return out
