"""Summary statistics composed of device reductions: ``ptp``, ``average`` and
``count_nonzero``, with numpy's result types."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..protocols import option
from ._array import DeviceArray
from ._creation import full
from ._dispatch import ops
from ._views import broadcast_to, device_operand, normalize_axes

__all__ = ["ptp", "average", "count_nonzero"]


def ptp(a: DeviceArray, axis: Any = None, out: Any = None, keepdims: bool = False) -> DeviceArray:
    """Peak to peak: the maximum minus the minimum (in the array's type, as numpy: bool raises)."""
    a = device_operand(a, "ptp")
    high = a.max(axis, out=out, keepdims=keepdims)
    return ops().ufunc_call("subtract", (high, a.min(axis, keepdims=keepdims)), out=out)


def _weights_along(weights: Any, a: DeviceArray, axes: "tuple | None") -> DeviceArray:
    """``weights`` laid out to broadcast against ``a``: the same shape, or the shape of ``a``
    along ``axes`` (then given the other axes as length 1, as numpy does)."""
    w = device_operand(weights, "average")
    if w.shape == a.shape:
        return w
    if axes is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    if w.shape != tuple(a.shape[k] for k in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
    w = w.transpose([int(k) for k in np.argsort(axes)])
    return w.reshape(tuple(n if k in axes else 1 for k, n in enumerate(a.shape)))


def average(a: DeviceArray, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """The mean, or with ``weights`` the weighted mean ``sum(a * w) / sum(w)`` (in float64 for
    integer data). ``returned`` adds the sum of the weights (the count without them). A weight
    sum of 0 is numpy's ZeroDivisionError, so whether there is one is read back (one bool)."""
    a = device_operand(a, "average")
    axes = None if axis is None else normalize_axes(axis, a.ndim)
    if weights is None:
        avg = a.mean(axes, keepdims=keepdims)
        scale: Any = avg.dtype.type(a.size / avg.size)     # (numpy's ZeroDivisionError for an empty result)
        if returned:
            scale = full(avg.shape, scale, avg.dtype, a.context)
    else:
        w = _weights_along(weights, a, axes)
        extra = ("f8",) if a.dtype.kind in "biu" else ()
        dt = np.result_type(a.dtype, w.dtype, *extra)
        scale = w.sum(axes, dtype=dt, keepdims=keepdims)
        if bool((scale == 0.0).any()):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        weighted = ops().ufunc_call("multiply", (a, w), dtype=dt).sum(axes, keepdims=keepdims)
        avg = ops().ufunc_call("true_divide", (weighted, scale))
        if returned and scale.shape != avg.shape:
            scale = broadcast_to(scale, avg.shape).copy()
    return (avg, scale) if returned else avg


def count_dtype(a: DeviceArray) -> np.dtype:
    """The type gnp counts in on ``a``'s device: numpy's ``intp``, or int32 where the device declares
    no 64-bit integers (its ``int64`` capability False, WGSL), as its reductions' positions are."""
    return np.dtype(np.intp) if option(a.device, "int64") else np.dtype(np.int32)


def count_nonzero(a: DeviceArray, axis: Any = None, *, keepdims: bool = False) -> DeviceArray:
    """How many elements are not zero (NaN counts), in numpy's ``intp`` (int32 on a device without
    64-bit integers: :func:`count_dtype`); over ``axis`` when given.
    numpy returns a scalar for the whole array; this is a 0-d device array, as ``gnp.sum`` gives."""
    a = device_operand(a, "count_nonzero")
    return a.astype(bool, copy=False).sum(axis, dtype=count_dtype(a), keepdims=keepdims)
