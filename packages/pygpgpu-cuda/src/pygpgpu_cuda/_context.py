"""A device's context (the retained primary context, shared with CuPy/torch/Numba), its stream
and its buffers: the driver kit's classes with what is CUDA's own."""
from __future__ import annotations

from ctypes import byref, c_void_p
from typing import Any

import numpy as np

from pygpgpu_core.backend.driver import DriverBuffer, DriverContext, DriverStream

from ._program import Program

__all__ = ["Context", "Stream", "Buffer"]

_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, _CU_MEMORYTYPE_HOST = 2, 1


class Stream(DriverStream):
    """The context's CUstream (blocking, so it stays ordered with the legacy default stream)."""


class Buffer(DriverBuffer):
    """``nbytes`` of device memory; ``ptr`` is the CUdeviceptr as an int (None once closed)."""

    __slots__ = ()

    def cuda_array_interface(self, shape: Any, dtype: Any, strides: Any = None, readonly: bool = False) -> dict:
        """A ``__cuda_array_interface__`` (version 3) dict describing this buffer as an array."""
        self._live()
        dtype = np.dtype(dtype)
        shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        return {
            "shape": shape,
            "typestr": dtype.str,
            "descr": dtype.descr,
            "data": (self.ptr, readonly),
            "strides": None if strides is None else tuple(int(s) for s in strides),
            "version": 3,
            "stream": self.context.queue.handle.value or 1,  # 1 = the legacy default stream
        }


class Context(DriverContext):
    """The primary context of one device, retained once, plus one stream."""

    buffer_class = Buffer
    stream_class = Stream
    program_class = Program
    pointer_host_memory = (_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, _CU_MEMORYTYPE_HOST)

    def _retain(self) -> c_void_p:
        handle = c_void_p()
        calls = self.calls
        calls.check(calls.primary_context_retain(byref(handle), self.device.ordinal), calls.primary_context_retain)
        return handle

    def _release(self) -> None:
        self.calls.primary_context_release(self.device.ordinal)

    @property
    def handle(self) -> int:
        """The CUcontext as an int."""
        return self.current_token.value or 0


    def gemm(self, a: Any, b: Any, c: Any) -> bool:
        """``c = a @ b`` for 2-D device arrays of one float32/float64 type in this context through
        cuBLAS, queued on this context's stream; False (nothing done) where cuBLAS is not installed
        (``pygpgpu_cuda._cublas``) or an operand is not C-contiguous, so the caller makes it
        contiguous on the device or runs its own kernel."""
        from ._cublas import gemm    # loads nothing until the first product

        if not all(x.is_contiguous and x.buffer.context is self for x in (a, b, c)):
            return False
        (m, k), n = a.shape, b.shape[1]
        return gemm(self, np.dtype(c.dtype), m, n, k, *(int(x.buffer.ptr) + x.offset for x in (a, b, c)))

    def fft_plan(self, kind: str, shape: tuple, dtype: Any, axis: int, n: int) -> Any:
        """What runs the unnormalised length-``n`` DFT along ``axis`` of a C-contiguous array of
        ``shape`` and ``dtype`` through cuFFT (``run(x, out)``, queued on this context's stream;
        ``pygpgpu_cuda._cufft``), or None where cuFFT is not installed or turned off, so the
        caller runs its own kernels."""
        from . import _cufft         # loads nothing until the first transform

        return _cufft.plan(self, kind, tuple(shape), np.dtype(dtype), axis, n)

    def dense_solver(self, dtype: Any) -> Any:
        """cuSOLVER's dense routines for ``dtype`` on this context's stream
        (``pygpgpu_cuda._cusolver.DenseSolver``), or None where cuSOLVER is not installed or turned
        off, so the caller runs its own kernels."""
        from . import _cusolver      # loads nothing until the first factorisation

        return _cusolver.solver(self, np.dtype(dtype))
