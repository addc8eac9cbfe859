"""OpenCL status codes: their names, a hint for the common ones, and the one ``check()``.

Every OpenCL call in this package goes through :func:`check`, so a failing call always
surfaces as a :class:`~pygpgpu_core.errors.DriverError` carrying the vendor's name for the
code (``CL_INVALID_WORK_GROUP_SIZE``) and, where we know one, what to do about it.
"""
from __future__ import annotations

from pygpgpu_core.errors import DriverError

__all__ = ["STATUS_NAMES", "status_name", "check", "CL_SUCCESS"]

CL_SUCCESS = 0

# Core codes from CL/cl.h (1.0 .. 3.0), then extension codes from cl_ext.h / cl_egl.h /
# cl_d3d*.h / vendor headers. Vendors return the extension ones from core calls too.
STATUS_NAMES: dict[int, str] = {
    0: "CL_SUCCESS",
    -1: "CL_DEVICE_NOT_FOUND",
    -2: "CL_DEVICE_NOT_AVAILABLE",
    -3: "CL_COMPILER_NOT_AVAILABLE",
    -4: "CL_MEM_OBJECT_ALLOCATION_FAILURE",
    -5: "CL_OUT_OF_RESOURCES",
    -6: "CL_OUT_OF_HOST_MEMORY",
    -7: "CL_PROFILING_INFO_NOT_AVAILABLE",
    -8: "CL_MEM_COPY_OVERLAP",
    -9: "CL_IMAGE_FORMAT_MISMATCH",
    -10: "CL_IMAGE_FORMAT_NOT_SUPPORTED",
    -11: "CL_BUILD_PROGRAM_FAILURE",
    -12: "CL_MAP_FAILURE",
    -13: "CL_MISALIGNED_SUB_BUFFER_OFFSET",
    -14: "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST",
    -15: "CL_COMPILE_PROGRAM_FAILURE",
    -16: "CL_LINKER_NOT_AVAILABLE",
    -17: "CL_LINK_PROGRAM_FAILURE",
    -18: "CL_DEVICE_PARTITION_FAILED",
    -19: "CL_KERNEL_ARG_INFO_NOT_AVAILABLE",
    -30: "CL_INVALID_VALUE",
    -31: "CL_INVALID_DEVICE_TYPE",
    -32: "CL_INVALID_PLATFORM",
    -33: "CL_INVALID_DEVICE",
    -34: "CL_INVALID_CONTEXT",
    -35: "CL_INVALID_QUEUE_PROPERTIES",
    -36: "CL_INVALID_COMMAND_QUEUE",
    -37: "CL_INVALID_HOST_PTR",
    -38: "CL_INVALID_MEM_OBJECT",
    -39: "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR",
    -40: "CL_INVALID_IMAGE_SIZE",
    -41: "CL_INVALID_SAMPLER",
    -42: "CL_INVALID_BINARY",
    -43: "CL_INVALID_BUILD_OPTIONS",
    -44: "CL_INVALID_PROGRAM",
    -45: "CL_INVALID_PROGRAM_EXECUTABLE",
    -46: "CL_INVALID_KERNEL_NAME",
    -47: "CL_INVALID_KERNEL_DEFINITION",
    -48: "CL_INVALID_KERNEL",
    -49: "CL_INVALID_ARG_INDEX",
    -50: "CL_INVALID_ARG_VALUE",
    -51: "CL_INVALID_ARG_SIZE",
    -52: "CL_INVALID_KERNEL_ARGS",
    -53: "CL_INVALID_WORK_DIMENSION",
    -54: "CL_INVALID_WORK_GROUP_SIZE",
    -55: "CL_INVALID_WORK_ITEM_SIZE",
    -56: "CL_INVALID_GLOBAL_OFFSET",
    -57: "CL_INVALID_EVENT_WAIT_LIST",
    -58: "CL_INVALID_EVENT",
    -59: "CL_INVALID_OPERATION",
    -60: "CL_INVALID_GL_OBJECT",
    -61: "CL_INVALID_BUFFER_SIZE",
    -62: "CL_INVALID_MIP_LEVEL",
    -63: "CL_INVALID_GLOBAL_WORK_SIZE",
    -64: "CL_INVALID_PROPERTY",
    -65: "CL_INVALID_IMAGE_DESCRIPTOR",
    -66: "CL_INVALID_COMPILER_OPTIONS",
    -67: "CL_INVALID_LINKER_OPTIONS",
    -68: "CL_INVALID_DEVICE_PARTITION_COUNT",
    -69: "CL_INVALID_PIPE_SIZE",
    -70: "CL_INVALID_DEVICE_QUEUE",
    -71: "CL_INVALID_SPEC_ID",
    -72: "CL_MAX_SIZE_RESTRICTION_EXCEEDED",
    -1000: "CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR",
    -1001: "CL_PLATFORM_NOT_FOUND_KHR",
    -1002: "CL_INVALID_D3D10_DEVICE_KHR",
    -1003: "CL_INVALID_D3D10_RESOURCE_KHR",
    -1004: "CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR",
    -1005: "CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR",
    -1006: "CL_INVALID_D3D11_DEVICE_KHR",
    -1007: "CL_INVALID_D3D11_RESOURCE_KHR",
    -1008: "CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR",
    -1009: "CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR",
    -1010: "CL_INVALID_DX9_MEDIA_ADAPTER_KHR",
    -1011: "CL_INVALID_DX9_MEDIA_SURFACE_KHR",
    -1012: "CL_DX9_MEDIA_SURFACE_ALREADY_ACQUIRED_KHR",
    -1013: "CL_DX9_MEDIA_SURFACE_NOT_ACQUIRED_KHR",
    -1057: "CL_DEVICE_PARTITION_FAILED_EXT",
    -1058: "CL_INVALID_PARTITION_COUNT_EXT",
    -1059: "CL_INVALID_PARTITION_NAME_EXT",
    -1092: "CL_EGL_RESOURCE_NOT_ACQUIRED_KHR",
    -1093: "CL_INVALID_EGL_OBJECT_KHR",
    -1094: "CL_INVALID_ACCELERATOR_INTEL",
    -1095: "CL_INVALID_ACCELERATOR_TYPE_INTEL",
    -1096: "CL_INVALID_ACCELERATOR_DESCRIPTOR_INTEL",
    -1097: "CL_ACCELERATOR_TYPE_NOT_SUPPORTED_INTEL",
    -1098: "CL_INVALID_VA_API_MEDIA_ADAPTER_INTEL",
    -1099: "CL_INVALID_VA_API_MEDIA_SURFACE_INTEL",
    -1100: "CL_VA_API_MEDIA_SURFACE_ALREADY_ACQUIRED_INTEL",
    -1101: "CL_VA_API_MEDIA_SURFACE_NOT_ACQUIRED_INTEL",
    -1108: "CL_COMMAND_TERMINATED_ITSELF_WITH_FAILURE_ARM",
    -1121: "CL_CONTEXT_TERMINATED_KHR",
    -1138: "CL_INVALID_COMMAND_BUFFER_KHR",
    -1139: "CL_INVALID_SYNC_POINT_WAIT_LIST_KHR",
    -1140: "CL_INCOMPATIBLE_COMMAND_QUEUE_KHR",
    -1141: "CL_INVALID_MUTABLE_COMMAND_KHR",
    -1142: "CL_INVALID_SEMAPHORE_KHR",
    -0x40D4: "CL_GRALLOC_RESOURCE_NOT_ACQUIRED_IMG",
    -0x40D5: "CL_INVALID_GRALLOC_OBJECT_IMG",
    # Not in any header: NVIDIA's driver returns it after a kernel faults on a bad address.
    -9999: "NVIDIA_ILLEGAL_ADDRESS (unofficial -9999)",
}

