"""PyGPGPU: write GPU kernels in plain Python; run them on OpenCL, CUDA or HIP.

    from pygpgpu import kernel

    @kernel
    def saxpy(x, y, out, alpha):
        for i in range(out.shape[0]):
            out[i] = x[i] * alpha + y[i]

Everything here is loaded on first use, so ``import pygpgpu`` loads no vendor library,
scans no entry points and stays fast on machines with no GPU runtime at all.
"""
from __future__ import annotations

import importlib
from typing import Any

from pygpgpu_core._version import __version__ as __version__  # re-exported

# public name -> (module, attribute); attribute None means the module itself
_EXPORTS: dict[str, tuple[str, str | None]] = {
    # the decorator and its helpers
    "kernel": ("pygpgpu_translate", "kernel"),
    "KernelFunction": ("pygpgpu_translate", "KernelFunction"),
    "gpu": ("pygpgpu_core.gpu", None),
    "funcs": ("pygpgpu_core.funcs", None),
    # devices
    "available_devices": ("pygpgpu_core.registry", "available_devices"),
    "get_device": ("pygpgpu_core.registry", "get_device"),
    "diagnostics": ("pygpgpu._info", "diagnostics"),   # what `pygpgpu info --json` prints
    # low-level API types (protocols every backend implements)
    "Device": ("pygpgpu_core.protocols", "Device"),
    "Context": ("pygpgpu_core.protocols", "Context"),
    "Buffer": ("pygpgpu_core.protocols", "Buffer"),
    "Program": ("pygpgpu_core.protocols", "Program"),
    "Kernel": ("pygpgpu_core.protocols", "Kernel"),
    "Queue": ("pygpgpu_core.protocols", "Queue"),
    "LocalMemory": ("pygpgpu_core.protocols", "LocalMemory"),
    # errors
    "GPGPUError": ("pygpgpu_core.errors", "GPGPUError"),
    "BackendUnavailable": ("pygpgpu_core.errors", "BackendUnavailable"),
    "DeviceNotFound": ("pygpgpu_core.errors", "DeviceNotFound"),
    "CompileError": ("pygpgpu_core.errors", "CompileError"),
    "DriverError": ("pygpgpu_core.errors", "DriverError"),
    "ContextLost": ("pygpgpu_core.errors", "ContextLost"),
    "ClosedError": ("pygpgpu_core.errors", "ClosedError"),
    "PyGPGPUWarning": ("pygpgpu_core.errors", "PyGPGPUWarning"),
}

# import hooks for handwritten kernel files: touching the name installs the finder
_IMPORT_HOOKS = {"climport": "cl", "cuimport": "cu", "hipimport": "hip"}

_VECTOR_BASES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double")
_VECTOR_NAMES = tuple(f"{b}{w}" for b in _VECTOR_BASES for w in (2, 3, 4, 8, 16))
for _name in _VECTOR_NAMES:
    _EXPORTS[_name] = ("pygpgpu_core.vec_types", _name)

__all__ = sorted([*_EXPORTS, *_IMPORT_HOOKS, "__version__"])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module_name, attr = _EXPORTS[name]
        module = importlib.import_module(module_name)
        value = module if attr is None else getattr(module, attr)
    elif name in _IMPORT_HOOKS:
        from pygpgpu_core import kernel_files

        value = kernel_files.install(_IMPORT_HOOKS[name])
    else:
        raise AttributeError(f"module 'pygpgpu' has no attribute {name!r}")
    if name not in _IMPORT_HOOKS:
        globals()[name] = value  # cache: the next access is a plain attribute read
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
