"""numpy's index arithmetic and small array helpers composed of device operations:
``take_along_axis`` (one broadcast index array per position, gathered through the multi-array
indexing), ``unravel_index`` / ``ravel_multi_index`` (integer arithmetic on the device),
``astype`` and ``array_repr`` / ``array_str`` (the methods' results)."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis
from ._dispatch import ops
from ._views import device_operand

__all__ = ["take_along_axis", "unravel_index", "ravel_multi_index", "astype", "array_repr", "array_str"]


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> DeviceArray:
    """``arr`` gathered at ``indices`` along ``axis`` (``indices`` broadcast against ``arr`` on the
    other axes; ``axis=None`` takes from the flattened array), as numpy's."""
    arr = device_operand(arr, "take_along_axis")
    indices = device_operand(indices, "take_along_axis", arr.context)
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        return ops().take(arr.ravel(), indices)
    ax = _normalize_axis(axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    from ._creation import arange
    key = []
    for k in range(arr.ndim):
        if k == ax:
            key.append(indices)
        else:       # numpy's fancy index: arange along axis k, shaped to broadcast
            shape = [1] * arr.ndim
            shape[k] = arr.shape[k]
            key.append(arange(arr.shape[k], dtype=np.int64, device=arr.context).reshape(shape))
    return arr[tuple(key)]


def _shape_of(dims: Any) -> tuple[int, ...]:
    return tuple(int(operator_index(n)) for n in (dims if isinstance(dims, (tuple, list)) else (dims,)))


def unravel_index(indices: Any, shape: Any, order: str = "C") -> tuple[DeviceArray, ...]:
    """The coordinates (int64 arrays of ``indices``' shape) of flat ``indices`` in an array of
    ``shape``; numpy's ValueError for an index out of range (one check read back)."""
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    idx = device_operand(indices, "unravel_index")
    if idx.dtype.kind not in "iu":
        raise TypeError(f"only int indices permitted (got {idx.dtype})")
    dims = _shape_of(shape)
    size = int(np.prod(dims, dtype=np.int64))
    u = ops().ufunc_call
    if idx.size and bool(ops().reduce("any", u("logical_or", (u("less", (idx, 0)), u("greater_equal", (idx, size)))))):
        raise ValueError(f"index out of bounds for array with size {size}")
    rem = idx.astype(np.int64)
    out: list = [None] * len(dims)
    axes = range(len(dims) - 1, -1, -1) if order == "C" else range(len(dims))
    for k in axes:
        n = max(dims[k], 1)
        out[k] = u("remainder", (rem, np.int64(n)))
        rem = u("floor_divide", (rem, np.int64(n)))
    return tuple(out)


def ravel_multi_index(multi_index: Any, dims: Any, mode: Any = "raise", order: str = "C") -> DeviceArray:
    """The flat indices (int64) of coordinate arrays in an array of ``dims``; ``mode`` "raise"
    (numpy's ValueError, one check read back), "wrap" or "clip", one per axis or for all."""
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    shape = _shape_of(dims)
    coords = [device_operand(c, "ravel_multi_index") for c in multi_index]
    if len(coords) != len(shape):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(shape)}")
    modes = [mode] * len(shape) if isinstance(mode, str) else list(mode)
    u = ops().ufunc_call
    flat = None
    step = 1
    axes = range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))
    for k in axes:
        c, n = coords[k], shape[k]
        if c.dtype.kind not in "iu":
            raise TypeError(f"only int indices permitted (got {c.dtype})")
        c = c.astype(np.int64)
        if modes[k] == "wrap":
            c = u("remainder", (c, np.int64(n)))
        elif modes[k] == "clip":
            c = ops().clip(c, 0, n - 1)
        elif modes[k] == "raise":
            if c.size and bool(ops().reduce("any", u("logical_or", (u("less", (c, 0)), u("greater_equal", (c, n)))))):
                raise ValueError("invalid entry in coordinates array")
        else:
            raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {modes[k]!r})")
        term = u("multiply", (c, np.int64(step)))
        flat = term if flat is None else u("add", (flat, term))
        step *= n
    if flat is None:
        raise ValueError("parameter multi_index must be a sequence of length 0")
    return flat


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> DeviceArray:
    """numpy 2's ``np.astype(x, dtype)``: ``x.astype(dtype, copy=copy)`` (moved to ``device`` when given)."""
    x = device_operand(x, "astype")
    if device is not None:
        x = x.to(device)
    return x.astype(dtype, copy=copy)


def array_repr(arr: Any, max_line_width: Any = None, precision: Any = None, suppress_small: Any = None) -> str:
    """``repr`` of a device array (numpy's formatting of the values read back, and the device)."""
    if max_line_width is None and precision is None and suppress_small is None:
        return repr(device_operand(arr, "array_repr"))
    return np.array_repr(device_operand(arr, "array_repr").get(), max_line_width, precision, suppress_small)


def array_str(a: Any, max_line_width: Any = None, precision: Any = None, suppress_small: Any = None) -> str:
    """``str`` of a device array (numpy's formatting of the values read back)."""
    return np.array_str(device_operand(a, "array_str").get(), max_line_width, precision, suppress_small)
