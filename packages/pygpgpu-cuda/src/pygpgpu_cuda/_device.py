"""A CUDA device: its properties, read once, and its shared default context."""
from __future__ import annotations

import ctypes
import threading
from ctypes import byref, c_int, c_size_t
from typing import Any

from ._driver import check, driver

__all__ = ["CudaDevice", "DEFAULT_LOCAL_SIZE"]

# Per dimension count: 256 threads a block, the usual sweet spot for occupancy on NVIDIA GPUs.
DEFAULT_LOCAL_SIZE = {1: (256,), 2: (16, 16), 3: (8, 8, 4)}

_ATTRS = {
    "max_threads_per_block": 1,
    "max_block_x": 2,
    "max_block_y": 3,
    "max_block_z": 4,
    "max_grid_x": 5,
    "max_grid_y": 6,
    "max_grid_z": 7,
    "max_shared_memory_per_block": 8,
    "warp_size": 10,
    "multiprocessor_count": 16,
    "integrated": 18,
    "pci_bus_id": 33,
    "l2_cache_size": 38,
    "cc_major": 75,
    "cc_minor": 76,
    "max_shared_memory_per_block_optin": 97,
}


class CudaDevice:
    """One GPU as the driver enumerates it (``index`` = CUDA device ordinal)."""

    vendor = "NVIDIA"
    fp64 = True
    fp16 = False  # np.float16 kernel arguments are not supported on the CUDA backend
    host_unified_memory = False  # zero_copy is a no-op here: a discrete GPU cannot alias pageable memory
    extensions: frozenset = frozenset()

    def __init__(self, backend: Any, index: int):
        drv = driver()
        self.backend = backend
        self.index = index
        handle = c_int()
        check(drv.cuDeviceGet(byref(handle), index), "cuDeviceGet")
        self.ordinal = handle.value
        name = ctypes.create_string_buffer(256)
        check(drv.cuDeviceGetName(name, 256, self.ordinal), "cuDeviceGetName")
        self.name = name.value.decode(errors="replace")
        self.attributes: dict[str, int] = {}
        for key, attr in _ATTRS.items():
            value = c_int()
            check(drv.cuDeviceGetAttribute(byref(value), attr, self.ordinal), "cuDeviceGetAttribute")
            self.attributes[key] = value.value
        total = c_size_t()
        check(drv.cuDeviceTotalMem(byref(total), self.ordinal), "cuDeviceTotalMem")
        a = self.attributes
        self.global_mem_size = total.value
        self.compute_units = a["multiprocessor_count"]
        self.max_work_group_size = a["max_threads_per_block"]
        self.max_block_dims = (a["max_block_x"], a["max_block_y"], a["max_block_z"])
        self.max_grid_dims = (a["max_grid_x"], a["max_grid_y"], a["max_grid_z"])
        self.local_mem_size = a["max_shared_memory_per_block"]
        self.compute_capability = (a["cc_major"], a["cc_minor"])
        self.cc = self.compute_capability
        self.arch = f"sm_{a['cc_major']}{a['cc_minor']}"
        self._context = None
        self._lock = threading.Lock()

    @property
    def selector(self) -> str:
        return f"cuda:{self.index}"

    def default_local_size(self, ndim: int) -> tuple[int, ...]:
        return DEFAULT_LOCAL_SIZE[ndim]

    def context(self):
        """The shared default context (the primary context, retained once), made on first use."""
        ctx = self._context
        if ctx is None or ctx.closed:
            with self._lock:
                if self._context is None or self._context.closed:
                    from ._context import CudaContext

                    self._context = CudaContext(self)
                ctx = self._context
        return ctx

    def _forget_context(self, ctx: Any) -> None:
        if self._context is ctx:
            self._context = None

    def __reduce__(self):
        """Pickles as its selector; the receiving process looks the device up itself."""
        from pygpgpu_core.pickling import reduce_device

        return reduce_device(self)

    def __repr__(self) -> str:
        gib = self.global_mem_size / (1 << 30)
        return (f"<CudaDevice {self.selector} {self.name!r} {self.arch}, {self.compute_units} SMs, "
                f"{gib:.0f} GiB>")
