"""PyGPGPU: write GPU kernels in plain Python; run them on OpenCL, CUDA or HIP.

    from pygpgpu import kernel

    @kernel
    def saxpy(x, y, out, alpha):
        for i in range(out.shape[0]):
            out[i] = x[i] * alpha + y[i]

Everything here is loaded on first use, so ``import pygpgpu`` loads no vendor library,
scans no entry points and stays fast on machines with no GPU runtime at all.

``pygpgpu.kernel`` is the decorator. ``from pygpgpu.kernel import KernelFunction`` also works:
``pygpgpu.kernel`` is registered as a module name too (see :func:`_kernel_module`), with no
submodule file of that name, so importing through it never rebinds the decorator.
"""
from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from pygpgpu_core._version import __version__ as __version__  # re-exported

if TYPE_CHECKING:
    # What __getattr__ below returns, spelled out for mypy and pyright (tests/test_typing.py checks
    # that these names are exactly _EXPORTS and the import hooks).
    from pygpgpu_core import funcs as funcs
    from pygpgpu_core.array_types import Array as Array
    from pygpgpu_core.array_types import ArrayLike as ArrayLike
    from pygpgpu_core import gpu as gpu
    from pygpgpu_core.cache import CacheWarning as CacheWarning
    from pygpgpu_core.cache import cache_info as cache_info
    from pygpgpu_core.cache import clear_cache as clear_cache
    from pygpgpu_core.errors import BackendUnavailable as BackendUnavailable
    from pygpgpu_core.errors import ClosedError as ClosedError
    from pygpgpu_core.errors import CompileError as CompileError
    from pygpgpu_core.errors import ContextLost as ContextLost
    from pygpgpu_core.errors import DeviceNotFound as DeviceNotFound
    from pygpgpu_core.errors import DriverError as DriverError
    from pygpgpu_core.errors import GPGPUError as GPGPUError
    from pygpgpu_core.errors import PyGPGPUWarning as PyGPGPUWarning
    from pygpgpu_core.forking import ForkedProcessError as ForkedProcessError
    from pygpgpu_core.kernel_files import KernelFileFinder
    from pygpgpu_core.protocols import Buffer as Buffer
    from pygpgpu_core.protocols import Context as Context
    from pygpgpu_core.protocols import Device as Device
    from pygpgpu_core.protocols import Kernel as Kernel
    from pygpgpu_core.protocols import LocalMemory as LocalMemory
    from pygpgpu_core.protocols import Program as Program
    from pygpgpu_core.protocols import Queue as Queue
    from pygpgpu_core.registry import available_devices as available_devices
    from pygpgpu_core.registry import get_device as get_device
    from pygpgpu_core.scoped_device import device as device
    from pygpgpu_core.vec_types import char2 as char2, char3 as char3, char4 as char4, char8 as char8
    from pygpgpu_core.vec_types import char16 as char16, uchar2 as uchar2, uchar3 as uchar3, uchar4 as uchar4
    from pygpgpu_core.vec_types import uchar8 as uchar8, uchar16 as uchar16, short2 as short2, short3 as short3
    from pygpgpu_core.vec_types import short4 as short4, short8 as short8, short16 as short16, ushort2 as ushort2
    from pygpgpu_core.vec_types import ushort3 as ushort3, ushort4 as ushort4, ushort8 as ushort8
    from pygpgpu_core.vec_types import ushort16 as ushort16, int2 as int2, int3 as int3, int4 as int4
    from pygpgpu_core.vec_types import uint2 as uint2, uint3 as uint3, uint4 as uint4
    from pygpgpu_core.vec_types import long2 as long2, long3 as long3, long4 as long4
    from pygpgpu_core.vec_types import long8 as long8, long16 as long16, ulong2 as ulong2, ulong3 as ulong3
    from pygpgpu_core.vec_types import ulong4 as ulong4, ulong8 as ulong8, ulong16 as ulong16, float2 as float2
    from pygpgpu_core.vec_types import float3 as float3, float4 as float4, float8 as float8
    from pygpgpu_core.vec_types import double2 as double2, double3 as double3, double4 as double4
    from pygpgpu_core.vec_types import double8 as double8, double16 as double16
    from pygpgpu_translate import ConfiguredKernel as ConfiguredKernel
    from pygpgpu_translate import Inspection as Inspection
    from pygpgpu_translate import KernelFunction as KernelFunction
    from pygpgpu_translate import kernel as kernel
    from pygpgpu_translate.array_ops._user_reduce import reduce as reduce

    from . import vec as vec
    from ._info import diagnostics as diagnostics

    climport: KernelFileFinder
    cuimport: KernelFileFinder
    hipimport: KernelFileFinder

