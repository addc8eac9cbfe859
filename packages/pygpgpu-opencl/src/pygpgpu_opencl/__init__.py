"""PyGPGPU's OpenCL backend: ctypes over the system's libOpenCL (ICD loader).

``backend`` is the object registered in the ``pygpgpu.backends`` entry-point group.
Importing this package loads no OpenCL library; enumerating devices does.

Low-level use::

    from pygpgpu_opencl import backend
    ctx = backend.devices()[0].context()
    prog = ctx.program(source)
    prog.kernel("vecadd")[(n, 256)](a_buf, b_buf, out_buf, np.int32(n))
"""
from __future__ import annotations

from pygpgpu_core.protocols import LocalMemory

from ._buffer import Buffer, aligned_empty
from ._context import Context, Queue
from ._device import Device, OpenCLBackend, Platform
from ._kernel import Kernel
from ._program import KernelNotFound, Program
from ._status import STATUS_NAMES, check, status_name

from pygpgpu_core._version import __version__ as __version__  # re-exported

backend = OpenCLBackend()
"""The ``opencl`` backend (``pygpgpu.backends`` entry point)."""


def devices() -> list[Device]:
    """Every OpenCL device, numbered flat across platforms, GPUs first and CPUs last (``opencl:0``...)."""
    return backend.devices()


__all__ = [
    "backend",
    "devices",
    "OpenCLBackend",
    "Platform",
    "Device",
    "Context",
    "Queue",
    "Buffer",
    "Program",
    "Kernel",
    "KernelNotFound",
    "LocalMemory",
    "aligned_empty",
    "check",
    "status_name",
    "STATUS_NAMES",
    "__version__",
]
