"""``lstsq``, ``pinv`` and ``matrix_rank``: from :func:`svd`, with numpy's default cut-offs
(``eps * max(M, N)`` times the largest singular value)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._array import DeviceArray
from .._creation import asarray, zeros
from .._functions import amax, matmul, sum, where
from .._statistics import count_nonzero
from .._views import device_operand
from ._decompositions import adjoint, svd
from ._operands import LinAlgError, compute_dtype, matrix_operand, real_dtype, ufunc

__all__ = ["lstsq", "pinv", "matrix_rank"]


def absolute(x: DeviceArray) -> DeviceArray:
    return ufunc("absolute", x)


def _reciprocal_above(s: DeviceArray, cutoff: Any) -> DeviceArray:
    keep = s > cutoff
    return where(keep, 1.0 / where(keep, s, 1.0), 0.0).astype(s.dtype)


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple:
    """numpy's ``lstsq`` for a (M, N) and b (M,) or (M, K): ``(x, residuals, rank, s)`` with x
    minimising ``||b - a x||`` (the minimum-norm one when rank-deficient), residuals the squared
    norms of each column's residual when rank == N < M (else empty), rank an int (read back, as
    numpy returns it), s a's singular values. Singular values below ``rcond * s.max()`` count
    as zero (rcond None: ``eps * max(M, N)``)."""
    a = device_operand(a, "linalg.lstsq")
    b = device_operand(b, "linalg.lstsq", a.device)
    if a.ndim != 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional (gnp.linalg.lstsq)")
    if b.ndim not in (1, 2):
        raise LinAlgError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    if b.shape[0] != m:
        raise LinAlgError("Incompatible dimensions: a has {} rows, b has {}".format(m, b.shape[0]))
    dt = compute_dtype(a.dtype, b.dtype, op="lstsq")
    vector = b.ndim == 1
    b2 = (b.reshape(m, 1) if vector else b).astype(dt)
    if rcond is None:
        rcond = np.finfo(dt).eps * max(m, n)
    k = b2.shape[1]
    if min(m, n) == 0:
        x = zeros((n, k), dt, a.device)
        s = zeros((0,), real_dtype(dt), a.device)
        rank = 0
    else:
        u, s, vh = svd(a.astype(dt), full_matrices=False)
        cutoff = amax(s) * float(rcond)
        x = matmul(adjoint(vh), _reciprocal_above(s, cutoff).reshape(-1, 1).astype(dt) * matmul(adjoint(u), b2))
        rank = int(count_nonzero(s > cutoff).get())
    if rank == n and m > n:
        r = b2 - matmul(a.astype(dt), x)
        residuals = sum(absolute(r) ** 2 if dt.kind == "c" else r * r, axis=0)
    else:
        residuals = zeros((0,), real_dtype(dt), a.device)
    return (x.reshape(n) if vector else x), residuals, rank, s


_NO_VALUE = object()     # rtol not given (numpy's _NoValue: the default rcond differs from rtol=None's)


def _per_matrix(x: Any, device: Any) -> Any:
    """A cut-off that may be one value per matrix (numpy's ``asarray(rcond)[..., newaxis]``)."""
    if isinstance(x, DeviceArray):
        return x[..., None]
    host = np.asarray(x)
    return float(host) if host.ndim == 0 else asarray(host, device=device)[..., None]


def pinv(a: Any, rcond: Any = None, hermitian: bool = False, *, rtol: Any = _NO_VALUE) -> DeviceArray:
    """The Moore-Penrose pseudo-inverse of each matrix, from its SVD; singular values at most
    ``rcond * s.max()`` are dropped (numpy's defaults: rcond 1e-15 when neither rcond nor rtol is
    given, ``max(M, N) * eps`` for ``rtol=None``; both may be one value per matrix)."""
    a = matrix_operand(a, "pinv")
    if rcond is None:
        rcond = 1e-15 if rtol is _NO_VALUE else (max(a.shape[-2:]) * np.finfo(compute_dtype(a.dtype, op="pinv")).eps
                                                  if rtol is None else rtol)
    elif rtol is not _NO_VALUE:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    m, n = a.shape[-2:]
    if a.size == 0:
        return zeros(a.shape[:-2] + (n, m), a.dtype, a.device)
    dt = compute_dtype(a.dtype, op="pinv")
    u, s, vh = svd(a.astype(dt), full_matrices=False)
    cutoff = amax(s, axis=-1, keepdims=True) * _per_matrix(rcond, a.device)
    scaled = adjoint(vh) * _reciprocal_above(s, cutoff)[..., None, :].astype(dt)
    return matmul(scaled, adjoint(u))


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> DeviceArray:
    """The number of singular values above ``tol`` (None: ``S.max() * rtol``, rtol None: ``max(M, N) * eps``);
    for fewer than 2 dimensions, 1 unless every element is zero."""
    A = device_operand(A, "linalg.matrix_rank")
    if A.ndim < 2:
        return (count_nonzero(A) > 0).astype(np.int64)
    s = svd(A, compute_uv=False)
    if tol is None:
        m, n = A.shape[-2:]
        rel = max(m, n) * np.finfo(s.dtype).eps if rtol is None else _per_matrix(rtol, A.device)
        tol = amax(s, axis=-1, keepdims=True) * rel
    else:
        tol = _per_matrix(tol, A.device)
    return count_nonzero(s > tol, axis=-1)
