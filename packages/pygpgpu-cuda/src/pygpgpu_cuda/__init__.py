"""pygpgpu-cuda: the CUDA backend of PyGPGPU (driver API + NVRTC through ctypes).

Importing this package loads no vendor library: libcuda is opened by the first
``backend.devices()`` call and NVRTC by the first compile. The device, context, buffer,
program and kernel classes are the driver kit's (``pygpgpu_core.backend.driver``), shared with
the HIP backend under the same names.
"""
from __future__ import annotations

from pygpgpu_core._version import __version__ as __version__  # re-exported
from pygpgpu_core.backend.args import ArgKind

from ._backend import CudaBackend, backend
from ._context import Buffer, Context, Stream
from ._device import Device
from ._nvrtc import compile_cuda, nvrtc_version, supported_archs
from ._program import Kernel, Program

# The names of releases before the driver kit, kept working.
CudaDevice = Device
CudaContext = Context
CudaStream = Stream
CudaBuffer = Buffer
CudaProgram = Program
CudaKernel = Kernel

__all__ = [
    "backend",
    "compile_cuda",
    "nvrtc_version",
    "supported_archs",
    "CudaBackend",
    "Device",
    "Context",
    "Stream",
    "Buffer",
    "Program",
    "Kernel",
    "ArgKind",
    "CudaDevice",
    "CudaContext",
    "CudaStream",
    "CudaBuffer",
    "CudaProgram",
    "CudaKernel",
]
