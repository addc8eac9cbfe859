"""Array creation: from host data, from other device arrays, and filled with a constant."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray, _check_dtype, _normalize_shape, order_name

__all__ = [
    "asarray", "array", "ascontiguousarray", "empty", "zeros", "ones", "full",
    "empty_like", "zeros_like", "ones_like", "full_like", "arange",
]


def _is_foreign_device_array(obj: Any) -> bool:
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is None or isinstance(obj, np.ndarray):
        return False
    try:
        return int(dev()[0]) not in (1, 3)  # kDLCPU, kDLCUDAHost: plain host memory
    except Exception:
        return False


def _layout(order: Any, host: Any = None) -> str:
    """numpy's ``order=`` of asarray/array as the layout to make: "F" for Fortran order (and for
    "A"/"K" of data that is Fortran-ordered only), else "C"; numpy's ValueError for other values."""
    order = order_name(order)
    if order not in (None, "C", "F", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if order in ("A", "K") and host is not None:
        flags = host.flags
        return "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    return "F" if order == "F" else "C"


def _fortran(a: DeviceArray) -> DeviceArray:
    """``a``'s elements in a new Fortran-ordered array: the C-ordered copy of the transpose, seen
    transposed (numpy's column-major strides; operations read it as the view it is)."""
    if a.ndim < 2:
        return a.copy()
    return a.T.copy().T


def _upload_host(host: np.ndarray, device: Any, layout: str = "C") -> DeviceArray:
    if host.dtype.byteorder == ">":
        host = host.astype(host.dtype.newbyteorder("="))
    if layout == "F" and host.ndim >= 2:
        return _upload_host(host.T, device).T
    host = np.asarray(host, order="C")  # (np.ascontiguousarray would turn 0-d into 1-d)
    _check_dtype(host.dtype)
    out = DeviceArray(host.shape, host.dtype, device)
    out._write_bytes(host)
    return out


def asarray(a: Any, dtype: Any = None, device: Any = None, order: str | None = None) -> DeviceArray:
    """``a`` as a device array, copying only when needed.

    A device array on the requested device (and dtype) is returned as is; one elsewhere is
    moved with ``to()``; a CUDA torch tensor / CuPy / JAX array is wrapped without a copy;
    anything numpy accepts (lists, scalars, numpy arrays) is uploaded with one host->device copy.
    ``device=None`` keeps a device array where it is and puts host data on the default device.
    ``order="F"`` makes a Fortran-ordered array (a copy where ``a`` is not one already).
    """
    _layout(order)
    order = order_name(order)
    if not isinstance(a, DeviceArray) and _is_foreign_device_array(a):
        from ._interop import as_device_array

        a = as_device_array(a, device)
    if isinstance(a, DeviceArray):
        if device is not None:
            a = a.to(device)
        if dtype is not None and np.dtype(dtype) != a.dtype:
            a = a.astype(dtype)
        return _fortran(a) if order == "F" and not a.flags.f_contiguous else a
    host = np.asarray(a, dtype=dtype)
    return _upload_host(host, device, _layout("K" if order is None else order, host))     # numpy's None keeps


def ascontiguousarray(a: Any, dtype: Any = None, device: Any = None) -> DeviceArray:
    """:func:`asarray`, copied when that is a strided view (``g[:, ::2]``, ``g.T``), as numpy's; at
    least 1-D as numpy's (a 0-d array becomes shape ``(1,)``, sharing its memory)."""
    out = asarray(a, dtype=dtype, device=device)
    out = out if out.is_contiguous else out.copy()
    return out.reshape(1) if out.ndim == 0 else out


def array(obj: Any, dtype: Any = None, copy: bool | None = True, device: Any = None,
          order: str | None = None, subok: bool = False, ndmin: int = 0) -> DeviceArray:
    """Like :func:`asarray`, but a new array unless ``copy`` is False/None and none is needed;
    ``ndmin``: at least that many dimensions, ones prepended to the shape (a view), as numpy's."""
    out = _array(obj, dtype, copy, device, order)
    if out.ndim < ndmin:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


def _array(obj: Any, dtype: Any, copy: bool | None, device: Any, order: str | None) -> DeviceArray:
    if copy is False and isinstance(obj, DeviceArray):
        out = asarray(obj, dtype=dtype, device=device, order=order)
        if out is not obj:
            raise ValueError("Unable to avoid copy while creating an array as requested (gnp.array(g, copy=False) "
                             "of another dtype, device or order; use gnp.asarray(g, ...) to allow a copy)")
        return out
    if not copy:
        return asarray(obj, dtype=dtype, device=device, order=order)
    _layout(order)
    order = order_name(order)
    if isinstance(obj, DeviceArray) or _is_foreign_device_array(obj):
        src = asarray(obj)
        out = src.to(src.context if device is None else device, copy=True)
        if dtype is not None and np.dtype(dtype) != out.dtype:
            out = out.astype(dtype, copy=False)
        return _fortran(out) if order == "F" and not out.flags.f_contiguous else out
    host = np.array(obj, dtype=dtype, copy=True, order="K")
    return _upload_host(host, device, _layout("K" if order is None else order, host))


_ORDER_NAMES = ("C", "F", "c", "f")


def _creation_order(order: Any, device: Any) -> tuple[str, Any]:
    """numpy's ``order`` of empty/zeros/ones/full (None is C; lower case as numpy takes it), and the
    device. gnp's third positional parameter is ``device`` where numpy's is ``order``: an order name
    there (``np.empty(shape, dtype, "C")`` spelled with gnp) is taken as the order (no device selector
    is called C or F)."""
    if isinstance(device, str) and device in _ORDER_NAMES and order in (None, "C"):
        order, device = device, None
    if order is None:
        order = "C"
    if order not in _ORDER_NAMES:
        raise ValueError("only 'C' or 'F' order is permitted")
    return order.upper(), device


def empty(shape: Any, dtype: Any = np.float64, device: Any = None, order: Any = "C") -> DeviceArray:
    """An uninitialised array (memory from the device's pool); ``order="F"``: Fortran-ordered."""
    order, device = _creation_order(order, device)
    if dtype is None:
        dtype = np.float64
    if order == "F":
        return DeviceArray(_normalize_shape(shape)[::-1], dtype, device).T
    return DeviceArray(shape, dtype, device)


def full(shape: Any, fill_value: Any, dtype: Any = None, device: Any = None, order: Any = "C") -> DeviceArray:
    """An array with every element ``fill_value`` (filled on the device, no host copy)."""
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    out = empty(shape, dtype, device, order)
    value = np.empty((), out.dtype)
    np.copyto(value, fill_value, casting="unsafe")     # np.full's conversion (fill() is setitem's, stricter)
    out.fill(value)
    return out


def zeros(shape: Any, dtype: Any = np.float64, device: Any = None, order: Any = "C") -> DeviceArray:
    # dtype=None is numpy's float64 (full would take the fill value's int64)
    return full(shape, 0, np.float64 if dtype is None else dtype, device, order)


def ones(shape: Any, dtype: Any = np.float64, device: Any = None, order: Any = "C") -> DeviceArray:
    return full(shape, 1, np.float64 if dtype is None else dtype, device, order)


def _like(a: Any, dtype: Any, order: Any, shape: Any, device: Any) -> "tuple[Any, Any, Any, Any]":
    """(shape, dtype, device, order) of numpy's ``*_like``: ``order`` "K"/"A" keeps a Fortran-ordered
    prototype's layout when the shape is kept ("K" a strided one's axis order, as a tuple), "C"/"F"
    say it (numpy's ValueError for other values)."""
    if order not in ("K", "A", "C", "F", "k", "a", "c", "f", None):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    order = "K" if order is None else order.upper()
    # numpy: "K" follows the prototype's layout for a new shape of as many dimensions, "A" a
    # Fortran-ordered prototype's order whatever the new shape
    same_ndim = shape is None or len(_normalize_shape(shape)) == getattr(a, "ndim", -1)
    flags = getattr(a, "flags", None)
    fortran = flags is not None and flags.f_contiguous and not flags.c_contiguous
    if order == "K" and same_ndim and getattr(a, "ndim", 0) > 1 and not _contiguous(a):
        order = _stride_order(a)
    elif order in ("K", "A"):
        order = "F" if fortran and (same_ndim or order == "A") else "C"
    if dtype is None:
        dtype = a.dtype
    if shape is None:
        shape = a.shape
    if device is None:
        device = a.context if isinstance(a, DeviceArray) else None
    return shape, dtype, device, order


def _contiguous(a: Any) -> bool:
    flags = getattr(a, "flags", None)
    return flags is None or flags.c_contiguous or flags.f_contiguous


def _stride_order(a: Any) -> tuple[int, ...]:
    """numpy's order "K" of a strided prototype: its axes from the largest stride to the smallest
    (ties keep the axis order), the layout the new array's memory follows."""
    return tuple(sorted(range(a.ndim), key=lambda k: -abs(a.strides[k])))


def _made(shape: Any, dtype: Any, device: Any, order: Any, fill: Any = None) -> DeviceArray:
    """A new array of ``order``: "C", "F", or an axis order (memory laid out in that order of axes)."""
    if isinstance(order, tuple):
        shape = _normalize_shape(shape)
        base = empty(tuple(shape[k] for k in order), dtype, device)
        out = base.transpose(tuple(int(k) for k in np.argsort(order)))
    else:
        out = empty(shape, dtype, device, order)
    if fill is not None:
        value = np.empty((), out.dtype)
        np.copyto(value, fill, casting="unsafe")     # np.full's conversion
        out.fill(value)
    return out


def empty_like(a: Any, dtype: Any = None, order: Any = "K", subok: bool = True, shape: Any = None, *,
               device: Any = None) -> DeviceArray:
    """An uninitialised array shaped like ``a`` (on ``a``'s device when ``a`` is a device array);
    numpy's parameters (``subok`` has nothing to keep: there are no device array subclasses);
    ``order="K"`` lays it out as ``a`` is (a strided prototype's axis order too)."""
    return _made(*_like(a, dtype, order, shape, device))


def zeros_like(a: Any, dtype: Any = None, order: Any = "K", subok: bool = True, shape: Any = None, *,
               device: Any = None) -> DeviceArray:
    return _made(*_like(a, dtype, order, shape, device), fill=0)


def ones_like(a: Any, dtype: Any = None, order: Any = "K", subok: bool = True, shape: Any = None, *,
              device: Any = None) -> DeviceArray:
    return _made(*_like(a, dtype, order, shape, device), fill=1)


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: Any = "K", subok: bool = True, shape: Any = None,
              *, device: Any = None) -> DeviceArray:
    return _made(*_like(a, dtype, order, shape, device), fill=fill_value)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, device: Any = None) -> DeviceArray:
    """``np.arange`` computed on the device (numpy's length, dtype and values; no upload)."""
    from ._dispatch import OperationsUnavailable, ops

    if step is None:        # numpy's default step, also when passed explicitly
        step = 1

    try:
        provider = ops()
    except OperationsUnavailable:    # core alone cannot run kernels: compute on the host, upload once
        host = np.arange(start, stop, step, dtype=dtype) if stop is not None else np.arange(start, dtype=dtype)
        return _upload_host(host, device)
    return provider.arange(start, stop, step, dtype=dtype, device=device)