# What a user can do about the codes they are likely to meet.
_HINTS: dict[int, str] = {
    -1: "the platform has no device of the requested type",
    -3: "this device has no online compiler; build the program elsewhere and load its binary",
    -4: "the device is out of memory: free buffers or allocate less",
    -5: "the device ran out of resources; on a GPU this often follows an out-of-bounds access in a kernel "
    "(run it under oclgrind to find it) or too much local/private memory per work-group",
    -6: "the host is out of memory",
    -11: "the build log (CompileError.log) says why",
    -36: "the command queue is invalid; its context was probably released",
    -38: "a buffer argument is not a valid memory object (released, or from another context)",
    -42: "the cached binary does not match this device or driver; it is rebuilt from source",
    -43: "the build options are not accepted by this OpenCL compiler",
    -46: "no __kernel function has that name in the program",
    -48: "the kernel object is invalid; its program was probably released",
    -50: "an argument value is not valid for its parameter (e.g. a buffer from another context)",
    -51: "an argument's size does not match the parameter's type (pass the exact numpy/ctypes type)",
    -52: "not every kernel argument has been set",
    -53: "work sizes must have 1, 2 or 3 dimensions",
    -54: "the local (work-group) size is not accepted: each dimension must divide the global size and "
    "their product must not exceed the device's and the kernel's max work-group size; "
    "pass local=None to let the runtime choose",
    -55: "a local size dimension exceeds the device's CL_DEVICE_MAX_WORK_ITEM_SIZES",
    -59: "the operation is not supported by this device or in this state",
    -61: "a buffer size must be positive and at most the device's max allocation size",
    -63: "the global work size exceeds what the device supports",
    -1001: "no OpenCL platform is installed (install a driver, e.g. pocl-opencl-icd for the CPU)",
    -9999: ("NVIDIA's OpenCL reports an earlier kernel's out-of-bounds access (or a device out of memory) at the "
            "next call; run the kernel under oclgrind to find the access"),
}


def status_name(code: int) -> str:
    """The OpenCL name of status ``code`` (``"CL_UNKNOWN_ERROR(-1234)"`` if unknown)."""
    return STATUS_NAMES.get(code, f"CL_UNKNOWN_ERROR({code})")


def check(status: int, call: str) -> None:
    """Raise :class:`DriverError` when ``status`` (an OpenCL ``cl_int``) is not ``CL_SUCCESS``."""
    if status != CL_SUCCESS:
        raise DriverError("opencl", call, int(status), status_name(int(status)), _HINTS.get(int(status), ""))
