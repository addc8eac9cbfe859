"""numpy's advanced indexing with several integer index arrays (``g[rows, cols, idx]``, slices
among them): the index arrays broadcast together; slices are applied first as a view; the indexed
axes are gathered at once through one flat index (``sum(i_k * extent of the axes after k)``),
computed on the device; the broadcast dimensions go where numpy puts them (in place of adjacent
indexed axes, else first)."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

__all__ = ["is_multi_index", "multi_getitem"]


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_))


def _is_index_array(k: Any) -> bool:
    if isinstance(k, DeviceArray):
        return k.dtype.kind in "iu"
    if isinstance(k, (list, tuple, np.ndarray)):
        host = np.asarray(k)
        return host.dtype.kind in "iu" or (host.size == 0 and host.dtype.kind == "f")
    return False


def is_multi_index(key: Any) -> bool:
    """A tuple of ints, slices and integer index arrays with at least one array (``...``, ``None``
    and boolean masks take the other paths)."""
    if not isinstance(key, tuple) or len(key) < 2:
        return False
    arrays = sum(1 for k in key if _is_index_array(k))
    return arrays >= 1 and all(isinstance(k, slice) or _is_int(k) or _is_index_array(k) for k in key)


def multi_getitem(a: DeviceArray, key: tuple) -> DeviceArray:
    from pygpgpu_core.gnp import asarray, broadcast_arrays

    from ._elementwise import ufunc_call
    from ._indexing import _index_array, take
    from ._operands import contiguous
    if len(key) > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {len(key)} were indexed")
    key = key + (slice(None),) * (a.ndim - len(key))
    advanced = [k for k, item in enumerate(key) if not isinstance(item, slice)]
    view = a[tuple(item if isinstance(item, slice) else slice(None) for item in key)]
    device = a.device
    indices = []
    for axis in advanced:
        item = key[axis]
        n = view.shape[axis]
        if _is_int(item):
            i = int(operator_index(item))
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            item = asarray(np.int64(i % n), device=a.context)
        idx = _index_array(item, n, device, "getitem").astype(np.int64, copy=False)
        # negative entries count from the end, as numpy's (device entries out of range are clipped by take)
        indices.append(ufunc_call("add", (idx, ufunc_call("multiply", (ufunc_call("less", (idx, 0)), n)))))
    try:
        indices = list(broadcast_arrays(*indices))
    except ValueError:
        shapes = " ".join(str(tuple(i.shape)) for i in indices)
        raise IndexError(f"shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}") from None
    shape = indices[0].shape
    rest = [k for k in range(a.ndim) if k not in advanced]
    moved = contiguous(view.transpose(advanced + rest))
    extents = [view.shape[k] for k in advanced]
    terms = [ufunc_call("multiply", (idx, np.int64(int(np.prod(extents[j + 1:], dtype=np.int64)))))
             for j, idx in enumerate(indices)]
    flat = terms[0]
    for term in terms[1:]:
        flat = ufunc_call("add", (flat, term))
    total = int(np.prod(extents, dtype=np.int64))
    rest_shape = tuple(view.shape[k] for k in rest)
    gathered = take(moved.reshape((total,) + rest_shape), contiguous(flat).reshape(-1), axis=0)
    result = gathered.reshape(shape + rest_shape)
    if advanced == list(range(advanced[0], advanced[-1] + 1)) and advanced[0] > 0:
        # adjacent indexed axes: numpy puts the broadcast dimensions where they were
        nb, first = len(shape), advanced[0]
        order = list(range(nb, nb + first)) + list(range(nb)) + list(range(nb + first, result.ndim))
        result = result.transpose(order).copy()
    return result
