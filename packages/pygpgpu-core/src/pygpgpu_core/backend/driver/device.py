"""A CUDA-like backend object and its devices: enumeration is the backend's own, the rest is here."""
from __future__ import annotations

import ctypes
import threading
from ctypes import byref, c_int, c_size_t
from typing import TYPE_CHECKING, Any, ClassVar

from ...scoped_device import ScopedDefault
from ..worksize import default_group_shape

if TYPE_CHECKING:
    from ..library import Calls, LazyLibrary
    from .context import DriverContext

__all__ = ["DriverBackend", "DriverDevice"]


class DriverBackend:
    """The object of the ``pygpgpu.backends`` entry point; creating it loads nothing.

    A subclass sets ``name``, ``dialect``, ``title`` (``"CUDA"``) and ``driver`` (its
    LazyLibrary), and implements ``_enumerate()``, ``version()`` and ``describe()``."""

    name: ClassVar[str] = ""
    dialect: ClassVar[str] = ""
    title: ClassVar[str] = ""
    driver: "ClassVar[LazyLibrary]"
    # optional attributes of the contract (pygpgpu_core.protocols.OPTIONAL_ATTRIBUTES)
    dlpack_device_type: ClassVar["int | None"] = None
    cuda_array_interface: ClassVar[bool] = False

    def __init__(self) -> None:
        self._devices: "list[Any] | None" = None
        self._lock = threading.Lock()

    def devices(self) -> list:
        """Every device; BackendUnavailable says why there are none."""
        if self._devices is not None:
            return self._devices
        with self._lock:
            if self._devices is None:
                self._devices = self._enumerate()
        return self._devices

    def _enumerate(self) -> list:
        raise NotImplementedError(f"{type(self).__name__} must define _enumerate() (each backend lists its devices)")

    def __repr__(self) -> str:
        if self._devices is None:
            return f"<{type(self).__name__} (not probed)>"
        return f"<{type(self).__name__} {len(self._devices)} device(s)>"


class DriverDevice(ScopedDefault):
    """One GPU as the driver enumerates it (``index``: its ordinal among this backend's devices).

    A subclass sets ``vendor`` and ``context_class`` and reads its properties in ``__init__``
    (``self._attribute(code)``, ``self._name()``, ``self._total_mem()``), setting at least
    ``name``, ``arch``, ``global_mem_size``, ``compute_units``, ``max_work_group_size``,
    ``max_block_dims``, ``max_grid_dims``, ``local_mem_size`` and ``local_mem_size_optin``."""

    vendor: ClassVar[str] = ""
    context_class: "ClassVar[type[DriverContext]]"
    fp64: ClassVar[bool] = True
    fp16: ClassVar[bool] = False
    """float16 kernel arguments and ``@kernel`` half types: not offered on the CUDA-like backends."""
    host_unified_memory: ClassVar[bool] = False
    """Whether ``buffer_from_host(zero_copy=True)`` can alias host memory: never here (a copy is made)."""
    extensions: ClassVar[frozenset] = frozenset()
    max_work_per_dim: ClassVar["int | None"] = None
    """Work items a launch may have per dimension (AMD counts them in 32 bits), None: no limit."""
    is_gpu: ClassVar[bool] = True
    is_cpu: ClassVar[bool] = False

    # read by the subclass's __init__ (see above)
    name: str
    arch: str
    global_mem_size: int
    compute_units: int
    max_work_group_size: int
    max_block_dims: "tuple[int, int, int]"
    max_grid_dims: "tuple[int, int, int]"
    local_mem_size: int
    local_mem_size_optin: int

    def __init__(self, backend: DriverBackend, index: int, ordinal: "int | None" = None):
        self.backend = backend
        self.index = index
        self.ordinal = index if ordinal is None else ordinal
        self._context: "DriverContext | None" = None
        self._lock = threading.Lock()

    # -- reading properties (for subclasses) --------------------------------------------------
    @property
    def _calls(self) -> "Calls":
        return self.backend.driver()

    def _attribute(self, code: int) -> int:
        calls, value = self._calls, c_int()
        calls.check(calls.device_attribute(byref(value), code, self.ordinal), calls.device_attribute)
        return value.value

    def _name(self) -> str:
        calls, name = self._calls, ctypes.create_string_buffer(256)
        calls.check(calls.device_name(name, 256, self.ordinal), calls.device_name)
        return name.value.decode(errors="replace").strip()

    def _total_mem(self) -> int:
        calls, total = self._calls, c_size_t()
        calls.check(calls.device_total_mem(byref(total), self.ordinal), calls.device_total_mem)
        return total.value

    # -- the device ---------------------------------------------------------------------------
    @property
    def selector(self) -> str:
        return f"{self.backend.name}:{self.index}"

    def default_local_size(self, ndim: int) -> tuple[int, ...]:
        """The block shape used when a launch gives no local size."""
        return default_group_shape(ndim, self.max_work_group_size)

    def context(self) -> "DriverContext":
        """The shared default context, made on first use."""
        ctx = self._context
        if ctx is None or ctx.closed:
            with self._lock:
                if self._context is None or self._context.closed:
                    self._context = self.context_class(self)
                ctx = self._context
        return ctx

    def _forget_context(self, ctx: Any) -> None:
        if self._context is ctx:
            self._context = None

    def __reduce__(self):
        """Pickles as its selector; the receiving process looks the device up itself."""
        from ...pickling import reduce_device

        return reduce_device(self)

    def __repr__(self) -> str:
        gib = self.global_mem_size / (1 << 30)
        return (f"<{type(self).__name__} {self.selector} {self.name!r} {self.arch}, {self.compute_units} compute units, "
                f"{gib:.0f} GiB>")
