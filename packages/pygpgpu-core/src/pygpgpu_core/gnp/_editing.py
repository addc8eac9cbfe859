"""numpy's functions that cut elements out of an array or re-fill it to a new size: ``delete``,
``resize`` and ``trim_zeros``. Each composes device operations (a mask written on the device,
gathers, broadcast copies); what decides the result's length is read back as numpy's boolean
indexing reads its count (``trim_zeros``: the first and last nonzero positions, two numbers)."""
from __future__ import annotations

import math
from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis
from ._creation import asarray, ones, zeros
from ._dispatch import ops
from ._views import broadcast_to, device_operand

__all__ = ["delete", "resize", "trim_zeros"]


def _host_keep_mask(obj: Any, n: int) -> np.ndarray:
    """numpy's rule for a host ``obj`` (int, slice, sequence of ints or bools): which of ``n`` positions stay."""
    keep = np.ones(n, dtype=bool)
    if isinstance(obj, slice):
        keep[obj] = False
        return keep
    idx = np.asarray(obj)
    if idx.dtype == bool:
        if idx.shape != (n,):
            raise ValueError(f"boolean array argument obj to delete must be one dimensional and match the axis "
                             f"length of {n}")
        return ~idx
    if idx.size == 0:
        return keep
    if idx.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if ((idx < -n) | (idx >= n)).any():
        bad = idx[(idx < -n) | (idx >= n)].ravel()[0]
        raise IndexError(f"index {bad} is out of bounds for axis 0 with size {n}")
    keep[idx] = False
    return keep


def delete(arr: Any, obj: Any, axis: Any = None) -> DeviceArray:
    """``arr`` without the sub-arrays ``obj`` names along ``axis`` (of the flattened array when
    None): an int, a slice, a sequence or a device array of indices, or a boolean mask. A device
    ``obj`` marks the deleted positions in a device mask (nothing is read back but the count)."""
    a = device_operand(arr, "delete")
    if axis is None:
        a, ax = a.ravel(), 0
    else:
        ax = _normalize_axis(axis, a.ndim)
    n = a.shape[ax]
    if isinstance(obj, DeviceArray):
        if obj.dtype == bool:
            if obj.shape != (n,):
                raise ValueError(f"boolean array argument obj to delete must be one dimensional and match the axis "
                                 f"length of {n}")
            keep = ops().ufunc_call("logical_not", (obj,))
        elif obj.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        else:
            keep = ones(n, dtype=bool, device=a.context)
            if obj.size:
                keep[obj.ravel()] = False      # device scatter; out-of-range indices raise as gnp's indexing does
    else:
        keep = asarray(_host_keep_mask(obj, n), device=a.context)
    positions = ops().nonzero(keep)[0]
    return ops().take(a, positions, axis=ax)


def resize(a: Any, new_shape: Any) -> DeviceArray:
    """numpy's ``resize``: the flattened ``a`` repeated (cyclically) to fill ``new_shape``; zeros
    when ``a`` is empty."""
    a = device_operand(a, "resize")
    try:
        shape = tuple(operator_index(s) for s in new_shape)
    except TypeError:
        shape = (operator_index(new_shape),)
    if any(s < 0 for s in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    size = math.prod(shape)
    flat = a.ravel()
    if flat.size == 0 or size == 0:
        return zeros(shape, dtype=a.dtype, device=a.context)
    reps = -(-size // flat.size)
    tiled = broadcast_to(flat[None, :], (reps, flat.size)).copy().reshape(-1)
    return tiled[:size].copy().reshape(shape)


def _nonzero_bounds(mask: DeviceArray) -> "tuple[int, int] | None":
    """The first and last True of a 1-D device mask (read back), or None when there is none."""
    positions = ops().nonzero(mask)[0]
    if positions.size == 0:
        return None
    return int(positions[0].get()), int(positions[-1].get())


def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> DeviceArray:
    """The leading (``'f'``) and/or trailing (``'b'``) zeros of ``filt`` cut off, along every
    axis or those ``axis`` names (a view of ``filt``, as numpy's)."""
    a = device_operand(filt, "trim_zeros")
    trim = trim.lower()
    if not set(trim) <= {"f", "b"} or not trim:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    if a.ndim == 0:
        raise ValueError("trim_zeros requires an array of at least one dimension")
    axes = tuple(range(a.ndim)) if axis is None else tuple(
        _normalize_axis(x, a.ndim) for x in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    nonzero = ops().ufunc_call("not_equal", (a, 0))
    key: list[Any] = [slice(None)] * a.ndim
    for ax in axes:
        others = tuple(k for k in range(a.ndim) if k != ax)
        mask = ops().reduce("any", nonzero, axis=others) if others else nonzero
        bounds = _nonzero_bounds(mask)
        if bounds is None:       # all zeros: numpy keeps an empty range at the front
            key = [slice(0, 0) if k in axes else slice(None) for k in range(a.ndim)]
            break
        start = bounds[0] if "f" in trim else 0
        stop = bounds[1] + 1 if "b" in trim else a.shape[ax]
        key[ax] = slice(start, stop)
    return a[tuple(key)]
