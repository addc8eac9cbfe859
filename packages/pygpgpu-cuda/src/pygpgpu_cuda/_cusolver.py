"""cuSOLVER's dense routines through ctypes, loaded on the first factorisation on a CUDA device:
Cholesky (``potrf``), LU with partial pivoting and its solve (``getrf``/``getrs``) and the
symmetric/Hermitian eigensolver (``syevd``/``heevd``), for float32/float64/complex64/complex128
matrices in column-major order at device addresses, on the context's stream. The row-major
arrays of gnp are mapped onto them by ``pygpgpu_translate.array_ops._linalg_vendor``.

The library is found by cuda-pathfinder (NVIDIA's ``nvidia-cusolver`` pip wheel for CUDA 13,
``nvidia-cusolver-cu12`` for CUDA 12, conda, the CUDA Toolkit); ``PYGPGPU_CUSOLVER_LIB`` names a
file to use instead, and ``PYGPGPU_CUSOLVER=0`` keeps pygpgpu from using cuSOLVER. Nothing is
loaded at import. Each routine writes LAPACK's ``info`` to a device address (read back only by
the caller that must raise numpy's LinAlgError); a failed call raises DriverError.
"""
from __future__ import annotations

import threading
from ctypes import POINTER, byref, c_int, c_void_p
from typing import Any

import numpy as np

from pygpgpu_core.backend.library import Function, LazyLibrary
from pygpgpu_core.errors import DriverError
from pygpgpu_core.forking import on_fork_child

from ._nvidia_libs import Availability, locator

__all__ = ["DenseSolver", "solver", "cusolver", "available", "LIB_ENV", "USE_ENV", "LOWER", "UPPER"]

LIB_ENV = "PYGPGPU_CUSOLVER_LIB"
USE_ENV = "PYGPGPU_CUSOLVER"

LOWER, UPPER = 0, 1                     # cublasFillMode_t
_OP_N, _OP_T = 0, 1                     # cublasOperation_t
_EIG_VECTORS = 1                        # CUSOLVER_EIG_MODE_VECTOR
_PREFIX = {np.dtype(np.float32): "S", np.dtype(np.float64): "D", np.dtype(np.complex64): "C",
           np.dtype(np.complex128): "Z"}
_STATUS = {1: "CUSOLVER_STATUS_NOT_INITIALIZED", 2: "CUSOLVER_STATUS_ALLOC_FAILED",
           3: "CUSOLVER_STATUS_INVALID_VALUE", 4: "CUSOLVER_STATUS_ARCH_MISMATCH",
           6: "CUSOLVER_STATUS_EXECUTION_FAILED", 7: "CUSOLVER_STATUS_INTERNAL_ERROR",
           8: "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED"}

_H, _P, _I = c_void_p, c_void_p, c_int


def _per_type(role: str, symbol: str, argtypes: tuple) -> dict:
    """One Function per type: ``symbol`` has ``{X}`` where cuSOLVER has S/D/C/Z (``{E}``: the
    eigensolver's name, syevd for real and heevd for complex)."""
    return {f"{role}_{x}": Function(symbol.format(X=x, E="syevd" if x in "SD" else "heevd"), argtypes)
            for x in "SDCZ"}


_FUNCTIONS = {
    "create": Function("cusolverDnCreate", (POINTER(c_void_p),)),
    "set_stream": Function("cusolverDnSetStream", (_H, _P)),
    # handle, uplo, n, A, lda, &lwork
    **_per_type("potrf_size", "cusolverDn{X}potrf_bufferSize", (_H, _I, _I, _P, _I, POINTER(c_int))),
    # handle, uplo, n, A, lda, work, lwork, info
    **_per_type("potrf", "cusolverDn{X}potrf", (_H, _I, _I, _P, _I, _P, _I, _P)),
    # handle, m, n, A, lda, &lwork
    **_per_type("getrf_size", "cusolverDn{X}getrf_bufferSize", (_H, _I, _I, _P, _I, POINTER(c_int))),
    # handle, m, n, A, lda, work, ipiv, info
    **_per_type("getrf", "cusolverDn{X}getrf", (_H, _I, _I, _P, _I, _P, _P, _P)),
    # handle, trans, n, nrhs, A, lda, ipiv, B, ldb, info
    **_per_type("getrs", "cusolverDn{X}getrs", (_H, _I, _I, _I, _P, _I, _P, _P, _I, _P)),
    # handle, jobz, uplo, n, A, lda, W, &lwork
    **_per_type("eig_size", "cusolverDn{X}{E}_bufferSize", (_H, _I, _I, _I, _P, _I, _P, POINTER(c_int))),
    # handle, jobz, uplo, n, A, lda, W, work, lwork, info
    **_per_type("eig", "cusolverDn{X}{E}", (_H, _I, _I, _I, _P, _I, _P, _P, _I, _P)),
}

