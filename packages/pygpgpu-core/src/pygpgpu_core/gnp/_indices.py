"""Index arrays of a pattern, made on the device: ``indices`` (broadcast ``arange`` vectors),
``tril_indices`` / ``triu_indices`` (the nonzero positions of ``tri``) and ``diag_indices``, with
numpy's dtypes (``intp``, or ``indices``' ``dtype``)."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import arange, empty
from ._dispatch import ops
from ._patterns import tri
from ._views import device_operand

__all__ = ["indices", "tril_indices", "triu_indices", "tril_indices_from", "triu_indices_from", "diag_indices",
           "diag_indices_from", "ix_", "mgrid", "ogrid"]


def indices(dimensions: Any, dtype: Any = int, sparse: bool = False, *, device: Any = None) -> Any:
    """A grid of indices: one array per dimension, stacked (``sparse``: a tuple of broadcastable ones)."""
    dimensions = tuple(operator_index(n) for n in dimensions)
    n = len(dimensions)
    vectors = [arange(d, dtype=dtype, device=device).reshape((1,) * k + (d,) + (1,) * (n - k - 1))
               for k, d in enumerate(dimensions)]
    if sparse:
        return tuple(vectors)
    out = empty((n,) + dimensions, dtype, device)
    for k, v in enumerate(vectors):
        out[k] = v
    return out


def tril_indices(n: int, k: int = 0, m: "int | None" = None, *, device: Any = None) -> tuple[DeviceArray, DeviceArray]:
    """Row and column indices of the lower triangle (at and below diagonal ``k``) of an n x m matrix."""
    return ops().nonzero(tri(n, m, k, dtype=bool, device=device))


def triu_indices(n: int, k: int = 0, m: "int | None" = None, *, device: Any = None) -> tuple[DeviceArray, DeviceArray]:
    """Row and column indices of the upper triangle (at and above diagonal ``k``) of an n x m matrix."""
    below = tri(n, m, operator_index(k) - 1, dtype=bool, device=device)
    return ops().nonzero(ops().ufunc_call("logical_not", (below,)))


def _matrix(arr: Any, op: str) -> DeviceArray:
    arr = device_operand(arr, op)
    if arr.ndim != 2:
        raise ValueError("input array must be 2-d")
    return arr


def tril_indices_from(arr: Any, k: int = 0) -> tuple[DeviceArray, DeviceArray]:
    a = _matrix(arr, "tril_indices_from")
    return tril_indices(a.shape[-2], k=k, m=a.shape[-1], device=a.context)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[DeviceArray, DeviceArray]:
    a = _matrix(arr, "triu_indices_from")
    return triu_indices(a.shape[-2], k=k, m=a.shape[-1], device=a.context)


def diag_indices(n: int, ndim: int = 2, *, device: Any = None) -> tuple[DeviceArray, ...]:
    """The indices of the main diagonal of an n x ... x n array: the same ``arange(n)`` ``ndim`` times."""
    idx = arange(operator_index(n), dtype=np.intp, device=device)
    return (idx,) * operator_index(ndim)


def diag_indices_from(arr: Any) -> tuple[DeviceArray, ...]:
    a = device_operand(arr, "diag_indices_from")
    if a.ndim < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(a.shape[0], a.ndim, device=a.context)


def ix_(*args: Any) -> tuple[DeviceArray, ...]:
    """Open-mesh index arrays: the k-th sequence reshaped to length 1 on every axis but the k-th
    (a bool sequence stands for its nonzero positions), for ``g[gnp.ix_(rows, cols)]``."""
    out = []
    nd = len(args)
    for k, seq in enumerate(args):
        a = device_operand(seq, "ix_") if not (isinstance(seq, (list, tuple)) and len(seq) == 0) else \
            arange(0, dtype=np.intp)
        if a.ndim != 1:
            raise ValueError("Cross index must be 1 dimensional")
        if a.dtype == np.bool_:
            a = ops().nonzero(a)[0]
        out.append(a.reshape((1,) * k + (a.shape[0],) + (1,) * (nd - k - 1)))
    return tuple(out)


class _Grid:
    """``mgrid`` / ``ogrid``: ``grid[start:stop:step, ...]`` as numpy's nd_grid (a complex step ``nj``
    means n points from start to stop inclusive, as linspace)."""

    def __init__(self, sparse: bool) -> None:
        self.sparse = sparse

    def __getitem__(self, key: Any) -> Any:
        from ._functions import linspace
        single = not isinstance(key, tuple)
        slices = (key,) if single else key
        vectors = []
        for s in slices:
            if not isinstance(s, slice):
                raise TypeError("gnp.mgrid / gnp.ogrid take slices (start:stop:step)")
            start = 0 if s.start is None else s.start
            step = 1 if s.step is None else s.step
            if isinstance(step, complex):
                vectors.append(linspace(start, s.stop, int(abs(step))))
            else:
                vectors.append(arange(start, s.stop, step))
        dtype = np.result_type(*(v.dtype for v in vectors))
        vectors = [v.astype(dtype, copy=False) for v in vectors]
        if single:
            return vectors[0]
        n = len(vectors)
        shaped = [v.reshape((1,) * k + (v.shape[0],) + (1,) * (n - k - 1)) for k, v in enumerate(vectors)]
        if self.sparse:
            return tuple(shaped)
        shape = tuple(v.shape[0] for v in vectors)
        out = empty((n,) + shape, dtype, vectors[0].context)
        for k, v in enumerate(shaped):
            out[k] = v
        return out


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)
