"""pygpgpu-hip: the HIP backend of PyGPGPU (ctypes over libamdhip64 and hiprtc).

Importing this package loads no vendor library; the HIP runtime is opened when devices are
enumerated, and hiprtc (or the offline clang) when something is compiled. The device, context,
buffer, program and kernel classes are the driver kit's (``pygpgpu_core.backend.driver``),
shared with the CUDA backend under the same names.
"""
from __future__ import annotations

from pygpgpu_core._version import __version__ as __version__  # re-exported

from .compiler import (  # noqa: E402
    UnsupportedTarget,
    build_code_object,
    compile_cached,
    compile_hip,
    compile_with_log,
    compiler_identity,
    compiler_kind,
    hiprtc_version,
    supported_targets,
)

__all__ = [
    "__version__",
    "compile_hip",
    "compile_cached",
    "compile_with_log",
    "build_code_object",
    "hiprtc_version",
    "compiler_kind",
    "compiler_identity",
    "supported_targets",
    "UnsupportedTarget",
]

from ._backend import HipBackend, backend  # noqa: E402
from ._context import Buffer, Context, Stream  # noqa: E402
from ._device import Device  # noqa: E402
from ._program import Kernel, Program  # noqa: E402

__all__ += ["backend", "HipBackend", "Device", "Context", "Stream", "Buffer", "Program", "Kernel"]
