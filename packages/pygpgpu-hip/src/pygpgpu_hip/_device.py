"""An AMD GPU as the HIP runtime enumerates it: its properties, read once."""
from __future__ import annotations

import ctypes
import re
from typing import Any

from pygpgpu_core.backend.driver import DriverDevice
from pygpgpu_core.errors import GPGPUError

from ._context import Context
from ._driver import ATTR

__all__ = ["Device"]

# hipDeviceProp_t changed layout in ROCm 6 (and its symbol became ...R0600); the device name
# stays first (char[256]) and gcnArchName is the only "gfx..." string after it, so read it by
# looking for it instead of by an offset that differs between releases.
_PROPS_BYTES = 8192
_ARCH_IN_PROPS = re.compile(rb"(gfx[0-9a-f]{3,4}(?::[a-z]+[+-])*)\x00")

# HIP limits every AMD GPU shares: 1024 threads a block side, 2**32 - 1 blocks a grid side.
_MAX_BLOCK_DIMS = (1024, 1024, 1024)
_MAX_GRID_DIMS = (2**32 - 1,) * 3


class Device(DriverDevice):
    """One AMD GPU as seen by the HIP runtime."""

    vendor = "AMD"
    context_class = Context
    max_work_per_dim = 2**32 - 1  # AMD's dispatch packet counts work items (not blocks) in 32 bits

    def __init__(self, backend: Any, index: int):
        super().__init__(backend, index)
        self.name = self._name() or f"AMD GPU {index}"
        self.global_mem_size = self._total_mem()
        self.compute_units = self._attribute(ATTR["multiprocessor_count"])
        self.max_work_group_size = self._attribute(ATTR["max_threads_per_block"])
        self.local_mem_size = self._attribute(ATTR["max_shared_memory_per_block"])
        self.local_mem_size_optin = self.local_mem_size  # AMD GPUs have no opt-in beyond it
        self.integrated = bool(self._attribute(ATTR["integrated"]))
        """An APU sharing the host's memory (buffers are still copies: ``host_unified_memory`` is False)."""
        self.max_block_dims = _MAX_BLOCK_DIMS
        self.max_grid_dims = _MAX_GRID_DIMS
        self.target = self._gcn_arch_name()
        """Full target id with features, e.g. ``"gfx90a:sramecc+:xnack-"``; code is compiled for it."""
        self.arch = self.target.split(":")[0]
        """Base gfx architecture, e.g. ``"gfx90a"`` (what selectors like ``"hip:gfx90a"`` match)."""

    def _gcn_arch_name(self) -> str:
        calls = self._calls
        props = ctypes.create_string_buffer(_PROPS_BYTES)
        get = calls.device_properties_r0600 if calls.has("device_properties_r0600") else calls.device_properties
        calls.check(get(props, self.ordinal), get)
        m = _ARCH_IN_PROPS.search(props.raw, 256)
        if not m:
            raise GPGPUError(
                f"hip: could not read the gfx architecture of device {self.index} ({self.name}); "
                "report this together with your ROCm version"
            )
        return m.group(1).decode()
