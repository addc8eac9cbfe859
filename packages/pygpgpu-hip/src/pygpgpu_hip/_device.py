"""The HIP backend object and its devices."""
from __future__ import annotations

import ctypes
import re
import threading
from ctypes import c_int, c_size_t
from typing import TYPE_CHECKING

from pygpgpu_core.errors import BackendUnavailable, GPGPUError

from ._hipapi import ATTR, HIP_ERROR_NO_DEVICE, api, check, driver_version, error_name, format_version, runtime_version

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["HipBackend", "Device", "backend"]

# hipDeviceProp_t changed layout in ROCm 6 (and its symbol became ...R0600); the device name
# stays first (char[256]) and gcnArchName is the only "gfx..." string after it, so read it by
# looking for it instead of by an offset that differs between releases.
_PROPS_BYTES = 8192
_ARCH_IN_PROPS = re.compile(rb"(gfx[0-9a-f]{3,4}(?::[a-z]+[+-])*)\x00")


class Device:
    """One AMD GPU as seen by the HIP runtime."""

    vendor = "AMD"
    extensions: frozenset = frozenset()
    fp64 = True
    fp16 = False  # float16 kernel arguments are not offered on HIP (use float32)

    def __init__(self, backend: "HipBackend", index: int):
        hip = api()
        self.backend = backend
        self.index = index
        name = ctypes.create_string_buffer(256)
        check(hip.hipDeviceGetName(name, 256, index), "hipDeviceGetName")
        self.name = name.value.decode(errors="replace").strip() or f"AMD GPU {index}"
        total = c_size_t()
        check(hip.hipDeviceTotalMem(ctypes.byref(total), index), "hipDeviceTotalMem")
        self.global_mem_size = total.value
        self.compute_units = self._attribute("multiprocessor_count")
        self.max_work_group_size = self._attribute("max_threads_per_block")
        self.max_shared_memory = self._attribute("max_shared_memory_per_block")
        self.host_unified_memory = bool(self._attribute("integrated"))
        self.target = self._gcn_arch_name()
        """Full target id with features, e.g. ``"gfx90a:sramecc+:xnack-"``; code is compiled for it."""
        self.arch = self.target.split(":")[0]
        """Base gfx architecture, e.g. ``"gfx90a"`` (what selectors like ``"hip:gfx90a"`` match)."""
        self._context: "Context | None" = None
        self._lock = threading.Lock()

    def _attribute(self, key: str) -> int:
        value = c_int()
        check(api().hipDeviceGetAttribute(ctypes.byref(value), ATTR[key], self.index), "hipDeviceGetAttribute")
        return value.value

    def _gcn_arch_name(self) -> str:
        hip = api()
        props = ctypes.create_string_buffer(_PROPS_BYTES)
        if hip.has("hipGetDevicePropertiesR0600"):
            check(hip.hipGetDevicePropertiesR0600(props, self.index), "hipGetDevicePropertiesR0600")
        else:
            check(hip.hipGetDeviceProperties(props, self.index), "hipGetDeviceProperties")
        m = _ARCH_IN_PROPS.search(props.raw, 256)
        if not m:
            raise GPGPUError(
                f"hip: could not read the gfx architecture of device {self.index} ({self.name}); "
                "report this together with your ROCm version"
            )
        return m.group(1).decode()

    @property
    def selector(self) -> str:
        return f"hip:{self.index}"

    def context(self) -> "Context":
        """The device's shared context (its stream), created on first use."""
        with self._lock:
            if self._context is None or self._context.closed:
                from ._context import Context

                self._context = Context(self)
            return self._context

    def default_local_size(self, ndim: int) -> tuple[int, ...]:
        """The block shape used when a launch gives no local size."""
        limit = max(1, self.max_work_group_size)
        shape = {1: (256,), 2: (16, 16), 3: (8, 8, 4)}[ndim]
        while _product(shape) > limit:
            shape = tuple(max(1, s // 2) for s in shape)
        return shape

    def __repr__(self) -> str:
        return f"<HIP Device {self.selector} {self.name!r} {self.target}>"

    def __reduce__(self):
        """Pickles as its selector; the receiving process looks the device up itself."""
        from pygpgpu_core.pickling import reduce_device

        return reduce_device(self)


def _product(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


class HipBackend:
    """The ``hip`` entry of the ``pygpgpu.backends`` group. Creating it loads nothing."""

    name = "hip"
    dialect = "hip"

    def __init__(self) -> None:
        self._devices: "list[Device] | None" = None
        self._lock = threading.Lock()

    def devices(self) -> list[Device]:
        """Every AMD GPU; BackendUnavailable when the runtime is missing or sees no device."""
        with self._lock:
            if self._devices is None:
                hip = api()  # BackendUnavailable naming the package when libamdhip64 is missing
                count = c_int(0)
                status = hip.hipGetDeviceCount(ctypes.byref(count))
                if status == HIP_ERROR_NO_DEVICE or (status == 0 and count.value == 0):
                    raise BackendUnavailable(
                        "hip", f"hipGetDeviceCount returned hipErrorNoDevice ({HIP_ERROR_NO_DEVICE}): the HIP runtime "
                               "sees no AMD GPU (check the amdgpu driver, access to /dev/kfd and /dev/dri, and "
                               "HIP_VISIBLE_DEVICES); compiling with pygpgpu_hip.compile_hip still works"
                    )
                if status != 0:
                    raise BackendUnavailable(
                        "hip", f"hipGetDeviceCount failed with {error_name(status)} ({status}); "
                               "check that the ROCm driver matches the installed HIP runtime"
                    )
                self._devices = [Device(self, i) for i in range(count.value)]
            return list(self._devices)

    def version(self) -> str:
        """HIP runtime + driver versions and the compiler identity (part of cache keys)."""
        parts = [f"HIP runtime {format_version(runtime_version())}", f"driver {driver_version()}"]
        try:
            from .compiler import compiler_identity

            parts.append(compiler_identity())
        except GPGPUError as exc:
            parts.append(f"no compiler ({exc})")
        return ", ".join(parts)

    def describe(self) -> dict:
        """Runtime library and versions and the compiler, for ``pygpgpu info`` (never raises)."""
        from pygpgpu_core.libinfo import library_path, probe

        from ._library import hip_library
        from .compiler import compiler_identity, hiprtc_version

        return {
            "runtime_library": probe(lambda: library_path(hip_library())),
            "runtime_version": probe(lambda: format_version(runtime_version())),
            "driver_version": probe(lambda: str(driver_version())),
            "hiprtc_version": probe(lambda: "%d.%d" % hiprtc_version()),
            "compiler": probe(compiler_identity),
        }

    def __repr__(self) -> str:
        return "<pygpgpu HIP backend>"


backend = HipBackend()
