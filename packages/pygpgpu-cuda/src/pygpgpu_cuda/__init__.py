"""pygpgpu-cuda: the CUDA backend of PyGPGPU (driver API + NVRTC through ctypes).

Importing this package loads no vendor library: libcuda is opened by the first
``backend.devices()`` call and NVRTC by the first compile.
"""
from __future__ import annotations

from pygpgpu_core._version import __version__ as __version__  # re-exported

from ._backend import CudaBackend, backend
from ._context import CudaContext, CudaStream
from ._device import CudaDevice
from ._launch import ArgKind
from ._memory import CudaBuffer
from ._nvrtc import compile_cuda, nvrtc_version, supported_archs
from ._program import CudaKernel, CudaProgram

__all__ = [
    "backend",
    "compile_cuda",
    "nvrtc_version",
    "supported_archs",
    "CudaBackend",
    "CudaDevice",
    "CudaContext",
    "CudaStream",
    "CudaBuffer",
    "CudaProgram",
    "CudaKernel",
    "ArgKind",
]
