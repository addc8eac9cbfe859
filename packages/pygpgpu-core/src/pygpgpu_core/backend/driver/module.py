"""Programs (compiled, disk-cached, loaded modules) and their kernels, for CUDA-like drivers.

Work sizes follow total-work semantics: ``global_size`` counts work items per dimension and
the grid is ``ceil(global / local)`` blocks, so the same (global, local) means the same thing
on every backend. Kernels must guard against the rounded-up tail.
"""
from __future__ import annotations

import weakref
from ctypes import byref, c_int, c_size_t, c_void_p
from typing import TYPE_CHECKING, Any, Callable, ClassVar, NamedTuple, Sequence

import numpy as np

from ...errors import ClosedError, DriverError
from ...forking import closed_error
from ..handles import Closeable
from ..lowlevel import bracket_call, kernel_attribute, kernel_symbol, launch_with_host_arrays
from ..worksize import block_geometry, work_dims
from ..args import check_param_kinds, kind_of_value
from ..errors import call_name
from .. import native as _native
from ..launcher import build_launcher
from .memory import DriverBuffer
from .waits import defer

if TYPE_CHECKING:
    from .context import DriverContext

__all__ = ["DriverProgram", "DriverKernel", "KernelInfo"]

_INVALID_IMAGE = 200          # CUDA_ERROR_INVALID_IMAGE = hipErrorInvalidImage
# cuFuncGetAttribute / hipFuncGetAttribute attributes (the same numbers in both)
_FUNC_MAX_THREADS, _FUNC_SHARED_STATIC, _FUNC_NUM_REGS, _FUNC_MAX_DYNAMIC_SHARED = 0, 1, 4, 8


class KernelInfo(NamedTuple):
    """What a binary says about one kernel (fields it does not say are None / 0)."""

    name: str
    """The symbol (mangled unless the kernel is ``extern "C"``)."""
    param_sizes: "tuple[int, ...] | None" = None
    """Byte size of each explicit parameter, in order; None when the binary does not say."""
    static_shared: int = 0
    max_threads: int = 0


class DriverProgram(Closeable):
    """A source compiled for the context's device and loaded as a module.

    A subclass sets ``default_name``, ``kernel_class``, ``bad_image_codes`` (statuses of a load
    that a rebuild may fix) and implements ``_build``, ``_image_problem``, ``_kernels_of`` and
    ``_binary_kind``."""

    default_name: ClassVar[str] = "kernel"
    kernel_class: "ClassVar[type[DriverKernel]]"
    bad_image_codes: ClassVar[frozenset] = frozenset()

    def __init__(self, context: "DriverContext", source: str, options: Sequence[str] = (), *, name: str = "",
                 binary: "bytes | None" = None):
        if not isinstance(source, str):
            raise TypeError(f"program source must be str, got {type(source).__name__}")
        self.context = context
        self.source = source
        self.options = tuple(options)
        self.name = name or self.default_name
        self.handle = c_void_p()
        self._kernels: dict[str, DriverKernel] = {}
        if binary is not None:  # a binary stored by the caller (e.g. __cucache__ beside a .cu file)
            image, self.build_log, self.cache_hit = bytes(binary), "", True
        else:
            image, self.build_log, self.cache_hit = self._build(source, self.options, self.name, True)
        try:
            self._load(image)
        except DriverError as exc:
            if not (self.cache_hit and exc.code in self.bad_image_codes and source):
                raise
            # A cached image the driver rejects (e.g. written by another driver): rebuild it.
            image, self.build_log, self.cache_hit = self._build(source, self.options, self.name, False)
            self._load(image)
        self.binary = image
        self.binary_kind = self._binary_kind(image)
        self.entry_points: dict[str, KernelInfo] = self._kernels_of(image)
        context._track(self)

    # -- per backend -------------------------------------------------------------------------
    def _build(self, source: str, options: Sequence[str], name: str, use_cache: bool) -> tuple[bytes, str, bool]:
        """``(image, log, cache_hit)`` for this device, from the disk cache when ``use_cache``."""
        raise NotImplementedError(f"{type(self).__name__} must define _build() (each backend's Program does)")

    def _image_problem(self, image: bytes) -> "str | None":
        """Why the driver must not see ``image`` (damaged, truncated, not a module), else None."""
        raise NotImplementedError(f"{type(self).__name__} must define _image_problem() (each backend's Program does)")

    def _kernels_of(self, image: bytes) -> "dict[str, KernelInfo]":
        """symbol -> KernelInfo of every kernel the image defines (empty when it cannot be read)."""
        raise NotImplementedError(f"{type(self).__name__} must define _kernels_of() (each backend's Program does)")

    def _binary_kind(self, image: bytes) -> str:
        raise NotImplementedError(f"{type(self).__name__} must define _binary_kind() (each backend's Program does)")

    # -- loading ------------------------------------------------------------------------------
    def _load(self, image: bytes) -> None:
        ctx, calls = self.context, self.context.calls
        problem = self._image_problem(image)  # checksums say nothing about structure: check it always
        if problem is not None:                # the driver would read past the end and may crash
            assert calls.errors is not None, "a driver library has an error table"
            raise DriverError(ctx.backend_name, call_name(calls.module_load), _INVALID_IMAGE,
                              calls.errors.name(_INVALID_IMAGE, calls),
                              f"the module image of {self.name!r} was not passed to the driver: {problem}")
        ctx.make_current()
        status = calls.module_load(byref(self.handle), image)
        if status:
            calls.check(status, calls.module_load, "the driver rejected the compiled module for "
                        f"{ctx.device.arch} ({ctx.device.name})")

    @property
    def closed(self) -> bool:
        return not self.handle

    def kernel_names(self) -> list[str]:
        """The kernels this program defines (mangled C++ names unless declared extern "C")."""
        return list(self.entry_points)

    def kernel(self, name: str) -> "DriverKernel":
        """The ``__global__`` function ``name`` (its C++ name or its mangled symbol)."""
        if self.closed:
            raise ClosedError(f"{self.context.title} program {self.name!r}")
        k = self._kernels.get(name)
        if k is None:
            symbol = kernel_symbol(name, list(self.entry_points), f"{self.context.title} program {self.name!r}")
            k = self.kernel_class(self, name, symbol)
            self._kernels[name] = k
        return k

    def __getattr__(self, name: str) -> "DriverKernel":
        return kernel_attribute(self, name, "entry_points" in self.__dict__)   # ``program.vecadd``

    def close(self) -> None:
        """Unload the module (idempotent). Launchers of its kernels then raise ClosedError."""
        for k in self._kernels.values():
            if not self.context.closed:
                for native in list(k._native_launchers):
                    native.release()       # their graphs (backend/native.py) go before the module
            k.handle.value = None  # launchers hold this very c_void_p: they now see NULL
        self._kernels.clear()
        handle, self.handle = self.handle, c_void_p()
        ctx = self.context
        if handle and not ctx.closed:
            if ctx._interrupted is not None and defer(ctx, _unload, ctx, handle):
                return      # unloading waits for the device: not while an interrupted kernel runs
            _unload(ctx, handle)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} {getattr(self, 'binary_kind', '?')} on {self.context.device.selector}>"


