"""A CUDA device: its properties, read once from the driver."""
from __future__ import annotations

from ctypes import byref, c_int
from typing import Any

from pygpgpu_core.backend.driver import DriverDevice

from ._context import Context

__all__ = ["Device"]

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


class Device(DriverDevice):
    """One GPU as the driver enumerates it (``index`` = CUDA device ordinal)."""

    vendor = "NVIDIA"
    context_class = Context

    def __init__(self, backend: Any, index: int):
        calls = backend.driver()
        handle = c_int()
        calls.check(calls.device_get(byref(handle), index), calls.device_get)
        super().__init__(backend, index, handle.value)
        self.name = self._name()
        self.attributes: dict[str, int] = {key: self._attribute(code) for key, code in _ATTRS.items()}
        a = self.attributes
        self.global_mem_size = self._total_mem()
        self.compute_units = a["multiprocessor_count"]
        self.max_work_group_size = a["max_threads_per_block"]
        self.max_block_dims = (a["max_block_x"], a["max_block_y"], a["max_block_z"])
        self.max_grid_dims = (a["max_grid_x"], a["max_grid_y"], a["max_grid_z"])
        self.local_mem_size = a["max_shared_memory_per_block"]
        self.local_mem_size_optin = a["max_shared_memory_per_block_optin"]
        self.compute_capability = (a["cc_major"], a["cc_minor"])
        self.cc = self.compute_capability
        self.arch = f"sm_{a['cc_major']}{a['cc_minor']}"
