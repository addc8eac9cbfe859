"""Modules (compiled programs) and kernels: hipModuleLoadData, hipModuleLaunchKernel.

Work sizes follow total-work semantics: ``global_size`` counts work items per dimension and
the grid is ``ceil(global / local)`` blocks, so the same (global, local) means the same
thing on every backend. Kernels must guard against the rounded-up tail.
"""
from __future__ import annotations

import ctypes
import threading
from ctypes import c_void_p
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from pygpgpu_core.errors import DriverError
from pygpgpu_core.handles import OwnedHandle
from pygpgpu_core.lowlevel import bracket_call, kernel_attribute, kernel_symbol, launch_with_host_arrays
from pygpgpu_core.worksize import block_geometry, work_dims

from ._codeobject import KernelInfo, code_object_problem, read_code_object
from ._context import Buffer
from ._hipapi import api, check
from ._launch import ArgumentLayout, check_param_sizes, kind_of_value
from .compiler import build_code_object

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["Program", "Kernel"]

# HIP limits every AMD GPU shares: 1024 threads a block side, 2**32 - 1 blocks a grid side.
_MAX_BLOCK_DIMS = (1024, 1024, 1024)
_MAX_GRID_DIMS = (2**32 - 1,) * 3
# AMD's dispatch packet counts work items (not blocks) in 32 bits per dimension
_MAX_WORK_PER_DIM = 2**32 - 1

# The runtime rejects the image: stale cache entry, or code built for another target.
_BAD_IMAGE = {200, 209, 218}


class Program(OwnedHandle):
    """A code object compiled for the context's device and loaded as a ``hipModule_t``."""

    _kind = "Program"

    def __init__(self, context: "Context", source: str, options: "Sequence[str] | str" = (), *, name: str = "",
                 binary: "bytes | None" = None):
        if not isinstance(source, str):
            raise TypeError(f"program source must be a str, got {type(source).__name__}")
        self.context = context
        self.source = source
        self.options = (options,) if isinstance(options, str) else tuple(options)
        self.name = name or "kernel.hip"
        self._kernels: dict[str, Kernel] = {}
        target = context.device.target
        if binary is not None:
            # A code object kept by the caller (e.g. __hipcache__/): the runtime judges it.
            self.code, self.build_log, self.cache_hit = bytes(binary), "", True
        else:
            self.code, self.build_log, self.cache_hit = build_code_object(source, target, self.options, name=self.name)
        try:
            self._handle = self._load(self.code)
        except DriverError as exc:
            if binary is not None or not (self.cache_hit and exc.code in _BAD_IMAGE):
                raise
            # A cached image this runtime rejects (written by another ROCm): rebuild it once.
            self.code, self.build_log, self.cache_hit = build_code_object(
                source, target, self.options, name=self.name, use_cache=False)
            self._handle = self._load(self.code)
        self.info = read_code_object(self.code).kernels
        context._adopt(self)

    def _load(self, code: bytes) -> int:
        problem = code_object_problem(code)  # checksums say nothing about structure: check it always
        if problem is not None:              # the runtime would read past the end and may crash
            raise DriverError("hip", "hipModuleLoadData", 200, "hipErrorInvalidImage",
                              f"the code object of {self.name!r} was not passed to the runtime: {problem}")
        self.context.activate()
        module = c_void_p()
        image = ctypes.create_string_buffer(code, len(code))
        status = api().hipModuleLoadData(ctypes.byref(module), image)
        if status:
            check(status, "hipModuleLoadData")
        return module.value

    @property
    def binary(self) -> bytes:
        """The loaded code object (an AMDGPU ELF), e.g. to keep beside a kernel file."""
        return self.code

    def kernel_names(self) -> list[str]:
        """The kernels this program defines (mangled C++ names unless declared extern "C")."""
        return list(self.info)

    def kernel(self, name: str) -> "Kernel":
        """The ``__global__`` function ``name`` (its C++ name or its symbol)."""
        self._require()
        kernel = self._kernels.get(name)
        if kernel is None or kernel.closed:
            symbol = kernel_symbol(name, list(self.info), f"HIP program {self.name!r}")
            kernel = self._kernels[name] = Kernel(self, name, symbol, self.info.get(symbol))
        return kernel

    def __getattr__(self, name: str) -> "Kernel":
        return kernel_attribute(self, name, "info" in self.__dict__)   # ``program.vecadd``

    def _release(self, handle: int) -> None:
        for kernel in self._kernels.values():
            kernel._handle = None
        self._kernels.clear()
        check(api().hipModuleUnload(c_void_p(handle)), "hipModuleUnload")

    def __repr__(self) -> str:
        return f"<HIP Program {self.name!r} on {self.context.device.selector}>"


