"""The ``hip`` backend object registered in the ``pygpgpu.backends`` entry-point group."""
from __future__ import annotations

import ctypes
from ctypes import c_int

from pygpgpu_core.backend.driver import DriverBackend
from pygpgpu_core.errors import BackendUnavailable, GPGPUError

from ._device import Device
from ._driver import HIP_ERROR_NO_DEVICE, driver, driver_version, error_name, format_version, runtime_version

__all__ = ["HipBackend", "backend"]


class HipBackend(DriverBackend):
    """HIP through the runtime's module API (libamdhip64) and hiprtc; nothing is loaded until
    ``devices()``."""

    name = "hip"
    dialect = "hip"
    title = "HIP"
    driver = driver
    dlpack_device_type = 10        # kDLROCM: device arrays export and import ROCm device memory

    def _enumerate(self) -> list[Device]:
        """Every AMD GPU; BackendUnavailable when the runtime is missing or sees no device."""
        calls = driver()  # BackendUnavailable naming the package when libamdhip64 is missing
        count = c_int(0)
        status = calls.device_count(ctypes.byref(count))
        if status == HIP_ERROR_NO_DEVICE or (status == 0 and count.value == 0):
            raise BackendUnavailable(
                "hip", f"the HIP runtime sees no AMD GPU: hipGetDeviceCount returned hipErrorNoDevice "
                       f"({HIP_ERROR_NO_DEVICE}); compiling with pygpgpu_hip.compile_hip still works",
                fix="on an AMD GPU machine, check the amdgpu driver, access to /dev/kfd and /dev/dri, and "
                    "HIP_VISIBLE_DEVICES")
        if status != 0:
            raise BackendUnavailable(
                "hip", f"hipGetDeviceCount failed with {error_name(status)} ({status}); "
                       "check that the ROCm driver matches the installed HIP runtime"
            )
        return [Device(self, i) for i in range(count.value)]

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

        from .compiler import compiler_identity, hiprtc_version

        return {
            "runtime_library": probe(lambda: library_path(driver().path)),
            "runtime_version": probe(lambda: format_version(runtime_version())),
            "driver_version": probe(lambda: str(driver_version())),
            "hiprtc_version": probe(lambda: "%d.%d" % hiprtc_version()),
            "compiler": probe(compiler_identity),
        }


backend = HipBackend()
