"""ctypes prototypes for the HIP runtime calls we use, and the one ``check()`` for hipError_t."""
from __future__ import annotations

import ctypes
import threading
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint, c_void_p

from pygpgpu_core.errors import ContextLost, DriverError

from ._library import hip_library

__all__ = ["api", "check", "error_name", "HIP_ERROR_NO_DEVICE", "ATTR"]

HIP_SUCCESS = 0
HIP_ERROR_NO_DEVICE = 100
HIP_ERROR_NOT_FOUND = 500
# A kernel fault poisons the process's device state; later calls keep failing.
_FATAL = {700: "hipErrorIllegalAddress", 719: "hipErrorLaunchFailure", 710: "hipErrorAssert"}

# hipDeviceAttribute_t values that are the same in ROCm 5, 6 and 7 (the enum was renumbered
# only after hipDeviceAttributeMultiprocessorCount, and not for these).
ATTR = {
    "integrated": 16,
    "max_block_dim_x": 26,
    "max_threads_per_block": 56,
    "multiprocessor_count": 63,
    "max_shared_memory_per_block": 74,
}

_HINTS = {
    1: "an argument passed to the HIP runtime was invalid",
    2: "the device is out of memory; free buffers or use smaller arrays",
    98: "the kernel cannot run on this device; it was probably compiled for another gfx architecture",
    100: "no AMD GPU is visible to the HIP runtime (check the amdgpu driver, /dev/kfd permissions, "
         "HIP_VISIBLE_DEVICES)",
    101: "the device index is out of range, or there is no AMD GPU",
    200: "the code object is not valid for this device; recompile it for the device's gfx architecture",
    209: "the code object holds no code for this GPU's architecture; recompile for the device's gfx arch",
    500: "no kernel of that name in the module; declare it extern \"C\" so its name is not mangled",
    700: "a kernel accessed an invalid address; the device state is lost, restart the process",
    701: "the launch asks for more registers, threads or shared memory than the device has; use a smaller local size",
    719: "a kernel faulted; the device state is lost, restart the process",
}

_api_lock = threading.Lock()
_api = None


def error_name(code: int) -> str:
    """hipGetErrorName for ``code`` (the numeric code if the runtime cannot say)."""
    try:
        fn = hip_library().hipGetErrorName
        fn.restype = c_char_p
        fn.argtypes = [c_int]
        name = fn(int(code))
        return name.decode() if name else f"hipError({code})"
    except Exception:
        return f"hipError({code})"


def check(status: int, call: str) -> None:
    """Raise DriverError (ContextLost for kernel faults) unless ``status`` is hipSuccess."""
    if status == HIP_SUCCESS:
        return
    name = error_name(status)
    hint = _HINTS.get(status, "")
    if status in _FATAL:
        raise ContextLost("hip", call, status, name, hint)
    raise DriverError("hip", call, status, name, hint)


class _Api:
    """Attribute access to prototyped HIP runtime functions."""

    _PROTOTYPES = {
        "hipRuntimeGetVersion": [POINTER(c_int)],
        "hipDriverGetVersion": [POINTER(c_int)],
        "hipGetDeviceCount": [POINTER(c_int)],
        "hipSetDevice": [c_int],
        "hipGetDevice": [POINTER(c_int)],
        "hipDeviceGetName": [c_char_p, c_int, c_int],
        "hipDeviceTotalMem": [POINTER(c_size_t), c_int],
        "hipDeviceGetAttribute": [POINTER(c_int), c_int, c_int],
        "hipGetDeviceProperties": [c_void_p, c_int],
        "hipGetDevicePropertiesR0600": [c_void_p, c_int],
        "hipDeviceSynchronize": [],
        "hipStreamCreate": [POINTER(c_void_p)],
        "hipStreamSynchronize": [c_void_p],
        "hipStreamDestroy": [c_void_p],
        "hipMalloc": [POINTER(c_void_p), c_size_t],
        "hipFree": [c_void_p],
        "hipMemcpyHtoDAsync": [c_void_p, c_void_p, c_size_t, c_void_p],
        "hipMemcpyDtoHAsync": [c_void_p, c_void_p, c_size_t, c_void_p],
        "hipMemcpyDtoDAsync": [c_void_p, c_void_p, c_size_t, c_void_p],
        "hipMemsetD8Async": [c_void_p, ctypes.c_ubyte, c_size_t, c_void_p],
        "hipMemsetD16Async": [c_void_p, ctypes.c_ushort, c_size_t, c_void_p],
        "hipMemsetD32Async": [c_void_p, c_int, c_size_t, c_void_p],
        "hipModuleLoadData": [POINTER(c_void_p), c_void_p],
        "hipModuleUnload": [c_void_p],
        "hipModuleGetFunction": [POINTER(c_void_p), c_void_p, c_char_p],
        "hipModuleLaunchKernel": [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p,
                                  c_void_p, c_void_p],
    }

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        for name, argtypes in self._PROTOTYPES.items():
            fn = getattr(lib, name, None)
            if fn is None:
                continue  # optional (e.g. hipGetDevicePropertiesR0600 exists from ROCm 6 on)
            fn.argtypes = argtypes
            fn.restype = c_int
            setattr(self, name, fn)

    def has(self, name: str) -> bool:
        return name in self.__dict__


def api() -> _Api:
    """The prototyped runtime (loads libamdhip64 on first call; raises BackendUnavailable)."""
    global _api
    if _api is None:
        lib = hip_library()
        with _api_lock:
            if _api is None:
                _api = _Api(lib)
    return _api


def runtime_version() -> int:
    """hipRuntimeGetVersion, e.g. 50221153 for ROCm 5.2.3 (major*10^7 + minor*10^5 + patch)."""
    value = c_int()
    check(api().hipRuntimeGetVersion(ctypes.byref(value)), "hipRuntimeGetVersion")
    return value.value


def driver_version() -> int:
    """hipDriverGetVersion (works without a device)."""
    value = c_int()
    check(api().hipDriverGetVersion(ctypes.byref(value)), "hipDriverGetVersion")
    return value.value


def format_version(packed: int) -> str:
    """50221153 -> "5.2.21153"."""
    return f"{packed // 10_000_000}.{packed // 100_000 % 100}.{packed % 100_000}"