def _refuse_float16(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.dtype == np.float16:
        raise TypeError("float16 arrays are not supported on HIP; use float32")
    return value


class Kernel(OwnedHandle):
    """One kernel of a Program (a ``hipFunction_t``). ``launch`` is convenient; ``launcher`` fast."""

    _kind = "Kernel"

    def __init__(self, program: Program, name: str, symbol: str, info: "KernelInfo | None" = None):
        self.program = program
        self.context = program.context
        self.name = name
        self.symbol = symbol
        self.param_sizes = info.param_sizes if info else None
        device = program.context.device
        self.max_threads = min(info.max_threads, device.max_work_group_size) if info and info.max_threads \
            else device.max_work_group_size
        self.static_shared = info.static_shared if info else 0
        func = c_void_p()
        self.context.activate()
        status = api().hipModuleGetFunction(ctypes.byref(func), c_void_p(program._require()), symbol.encode())
        check(status, f"hipModuleGetFunction({symbol!r})")
        self._handle = func.value
        self._launchers: dict = {}
        self._geometry_cache: dict = {}

    # --- checks -----------------------------------------------------------------------------
    def check_param_sizes(self, sizes: Sequence[int]) -> None:
        """TypeError unless the packed argument sizes match the kernel's parameters."""
        check_param_sizes(self.name, self.param_sizes, sizes)

    # --- work size --------------------------------------------------------------------------
    def geometry(self, global_size: Any, local_size: Any) -> "tuple[int, ...] | None":
        """``(gx, gy, gz, bx, by, bz)`` with grid = ceil(global / local), or None when there is no work."""
        try:
            return self._geometry_cache[global_size, local_size]
        except (KeyError, TypeError):
            pass
        device = self.context.device
        ndim = len(work_dims(global_size, "global_size"))
        geom = block_geometry(global_size, local_size, default_local=device.default_local_size(ndim),
                              max_threads=self.max_threads, max_block_dims=_MAX_BLOCK_DIMS,
                              max_grid_dims=_MAX_GRID_DIMS, device_name=device.name, kernel_name=self.name,
                              max_work_per_dim=_MAX_WORK_PER_DIM)
        try:
            if len(self._geometry_cache) > 4096:
                self._geometry_cache.clear()
            self._geometry_cache[global_size, local_size] = geom
        except TypeError:
            pass  # unhashable (lists): computed each time
        return geom

    # --- launching --------------------------------------------------------------------------
    def launcher(self, arg_types: Sequence[Any]) -> Callable[..., None]:
        """``fn(global_size, local_size, args)``: packs into one preallocated buffer, one launch call.

        ``arg_types``: ``"buffer"``, a numpy dtype, a ctypes type or ``"local"``. LocalMemory
        arguments are not kernel parameters on HIP: their byte counts add up to the launch's
        dynamic shared memory (``extern __shared__``).
        """
        self._require()
        try:
            key = tuple(arg_types)
            fn = self._launchers.get(key)
        except TypeError:
            key, fn = None, None
        if fn is None:
            fn = self._build_launcher(arg_types)
            if key is not None:
                self._launchers[key] = fn
        return fn

    def _build_launcher(self, arg_types: Sequence[Any]) -> Callable[..., None]:
        layout = ArgumentLayout(arg_types, self.name)
        self.check_param_sizes(layout.sizes)
        pack, params = layout.pack, layout.params
        hip_launch = api().hipModuleLaunchKernel
        stream = c_void_p(self.context.stream_handle())
        geometry = self.geometry
        lock = threading.Lock()
        kernel = self

        def launch(global_size, local_size, args: Sequence[Any]) -> None:
            geom = geometry(global_size, local_size)
            with lock:  # the argument storage is shared by every call of this launcher
                shared = pack(args)
                if geom is None:
                    return
                handle = kernel._handle
                if handle is None:
                    kernel._require()
                status = hip_launch(handle, geom[0], geom[1], geom[2], geom[3], geom[4], geom[5], shared, stream,
                                    params, None)
            if status:
                check(status, f"hipModuleLaunchKernel({kernel.name!r})")

        launch.layout = layout  # keeps the argument memory alive as long as the launcher
        return launch

    def launch(self, global_size: Any, local_size: Any, args: Sequence[Any]) -> None:
        """Launch once. numpy arrays are copied to the device and back (blocking)."""
        launch_with_host_arrays(self, global_size, local_size, args, kind_of_value=kind_of_value,
                                buffer_type=Buffer, adapt=_refuse_float16)

    def __getitem__(self, config: Any) -> Callable[..., None]:
        """``k[global](*args)`` or ``k[(global, local)](*args)`` (global/local: int or tuple)."""
        return bracket_call(self, config)

    def _release(self, handle: int) -> None:
        pass  # functions belong to their module; hipModuleUnload frees them

    def __repr__(self) -> str:
        return f"<HIP Kernel {self.name!r} on {self.context.device.selector}>"
