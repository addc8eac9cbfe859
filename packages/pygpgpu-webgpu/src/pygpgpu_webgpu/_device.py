"""Adapters as devices: one pygpgpu device (``webgpu:N``) per WebGPU adapter, GPUs first."""
from __future__ import annotations

import threading
from typing import Any

from ._limits import REQUESTED, Limits

__all__ = ["WebGPUDevice", "adapter_order"]

# adapter types as wgpu reports them, in the order devices are numbered
_TYPE_ORDER = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3}


# wgpu's OpenGL backend reaches the same hardware with fewer compute features: after the native APIs
_API_ORDER = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 1}


def adapter_order(adapter: Any) -> "tuple[int, int]":
    info = adapter.info
    return (_TYPE_ORDER.get(str(info.get("adapter_type", "")), 2), _API_ORDER.get(str(info.get("backend_type", "")), 1))


class WebGPUDevice:
    """The Device protocol over one ``GPUAdapter``. WebGPU tells neither the memory size nor the
    compute units: ``global_mem_size`` is the largest buffer, ``compute_units`` 1."""

    fp64 = False            # WGSL has no f64 (wgpu-native's shader-f64 is outside WebGPU)
    int64 = False           # nor i64/u64: gnp's generated kernels count and index in 32 bits
    # what the WGSL target refuses (_target: each refusal's capability), for callers and the test suite
    lacks = frozenset({"fp64", "int64", "printf", "pointer_arguments", "launch_sized_local", "float_atomics",
                       "wide_vectors", "math_functions", "complex", "random", "subgroups", "narrow_arithmetic"})

    def __init__(self, backend: Any, index: int, adapter: Any) -> None:
        info = adapter.info
        self.backend = backend
        self.index = index
        self._adapter = adapter
        self.name = str(info.get("device") or info.get("description") or "WebGPU adapter")
        self.vendor = str(info.get("vendor") or "")
        self.arch = f"{info.get('backend_type', '')}:{info.get('architecture', '')}"
        self.adapter_type = str(info.get("adapter_type", ""))
        self.driver = str(info.get("description", ""))
        self.limits = Limits.of(adapter.limits)
        self.global_mem_size = self.limits.max_buffer_size
        self.compute_units = 1
        self.max_work_group_size = self.limits.max_compute_invocations_per_workgroup
        self.local_mem_size = self.limits.max_compute_workgroup_storage_size
        self.mem_base_addr_align = self.limits.min_storage_buffer_offset_alignment
        self.extensions = frozenset(str(f) for f in adapter.features)
        self.fp16 = "shader-f16" in self.extensions
        self.host_unified_memory = False
        self.is_gpu = self.adapter_type.endswith("GPU")
        self.is_cpu = self.adapter_type == "CPU"
        self._context: Any = None
        self._lock = threading.Lock()

    @property
    def selector(self) -> str:
        return f"{self.backend.name}:{self.index}"

    def context(self) -> Any:
        """The device's one shared context (a ``GPUDevice`` requested on first use)."""
        from ._context import WebGPUContext
        with self._lock:
            if self._context is None or self._context.closed:
                self._context = WebGPUContext(self, self._request())
        return self._context

    def _request(self) -> Any:
        adapter_limits = dict(self._adapter.limits)
        limits = {name: adapter_limits[name] for name in REQUESTED if name in adapter_limits}
        features = [f for f in ("shader-f16",) if f in self.extensions]
        return self._adapter.request_device_sync(required_features=features, required_limits=limits,
                                                 label=f"pygpgpu {self.selector}")

    def __repr__(self) -> str:
        return f"<WebGPUDevice {self.selector} {self.name} ({self.arch})>"
