"""Loading libOpenCL on first use, the C signatures we call, and typed info queries.

Nothing here runs at import time: :func:`lib` loads the ICD loader the first time a device
is enumerated, so ``import pygpgpu_opencl`` works on machines without OpenCL.
``PYGPGPU_OPENCL_LIB`` names a specific library file (e.g. a vendor ``libOpenCL.so``).
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
from ctypes import POINTER, c_char_p, c_int32, c_size_t, c_uint32, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any, Callable

from pygpgpu_core.errors import BackendUnavailable

from ._status import check

__all__ = ["lib", "OpenCLLibrary", "info_bytes", "info_str", "info_uint", "info_ulong", "info_size", "info_sizes"]

cl_int = c_int32
cl_uint = c_uint32
cl_ulong = c_uint64
handle = c_void_p
_P = POINTER

# name: (restype, argtypes). Optional entry points (1.2+ or absent in old loaders) are
# looked up the same way and set to None when missing.
_SIGNATURES: dict[str, tuple[Any, tuple]] = {
    "clGetPlatformIDs": (cl_int, (cl_uint, _P(handle), _P(cl_uint))),
    "clGetPlatformInfo": (cl_int, (handle, cl_uint, c_size_t, c_void_p, _P(c_size_t))),
    "clGetDeviceIDs": (cl_int, (handle, cl_ulong, cl_uint, _P(handle), _P(cl_uint))),
    "clGetDeviceInfo": (cl_int, (handle, cl_uint, c_size_t, c_void_p, _P(c_size_t))),
    "clCreateContext": (handle, (c_void_p, cl_uint, _P(handle), c_void_p, c_void_p, _P(cl_int))),
    "clReleaseContext": (cl_int, (handle,)),
    "clCreateCommandQueue": (handle, (handle, handle, cl_ulong, _P(cl_int))),
    "clReleaseCommandQueue": (cl_int, (handle,)),
    "clFinish": (cl_int, (handle,)),
    "clWaitForEvents": (cl_int, (cl_uint, _P(handle))),
    "clGetEventInfo": (cl_int, (handle, cl_uint, c_size_t, c_void_p, _P(c_size_t))),
    "clReleaseEvent": (cl_int, (handle,)),
    "clRetainEvent": (cl_int, (handle,)),
    "clEnqueueMarkerWithWaitList": (cl_int, (handle, cl_uint, c_void_p, _P(handle))),
    "clEnqueueMarker": (cl_int, (handle, _P(handle))),
    "clFlush": (cl_int, (handle,)),
    "clCreateBuffer": (handle, (handle, cl_ulong, c_size_t, c_void_p, _P(cl_int))),
    "clReleaseMemObject": (cl_int, (handle,)),
    "clCreateSubBuffer": (handle, (handle, cl_ulong, cl_uint, c_void_p, _P(cl_int))),
    "clEnqueueWriteBuffer": (cl_int, (handle, handle, cl_uint, c_size_t, c_size_t, c_void_p, cl_uint, c_void_p, c_void_p)),
    "clEnqueueReadBuffer": (cl_int, (handle, handle, cl_uint, c_size_t, c_size_t, c_void_p, cl_uint, c_void_p, c_void_p)),
    "clEnqueueCopyBuffer": (cl_int, (handle, handle, handle, c_size_t, c_size_t, c_size_t, cl_uint, c_void_p, c_void_p)),
    "clEnqueueFillBuffer": (cl_int, (handle, handle, c_void_p, c_size_t, c_size_t, c_size_t, cl_uint, c_void_p, c_void_p)),
    "clEnqueueMapBuffer": (
        c_void_p,
        (handle, handle, cl_uint, cl_ulong, c_size_t, c_size_t, cl_uint, c_void_p, c_void_p, _P(cl_int)),
    ),
    "clEnqueueUnmapMemObject": (cl_int, (handle, handle, c_void_p, cl_uint, c_void_p, c_void_p)),
    "clCreateProgramWithSource": (handle, (handle, cl_uint, _P(c_char_p), _P(c_size_t), _P(cl_int))),
    "clCreateProgramWithBinary": (
        handle,
        (handle, cl_uint, _P(handle), _P(c_size_t), _P(c_char_p), _P(cl_int), _P(cl_int)),
    ),
    "clBuildProgram": (cl_int, (handle, cl_uint, _P(handle), c_char_p, c_void_p, c_void_p)),
    "clGetProgramInfo": (cl_int, (handle, cl_uint, c_size_t, c_void_p, _P(c_size_t))),
    "clGetProgramBuildInfo": (cl_int, (handle, handle, cl_uint, c_size_t, c_void_p, _P(c_size_t))),
    "clReleaseProgram": (cl_int, (handle,)),
    "clCreateKernel": (handle, (handle, c_char_p, _P(cl_int))),
    "clReleaseKernel": (cl_int, (handle,)),
    "clGetKernelInfo": (cl_int, (handle, cl_uint, c_size_t, c_void_p, _P(c_size_t))),
    "clGetKernelArgInfo": (cl_int, (handle, cl_uint, cl_uint, c_size_t, c_void_p, _P(c_size_t))),
    "clGetKernelWorkGroupInfo": (cl_int, (handle, handle, cl_uint, c_size_t, c_void_p, _P(c_size_t))),
    "clSetKernelArg": (cl_int, (handle, cl_uint, c_size_t, c_void_p)),
    "clEnqueueNDRangeKernel": (
        cl_int,
        (handle, handle, cl_uint, c_void_p, c_void_p, c_void_p, cl_uint, c_void_p, c_void_p),
    ),
}
_OPTIONAL = {"clEnqueueFillBuffer", "clGetKernelArgInfo", "clCreateSubBuffer", "clEnqueueMarkerWithWaitList",
             "clEnqueueMarker"}


def _candidates() -> list[str]:
    override = os.environ.get("PYGPGPU_OPENCL_LIB", "").strip()
    if override:
        return [override]
    if sys.platform == "darwin":
        return ["/System/Library/Frameworks/OpenCL.framework/OpenCL"]
    if sys.platform == "win32":
        return ["OpenCL.dll"]
    return ["libOpenCL.so.1", "libOpenCL.so"]


_INSTALL_HINT = (
    "install the OpenCL ICD loader and a driver: on Debian/Ubuntu "
    "`apt-get install ocl-icd-libopencl1 pocl-opencl-icd` (PoCL runs OpenCL on the CPU), "
    "or your GPU vendor's OpenCL driver; or point PYGPGPU_OPENCL_LIB at a libOpenCL file"
)


class OpenCLLibrary:
    """The loaded ICD loader with typed entry points as attributes (``lib().clFinish``)."""

    def __init__(self, path: str, cdll: ctypes.CDLL):
        self.path = path
        self.cdll = cdll
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                fn = getattr(cdll, name)
            except AttributeError:
                if name in _OPTIONAL:
                    setattr(self, name, None)
                    continue
                raise BackendUnavailable(
                    "opencl", f"{path} lacks {name}; it is not an OpenCL 1.2 ICD loader ({_INSTALL_HINT})"
                ) from None
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)

    if TYPE_CHECKING:  # the entry points of _SIGNATURES, bound in __init__
        def __getattr__(self, name: str) -> Any: ...


_lock = threading.Lock()
_loaded: "OpenCLLibrary | None" = None


def lib() -> OpenCLLibrary:
    """The OpenCL library, loaded on the first call. Raises BackendUnavailable with a fix."""
    global _loaded
    if _loaded is not None:
        return _loaded
    with _lock:
        if _loaded is None:
            errors = []
            for path in _candidates():
                try:
                    cdll = ctypes.CDLL(path)
                except OSError as exc:
                    # the loader's text usually starts with the path already: not "x.so: x.so: cannot open"
                    errors.append(str(exc) if str(exc).startswith(f"{path}: ") else f"{path}: {exc}")
                    continue
                _loaded = OpenCLLibrary(path, cdll)
                break
            else:
                raise BackendUnavailable("opencl", f"cannot load libOpenCL ({'; '.join(errors)})", fix=_INSTALL_HINT)
    return _loaded


# --- typed info queries (clGet*Info all share the size-then-data convention) ----------

def info_bytes(getter: Callable[..., int], call: str, *head: Any) -> bytes:
    """Raw bytes of an info query: ``getter(*head, size, buffer, size_ret)``."""
    size = c_size_t(0)
    check(getter(*head, 0, None, ctypes.byref(size)), call)
    if size.value == 0:
        return b""
    buf = ctypes.create_string_buffer(size.value)
    check(getter(*head, size.value, buf, None), call)
    return buf.raw


def info_str(getter: Callable[..., int], call: str, *head: Any) -> str:
    return info_bytes(getter, call, *head).split(b"\0", 1)[0].decode("utf-8", "replace").strip()


def _info_scalar(ctype: Any, getter: Callable[..., int], call: str, *head: Any) -> int:
    value = ctype(0)
    check(getter(*head, ctypes.sizeof(value), ctypes.byref(value), None), call)
    return int(value.value)


def info_uint(getter: Callable[..., int], call: str, *head: Any) -> int:
    return _info_scalar(cl_uint, getter, call, *head)


def info_ulong(getter: Callable[..., int], call: str, *head: Any) -> int:
    return _info_scalar(cl_ulong, getter, call, *head)


def info_size(getter: Callable[..., int], call: str, *head: Any) -> int:
    return _info_scalar(c_size_t, getter, call, *head)


def info_sizes(getter: Callable[..., int], call: str, *head: Any) -> tuple[int, ...]:
    raw = info_bytes(getter, call, *head)
    n = len(raw) // ctypes.sizeof(c_size_t)
    return tuple((c_size_t * n).from_buffer_copy(raw[: n * ctypes.sizeof(c_size_t)]))
