"""cuBLAS through ctypes, loaded on the first matrix product: ``gemm`` multiplies row-major
float32/float64 matrices on a context's stream, or says it cannot (no cuBLAS installed) so that
the caller runs its own kernel.

The library is found by cuda-pathfinder (NVIDIA's ``nvidia-cublas`` pip wheel, conda, the CUDA
Toolkit), as NVRTC is; ``PYGPGPU_CUBLAS_LIB`` names a file to use instead, and
``PYGPGPU_CUBLAS=0`` keeps pygpgpu from using cuBLAS at all. Nothing is loaded at import.

cuBLAS is column-major; a row-major ``C = A @ B`` is the column-major ``C^T = B^T @ A^T``, and a
row-major matrix *is* its transpose in column-major order, so one ``gemm`` with the operands
swapped computes it, no transposing copy.
"""
from __future__ import annotations

import os
import threading
from ctypes import POINTER, byref, c_double, c_float, c_int, c_void_p
from typing import Any

import numpy as np

from pygpgpu_core.backend.library import Function, LazyLibrary
from pygpgpu_core.errors import BackendUnavailable, DriverError
from pygpgpu_core.forking import on_fork_child

__all__ = ["gemm", "cublas", "LIB_ENV", "USE_ENV"]

LIB_ENV = "PYGPGPU_CUBLAS_LIB"
USE_ENV = "PYGPGPU_CUBLAS"
_OP_N = 0                      # CUBLAS_OP_N

_GEMM_ARGS = (c_void_p, c_int, c_int, c_int, c_int, c_int)   # handle, transa, transb, m, n, k


def _gemm_function(symbol: str, scalar: Any) -> Function:
    # alpha, A, lda, B, ldb, beta, C, ldc (device pointers as integers)
    return Function(symbol, _GEMM_ARGS + (POINTER(scalar), c_void_p, c_int, c_void_p, c_int, POINTER(scalar),
                                          c_void_p, c_int))


_FUNCTIONS = {
    "create": Function("cublasCreate_v2", (POINTER(c_void_p),)),
    "set_stream": Function("cublasSetStream_v2", (c_void_p, c_void_p)),
    "sgemm": _gemm_function("cublasSgemm_v2", c_float),
    "dgemm": _gemm_function("cublasDgemm_v2", c_double),
}


_SYSTEM_NAMES = ["libcublas.so.13", "libcublas.so.12", "cublas64_13.dll", "cublas64_12.dll"]


def _locate() -> list[str]:
    """cuda-pathfinder's find first (pip wheels, conda, CUDA_PATH), then the dynamic loader's own
    search by name (a CUDA Toolkit on the library path)."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
    except ImportError:
        return _SYSTEM_NAMES
    try:
        return [load_nvidia_dynamic_lib("cublas").abs_path]
    except Exception:  # DynamicLibNotFoundError and friends: the loader may still know a system copy
        return _SYSTEM_NAMES


cublas = LazyLibrary("cuda", "cuBLAS (libcublas)", _FUNCTIONS, env=LIB_ENV, candidates=_locate, fork_unsafe=True,
                     hint=f"pip install nvidia-cublas (CUDA 13) or nvidia-cublas-cu12, or set {LIB_ENV} to a libcublas")
"""``cublas()`` is the bound cuBLAS functions; the first call loads the library."""

_lock = threading.Lock()
_handles: dict = {}            # context -> cublasHandle_t bound to the context's stream
_unavailable: "list[str]" = []  # why cuBLAS cannot be used (checked once)


def _forget_handles() -> None:
    _handles.clear()             # a forked child cannot use its parent's handles


on_fork_child(_forget_handles)


def _check(status: int, call: str) -> None:
    if status:
        raise DriverError("cuda", call, status, f"cublasStatus_t {status}",
                          f"cuBLAS failed; set {USE_ENV}=0 to use pygpgpu's own matmul kernel instead")


def available() -> bool:
    """Whether cuBLAS is installed and allowed (loads it on the first call)."""
    if _unavailable:
        return False
    if os.environ.get(USE_ENV, "1") == "0":
        return False                 # read every call: tests switch it
    try:
        cublas()
    except BackendUnavailable as exc:
        _unavailable.append(str(exc))
        return False
    return True


def _handle(context: Any) -> c_void_p:
    h = _handles.get(context)
    if h is None:
        with _lock:
            h = _handles.get(context)
            if h is None:
                calls = cublas()
                context.make_current()
                h = c_void_p()
                _check(calls.create(byref(h)), "cublasCreate")
                _check(calls.set_stream(h, context.queue.handle), "cublasSetStream")
                _handles[context] = h
    return h


def gemm(context: Any, dtype: np.dtype, m: int, n: int, k: int, a_ptr: int, b_ptr: int, c_ptr: int) -> bool:
    """``C = A @ B`` for C-contiguous ``A`` (m, k), ``B`` (k, n), ``C`` (m, n) of ``dtype``
    (float32 or float64) at the given device addresses, queued on the context's stream. False
    (nothing done) when cuBLAS is not installed, not allowed, or the type is not one it has."""
    if dtype not in (np.float32, np.float64) or not available() or max(m, n, k) >= 2**31:
        return False
    h = _handle(context)
    calls = cublas()
    context.make_current()
    scalar: Any = c_float if dtype == np.float32 else c_double
    fn, one, zero = calls.sgemm if dtype == np.float32 else calls.dgemm, scalar(1.0), scalar(0.0)
    # column-major C^T (n x m) = B^T (n x k) @ A^T (k x m); each row-major buffer is its transpose
    _check(fn(h, _OP_N, _OP_N, n, m, k, byref(one), b_ptr, n, a_ptr, k, byref(zero), c_ptr, n),
           "cublasSgemm" if dtype == np.float32 else "cublasDgemm")
    context._last_launch = ("cublasGemm", ())   # a later wait polls for it (and Ctrl-C names it), as for a kernel
    return True
