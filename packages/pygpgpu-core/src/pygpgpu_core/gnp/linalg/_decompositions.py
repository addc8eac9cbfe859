"""``qr`` (Householder, LAPACK's reflectors), ``eigh``/``eigvalsh`` (two-sided Jacobi) and ``svd``
(one-sided Jacobi), over stacks of matrices as numpy.linalg takes them."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._array import DeviceArray
from .._complex_parts import real
from .._creation import ones, zeros
from .._dispatch import ops
from .._functions import concatenate, where
from .._patterns import eye
from .._views import broadcast_to, diagonal, swapaxes
from ._operands import compute_dtype, matrix_operand, real_dtype, square_operand, ufunc, work_copy
from ._results import EighResult, QRResult, SVDResult

__all__ = ["qr", "eigh", "eigvalsh", "svd", "svdvals", "adjoint"]

_QR_MODES = ("reduced", "complete", "r", "raw")


def qr(a: Any, mode: str = "reduced") -> Any:
    """numpy's ``qr``: ``QRResult(Q, R)`` for mode 'reduced' (Q (..., M, K), R (..., K, N), K =
    min(M, N)) or 'complete' (Q (..., M, M), R (..., M, N)); R alone for 'r'; ``(h, tau)`` for
    'raw' (h is LAPACK's geqrf output transposed, (..., N, M), as numpy returns it)."""
    if mode not in _QR_MODES:
        raise ValueError(f"Unrecognized mode '{mode}' (gnp.linalg.qr takes one of {', '.join(_QR_MODES)})")
    a = matrix_operand(a, "qr")
    dt = compute_dtype(a.dtype, op="qr")
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    w = work_copy(a, dt)
    tau = ops().householder_qr(w)
    if mode == "raw":
        return swapaxes(w.reshape(a.shape), -1, -2).copy(), tau.reshape(batch + (k,))
    q_cols = {"reduced": k, "complete": m, "r": 0}[mode]
    r_rows = m if mode == "complete" else k
    q, r = ops().form_qr(w, tau, q_cols, r_rows)
    r = r.reshape(batch + (r_rows, n))
    if mode == "r":
        return r
    return QRResult(q.reshape(batch + (m, q_cols)) if q is not None else zeros(batch + (m, 0), dt, a.device), r)


def _check_uplo(uplo: str) -> bool:
    if uplo not in ("L", "U"):
        raise ValueError(f"UPLO argument must be 'L' or 'U', got {uplo!r}")
    return uplo == "U"


def eigh(a: Any, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix, from its lower
    (``UPLO='L'``) or upper triangle. Each eigenvector's sign may differ from LAPACK's."""
    upper = _check_uplo(UPLO)
    a = square_operand(a, "eigh")
    dt = compute_dtype(a.dtype, op="eigh")
    w, v = ops().jacobi_eigh(work_copy(a, dt), upper)
    return EighResult(w.reshape(a.shape[:-1]), v.reshape(a.shape))


def eigvalsh(a: Any, UPLO: str = "L") -> DeviceArray:
    """The eigenvalues of each symmetric matrix, ascending (:func:`eigh` without the vectors)."""
    return eigh(a, UPLO).eigenvalues


def _complete(y: DeviceArray, s: DeviceArray, columns: int) -> DeviceArray:
    """``columns`` orthonormal columns per matrix of the stack ``y`` (batch, p, k): y's own where
    its singular value is nonzero, then an orthonormal completion (Householder QR of y: its Q
    spans y's nonzero columns first, with R's diagonal giving their signs)."""
    batch, p, k = y.shape
    w = work_copy(y, y.dtype)
    tau = ops().householder_qr(w)
    q, r = ops().form_qr(w, tau, p, p)
    diag = diagonal(r, 0, -2, -1)                         # (batch, k); real for complex too (LAPACK's real beta)
    signs = where(real(diag) < 0, -1.0, 1.0).astype(y.dtype)
    if columns > k:
        signs = concatenate([signs, ones((batch, columns - k), y.dtype, y.device)], axis=-1)
    q = q[:, :, :columns] * signs.reshape(batch, 1, columns)
    if columns == k:
        return q
    keep = broadcast_to((s > 0).reshape(batch, 1, k), (batch, p, k))
    head = where(keep, y, q[:, :, :k])
    return concatenate([head, q[:, :, k:]], axis=-1)


def adjoint(x: DeviceArray) -> DeviceArray:
    """The conjugate transpose of each matrix (a copy)."""
    t = swapaxes(x, -1, -2).copy()
    return ufunc("conjugate", t) if t.dtype.kind == "c" else t


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """numpy's ``svd``: ``SVDResult(U, S, Vh)`` with ``a == U[..., :K] * S[..., None, :] @ Vh[..., :K, :]``,
    S descending; ``full_matrices`` makes U (..., M, M) and Vh (..., N, N), else (..., M, K) and
    (..., K, N); ``compute_uv=False`` returns S alone. ``hermitian`` is accepted (the general
    algorithm runs). Singular vectors' signs may differ from LAPACK's."""
    a = matrix_operand(a, "svd")
    dt = compute_dtype(a.dtype, op="svd")
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    nb = int(np.prod(batch, dtype=np.int64))
    wide = m < n
    src = adjoint(a) if wide else a
    if k == 0 or nb == 0:
        s = zeros(batch + (k,), real_dtype(dt), a.device)
        if not compute_uv:
            return s
        mu, nv = (m, n) if full_matrices else (k, k)
        return SVDResult(broadcast_to(eye(m, mu, dtype=dt, device=a.device), batch + (m, mu)).copy(), s,
                         broadcast_to(eye(nv, n, dtype=dt, device=a.device), batch + (nv, n)).copy())
    u, s, vt = ops().jacobi_svd(work_copy(src, dt))          # of src: (nb, P, k), (nb, k), (nb, k, k)
    if not compute_uv:
        return s.reshape(batch + (k,))
    p = n if wide else m
    u = _complete(u, s, p if full_matrices else k)            # (nb, P, P or k)
    if wide:       # a^H = u s vh  ->  a = vh^H s u^H
        big_u, vh = adjoint(vt), adjoint(u)
    else:
        big_u, vh = u, vt
    return SVDResult(big_u.reshape(batch + big_u.shape[1:]), s.reshape(batch + (k,)), vh.reshape(batch + vh.shape[1:]))


def svdvals(x: Any, /) -> DeviceArray:
    """The singular values of each matrix, descending (``svd(x, compute_uv=False)``)."""
    return svd(x, compute_uv=False)
