"""Programs (NVRTC-compiled, disk-cached, loaded modules) and their kernels."""
from __future__ import annotations

import time
from ctypes import byref, c_int, c_size_t, c_void_p
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from pygpgpu_core.cache import DiskCache, cache_key
from pygpgpu_core.handles import Closeable
from pygpgpu_core.logs import get_logger, log_build
from pygpgpu_core.errors import ClosedError, DriverError

from . import __version__
from ._cubin import entry_names, image_problem, is_cubin
from ._device import DEFAULT_LOCAL_SIZE
from ._driver import check, driver_version
from pygpgpu_core.lowlevel import bracket_call, kernel_attribute, kernel_symbol, launch_with_host_arrays
from pygpgpu_core.worksize import block_geometry, work_dims

from ._launch import build_launcher, kind_of_value
from ._memory import CudaBuffer
from ._nvrtc import compile_with_log, nvrtc_version


if TYPE_CHECKING:
    from ._context import CudaContext

__all__ = ["CudaProgram", "CudaKernel", "build_binary"]

_CACHE = DiskCache("cuda")
logger = get_logger("cuda")
_BAD_IMAGE = {200, 209, 218, 222}  # invalid image / no binary for GPU / PTX too new
_FUNC_MAX_THREADS, _FUNC_SHARED_STATIC, _FUNC_NUM_REGS, _FUNC_MAX_DYNAMIC_SHARED = 0, 1, 4, 8


def build_binary(source: str, arch: str, options: Sequence[str], name: str, *, use_cache: bool = True
                 ) -> tuple[bytes, str, bool]:
    """``(image, log, cache_hit)``: the CUBIN/PTX for ``arch``, from the disk cache when possible.

    The key holds everything that changes the output: source, options, arch, NVRTC version,
    driver version and package version (DESIGN §6).
    """
    from ._driver import _driver

    drv = driver_version() if _driver is not None else None
    key = cache_key("cuda-module", source, tuple(options), name, arch, nvrtc_version(), drv, __version__)
    if use_cache:
        image = _CACHE.get(key, ".cubin")
        if image is not None:
            logger.debug("binary cache hit: %s for %s (key %s)", name, arch, key)
            return image, "", True
    logger.debug("binary cache miss: compiling %s for %s with NVRTC (key %s)", name, arch, key)
    started = time.perf_counter()
    image, log = compile_with_log(source, arch, options, name=name or "kernel.cu")
    log_build(logger, name or "kernel.cu", arch, time.perf_counter() - started, key)
    _CACHE.put(key, image, ".cubin")
    return image, log, False


class CudaProgram(Closeable):
    """A CUDA C++ source compiled for one device and loaded as a module."""

    def __init__(self, context: "CudaContext", source: str, options: Sequence[str] = (), *, name: str = "",
                 binary: bytes | None = None):
        if not isinstance(source, str):
            raise TypeError(f"program source must be str, got {type(source).__name__}")
        self.context = context
        self.source = source
        self.options = tuple(str(o) for o in options)
        self.name = name or "kernel.cu"
        self.handle = c_void_p()
        self._kernels: dict[str, CudaKernel] = {}
        arch = context.device.arch
        if binary is not None:  # a CUBIN/PTX stored by the caller (e.g. __cucache__ beside a .cu file)
            image, self.build_log, self.cache_hit = bytes(binary), "", True
        else:
            image, self.build_log, self.cache_hit = build_binary(source, arch, self.options, self.name)
        try:
            self._load(image)
        except DriverError as exc:
            if not (self.cache_hit and exc.code in _BAD_IMAGE and source):
                raise
            # A cached image the driver rejects (e.g. written by another driver): rebuild it.
            image, self.build_log, self.cache_hit = build_binary(source, arch, self.options, self.name, use_cache=False)
            self._load(image)
        self.binary = image
        self.binary_kind = "cubin" if is_cubin(image) else "ptx"
        self.entry_points = entry_names(image)
        context._track(self)

    def _load(self, image: bytes) -> None:
        ctx = self.context
        problem = image_problem(image)      # checksums say nothing about structure: check it always
        if problem is not None:              # the driver would read past the end and may crash
            raise DriverError("cuda", "cuModuleLoadData", 200, "CUDA_ERROR_INVALID_IMAGE",
                              f"the module image of {self.name!r} was not passed to the driver: {problem}")
        ctx.make_current()
        status = ctx.drv.cuModuleLoadData(byref(self.handle), image)
        if status:
            check(status, "cuModuleLoadData", "the driver rejected the compiled module for "
                  f"{ctx.device.arch} ({ctx.device.name})")

    @property
    def closed(self) -> bool:
        return not self.handle

    def kernel_names(self) -> list[str]:
        """The kernels this program defines (mangled C++ names unless declared extern "C")."""
        return list(self.entry_points)

    def kernel(self, name: str) -> "CudaKernel":
        """The ``__global__`` function ``name`` (its C++ name or its mangled symbol)."""
        if self.closed:
            raise ClosedError(f"CUDA program {self.name!r}")
        k = self._kernels.get(name)
        if k is None:
            symbol = kernel_symbol(name, list(self.entry_points), f"CUDA program {self.name!r}")
            k = CudaKernel(self, name, symbol)
            self._kernels[name] = k
        return k

    def __getattr__(self, name: str) -> "CudaKernel":
        return kernel_attribute(self, name, "entry_points" in self.__dict__)   # ``program.vecadd``

    def close(self) -> None:
        """Unload the module (idempotent). Launchers of its kernels then raise ClosedError."""
        for k in self._kernels.values():
            k.handle.value = None  # launchers hold this very c_void_p: they now see NULL
        self._kernels.clear()
        handle, self.handle = self.handle, c_void_p()
        if handle and not self.context.closed:
            self.context.make_current()
            self.context.drv.cuModuleUnload(handle)


    def __repr__(self) -> str:
        return f"<CudaProgram {self.name!r} {getattr(self, 'binary_kind', '?')} on {self.context.device.selector}>"


