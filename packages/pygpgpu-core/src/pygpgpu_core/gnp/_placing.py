"""numpy's in-place placing functions and ``choose``, composed of gnp's indexing and ``where``:
``put`` (flat indices, modes raise/wrap/clip), ``putmask`` (values by flat position),
``place`` (values in the order of the true entries), ``put_along_axis`` and ``choose``.
``mode='raise'`` reads the indices' minimum and maximum back to check them, as numpy checks first."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray
from ._views import broadcast_arrays, device_operand

__all__ = ["put", "putmask", "place", "put_along_axis", "choose"]


def _writable(a: Any, op: str) -> DeviceArray:
    if not isinstance(a, DeviceArray):
        raise TypeError(f"gnp.{op}: the target must be a device array (it is written in place), got "
                        f"{type(a).__name__}")
    if a._readonly:
        raise ValueError("assignment destination is read-only")
    return a


def _indices(ind: Any, n: int, mode: str, op: str, ctx: Any) -> DeviceArray:
    """Flat int64 indices into ``n`` elements under numpy's ``mode``."""
    from ._functions import clip

    idx = device_operand(ind, op, ctx).astype(np.int64, copy=False).ravel()
    if mode == "wrap":
        return idx % n if n else idx
    if mode == "clip":
        return clip(idx, 0, max(n - 1, 0))
    if mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if idx.size:
        low, high = int(idx.min()), int(idx.max())
        bad = low if low < -n else high if high >= n else None
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for axis 0 with size {n}")
    return idx % n if n else idx


def _cycled(values: Any, count: int, a: DeviceArray, op: str) -> DeviceArray:
    """``values`` flattened and repeated to ``count`` elements, in ``a``'s dtype."""
    from ._creation import arange

    v = device_operand(values, op, a.context).ravel()
    if v.size == 0:
        raise ValueError(f"{op}: values must be non-empty" if op != "place" else
                         "Cannot insert from an empty array!")
    if v.size != count:
        v = v[arange(count, dtype=np.int64, device=a.context) % v.size]
    return v.astype(a.dtype, copy=False)


def _write_flat(a: DeviceArray, idx: DeviceArray, v: DeviceArray) -> None:
    """``a.flat[idx] = v`` through a contiguous copy when ``a`` is a strided view."""
    if a.flags["C_CONTIGUOUS"]:
        a.reshape(-1)[idx] = v
        return
    flat = a.ravel()
    flat[idx] = v
    a[...] = flat.reshape(a.shape)


def put(a: Any, ind: Any, v: Any, mode: str = "raise") -> None:
    """numpy's ``put``: ``a.flat[ind] = v``, ``v`` repeated to the length of ``ind``."""
    a = _writable(a, "put")
    idx = _indices(ind, a.size, mode, "put", a.context)
    if idx.size == 0:
        return
    _write_flat(a, idx, _cycled(v, idx.size, a, "put"))


def putmask(a: Any, mask: Any, values: Any) -> None:
    """numpy's ``putmask``: ``a.flat[n] = values[n % len(values)]`` where ``mask.flat[n]``."""
    from ._functions import where

    a = _writable(a, "putmask")
    m = device_operand(mask, "putmask", a.context).astype(bool, copy=False)
    if m.shape != a.shape:
        raise ValueError("putmask: mask and data must be the same size")
    if a.size == 0:
        return
    a[...] = where(m, _cycled(values, a.size, a, "putmask").reshape(a.shape), a)


def place(arr: Any, mask: Any, vals: Any) -> None:
    """numpy's ``place``: the true entries of ``mask`` take ``vals`` in order, repeated as needed."""
    from ._functions import where

    a = _writable(arr, "place")
    m = device_operand(mask, "place", a.context).astype(bool, copy=False)
    if m.size != a.size:
        raise ValueError("place: mask and data must be the same size")
    count = int(m.sum())
    if count == 0:
        return
    order = m.ravel().astype(np.int64).cumsum() - 1            # the rank of each true entry
    v = _cycled(vals, count, a, "place")
    picked = v[order % count]
    a[...] = where(m.reshape(a.shape), picked.reshape(a.shape), a)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: Any) -> None:
    """numpy's ``put_along_axis``: ``arr`` at ``indices`` along ``axis`` (the others matched by
    broadcasting) takes ``values``."""
    from ._array import _normalize_axis
    from ._creation import arange

    a = _writable(arr, "put_along_axis")
    idx = device_operand(indices, "put_along_axis", a.context)
    if idx.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        put(a, idx, values)
        return
    axis = _normalize_axis(axis, a.ndim)
    if idx.ndim != a.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    n = a.shape[axis]
    coords = []
    for d in range(a.ndim):
        shape = [1] * a.ndim
        shape[d] = -1
        coords.append((idx.astype(np.int64) % max(n, 1)) if d == axis else
                      arange(a.shape[d], dtype=np.int64, device=a.context).reshape(shape))
    coords = list(broadcast_arrays(*coords))
    flat = coords[0] * 0
    stride = 1
    for d in reversed(range(a.ndim)):
        flat = flat + coords[d] * stride
        stride *= a.shape[d]
    v = device_operand(values, "put_along_axis", a.context)
    v = broadcast_arrays(v, flat)[0]
    if flat.size:
        _write_flat(a, flat.ravel(), v.ravel().astype(a.dtype, copy=False))


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> DeviceArray:
    """numpy's ``choose``: each element of ``a`` picks the same element of ``choices[a]``."""
    from ._copying import copyto
    from ._functions import clip, where

    idx = device_operand(a, "choose")
    if idx.dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from {idx.dtype!r} to dtype('int64') according to the rule 'safe'")
    picks = [device_operand(c, "choose", idx.context) for c in
             (list(choices) if not isinstance(choices, DeviceArray) else [choices[k] for k in range(len(choices))])]
    if not picks:
        raise ValueError("0-length sequence.")
    n = len(picks)
    idx = idx.astype(np.int64, copy=False)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = clip(idx, 0, n - 1)
    elif mode == "raise":
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
            raise ValueError("invalid entry in choice array")
    else:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    dtype = np.result_type(*[p.dtype for p in picks])
    idx, *picks = broadcast_arrays(idx, *picks)
    result = picks[0].astype(dtype)
    for k in range(1, n):
        result = where(idx == k, picks[k], result)
    result = result.astype(dtype, copy=False)
    if out is not None:
        copyto(out, result)
        return out
    return result
