"""Elements copied into a new arrangement on the device: ``tile`` and ``repeat`` copy a
zero-stride broadcast view (each element read as many times as it appears), ``roll`` copies the
two (per rolled axis) blocks of the array into their shifted places."""
from __future__ import annotations

import itertools
from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis
from ._creation import asarray, empty_like
from ._functions import take
from ._views import broadcast_to, device_operand

__all__ = ["tile", "repeat", "roll"]


def tile(A: DeviceArray, reps: Any) -> DeviceArray:
    """``A`` repeated ``reps[k]`` times along each axis ``k`` (counted from the last; ``A`` is
    given leading axes of length 1 when ``reps`` is longer)."""
    a = device_operand(A, "tile")
    try:
        counts = tuple(operator_index(r) for r in reps)
    except TypeError:
        counts = (operator_index(reps),)
    nd = max(len(counts), a.ndim)
    counts = (1,) * (nd - len(counts)) + counts
    a = a[(None,) * (nd - a.ndim) + (Ellipsis,)]
    # (1, n0, 1, n1, ...) broadcast to (r0, n0, r1, n1, ...): copied in that order, it is the tiling
    spread = a[tuple(item for _ in range(nd) for item in (None, slice(None)))]
    tiled = broadcast_to(spread, tuple(m for r, n in zip(counts, a.shape) for m in (r, n)))
    return tiled.copy().reshape(tuple(r * n for r, n in zip(counts, a.shape)))


def repeat(a: DeviceArray, repeats: Any, axis: Any = None) -> DeviceArray:
    """Each element repeated ``repeats`` times along ``axis`` (of the flattened array when None):
    one count for all, or one per element as a host sequence (whose index array is made on the
    host from those host numbers and gathered on the device)."""
    a = device_operand(a, "repeat")
    if axis is None:
        a, axis = a.ravel(), 0
    ax = _normalize_axis(axis, a.ndim)
    if isinstance(repeats, DeviceArray) and repeats.size != 1:
        return _repeat_by_device_counts(a, repeats, ax)
    if isinstance(repeats, DeviceArray):
        repeats = repeats.get()      # one count: the result's length is that number, read back
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        count = operator_index(np.asarray(repeats).reshape(())[()])
        if count < 0:
            raise ValueError("negative dimensions are not allowed")
        after = a[(slice(None),) * (ax + 1) + (None,)]
        spread = broadcast_to(after, a.shape[:ax + 1] + (count,) + a.shape[ax + 1:])
        return spread.copy().reshape(a.shape[:ax] + (a.shape[ax] * count,) + a.shape[ax + 1:])
    positions = np.repeat(np.arange(a.shape[ax]), repeats)        # numpy's checks of the counts
    return take(a, asarray(positions, device=a.context), axis=ax)


def _repeat_by_device_counts(a: DeviceArray, repeats: DeviceArray, ax: int) -> DeviceArray:
    """``repeat`` with one device count per element: the result's length (the counts' sum) is read
    back, as boolean indexing reads its count; each output position finds its source element by a
    device search of the counts' running sum."""
    from ._dispatch import ops
    from ._sorting import searchsorted

    n = a.shape[ax]
    if repeats.ndim > 1 or repeats.shape[0] != n:
        raise ValueError(f"operands could not be broadcast together with shape ({n},) ({repeats.shape[0]},)"
                         if repeats.ndim == 1 else "object too deep for desired array")
    if not np.can_cast(repeats.dtype, np.int64, "safe"):     # numpy's rule (uint64 and floats are refused)
        raise TypeError(f"Cannot cast array data from {repeats.dtype!r} to dtype('int64') according to the rule 'safe'")
    counts = repeats.astype(np.int64)
    if bool(ops().reduce("any", ops().ufunc_call("less", (counts, 0))).get()):
        raise ValueError("repeats may not contain negative values.")
    ends = ops().scan("cumsum", counts)
    total = int(ends[-1].get()) if n else 0
    from ._creation import arange
    positions = searchsorted(ends, arange(total, dtype=np.int64, device=a.context), side="right")
    return take(a, positions, axis=ax)


def roll(a: DeviceArray, shift: Any, axis: Any = None) -> DeviceArray:
    """Elements shifted by ``shift`` along ``axis`` (of the flattened array when None), those
    pushed past the end coming back at the start; several shifts and axes at once as numpy's."""
    a = device_operand(a, "roll")
    if axis is None:
        return roll(a.ravel(), shift, 0).reshape(a.shape)
    pairs = np.broadcast(shift, axis)
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = dict.fromkeys(range(a.ndim), 0)
    for sh, ax in pairs:
        shifts[_normalize_axis(ax, a.ndim)] += int(sh)
    whole = ((slice(None), slice(None)),)
    blocks: list[tuple] = [whole] * a.ndim
    for ax, offset in shifts.items():
        offset %= a.shape[ax] or 1
        if offset:
            # (source, destination): the head moves to the tail and the tail to the head
            blocks[ax] = ((slice(None, -offset), slice(offset, None)), (slice(-offset, None), slice(None, offset)))
    out = empty_like(a)
    for pieces in itertools.product(*blocks):
        source, destination = zip(*pieces)
        out[destination] = a[source]
    return out
