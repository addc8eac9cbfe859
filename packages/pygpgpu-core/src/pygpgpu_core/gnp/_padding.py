"""``gnp.pad``: numpy's pad, one axis after the other as numpy pads (so corners come from the
later axes): ``constant`` concatenates blocks of the fill value; ``edge``, ``wrap``, ``reflect`` and
``symmetric`` gather the axis through an index array computed on the host (its length is the padded
axis, not the data), so every mode is one device gather per axis."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray
from ._views import device_operand

__all__ = ["pad"]

_GATHERED = ("edge", "wrap", "reflect", "symmetric")


def pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> DeviceArray:
    """numpy's ``pad`` for the modes ``constant`` (``constant_values``), ``edge``, ``wrap``,
    ``reflect`` and ``symmetric`` (``reflect_type='even'``)."""
    from ._creation import asarray, full
    from ._functions import concatenate, take

    a = device_operand(array, "pad")
    widths = _per_axis(pad_width, a.ndim, "pad_width", integral=True)
    if (widths < 0).any():
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        values = _per_axis(kwargs.pop("constant_values", 0), a.ndim, "constant_values", integral=False)
    elif mode in _GATHERED:
        if kwargs.pop("reflect_type", "even") != "even":
            raise NotImplementedError("gnp.pad: reflect_type='odd' is not implemented; pad g.get() with np.pad")
    elif isinstance(mode, str) and mode in ("linear_ramp", "maximum", "mean", "median", "minimum", "empty"):
        raise NotImplementedError(f"gnp.pad: mode {mode!r} is not implemented (constant, edge, wrap, reflect and "
                                  "symmetric are); pad g.get() with np.pad, then gnp.asarray(result)")
    elif callable(mode):
        raise NotImplementedError("gnp.pad: a callable mode runs Python per vector; pad g.get() with np.pad")
    else:
        raise ValueError(f"mode {mode!r} is not supported")
    if kwargs:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {set(kwargs)}")
    for axis in range(a.ndim):
        before, after = int(widths[axis, 0]), int(widths[axis, 1])
        if before == after == 0:
            continue
        n = a.shape[axis]
        if mode == "constant":
            pieces = []
            for width, value in ((before, values[axis, 0]), (after, values[axis, 1])):
                shape = a.shape[:axis] + (width,) + a.shape[axis + 1:]
                pieces.append(full(shape, np.asarray(value).astype(a.dtype, casting="unsafe"), a.dtype,
                                   device=a.context))
            a = concatenate([pieces[0], a, pieces[1]], axis=axis)
            continue
        if n == 0:
            raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'")
        idx = _source_index(mode, n, before, after)
        a = take(a, asarray(idx, device=a.context), axis=axis)     # the gather's indices: padded-axis long
    return a


def _per_axis(value: Any, ndim: int, name: str, integral: bool) -> np.ndarray:
    """numpy's broadcasting of ``pad_width`` / ``constant_values`` to (ndim, 2)."""
    arr = np.asarray(value)
    if integral:
        if arr.dtype.kind not in "iu":
            raise TypeError("`pad_width` must be of integral type.")
        arr = arr.astype(np.int64)
    try:
        return np.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes [original->remapped]: "
                         f"{arr.shape} and requested shape ({ndim},2) ({name})") from None


def _source_index(mode: str, n: int, before: int, after: int) -> np.ndarray:
    """For each position of the padded axis, the position of the axis it copies."""
    pos = np.arange(-before, n + after, dtype=np.int64)
    if mode == "edge":
        return np.clip(pos, 0, n - 1)
    if mode == "wrap":
        return pos % n
    if mode == "symmetric":
        period = 2 * n
        m = pos % period
        return np.where(m < n, m, period - 1 - m)
    if n == 1:                                   # reflect of one element: that element
        return np.zeros_like(pos)
    period = 2 * (n - 1)
    m = pos % period
    return np.where(m < n, m, period - m)
