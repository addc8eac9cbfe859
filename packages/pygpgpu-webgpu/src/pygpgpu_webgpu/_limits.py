"""The adapter limits a compute kernel meets, read once per device, and the checks against them.

WebGPU's defaults are small (128 MiB storage bindings, 256 invocations a group); a device is
requested with the adapter's own maxima of these, so what the hardware allows is allowed."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Limits", "LimitExceeded", "REQUESTED"]

# the limits a device is requested with at the adapter's maximum (WebGPU's names)
REQUESTED = ("max-buffer-size", "max-storage-buffer-binding-size", "max-storage-buffers-per-shader-stage",
             "max-uniform-buffer-binding-size", "max-uniform-buffers-per-shader-stage", "max-bind-groups",
             "max-bindings-per-bind-group", "max-compute-workgroup-storage-size",
             "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x", "max-compute-workgroup-size-y",
             "max-compute-workgroup-size-z", "max-compute-workgroups-per-dimension")


class LimitExceeded(ValueError):
    """A request past a limit of the WebGPU adapter (names the limit, the value and what to do)."""


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} bytes"


@dataclass(frozen=True)
class Limits:
    max_buffer_size: int
    max_storage_buffer_binding_size: int
    max_storage_buffers_per_shader_stage: int
    max_uniform_buffers_per_shader_stage: int
    max_compute_invocations_per_workgroup: int
    max_compute_workgroups_per_dimension: int
    max_compute_workgroup_storage_size: int
    min_storage_buffer_offset_alignment: int

    @classmethod
    def of(cls, limits: Any) -> "Limits":
        get = dict(limits).get
        return cls(int(get("max-buffer-size", 2**28)), int(get("max-storage-buffer-binding-size", 2**27)),
                   int(get("max-storage-buffers-per-shader-stage", 8)),
                   int(get("max-uniform-buffers-per-shader-stage", 12)),
                   int(get("max-compute-invocations-per-workgroup", 256)),
                   int(get("max-compute-workgroups-per-dimension", 65535)),
                   int(get("max-compute-workgroup-storage-size", 16384)),
                   int(get("min-storage-buffer-offset-alignment", 256)))

    def check_buffer(self, nbytes: int, device: str) -> None:
        """A buffer is bound whole as a storage buffer, so it must fit both the largest buffer and
        the largest storage binding of the adapter."""
        limit = min(self.max_buffer_size, self.max_storage_buffer_binding_size)
        if nbytes > limit:
            which = ("maxStorageBufferBindingSize" if limit == self.max_storage_buffer_binding_size
                     else "maxBufferSize")
            raise LimitExceeded(f"{device} cannot hold a buffer of {_mib(nbytes)}: its WebGPU adapter binds storage "
                                f"buffers of at most {_mib(limit)} ({which}). Split the data into smaller arrays, "
                                "or use a backend without this limit (cuda, hip, opencl)")

    def check_bindings(self, storage: int, uniform: int, kernel: str, device: str) -> None:
        if storage > self.max_storage_buffers_per_shader_stage:
            raise LimitExceeded(f"kernel {kernel!r} binds {storage} storage buffers; {device} allows "
                                f"{self.max_storage_buffers_per_shader_stage} per shader stage "
                                "(maxStorageBuffersPerShaderStage): pass fewer arrays, e.g. pack some into one")
        if uniform > self.max_uniform_buffers_per_shader_stage:
            raise LimitExceeded(f"kernel {kernel!r} binds {uniform} uniform values; {device} allows "
                                f"{self.max_uniform_buffers_per_shader_stage} (maxUniformBuffersPerShaderStage): "
                                "gather them into one uniform struct")

    def check_groups(self, groups: "tuple[int, ...]", kernel: str, device: str) -> None:
        for k, n in enumerate(groups):
            if n > self.max_compute_workgroups_per_dimension:
                raise LimitExceeded(f"launching {kernel!r} needs {n} workgroups in dimension {k}; {device} dispatches "
                                    f"at most {self.max_compute_workgroups_per_dimension} "
                                    "(maxComputeWorkgroupsPerDimension): use a larger @workgroup_size, or a 2-D "
                                    "work size")
