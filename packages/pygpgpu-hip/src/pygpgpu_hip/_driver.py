"""The HIP runtime (libamdhip64): its call table, its error table and its versions.

Nothing here runs at import time: :data:`driver` loads the library on its first call (found
by :mod:`._library`), so ``import pygpgpu_hip`` works on machines without ROCm. The roles are
the driver kit's (``pygpgpu_core.backend.driver``), the same as CUDA's: HIP's module API has
the same shape as CUDA's driver API, so one implementation serves both.
"""
from __future__ import annotations

import ctypes
from ctypes import POINTER, c_char_p, c_int, c_void_p

from pygpgpu_core.backend.driver.calls import call_table
from pygpgpu_core.backend.errors import ErrorTable
from pygpgpu_core.backend.library import Calls, Function, LazyLibrary

from ._library import INSTALL_HINT, hip_candidates

__all__ = ["driver", "check", "error_name", "runtime_version", "driver_version", "format_version",
           "HIP_ERROR_NO_DEVICE", "ATTR", "LIB_ENV"]

LIB_ENV = "PYGPGPU_HIP_LIB"
HIP_ERROR_NO_DEVICE = 100
_F = Function

# hipify's renames of the CUDA driver API functions the driver kit calls; the other stems are
# the same after the prefix (cuMemcpyHtoDAsync: hipMemcpyHtoDAsync).
_RENAMED = {
    "CtxSetCurrent": "hipSetDevice",            # no context objects: the current device
    "LaunchKernel": "hipModuleLaunchKernel",
    "StreamCreate": "hipStreamCreateWithFlags",
    "EventCreate": "hipEventCreateWithFlags",
    "DeviceGetCount": "hipGetDeviceCount",
    "MemAlloc": "hipMalloc",
    "MemFree": "hipFree",
    "MemHostAlloc": "hipHostMalloc",
    "MemFreeHost": "hipHostFree",
    "MemHostGetDevicePointer": "hipHostGetDevicePointer",
    "MemHostRegister": "hipHostRegister",
    "MemHostUnregister": "hipHostUnregister",
    "CtxEnablePeerAccess": "hipDeviceEnablePeerAccess",   # the current device gains access to the peer's
}
# Not offered: pointer attributes (the memory-type numbering changed in ROCm 6, so large copies
# from memory another library page-locked are staged), function attributes and parameter info
# (the code object's metadata says the same without a GPU), the dynamic shared memory
# opt-in (AMD GPUs need none), and cuLaunchKernelEx (HIP's hipDrvLaunchKernelEx is recent and
# untried here: launches go through hipModuleLaunchKernel).
_NOT_OFFERED = {"PointerGetAttribute", "FuncGetAttribute", "FuncSetAttribute", "FuncGetParamInfo", "LaunchKernelEx"}


def _spell(stem: str) -> "str | None":
    return None if stem in _NOT_OFFERED else _RENAMED.get(stem, f"hip{stem}")


# role: function; the driver kit's roles (pygpgpu_core.backend.driver.calls) and HIP's own.
FUNCTIONS: dict[str, Function] = call_table(_spell, {
    "runtime_version": _F("hipRuntimeGetVersion", (POINTER(c_int),)),
    "error_name": _F("hipGetErrorName", (c_int,), restype=c_char_p),
    "error_string": _F("hipGetErrorString", (c_int,), restype=c_char_p),
    "device_properties": _F("hipGetDeviceProperties", (c_void_p, c_int), optional=True),
    "device_properties_r0600": _F("hipGetDevicePropertiesR0600", (c_void_p, c_int), optional=True),  # ROCm 6+
    "device_synchronize": _F("hipDeviceSynchronize", ()),
})

# hipDeviceAttribute_t values that are the same in ROCm 5, 6 and 7 (the enum was renumbered
# only after hipDeviceAttributeMultiprocessorCount, and not for these).
ATTR = {
    "integrated": 16,
    "max_block_dim_x": 26,
    "max_threads_per_block": 56,
    "multiprocessor_count": 63,
    "max_shared_memory_per_block": 74,
}

# A kernel fault poisons the process's device state; later calls keep failing.
_FATAL = {700: "hipErrorIllegalAddress", 719: "hipErrorLaunchFailure", 710: "hipErrorAssert"}
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
    701: "the launch asks for more registers, threads or shared memory than the device has; use a smaller local size",
}


def _ask(role: str):
    def ask(calls: Calls, code: int) -> "str | None":
        text = getattr(calls, role)(int(code))
        return text.decode() if text else None

    return ask


ERRORS = ErrorTable(
    "hip", fatal=_FATAL, hints=_HINTS, unknown="hipError({code})",
    lost="the device state is lost and every later HIP call in this process fails: restart the Python process",
    ask_name=_ask("error_name"), ask_text=_ask("error_string"),
)

driver = LazyLibrary(
    "hip", "the HIP runtime library", FUNCTIONS, env=LIB_ENV, errors=ERRORS, fork_unsafe=True,
    candidates=hip_candidates, hint=INSTALL_HINT, too_old="this HIP runtime is too old",
)
"""``driver()`` is the bound call table; the first call loads libamdhip64 (BackendUnavailable
naming the package to install when it is missing)."""


def error_name(code: int) -> str:
    """hipGetErrorName for ``code`` when the runtime is loaded (``hipError(<code>)`` otherwise)."""
    return ERRORS.name(code, driver.calls)


def check(status: int, call: str, hint: str = "") -> None:
    """Raise DriverError (ContextLost for kernel faults) unless ``status`` is hipSuccess."""
    ERRORS.check(status, call, hint, driver.calls)


def runtime_version() -> int:
    """hipRuntimeGetVersion, e.g. 50221153 for ROCm 5.2.3 (major*10^7 + minor*10^5 + patch)."""
    value, calls = c_int(), driver()
    calls.check(calls.runtime_version(ctypes.byref(value)), calls.runtime_version)
    return value.value


def driver_version() -> int:
    """hipDriverGetVersion (works without a device)."""
    value, calls = c_int(), driver()
    calls.check(calls.driver_version(ctypes.byref(value)), calls.driver_version)
    return value.value


def format_version(packed: int) -> str:
    """50221153 -> "5.2.21153"."""
    return f"{packed // 10_000_000}.{packed // 100_000 % 100}.{packed % 100_000}"