def _unload(ctx: "DriverContext", handle: c_void_p) -> None:
    ctx.make_current()
    ctx.calls.module_unload(handle)


class _ForeignPointer:
    """A device pointer taken from ``__cuda_array_interface__`` (torch, CuPy, Numba arrays)."""

    __slots__ = ("ptr",)

    def __init__(self, ptr: int):
        self.ptr = ptr


class DriverKernel:
    """One ``__global__`` function. ``launch`` is the convenient path; ``launcher`` the fast one.

    Limits come from the binary's kernel metadata where it has them (AMDGPU code objects), else
    from the driver's function attributes (``func_get_attribute``, ``func_get_param_info``)."""

    float16_arguments: ClassVar[bool] = True
    dynamic_shared_default: ClassVar["int | None"] = None
    """Dynamic shared memory a launch may use before the kernel must opt in to more
    (``func_set_attribute``; CUDA: 48 KiB); None: no opt-in, the device's limit applies."""

    def __init__(self, program: DriverProgram, name: str, symbol: str):
        self.program = program
        self.name = name
        self.symbol = symbol
        ctx = program.context
        self.context = ctx
        calls = ctx.calls
        self.handle = c_void_p()
        ctx.make_current()
        calls.check(calls.module_get_function(byref(self.handle), program.handle, symbol.encode()),
                    calls.module_get_function, f"no kernel {symbol!r} in the module")
        info = program.entry_points.get(symbol)
        device = ctx.device
        if calls.has("func_get_attribute"):
            self.max_threads = self._attribute(_FUNC_MAX_THREADS)
            self.static_shared = self._attribute(_FUNC_SHARED_STATIC)
            self.num_regs: "int | None" = self._attribute(_FUNC_NUM_REGS)
        else:
            limit = info.max_threads if info is not None else 0
            self.max_threads = min(limit, device.max_work_group_size) if limit else device.max_work_group_size
            self.static_shared = info.static_shared if info is not None else 0
            self.num_regs = None
        self.param_sizes = info.param_sizes if info is not None and info.param_sizes is not None \
            else self._param_sizes()
        if self.dynamic_shared_default is not None:
            self.shared_default_limit = self.dynamic_shared_default
        else:
            self.shared_default_limit = device.local_mem_size_optin - self.static_shared
        self._dynamic_shared_limit = self.shared_default_limit
        self._geometry_cache: dict = {}
        self._launchers: dict = {}
        self._native_launchers: "weakref.WeakSet[Any]" = weakref.WeakSet()  # backend/native.py's

    def _attribute(self, attr: int) -> int:
        calls, value = self.context.calls, c_int()
        calls.check(calls.func_get_attribute(byref(value), attr, self.handle), calls.func_get_attribute)
        return value.value

    def _param_sizes(self) -> "tuple[int, ...] | None":
        get = getattr(self.context.calls, "func_get_param_info", None)
        if get is None:
            return None  # a driver before CUDA 12.4: argument counts cannot be checked
        sizes = []
        offset, size = c_size_t(), c_size_t()
        for index in range(4096):
            if get(self.handle, index, byref(offset), byref(size)) != 0:
                break
            sizes.append(size.value)
        return tuple(sizes)

    @property
    def closed(self) -> bool:
        return not self.handle

    # -- checks ------------------------------------------------------------------------------
    def check_param_kinds(self, kinds: Sequence[Any]) -> None:
        """TypeError unless the kinds match the kernel's parameter count and sizes."""
        check_param_kinds(self.name, self.param_sizes, kinds)

    def launch_hint(self, status: int) -> str:
        if status == 1:
            return (f"invalid launch configuration for kernel {self.name!r} (block limit "
                    f"{self.max_threads} threads, grid limit {self.context.device.max_grid_dims})")
        if status == 701:
            uses = f"uses {self.num_regs} registers a thread" if self.num_regs is not None else "needs too many resources"
            return (f"kernel {self.name!r} {uses}: use a smaller local size "
                    f"(at most {self.max_threads} threads a block)")
        return ""

    def launch_failed(self, status: int) -> None:
        """Raise for a launch that returned ``status`` (0: the kernel's program was closed)."""
        if not self.handle:  # its program was closed (or inherited across fork): the handle was set to NULL
            raise closed_error(self.context, f"the {self.context.title} program of kernel {self.name!r}",
                               self.context.backend_name)
        calls = self.context.calls
        calls.check(status, calls.launch, self.launch_hint(status))

    def ensure_shared(self, nbytes: int) -> None:
        """Opt in to more dynamic shared memory than the default when a launch asks for it."""
        if nbytes <= self._dynamic_shared_limit:
            return
        device = self.context.device
        limit = device.local_mem_size_optin - self.static_shared
        if nbytes > limit:
            raise ValueError(f"kernel {self.name!r} asks for {nbytes} bytes of local memory; "
                             f"{device.name} allows at most {limit} for it")
        calls = self.context.calls
        calls.check(calls.func_set_attribute(self.handle, _FUNC_MAX_DYNAMIC_SHARED, nbytes), calls.func_set_attribute)
        self._dynamic_shared_limit = nbytes

    # -- work size ---------------------------------------------------------------------------
    def geometry(self, global_size: Any, local_size: Any) -> "tuple[int, ...] | None":
        """``(gx, gy, gz, bx, by, bz)`` for total-work sizes (grid = ceil(global / local)),
        or None when there is no work. Cached per (global, local)."""
        device = self.context.device
        ndim = len(work_dims(global_size, "global_size"))
        geom = block_geometry(global_size, local_size, default_local=device.default_local_size(ndim),
                              max_threads=self.max_threads, max_block_dims=device.max_block_dims,
                              max_grid_dims=device.max_grid_dims, device_name=device.name, kernel_name=self.name,
                              max_work_per_dim=device.max_work_per_dim)
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
        ``"buffer"``, numpy dtypes, ctypes types, vector types, ``"local"``) into preallocated
        storage and making one driver launch call. LocalMemory arguments are not kernel
        parameters: their byte counts add up to the launch's dynamic shared memory."""
        if self.program.closed:
            raise ClosedError(f"{self.context.title} program {self.program.name!r}")
        try:
            # whether the native launcher is on (PYGPGPU_NATIVE) is part of what was built
            key = (tuple(arg_types), _native.load() is not None)
            fn = self._launchers.get(key)
        except TypeError:
            key, fn = None, None
        if fn is None:
            fn = build_launcher(self, arg_types)
            if key is not None:
                self._launchers[key] = fn
        return fn

    def _adapt_argument(self, value: Any) -> Any:
        """torch/CuPy/Numba arrays (``__cuda_array_interface__``) are passed by their device pointer."""
        if isinstance(value, np.ndarray):
            if value.dtype == np.float16 and not self.float16_arguments:
                raise TypeError(f"float16 arrays are not supported on {self.context.title}; use float32")
            return value
        if not isinstance(value, DriverBuffer) and hasattr(value, "__cuda_array_interface__"):
            return _ForeignPointer(int(value.__cuda_array_interface__["data"][0]))
        return value

    def launch(self, global_size: Any, local_size: Any, args: Sequence[Any]) -> None:
        """Enqueue one launch. numpy arrays are copied to the device and back (blocking)."""
        launch_with_host_arrays(self, global_size, local_size, args, kind_of_value=kind_of_value,
                                buffer_type=DriverBuffer, adapt=self._adapt_argument)

    def __getitem__(self, config: Any) -> Callable[..., None]:
        """``k[global](*args)``, ``k[(global, local)](*args)`` (global/local: int or tuple)."""
        return bracket_call(self, config)

    def __call__(self, *args: Any, global_size: Any = None, local_size: Any = None) -> None:
        if global_size is None:
            raise TypeError(f"kernel {self.name!r} needs a work size: k[(global, local)](*args) or "
                            "k(*args, global_size=..., local_size=...)")
        self.launch(global_size, local_size, args)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} on {self.context.device.selector}>"
