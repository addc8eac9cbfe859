"""``det``, ``slogdet``, ``solve``, ``inv`` (one LU kernel with partial pivoting) and ``cholesky``,
over stacks of matrices as numpy.linalg takes them."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._array import DeviceArray
from .._creation import ones, zeros
from .._dispatch import ops
from .._functions import where
from .._patterns import eye
from .._views import broadcast_to, device_operand, swapaxes
from ._operands import compute_dtype, raise_if, real_dtype, square_operand, ufunc, work_copy
from ._results import SlogdetResult

__all__ = ["det", "slogdet", "solve", "inv", "inv_or_nan", "cholesky"]


def slogdet(a: Any) -> SlogdetResult:
    """``(sign, logabsdet)`` of each matrix: sign 0 and logabsdet -inf where it is singular."""
    a = square_operand(a, "slogdet")
    dt = compute_dtype(a.dtype, op="slogdet")
    batch_shape = a.shape[:-2]
    if a.shape[-1] == 0:
        return SlogdetResult(ones(batch_shape, dt, a.device), zeros(batch_shape, real_dtype(dt), a.device))
    sign, logdet, _ = ops().lu_solve(work_copy(a, dt), None)
    return SlogdetResult(sign.reshape(batch_shape), logdet.reshape(batch_shape))


def det(a: Any) -> DeviceArray:
    """The determinant of each matrix, ``sign * exp(logabsdet)`` from its LU factors as numpy computes it."""
    a = square_operand(a, "det")
    sign, logdet = slogdet(a)
    if a.shape[-1] == 0:
        return sign
    return ufunc("multiply", sign, ufunc("exp", logdet))


def solve(a: Any, b: Any) -> DeviceArray:
    """x with ``a @ x == b`` for each matrix of ``a``: ``b`` of shape (..., M, K), or (M,) (numpy 2's
    rule: b is a vector only when it is 1-D); batch dimensions broadcast. LinAlgError
    "Singular matrix" where a pivot is exactly zero, as LAPACK's gesv reports it."""
    a = square_operand(a, "solve")
    b = device_operand(b, "linalg.solve", a.device)
    n = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        b = b.reshape(n, 1) if b.shape[0] == n else b
    if b.ndim < 2 or b.shape[-2] != n:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0 (size {b.shape[-2] if b.ndim > 1 else b.shape} "
                         f"is different from {n}): b must be (..., {n}, K) or ({n},)")
    dt = compute_dtype(a.dtype, b.dtype, op="solve")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    k = b.shape[-1]
    out_shape = batch + ((n,) if vector else (n, k))
    if n == 0 or k == 0 or int(np.prod(batch, dtype=np.int64)) == 0:
        return zeros(out_shape, dt, a.device)
    aw = work_copy(broadcast_to(a, batch + (n, n)), dt)
    bw = work_copy(broadcast_to(b, batch + (n, k)), dt)
    _, _, info = ops().lu_solve(aw, bw)
    raise_if(info, "Singular matrix")
    return bw.reshape(out_shape)


def inv(a: Any) -> DeviceArray:
    """The inverse of each matrix (``solve(a, I)``); LinAlgError "Singular matrix" as numpy."""
    a = square_operand(a, "inv")
    dt = compute_dtype(a.dtype, op="inv")
    n = a.shape[-1]
    if a.size == 0:
        return zeros(a.shape, dt, a.device)
    bw = work_copy(broadcast_to(eye(n, dtype=dt, device=a.device), a.shape), dt)
    _, _, info = ops().lu_solve(work_copy(a, dt), bw)
    raise_if(info, "Singular matrix")
    return bw.reshape(a.shape)


def inv_or_nan(a: DeviceArray) -> DeviceArray:
    """:func:`inv` with NaN matrices where ``a`` is singular instead of LinAlgError (what numpy's
    cond computes with), reading nothing back."""
    a = square_operand(a, "inv")
    dt = compute_dtype(a.dtype, op="inv")
    if a.size == 0:
        return zeros(a.shape, dt, a.device)
    bw = work_copy(broadcast_to(eye(a.shape[-1], dtype=dt, device=a.device), a.shape), dt)
    _, _, info = ops().lu_solve(work_copy(a, dt), bw)
    singular = (info != 0).reshape(a.shape[:-2] + (1, 1))
    return where(singular, np.nan, bw.reshape(a.shape)).astype(dt)


def cholesky(a: Any, /, *, upper: bool = False) -> DeviceArray:
    """The lower Cholesky factor L of each matrix (``upper=True``: L's transpose), reading only the
    lower triangle as numpy does; LinAlgError "Matrix is not positive definite" otherwise."""
    a = square_operand(a, "cholesky")
    dt = compute_dtype(a.dtype, op="cholesky")
    if a.size == 0:
        return zeros(a.shape, dt, a.device)
    w = work_copy(a, dt)
    raise_if(ops().cholesky_lower(w), "Matrix is not positive definite")
    low = w.reshape(a.shape)
    if not operator.truth(upper):
        return low
    high = swapaxes(low, -1, -2).copy()
    return ufunc("conjugate", high) if dt.kind == "c" else high

