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


    def gemm(self, dtype: Any, m: int, n: int, k: int, a_ptr: int, b_ptr: int, c_ptr: int) -> bool:
        """``C = A @ B`` of C-contiguous float32/float64 matrices at these device addresses
        through cuBLAS, queued on this context's stream; False (nothing done) where cuBLAS is not
        installed (``pygpgpu_cuda._cublas``), so the caller runs its own kernel."""
        from ._cublas import gemm    # loads nothing until the first product

        return gemm(self, np.dtype(dtype), m, n, k, a_ptr, b_ptr, c_ptr)
