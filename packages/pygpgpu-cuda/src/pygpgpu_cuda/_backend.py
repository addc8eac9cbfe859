"""The ``cuda`` backend object registered in the ``pygpgpu.backends`` entry-point group."""
from __future__ import annotations

import ctypes

from pygpgpu_core.backend.driver import DriverBackend
from pygpgpu_core.errors import BackendUnavailable

from ._device import Device
from ._driver import driver, driver_version, error_name
from ._nvrtc import nvrtc_version

__all__ = ["CudaBackend", "backend", "MIN_DRIVER"]

MIN_DRIVER = (12, 0)
_CUDA_ERROR_NO_DEVICE = 100
_CUDA_ERROR_INSUFFICIENT_DRIVER = 35


def nvrtc_driver_problem(nvrtc: tuple[int, int], drv: tuple[int, int]) -> str:
    """Why binaries from this NVRTC cannot run on this driver ('' when they can)."""
    if nvrtc[0] <= drv[0]:
        return ""
    wheel = "nvidia-cuda-nvrtc-cu12" if drv[0] == 12 else f"an NVRTC {drv[0]}.x"
    return (
        f"NVRTC {nvrtc[0]}.{nvrtc[1]} is newer than the NVIDIA driver, which supports CUDA {drv[0]}.{drv[1]}: "
        f"code it compiles will not load. Install {wheel} (pip install 'pygpgpu[cu{drv[0]}]') and remove "
        f"the newer NVRTC wheel, point PYGPGPU_NVRTC_LIB at a libnvrtc.so.{drv[0]}, or update the driver"
    )


class CudaBackend(DriverBackend):
    """CUDA through the driver API (libcuda) and NVRTC; nothing is loaded until ``devices()``."""

    name = "cuda"
    dialect = "cuda"
    title = "CUDA"
    driver = driver
    dlpack_device_type = 2         # kDLCUDA: device arrays export and import CUDA device memory
    cuda_array_interface = True    # buffer pointers are CUdeviceptrs

    def _enumerate(self) -> list[Device]:
        """Every CUDA device; BackendUnavailable says why there are none (no driver, no GPU,
        driver too old, NVRTC missing or newer than the driver)."""
        calls = driver()  # BackendUnavailable naming libcuda when it is missing
        status = calls.init(0)
        if status == _CUDA_ERROR_NO_DEVICE:
            raise BackendUnavailable("cuda", "the NVIDIA driver is installed but sees no CUDA device",
                                     fix="check nvidia-smi and CUDA_VISIBLE_DEVICES")
        if status == _CUDA_ERROR_INSUFFICIENT_DRIVER:
            raise BackendUnavailable("cuda", "the NVIDIA driver is too old for this system's CUDA "
                                             "(CUDA_ERROR_INSUFFICIENT_DRIVER): update the driver")
        if status != 0:
            raise BackendUnavailable("cuda", f"cuInit failed with {error_name(status)} ({status})")
        version = driver_version()
        if version < MIN_DRIVER:
            raise BackendUnavailable(
                "cuda", f"the NVIDIA driver supports CUDA {version[0]}.{version[1]}; PyGPGPU needs "
                        f"{MIN_DRIVER[0]}.{MIN_DRIVER[1]} or newer: update the driver")
        problem = nvrtc_driver_problem(nvrtc_version(), version)  # also: NVRTC missing
        if problem:
            raise BackendUnavailable("cuda", problem)
        count = ctypes.c_int()
        calls.check(calls.device_count(ctypes.byref(count)), calls.device_count)
        if count.value == 0:
            raise BackendUnavailable("cuda", "the NVIDIA driver reports no CUDA device")
        return [Device(self, i) for i in range(count.value)]

    def version(self) -> str:
        """``"CUDA driver 13.0; NVRTC 13.5"`` (part of every binary cache key)."""
        d = driver_version()
        n = nvrtc_version()
        return f"CUDA driver {d[0]}.{d[1]}; NVRTC {n[0]}.{n[1]}"

    def describe(self) -> dict:
        """Driver and NVRTC libraries and versions, for ``pygpgpu info`` (loads them; never raises)."""
        from pygpgpu_core.libinfo import library_path, probe

        from ._nvrtc import nvrtc

        return {
            "driver_library": probe(lambda: library_path(driver().path)),
            "driver_cuda_version": probe(lambda: "%d.%d" % driver_version()),
            "nvrtc_library": probe(lambda: library_path(nvrtc().path)),
            "nvrtc_version": probe(lambda: "%d.%d" % nvrtc_version()),
        }


backend = CudaBackend()