cusolver = LazyLibrary("cuda", "cuSOLVER (libcusolver)", _FUNCTIONS, env=LIB_ENV, fork_unsafe=True,
                       candidates=locator("cusolver", ["libcusolver.so.12", "libcusolver.so.11", "cusolver64_12.dll",
                                                       "cusolver64_11.dll"]),
                       hint=f"pip install nvidia-cusolver (CUDA 13) or nvidia-cusolver-cu12, or set {LIB_ENV} "
                            "to a libcusolver")
"""``cusolver()`` is the bound cuSOLVER functions; the first call loads the library."""

available = Availability(cusolver, USE_ENV)
"""``available()``: whether cuSOLVER is installed and allowed (loads it on the first call)."""

_lock = threading.Lock()
_handles: dict = {}              # context -> cusolverDnHandle_t bound to the context's stream
calls_made = 0
"""How many cuSOLVER factorisations and solves this process queued (tests read it)."""

on_fork_child(_handles.clear)    # a forked child cannot use its parent's handles


def _check(status: int, call: str) -> None:
    if status:
        raise DriverError("cuda", call, status, _STATUS.get(status, f"cusolverStatus_t {status}"),
                          f"cuSOLVER failed; set {USE_ENV}=0 to use pygpgpu's own linalg kernels instead")


class DenseSolver:
    """cuSOLVER's routines on one context's stream, for one dtype; matrices are column-major
    ``n x n`` (leading dimension ``n``) at device addresses (ints)."""

    def __init__(self, context: Any, dtype: np.dtype):
        self.context = context
        self.dtype = dtype
        self._x = _PREFIX[dtype]
        with _lock:
            handle = _handles.get(context)
            if handle is None:
                calls = cusolver()
                context.make_current()
                handle = c_void_p()
                _check(calls.create(byref(handle)), "cusolverDnCreate")
                _check(calls.set_stream(handle, context.queue.handle), "cusolverDnSetStream")
                _handles[context] = handle
        self._handle = handle

    def _call(self, role: str, *args: Any) -> None:
        global calls_made
        fn = getattr(cusolver(), f"{role}_{self._x}")
        self.context.make_current()
        _check(fn(self._handle, *args), fn.__name__)
        if not role.endswith("_size"):
            self.context._last_launch = (fn.__name__, ())   # a later wait polls for it, as for a kernel
            calls_made += 1

    def _size(self, role: str, *args: Any) -> int:
        lwork = c_int()
        self._call(role, *args, byref(lwork))
        return lwork.value

    def potrf_workspace(self, uplo: int, n: int, a: int) -> int:
        """Elements of ``dtype`` :meth:`potrf` needs as workspace."""
        return self._size("potrf_size", uplo, n, a, n)

    def potrf(self, uplo: int, n: int, a: int, work: int, lwork: int, info: int) -> None:
        """Cholesky factor of the ``uplo`` triangle of ``a`` in place; ``info`` (int32) > 0 where
        the matrix is not positive definite."""
        self._call("potrf", uplo, n, a, n, work, lwork, info)

    def getrf_workspace(self, n: int, a: int) -> int:
        return self._size("getrf_size", n, n, a, n)

    def getrf(self, n: int, a: int, work: int, ipiv: int, info: int) -> None:
        """LU factors of ``a`` in place, pivots (int32, n) to ``ipiv``; ``info`` > 0 where singular."""
        self._call("getrf", n, n, a, n, work, ipiv, info)

    def getrs(self, transposed: bool, n: int, nrhs: int, a: int, ipiv: int, b: int, info: int) -> None:
        """Solve ``op(A) X = B`` for column-major ``b`` (n x nrhs) in place from :meth:`getrf`'s factors."""
        self._call("getrs", _OP_T if transposed else _OP_N, n, nrhs, a, n, ipiv, b, n, info)

    def eigh_workspace(self, uplo: int, n: int, a: int, w: int) -> int:
        return self._size("eig_size", _EIG_VECTORS, uplo, n, a, n, w)

    def eigh(self, uplo: int, n: int, a: int, w: int, work: int, lwork: int, info: int) -> None:
        """Eigenvalues (ascending, real) to ``w`` and eigenvectors (columns) over ``a``."""
        self._call("eig", _EIG_VECTORS, uplo, n, a, n, w, work, lwork, info)


def solver(context: Any, dtype: np.dtype) -> "DenseSolver | None":
    """cuSOLVER for ``dtype`` on ``context``, or None where it is not installed or not allowed, or
    the type is not one it has (the caller runs its own kernels)."""
    if dtype not in _PREFIX or not available():
        return None
    return DenseSolver(context, dtype)