# public name -> (module, attribute); attribute None means the module itself
_EXPORTS: dict[str, tuple[str, str | None]] = {
    # the decorator and its helpers
    "kernel": ("pygpgpu_translate", "kernel"),
    "KernelFunction": ("pygpgpu_translate", "KernelFunction"),
    "ConfiguredKernel": ("pygpgpu_translate", "ConfiguredKernel"),
    "Inspection": ("pygpgpu_translate", "Inspection"),
    "reduce": ("pygpgpu_translate.array_ops._user_reduce", "reduce"),   # @pygpgpu.reduce(identity=...)
    "gpu": ("pygpgpu_core.gpu", None),
    "funcs": ("pygpgpu_core.funcs", None),
    # annotations: a numpy array or a device array (pygpgpu.Array[np.float32], pygpgpu.ArrayLike)
    "Array": ("pygpgpu_core.array_types", "Array"),
    "ArrayLike": ("pygpgpu_core.array_types", "ArrayLike"),
    "vec": ("pygpgpu.vec", None),     # the 50 vector types (float4, int8, ...) under their OpenCL names
    # devices
    "available_devices": ("pygpgpu_core.registry", "available_devices"),
    "get_device": ("pygpgpu_core.registry", "get_device"),
    "device": ("pygpgpu_core.scoped_device", "device"),     # with pygpgpu.device("cuda:0"): a scoped default
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
    "ForkedProcessError": ("pygpgpu_core.forking", "ForkedProcessError"),
    # the disk cache: where it is, what it holds, emptying it (what a "clear the cache" command calls)
    "clear_cache": ("pygpgpu_core.cache", "clear_cache"),
    "cache_info": ("pygpgpu_core.cache", "cache_info"),
    "CacheWarning": ("pygpgpu_core.cache", "CacheWarning"),
}

# import hooks for handwritten kernel files: touching ``pygpgpu.<suffix>import`` installs the finder
# for every kernel-file kind (pygpgpu_core.kernel_files.KINDS, derived from the registered languages,
# so a plug-in's language has its hook too). The built-ins' are named here only for __all__ and the
# type checkers' declarations above, so that ``import pygpgpu`` need not load the C parser to list
# them (tests/test_backend_names.py checks they are KINDS's built-ins).
_IMPORT_HOOKS = ("climport", "cuimport", "hipimport")

_VECTOR_BASES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double")
_VECTOR_NAMES = tuple(f"{b}{w}" for b in _VECTOR_BASES for w in (2, 3, 4, 8, 16))
# vector names that are also numpy scalar types (pygpgpu_core.vec_types.NUMPY_SCALAR_CLASHES, spelled
# out so that importing pygpgpu imports no numpy): pygpgpu.int8(1) was an 8-wide vector, a trap for
# numpy users. They stay reachable here with a DeprecationWarning; pygpgpu.vec has them all.
_DEPRECATED_VECTORS = ("int8", "int16", "uint8", "uint16", "float16")
for _name in _VECTOR_NAMES:
    if _name not in _DEPRECATED_VECTORS:
        _EXPORTS[_name] = ("pygpgpu_core.vec_types", _name)

__all__ = sorted([*_EXPORTS, *_IMPORT_HOOKS, "__version__"])  # noqa: PLE0605 (a list, built from the tables)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module_name, attr = _EXPORTS[name]
        module = importlib.import_module(module_name)
        value = module if attr is None else getattr(module, attr)
    elif name.endswith("import") and _is_import_hook(name):
        from pygpgpu_core import kernel_files

        return kernel_files.install(name[:-len("import")])   # not cached: each touch installs the finder
    elif name in _DEPRECATED_VECTORS:
        import warnings

        warnings.warn(
            f"pygpgpu.{name} is the {''.join(c for c in name if c.isdigit())}-wide vector type, not numpy's scalar np.{name}; "
            f"this spelling is deprecated: write pygpgpu.vec.{name} (from pygpgpu.vec import {name}) for the "
            f"vector, or np.{name} for one number", DeprecationWarning, stacklevel=2)
        return importlib.import_module("pygpgpu.vec").__dict__[name]   # not cached: each use warns
    else:
        raise AttributeError(f"module 'pygpgpu' has no attribute {name!r}")
    globals()[name] = value  # cache: the next access is a plain attribute read
    return value


def _is_import_hook(name: str) -> bool:
    if name in _IMPORT_HOOKS:
        return True
    from pygpgpu_core.kernel_files import KINDS

    return name[:-len("import")] in KINDS


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _kernel_module() -> types.ModuleType:
    """The module ``pygpgpu.kernel`` (``from pygpgpu.kernel import KernelFunction``, the spelling the
    product documents): the translator's public names, imported when first read.

    It is put into ``sys.modules`` under that name when ``pygpgpu`` is imported, so the import
    system finds it there and never loads a file or sets the attribute ``pygpgpu.kernel``, which
    stays the decorator. Type checkers see the names at the top level: ``from pygpgpu import
    KernelFunction``."""
    module = types.ModuleType(f"{__name__}.kernel", _kernel_module.__doc__)

    def module_getattr(name: str) -> Any:
        translate = importlib.import_module("pygpgpu_translate")
        if name == "__all__":
            return list(translate.__all__)
        return getattr(translate, name)

    module.__getattr__ = module_getattr  # type: ignore[method-assign]  # PEP 562 on a module object
    return module


sys.modules.setdefault(f"{__name__}.kernel", _kernel_module())