class _ForeignPointer:
    """A device pointer taken from ``__cuda_array_interface__`` (torch, CuPy, Numba arrays)."""

    __slots__ = ("ptr",)

    def __init__(self, ptr: int):
        self.ptr = ptr


def _foreign_pointer(value: Any) -> Any:
    """torch/CuPy/Numba arrays (``__cuda_array_interface__``) are passed by their device pointer."""
    if not isinstance(value, (CudaBuffer, np.ndarray)) and hasattr(value, "__cuda_array_interface__"):
        return _ForeignPointer(int(value.__cuda_array_interface__["data"][0]))
    return value


class CudaKernel:
    """One ``__global__`` function. ``launch`` is the convenient path; ``launcher`` the fast one."""

    def __init__(self, program: CudaProgram, name: str, symbol: str):
        self.program = program
        self.name = name
        self.symbol = symbol
        ctx = program.context
        self.context = ctx
        self.handle = c_void_p()
        ctx.make_current()
        check(ctx.drv.cuModuleGetFunction(byref(self.handle), program.handle, symbol.encode()),
              "cuModuleGetFunction", f"no kernel {symbol!r} in the module")
        self.max_threads = self._attribute(_FUNC_MAX_THREADS)
        self.static_shared = self._attribute(_FUNC_SHARED_STATIC)
        self.num_regs = self._attribute(_FUNC_NUM_REGS)
        self.param_sizes = self._param_sizes()
        self._dynamic_shared_limit = 48 * 1024
        self._geometry_cache: dict = {}
        self._launchers: dict = {}

    def _attribute(self, attr: int) -> int:
        value = c_int()
        check(self.context.drv.cuFuncGetAttribute(byref(value), attr, self.handle), "cuFuncGetAttribute")
        return value.value

    def _param_sizes(self) -> "tuple[int, ...] | None":
        get = self.context.drv.cuFuncGetParamInfo
        if get is None:
            return None  # driver before CUDA 12.4: argument counts cannot be checked
        sizes = []
        offset, size = c_size_t(), c_size_t()
        for index in range(4096):
            if get(self.handle, index, byref(offset), byref(size)) != 0:
                break
            sizes.append(size.value)
        return tuple(sizes)

    # -- checks ------------------------------------------------------------------------------
    def check_param_kinds(self, kinds: Sequence[Any]) -> None:
        """TypeError unless the kinds match the kernel's parameter count and sizes."""
        if self.param_sizes is None:
            return
        if len(kinds) != len(self.param_sizes):
            raise TypeError(
                f"kernel {self.name!r} has {len(self.param_sizes)} parameters, but {len(kinds)} "
                f"arguments were given ({list(kinds)}; LocalMemory arguments are not parameters)"
            )
        for i, (kind, size) in enumerate(zip(kinds, self.param_sizes)):
            if kind.size != size:
                raise TypeError(
                    f"argument {i} of kernel {self.name!r}: the parameter is {size} bytes, but a {kind.label} "
                    f"argument is {kind.size} bytes (e.g. pass np.int32 for int, np.float32 for float, a "
                    "Buffer for a pointer)"
                )

    def launch_hint(self, status: int) -> str:
        if status == 1:
            return (f"invalid launch configuration for kernel {self.name!r} (block limit "
                    f"{self.max_threads} threads, grid limit {self.context.device.max_grid_dims})")
        if status == 701:
            return (f"kernel {self.name!r} uses {self.num_regs} registers a thread: use a smaller local size "
                    f"(at most {self.max_threads} threads a block)")
        return ""

    def ensure_shared(self, nbytes: int) -> None:
        """Opt in to more than 48 KiB of dynamic shared memory when a launch asks for it."""
        if nbytes <= self._dynamic_shared_limit:
            return
        device = self.context.device
        limit = device.attributes["max_shared_memory_per_block_optin"] - self.static_shared
        if nbytes > limit:
            raise ValueError(f"kernel {self.name!r} asks for {nbytes} bytes of local memory; "
                             f"{device.name} allows at most {limit} for it")
        check(self.context.drv.cuFuncSetAttribute(self.handle, _FUNC_MAX_DYNAMIC_SHARED, nbytes),
              "cuFuncSetAttribute")
        self._dynamic_shared_limit = nbytes

    # -- work size ---------------------------------------------------------------------------
    def geometry(self, global_size: Any, local_size: Any) -> "tuple[int, ...] | None":
        """``(gx, gy, gz, bx, by, bz)`` for total-work sizes (grid = ceil(global / local)),
        or None when there is no work. Cached per (global, local)."""
        device = self.context.device
        ndim = len(work_dims(global_size, "global_size"))
        geom = block_geometry(global_size, local_size, default_local=DEFAULT_LOCAL_SIZE[ndim],
                              max_threads=self.max_threads, max_block_dims=device.max_block_dims,
                              max_grid_dims=device.max_grid_dims, device_name=device.name, kernel_name=self.name)
        try:
            if len(self._geometry_cache) > 4096:
                self._geometry_cache.clear()
            self._geometry_cache[global_size, local_size] = geom
        except TypeError:
            pass  # unhashable (lists): computed each time
        return geom

    # -- launching ---------------------------------------------------------------------------
    def launcher(self, arg_types: Sequence[Any]) -> Callable[..., None]:
        """The hot path: ``fn(global_size, local_size, args)`` packing ``args`` (of these kinds:
        ``"buffer"``, numpy dtypes, ctypes types, ``"local"``) into preallocated storage and
        making one cuLaunchKernel call."""
        if self.program.closed:
            raise ClosedError(f"CUDA program {self.program.name!r}")
        try:
            key = tuple(arg_types)
            fn = self._launchers.get(key)
        except TypeError:
            key, fn = None, None
        if fn is None:
            fn = build_launcher(self, arg_types)
            if key is not None:
                self._launchers[key] = fn
        return fn

    def launch(self, global_size: Any, local_size: Any, args: Sequence[Any]) -> None:
        """Enqueue one launch. numpy arrays are copied to the device and back (blocking)."""
        launch_with_host_arrays(self, global_size, local_size, args, kind_of_value=kind_of_value,
                                buffer_type=CudaBuffer, adapt=_foreign_pointer)

    def __getitem__(self, config: Any) -> Callable[..., None]:
        """``k[global](*args)``, ``k[(global, local)](*args)`` (global/local: int or tuple)."""
        return bracket_call(self, config)

    def __call__(self, *args: Any, global_size: Any = None, local_size: Any = None) -> None:
        if global_size is None:
            raise TypeError(f"kernel {self.name!r} needs a work size: k[(global, local)](*args) or "
                            "k(*args, global_size=..., local_size=...)")
        self.launch(global_size, local_size, args)

    def __repr__(self) -> str:
        return f"<CudaKernel {self.name!r} on {self.context.device.selector}>"
