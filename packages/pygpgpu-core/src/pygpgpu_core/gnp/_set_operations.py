"""numpy's set operations and the other sort-based lookups of ``pygpgpu.numpy``: ``union1d``,
``intersect1d``, ``setdiff1d``, ``setxor1d``, ``lexsort`` and ``digitize``, composed of
``unique``, ``isin``, ``searchsorted`` and the stable device sort (numpy's own steps, so the
results, dtypes and orders are numpy's)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import arange, full
from ._dispatch import ops
from ._sorting import isin, searchsorted, unique
from ._views import device_operand

__all__ = ["union1d", "intersect1d", "setdiff1d", "setxor1d", "lexsort", "digitize"]


def _flat(a: Any, op: str) -> DeviceArray:
    return ops().copy(device_operand(a, op)).reshape(-1)


def _joined(a: DeviceArray, b: DeviceArray) -> DeviceArray:
    return ops().concatenate([a, b])


def union1d(ar1: Any, ar2: Any) -> DeviceArray:
    """``np.union1d``: the sorted distinct values of both arrays."""
    return unique(_joined(_flat(ar1, "union1d"), _flat(ar2, "union1d")))


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False) -> Any:
    """``np.intersect1d``: the sorted values in both arrays; with ``return_indices`` also the
    first index of each in either (flattened) array."""
    a, b = _flat(ar1, "intersect1d"), _flat(ar2, "intersect1d")
    ind1 = ind2 = None
    if not assume_unique:
        if return_indices:
            a, ind1 = unique(a, return_index=True)
            b, ind2 = unique(b, return_index=True)
        else:
            a, b = unique(a), unique(b)
    aux = _joined(a, b)
    if return_indices:
        perm = ops().argsort(aux)               # stable: numpy's kind="mergesort"
        aux = ops().take(aux, perm)
    else:
        aux = ops().sort(aux)
    if aux.size == 0:
        empty = aux[:0]
        return (empty, arange(0, dtype=np.int64, device=aux.context),
                arange(0, dtype=np.int64, device=aux.context)) if return_indices else empty
    mask = ops().ufunc_call("equal", (aux[1:], aux[:-1]))
    common = ops().getitem(aux[:-1], mask)
    if not return_indices:
        return common
    i1 = ops().getitem(perm[:-1], mask)
    i2 = ops().ufunc_call("subtract", (ops().getitem(perm[1:], mask), np.int64(a.size)))
    if ind1 is not None and ind2 is not None:
        i1, i2 = ops().take(ind1, i1), ops().take(ind2, i2)
    return common, i1, i2


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> DeviceArray:
    """``np.setdiff1d``: the values of ``ar1`` not in ``ar2`` (sorted and distinct unless
    ``assume_unique``, then in ``ar1``'s order)."""
    a, b = _flat(ar1, "setdiff1d"), _flat(ar2, "setdiff1d")
    if not assume_unique:
        a, b = unique(a), unique(b)
    if a.size == 0:
        return a
    return ops().getitem(a, isin(a, b, invert=True))


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False) -> DeviceArray:
    """``np.setxor1d``: the sorted values in exactly one of the arrays."""
    a, b = _flat(ar1, "setxor1d"), _flat(ar2, "setxor1d")
    if not assume_unique:
        a, b = unique(a), unique(b)
    aux = ops().sort(_joined(a, b))
    if aux.size == 0:
        return aux
    edge = full((1,), True, bool, aux.context)
    flag = ops().concatenate([edge, ops().ufunc_call("not_equal", (aux[1:], aux[:-1])), edge])
    return ops().getitem(aux, ops().ufunc_call("logical_and", (flag[1:], flag[:-1])))


def lexsort(keys: Any, axis: int = -1) -> DeviceArray:
    """``np.lexsort`` of 1-D keys (a sequence of them, or the rows of a 2-D array): the int64
    permutation that sorts by the last key, then the one before...: one stable device sort per key."""
    if isinstance(keys, DeviceArray):
        if keys.ndim == 0:
            raise TypeError("need sequence of keys with len(keys) > 0 in lexsort")
        rows = [keys[k] for k in range(keys.shape[0])] if keys.ndim == 2 else [keys]
    else:
        rows = [device_operand(k, "lexsort") for k in keys]
    if not rows:
        raise TypeError("need sequence of keys with len(keys) > 0 in lexsort")
    n = rows[0].shape
    if any(r.shape != n for r in rows):
        raise ValueError("all keys need to be the same shape")
    if len(n) != 1 or axis not in (-1, 0):
        raise NotImplementedError("gnp.lexsort sorts 1-D keys; for keys along an axis of n-d arrays, sort each "
                                  "row's keys in turn with gnp.argsort(kind='stable')")
    perm = arange(n[0], dtype=np.int64, device=rows[0].context)
    for key in rows:                              # the first key least significant: numpy's order
        perm = ops().take(perm, ops().argsort(ops().take(ops().copy(key), perm)))
    return perm


def _bins_increasing(bins: DeviceArray) -> bool:
    """numpy's monotonicity check of digitize's bins: the direction is that of the first edge that
    differs from the first one (a NaN differs; NaN first means decreasing); after it, no step may go
    the other way (a comparison with NaN is no step). Whether they are is read back, as numpy's."""
    u = ops().ufunc_call
    if bins.size < 2:
        return True
    differs = u("not_equal", (bins[1:], bins[0]))
    if not bool(differs.any().get()):
        return True             # all edges equal
    i = int(differs.argmax().get()) + 1
    increasing = bool(u("less", (bins[0], bins[i])).get())
    back = u("greater" if increasing else "less", (bins[:-1], bins[1:]))
    if bool(back.any().get()):
        raise ValueError("bins must be monotonically increasing or decreasing")
    return increasing


def digitize(x: Any, bins: Any, right: bool = False) -> DeviceArray:
    """``np.digitize``: the index of the bin of each ``x`` in monotonic ``bins`` (increasing or
    decreasing; whether they are is read back, as numpy's check)."""
    x = device_operand(x, "digitize")
    bins = device_operand(bins, "digitize")
    if bins.ndim != 1:
        raise ValueError("object too deep for desired array" if bins.ndim > 1 else
                         "object of too small depth for desired array")
    if x.dtype.kind == "c" or bins.dtype.kind == "c":
        raise TypeError("x may not be complex")
    increasing = _bins_increasing(bins)
    side = "left" if right else "right"
    if increasing:
        return searchsorted(bins, x, side=side)
    found = searchsorted(bins[::-1], x, side=side)
    return ops().ufunc_call("subtract", (np.int64(bins.size), found))
