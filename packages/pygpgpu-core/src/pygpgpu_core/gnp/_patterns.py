"""Arrays of a pattern, made on the device from fills, index comparisons and views: ``eye``,
``identity``, ``tri``, ``triu``, ``tril``, ``diag``, ``logspace`` and ``meshgrid``. Nothing is
uploaded: a diagonal is a strided view filled in place, a triangle the comparison of two
``arange`` vectors broadcast against each other."""
from __future__ import annotations

import functools
from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import arange, zeros
from ._dispatch import ops
from ._functions import linspace, where
from ._views import broadcast_arrays, device_operand, diagonal, writable_diagonal

__all__ = ["eye", "identity", "tri", "triu", "tril", "diag", "logspace", "meshgrid"]


def eye(N: int, M: "int | None" = None, k: int = 0, dtype: Any = float, order: str = "C", *,
        device: Any = None) -> DeviceArray:
    """Ones on diagonal ``k`` (above the main one when positive), zeros elsewhere."""
    out = zeros((N, N if M is None else M), dtype, device, order)
    if out.size:
        writable_diagonal(out, operator_index(k)).fill(1)
    return out


def identity(n: int, dtype: Any = None, *, device: Any = None) -> DeviceArray:
    """The n x n identity matrix (float64 unless ``dtype`` says otherwise)."""
    return eye(n, dtype=dtype, device=device)


def tri(N: int, M: "int | None" = None, k: int = 0, dtype: Any = float, *, device: Any = None) -> DeviceArray:
    """Ones at and below diagonal ``k``: where row index >= column index - k."""
    M = N if M is None else M
    k = operator_index(k)
    rows = arange(N, dtype=np.int64, device=device)[:, None]
    columns = arange(-k, M - k, dtype=np.int64, device=device)[None, :]
    return ops().ufunc_call("greater_equal", (rows, columns)).astype(dtype, copy=False)


def _triangle(m: DeviceArray, k: int) -> DeviceArray:
    """``tri`` of the last two axes of ``m`` as bools (n x n for a 1-D array of n, as numpy's)."""
    if m.ndim == 0:
        raise TypeError("tri() missing 1 required positional argument: 'N'")   # numpy's, from tri(*m.shape[-2:])
    return tri(m.shape[-2] if m.ndim > 1 else m.shape[-1], m.shape[-1], k, bool, device=m.context)


def triu(m: DeviceArray, k: int = 0) -> DeviceArray:
    """A copy with the elements below diagonal ``k`` of the last two axes zeroed (a 1-D array is
    taken as every row of a square matrix, as numpy does)."""
    m = device_operand(m, "triu")
    # 0 as a numpy scalar of m's type: a strong operand, so the result keeps that type
    return where(_triangle(m, operator_index(k) - 1), m.dtype.type(0), m)


def tril(m: DeviceArray, k: int = 0) -> DeviceArray:
    """A copy with the elements above diagonal ``k`` of the last two axes zeroed."""
    m = device_operand(m, "tril")
    return where(_triangle(m, operator_index(k)), m, m.dtype.type(0))


def diag(v: DeviceArray, k: int = 0) -> DeviceArray:
    """A 1-D array: a new square matrix with ``v`` on diagonal ``k``. A 2-D array: its diagonal
    ``k`` (a view, as numpy's)."""
    v = device_operand(v, "diag")
    k = operator_index(k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0] + abs(k)
    out = zeros((n, n), v.dtype, v.context)
    writable_diagonal(out, k)[...] = v
    return out


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0, dtype: Any = None,
             axis: int = 0, *, device: Any = None) -> DeviceArray:
    """``base ** linspace(start, stop, num)`` on the device (float64 exponents, as numpy's)."""
    exponents = linspace(start, stop, num, endpoint=endpoint, axis=axis, device=device)
    # numpy raises base as an array: a strong operand of its own type (an int base still gives floats)
    out = ops().ufunc_call("power", (np.asarray(base), exponents))
    return out if dtype is None else out.astype(dtype, copy=False)


def meshgrid(*xi: DeviceArray, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> Any:
    """Coordinate arrays: input ``i`` (flattened) laid along axis ``i`` (the first two swapped for
    ``indexing='xy'``) and broadcast to the full grid, as views, copied unless ``copy=False``."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    nd = len(xi)
    placed = []
    for i, x in enumerate(xi):
        x = device_operand(x, "meshgrid")
        line = x if x.ndim == 1 else x.reshape(-1)
        along = (1 - i if i < 2 else i) if indexing == "xy" and nd > 1 else i
        placed.append(line[tuple(slice(None) if d == along else None for d in range(nd))])
    grids = placed if sparse else broadcast_arrays(*placed)
    if copy:
        grids = [g.copy() for g in grids]
    return _numpy_container(copy, sparse)(grids)


@functools.lru_cache(maxsize=None)
def _numpy_container(copy: bool, sparse: bool) -> type:
    """The sequence type the numpy beside gnp returns from meshgrid for these flags (numpy 2.4
    gives a list for sparse views only; 2.5 a tuple always): asked of numpy once, not assumed."""
    return type(np.meshgrid(np.zeros(1), copy=copy, sparse=sparse))
