"""The CUDA driver API (libcuda): its call table, its error table and the driver version.

Nothing here runs at import time: :data:`driver` loads the library on its first call, so
``import pygpgpu_cuda`` works on machines without an NVIDIA driver.
"""
from __future__ import annotations

import ctypes
import sys
from ctypes import POINTER, c_char_p, c_float, c_int, c_uint, c_uint64, c_void_p

from pygpgpu_core.backend.driver.calls import call_table
from pygpgpu_core.backend.errors import ErrorTable
from pygpgpu_core.backend.library import Calls, Function, LazyLibrary

__all__ = ["driver", "check", "error_name", "driver_version", "STICKY_ERRORS", "LIB_ENV"]

LIB_ENV = "PYGPGPU_CUDA_LIB"
_DEFAULT_LIB = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"

CUresult = c_int
CUdeviceptr = c_uint64
_h = c_void_p  # every opaque handle (CUcontext, CUmodule, CUfunction, CUstream, CUevent)
_F = Function

# Unversioned names in cuda.h are macros for these exported symbols.
_V2 = {"DeviceTotalMem", "StreamDestroy", "EventDestroy", "MemAlloc", "MemFree", "MemGetInfo",
       "MemHostGetDevicePointer", "MemHostRegister", "MemcpyHtoDAsync", "MemcpyDtoHAsync", "MemcpyDtoDAsync"}


def _spell(stem: str) -> str:
    return f"cu{stem}_v2" if stem in _V2 else f"cu{stem}"


# role: function; the driver kit's roles (pygpgpu_core.backend.driver.calls) and CUDA's own.
# cuFuncGetParamInfo (CUDA 12.4+) is bound when the driver has it, otherwise argument counts
# are not checked.
FUNCTIONS: dict[str, Function] = call_table(_spell, {
    "init": _F("cuInit", (c_uint,)),
    "error_name": _F("cuGetErrorName", (CUresult, POINTER(c_char_p))),
    "error_string": _F("cuGetErrorString", (CUresult, POINTER(c_char_p))),
    "device_get": _F("cuDeviceGet", (POINTER(c_int), c_int)),
    "primary_context_retain": _F("cuDevicePrimaryCtxRetain", (POINTER(_h), c_int)),
    "primary_context_release": _F("cuDevicePrimaryCtxRelease_v2", (c_int,)),
    "context_synchronize": _F("cuCtxSynchronize", ()),
    "event_elapsed_time": _F("cuEventElapsedTime", (POINTER(c_float), _h, _h)),
    # A one-kernel graph per native launcher (backend/native.py): its node's arguments set, then
    # replayed, costs the driver less than cuLaunchKernelEx (benchmarks/RESULTS.md). Only the
    # native launcher calls these, by address; CUDA 12.0+ (the _v2 node parameters).
    "graph_create": _F("cuGraphCreate", None, optional=True),
    "graph_add_kernel_node": _F("cuGraphAddKernelNode_v2", None, optional=True),
    "graph_instantiate": _F("cuGraphInstantiateWithFlags", None, optional=True),
    "graph_exec_kernel_node_set_params": _F("cuGraphExecKernelNodeSetParams_v2", None, optional=True),
    "graph_launch": _F("cuGraphLaunch", None, optional=True),
    "graph_exec_destroy": _F("cuGraphExecDestroy", None, optional=True),
    "graph_destroy": _F("cuGraphDestroy", None, optional=True),
})

# Errors after which the context is unusable for the rest of the process.
STICKY_ERRORS = {
    700: "CUDA_ERROR_ILLEGAL_ADDRESS",
    702: "CUDA_ERROR_LAUNCH_TIMEOUT",
    710: "CUDA_ERROR_ASSERT",
    714: "CUDA_ERROR_HARDWARE_STACK_ERROR",
    715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    716: "CUDA_ERROR_MISALIGNED_ADDRESS",
    717: "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    718: "CUDA_ERROR_INVALID_PC",
    719: "CUDA_ERROR_LAUNCH_FAILED",
}
_HINTS = {
    2: "the GPU is out of memory: free buffers (close() them or drop the arrays) or use smaller data",
    35: "the NVIDIA driver is older than this CUDA code needs: update the driver",
    100: "no CUDA-capable device is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)",
    101: "the device index does not exist",
    200: "the binary is not valid for this device",
    209: "no binary for this GPU in the module: it was compiled for another architecture",
    218: "the PTX was produced by a newer compiler than this driver's JIT: compile a CUBIN for the "
    "exact sm_XY, or install an NVRTC whose major version matches the driver",
    222: "the PTX is newer than this driver understands: update the driver or use an older NVRTC",
    500: "no kernel with that name exists in the module",
    701: "too many resources requested for this launch: use a smaller local size (threads per block) "
    "or less shared memory",
}


def _ask(role: str):
    def ask(calls: Calls, code: int) -> "str | None":
        text = c_char_p()
        if getattr(calls, role)(code, ctypes.byref(text)) == 0 and text.value:
            return text.value.decode()
        return None

    return ask


ERRORS = ErrorTable(
    "cuda", fatal=STICKY_ERRORS, hints=_HINTS, unknown="CUresult {code}",
    lost="the CUDA context is lost and every later CUDA call in this process fails. Restart the Python "
         "process; run it under compute-sanitizer to find the faulting access",
    ask_name=_ask("error_name"), ask_text=_ask("error_string"),
)

driver = LazyLibrary(
    "cuda", "the NVIDIA driver library", FUNCTIONS, env=LIB_ENV, errors=ERRORS, fork_unsafe=True,
    candidates=lambda: [_DEFAULT_LIB],
    hint=f"Install the NVIDIA driver (it ships {_DEFAULT_LIB}), or set {LIB_ENV} to the path of {_DEFAULT_LIB}",
    too_old="the NVIDIA driver is too old (update it)",
)
"""``driver()`` is the bound call table (``driver().init(0)``); the first call loads libcuda."""


def error_name(code: int) -> str:
    """``CUDA_ERROR_...`` for a CUresult, from the driver itself when it is loaded."""
    return ERRORS.name(code, driver.calls)


def check(status: int, call: str, hint: str = "") -> None:
    """Raise the pygpgpu error for a failed driver call (``status != CUDA_SUCCESS``)."""
    ERRORS.check(status, call, hint, driver.calls)


def driver_version() -> tuple[int, int]:
    """The CUDA version the installed driver supports, e.g. ``(13, 0)``."""
    v = c_int()
    calls = driver()
    calls.check(calls.driver_version(ctypes.byref(v)), calls.driver_version)
    return v.value // 1000, (v.value % 1000) // 10
