"""cuSOLVER in front of our own linalg kernels on CUDA (``context.dense_solver``: where cuSOLVER is
installed and PYGPGPU_CUSOLVER is not 0; other backends have none and run our kernels). Each
function takes the fresh C-contiguous (batch, n, n) work array the kernel would take, runs the
routine once per matrix at its own address, and returns what the kernel returns, or None (no
vendor solver: nothing done).

gnp's matrices are row-major, cuSOLVER's column-major: the memory of ``A`` is, to cuSOLVER, ``A``
transposed. So the lower triangle numpy reads is cuSOLVER's upper one, Cholesky's factor of that
triangle is numpy's L as it lies, an LU solve factors ``A^T`` and solves with ``op = T``, and
eigenvectors come back as rows (transposed, and for complex matrices conjugated, on the device).
LAPACK's ``info`` of each matrix is written to a device array, read back only by the caller that
raises LinAlgError, as for our kernels.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

__all__ = ["vendor_cholesky_lower", "vendor_lu_solve", "vendor_eigh"]

_UPPER, _LOWER = 1, 0            # cublasFillMode_t of the column-major view


def _solver(a: DeviceArray) -> Any:
    get = getattr(a.context, "dense_solver", None)
    if get is None or a.ndim != 3 or a.shape[1] >= 2**15 or a.shape[1] == 0:
        return None              # (n * n must stay an int for cuSOLVER's 32-bit sizes)
    return get(a.dtype)


def _address(x: DeviceArray, index: int = 0, per: int = 0) -> int:
    return int(x.buffer.ptr) + x.offset + index * per * x.dtype.itemsize


def _swap_last(x: DeviceArray) -> DeviceArray:
    from pygpgpu_core.gnp._views import swapaxes

    return swapaxes(x, -1, -2)


def _new(shape: tuple, dtype: Any, like: DeviceArray) -> DeviceArray:
    return DeviceArray(shape, np.dtype(dtype), like.context)


def vendor_cholesky_lower(a: DeviceArray) -> "DeviceArray | None":
    """:func:`._linalg_cholesky.cholesky_lower` through cuSOLVER's potrf, or None."""
    solver = _solver(a)
    if solver is None:
        return None
    from pygpgpu_core.gnp._patterns import tril

    batch, n = a.shape[0], a.shape[1]
    info = _new((batch,), np.int32, a)
    lwork = solver.potrf_workspace(_UPPER, n, _address(a))
    work = _new((max(lwork, 1),), a.dtype, a)
    for i in range(batch):
        solver.potrf(_UPPER, n, _address(a, i, n * n), _address(work), lwork, _address(info, i, 1))
    a[...] = tril(a)             # potrf leaves the other triangle as it was; numpy's L has zeros there
    return info


def vendor_lu_solve(a: DeviceArray, b: "DeviceArray | None") -> "tuple[DeviceArray, DeviceArray, DeviceArray] | None":
    """:func:`._linalg_lu.lu_solve` with a right-hand side through cuSOLVER's getrf and getrs
    (``b`` overwritten by the solution), or None (also for determinants only, ``b`` None: our
    kernel computes sign and log-determinant). The sign and log-determinant returned are NaN: the
    callers that solve use only ``info``."""
    solver = _solver(a) if b is not None and b.size else None
    if solver is None or b is None:
        return None
    from ._elementwise import fill

    batch, n, k = b.shape
    real = np.dtype(a.dtype.char.lower())
    info = _new((batch,), np.int32, a)
    solve_info = _new((batch,), np.int32, a)
    pivots = _new((batch, n), np.int32, a)
    lwork = solver.getrf_workspace(n, _address(a))
    work = _new((max(lwork, 1),), a.dtype, a)
    columns = _swap_last(b).copy()          # (batch, k, n) row-major: each b column-major
    for i in range(batch):
        solver.getrf(n, _address(a, i, n * n), _address(work), _address(pivots, i, n), _address(info, i, 1))
        solver.getrs(True, n, k, _address(a, i, n * n), _address(pivots, i, n), _address(columns, i, n * k),
                     _address(solve_info, i, 1))
    b[...] = _swap_last(columns)
    sign, logdet = _new((batch,), a.dtype, a), _new((batch,), real, a)
    fill(sign, np.nan)
    fill(logdet, np.nan)
    return sign, logdet, info


def vendor_eigh(a: DeviceArray, upper: bool) -> "tuple[DeviceArray, DeviceArray] | None":
    """:func:`._linalg_jacobi.jacobi_eigh` through cuSOLVER's syevd/heevd, or None."""
    solver = _solver(a)
    if solver is None:
        return None
    from ._elementwise import ufunc_call

    batch, n = a.shape[0], a.shape[1]
    uplo = _LOWER if upper else _UPPER      # numpy's lower triangle is the column-major upper one
    w = _new((batch, n), a.dtype.char.lower(), a)
    info = _new((batch,), np.int32, a)
    lwork = solver.eigh_workspace(uplo, n, _address(a), _address(w))
    work = _new((max(lwork, 1),), a.dtype, a)
    for i in range(batch):
        solver.eigh(uplo, n, _address(a, i, n * n), _address(w, i, n), _address(work), lwork, _address(info, i, 1))
    # the eigenvectors of A^T (= conj(A)) lie in a's rows: numpy's columns are their conjugates
    vectors = _swap_last(a)
    v = ufunc_call("conjugate", (vectors,)) if a.dtype.kind == "c" else vectors.copy()
    return w, v
