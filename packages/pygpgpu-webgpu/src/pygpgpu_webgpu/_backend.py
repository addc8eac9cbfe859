"""The object the ``pygpgpu.backends`` entry point names. Creating it imports nothing; wgpu-py
is imported and the adapters enumerated on the first ``devices()``."""
from __future__ import annotations

import threading
from typing import Any

from pygpgpu_core.errors import BackendUnavailable

from ._wgpu import DRIVER_FIX, native_version, wgpu

__all__ = ["WebGPUBackend"]


class WebGPUBackend:
    name = "webgpu"
    dialect = "wgsl"          # the language a kernel for it is written in
    kernel_file_suffix = "wgsl"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._devices: "list[Any] | None" = None

    def devices(self) -> "list[Any]":
        from ._device import WebGPUDevice, adapter_order
        with self._lock:
            if self._devices is None:
                gpu = wgpu().gpu
                try:
                    adapters = list(gpu.enumerate_adapters_sync())
                except Exception as exc:
                    raise BackendUnavailable(self.name, f"enumerating WebGPU adapters failed ({exc})",
                                             fix=DRIVER_FIX) from exc
                if not adapters:
                    raise BackendUnavailable(self.name, "no WebGPU adapter (no Vulkan, Metal or D3D12 driver found)",
                                             fix=DRIVER_FIX)
                adapters.sort(key=adapter_order)
                self._devices = [WebGPUDevice(self, i, a) for i, a in enumerate(adapters)]
            return list(self._devices)

    def version(self) -> str:
        """wgpu-py and wgpu-native versions (the shader compiler is wgpu-native's naga)."""
        return f"wgpu-py {wgpu().__version__}, wgpu-native {native_version()}"

    def describe(self) -> dict:
        out: dict = {"version": self.version()}
        for d in self.devices():
            out[d.selector] = f"{d.name} [{d.adapter_type}, {d.arch}] {d.driver}".strip()
        return out
