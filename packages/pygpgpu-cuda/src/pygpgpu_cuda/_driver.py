"""The CUDA driver API (libcuda) through ctypes: loading, prototypes and the one ``check()``.

Nothing here runs at import time: :func:`driver` loads the library on first use, so
``import pygpgpu_cuda`` works on machines without an NVIDIA driver.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
from ctypes import POINTER, c_char_p, c_float, c_int, c_size_t, c_uint, c_uint64, c_void_p
from types import SimpleNamespace

from pygpgpu_core.errors import BackendUnavailable, ContextLost, DriverError

__all__ = ["driver", "check", "error_name", "driver_version", "STICKY_ERRORS", "LIB_ENV"]

LIB_ENV = "PYGPGPU_CUDA_LIB"
_DEFAULT_LIB = "nvcuda.dll" if sys.platform == "win32" else "libcuda.so.1"

CUresult = c_int
CUdeviceptr = c_uint64
_h = c_void_p  # every opaque handle (CUcontext, CUmodule, CUfunction, CUstream, CUevent)

# name: argtypes. Unversioned names in cuda.h are macros for these exported symbols.
_PROTOTYPES: dict[str, tuple] = {
    "cuInit": (c_uint,),
    "cuDriverGetVersion": (POINTER(c_int),),
    "cuGetErrorName": (CUresult, POINTER(c_char_p)),
    "cuGetErrorString": (CUresult, POINTER(c_char_p)),
    "cuDeviceGetCount": (POINTER(c_int),),
    "cuDeviceGet": (POINTER(c_int), c_int),
    "cuDeviceGetName": (c_char_p, c_int, c_int),
    "cuDeviceGetAttribute": (POINTER(c_int), c_int, c_int),
    "cuDeviceTotalMem_v2": (POINTER(c_size_t), c_int),
    "cuDevicePrimaryCtxRetain": (POINTER(_h), c_int),
    "cuDevicePrimaryCtxRelease_v2": (c_int,),
    "cuCtxSetCurrent": (_h,),
    "cuCtxGetCurrent": (POINTER(_h),),
    "cuCtxSynchronize": (),
    "cuStreamCreate": (POINTER(_h), c_uint),
    "cuStreamSynchronize": (_h,),
    "cuStreamDestroy_v2": (_h,),
    "cuEventCreate": (POINTER(_h), c_uint),
    "cuEventRecord": (_h, _h),
    "cuEventSynchronize": (_h,),
    "cuEventElapsedTime": (POINTER(c_float), _h, _h),
    "cuEventDestroy_v2": (_h,),
    "cuStreamWaitEvent": (_h, _h, c_uint),
    "cuMemAlloc_v2": (POINTER(CUdeviceptr), c_size_t),
    "cuMemFree_v2": (CUdeviceptr,),
    "cuMemGetInfo_v2": (POINTER(c_size_t), POINTER(c_size_t)),
    "cuMemHostAlloc": (POINTER(c_void_p), c_size_t, c_uint),
    "cuMemFreeHost": (c_void_p,),
    "cuMemHostGetDevicePointer_v2": (POINTER(CUdeviceptr), c_void_p, c_uint),
    "cuMemHostRegister_v2": (c_void_p, c_size_t, c_uint),
    "cuMemHostUnregister": (c_void_p,),
    "cuMemcpyHtoDAsync_v2": (CUdeviceptr, c_void_p, c_size_t, _h),
    "cuMemcpyDtoHAsync_v2": (c_void_p, CUdeviceptr, c_size_t, _h),
    "cuMemcpyDtoDAsync_v2": (CUdeviceptr, CUdeviceptr, c_size_t, _h),
    "cuMemsetD8Async": (CUdeviceptr, ctypes.c_ubyte, c_size_t, _h),
    "cuMemsetD16Async": (CUdeviceptr, ctypes.c_ushort, c_size_t, _h),
    "cuMemsetD32Async": (CUdeviceptr, c_uint, c_size_t, _h),
    "cuPointerGetAttribute": (c_void_p, c_int, CUdeviceptr),
    "cuModuleLoadData": (POINTER(_h), c_void_p),
    "cuModuleUnload": (_h,),
    "cuModuleGetFunction": (POINTER(_h), _h, c_char_p),
    "cuFuncGetAttribute": (POINTER(c_int), c_int, _h),
    "cuFuncSetAttribute": (_h, c_int, c_int),
    "cuLaunchKernel": (_h, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, _h, c_void_p, c_void_p),
}
# Newer entry points: bound when the driver has them, otherwise the feature is skipped.
_OPTIONAL: dict[str, tuple] = {
    "cuFuncGetParamInfo": (_h, c_size_t, POINTER(c_size_t), POINTER(c_size_t)),  # CUDA 12.4+
}

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

_lock = threading.Lock()
_driver: "SimpleNamespace | None" = None


def _load_library() -> ctypes.CDLL:
    path = os.environ.get(LIB_ENV) or _DEFAULT_LIB
    try:
        return ctypes.CDLL(path)
    except OSError as exc:
        where = f"{path!r} (from ${LIB_ENV})" if os.environ.get(LIB_ENV) else repr(path)
        raise BackendUnavailable(
            "cuda",
            f"the NVIDIA driver library {where} could not be loaded ({exc}). Install the NVIDIA driver "
            f"(it ships {_DEFAULT_LIB}), or set {LIB_ENV} to the path of {_DEFAULT_LIB}",
        ) from None


def driver() -> SimpleNamespace:
    """The bound driver functions (``driver().cuInit(0)``); loads libcuda on first call."""
    global _driver
    if _driver is not None:
        return _driver
    with _lock:
        if _driver is None:
            lib = _load_library()
            ns = SimpleNamespace(path=getattr(lib, "_name", _DEFAULT_LIB))
            for name, argtypes in list(_PROTOTYPES.items()) + list(_OPTIONAL.items()):
                try:
                    fn = getattr(lib, name)
                except AttributeError:
                    if name in _OPTIONAL:
                        setattr(ns, name.removesuffix("_v2"), None)
                        continue
                    raise BackendUnavailable(
                        "cuda", f"{ns.path} has no {name}: the NVIDIA driver is too old; update it"
                    ) from None
                fn.restype = CUresult
                fn.argtypes = argtypes
                setattr(ns, name.removesuffix("_v2"), fn)
            # The launch path calls these with ready-made ctypes handles and small ints: without
            # argtypes ctypes skips a from_param() per argument, 1-2 us of a 6-8 us launch on
            # the H200 machine. (lib[name] is a separate function object from lib.name.)
            for name in ("cuLaunchKernel", "cuCtxSetCurrent"):
                raw = lib[name]
                raw.restype = CUresult
                setattr(ns, name + "_unchecked", raw)
            _driver = ns
    return _driver


def error_name(code: int) -> str:
    """``CUDA_ERROR_...`` for a CUresult, from the driver itself when it is loaded."""
    if code in STICKY_ERRORS:
        return STICKY_ERRORS[code]
    if _driver is not None:
        text = c_char_p()
        if _driver.cuGetErrorName(code, ctypes.byref(text)) == 0 and text.value:
            return text.value.decode()
    return f"CUresult {code}"


def _error_text(code: int) -> str:
    if _driver is None:
        return ""
    text = c_char_p()
    if _driver.cuGetErrorString(code, ctypes.byref(text)) == 0 and text.value:
        return text.value.decode()
    return ""


def check(status: int, call: str, hint: str = "") -> None:
    """Raise the pygpgpu error for a failed driver call (``status != CUDA_SUCCESS``)."""
    if status == 0:
        return
    name = error_name(status)
    if status in STICKY_ERRORS:
        raise ContextLost(
            "cuda", call, status, name,
            f"a kernel faulted ({_error_text(status) or name}); the CUDA context is lost and every later "
            "CUDA call in this process fails. Restart the Python process; run it under compute-sanitizer "
            "to find the faulting access",
        )
    explanation = hint or _HINTS.get(status) or _error_text(status)
    raise DriverError("cuda", call, status, name, explanation)


def driver_version() -> tuple[int, int]:
    """The CUDA version the installed driver supports, e.g. ``(13, 0)``."""
    v = c_int()
    check(driver().cuDriverGetVersion(ctypes.byref(v)), "cuDriverGetVersion")
    return v.value // 1000, (v.value % 1000) // 10
