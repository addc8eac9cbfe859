"""pygpgpu-translate: Python kernels translated to OpenCL C, CUDA C++ and HIP C++.

``@kernel`` turns a plain Python function into a GPU kernel specialized per argument types;
see the project README and docs/architecture.md.
"""
from __future__ import annotations

from pygpgpu_core._version import __version__ as __version__  # re-exported

from ._dialects import Dialect, register_dialect
from .target import Target, register_target
from ._kernel import ConfiguredKernel, Inspection, KernelFunction, kernel
from ._source import KernelTypeError
from ._state import stats

__all__ = ["kernel", "KernelFunction", "ConfiguredKernel", "Inspection", "KernelTypeError", "stats", "Dialect",
           "register_dialect", "Target", "register_target", "__version__"]
