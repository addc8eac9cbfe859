"""The call table of the driver kit: every function the kit calls, its C signature, once.

HIP's module API is CUDA's driver API renamed (hipify maps one onto the other), so a role is
named by its driver-API *stem*, the function's name without the vendor prefix: ``MemAlloc`` is
``cuMemAlloc_v2`` in libcuda and ``hipMalloc`` in libamdhip64. A backend only says how it spells
each stem (``spell``), which returns None for a function it does not offer (an optional role),
and adds its own functions (enumeration, versions, error names) with :func:`call_table`.
"""
from __future__ import annotations

from ctypes import POINTER, c_char_p, c_int, c_size_t, c_ubyte, c_uint, c_uint64, c_ushort, c_void_p
from typing import Callable, Mapping, NamedTuple

from ..library import Function

__all__ = ["Role", "ROLES", "DEVICE_POINTER", "call_table"]

DEVICE_POINTER = c_uint64   # a device address (CUdeviceptr; void* in HIP's headers: the same 64 bits)
_ptr, _h = DEVICE_POINTER, c_void_p  # handles: context, stream, event, module, function


class Role(NamedTuple):
    stem: str
    argtypes: "tuple | None"
    optional: bool = False
    fast: bool = False


ROLES: dict[str, Role] = {
    # The token is a ready-made ctypes object (a CUcontext, a HIP device ordinal): no argtypes needed.
    "set_current": Role("CtxSetCurrent", None, fast=True),
    "launch": Role("LaunchKernel", (_h, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, _h, c_void_p, c_void_p),
                   fast=True),
    # cuLaunchKernelEx (CUDA 12.0+): the grid, block, shared bytes and stream in one CUlaunchConfig
    # (backend.launcher.LaunchConfig), so a launch converts 4 arguments instead of 11
    "launch_ex": Role("LaunchKernelEx", (c_void_p, _h, c_void_p, c_void_p), optional=True, fast=True),
    "driver_version": Role("DriverGetVersion", (POINTER(c_int),)),
    "device_count": Role("DeviceGetCount", (POINTER(c_int),)),
    "device_name": Role("DeviceGetName", (c_char_p, c_int, c_int)),
    "device_total_mem": Role("DeviceTotalMem", (POINTER(c_size_t), c_int)),
    "device_attribute": Role("DeviceGetAttribute", (POINTER(c_int), c_int, c_int)),
    "stream_create": Role("StreamCreate", (POINTER(_h), c_uint)),
    "stream_synchronize": Role("StreamSynchronize", (_h,)),
    # 0 when the stream is idle, NOT_READY (600 in both drivers) while it has work: waits on the
    # main thread poll these in slices so that Ctrl-C reaches Python (driver/waits.py)
    "stream_query": Role("StreamQuery", (_h,)),
    "stream_destroy": Role("StreamDestroy", (_h,)),
    "stream_wait_event": Role("StreamWaitEvent", (_h, _h, c_uint)),
    "event_create": Role("EventCreate", (POINTER(_h), c_uint)),
    "event_record": Role("EventRecord", (_h, _h)),
    "event_synchronize": Role("EventSynchronize", (_h,)),
    "event_query": Role("EventQuery", (_h,)),
    "event_destroy": Role("EventDestroy", (_h,)),
    "mem_alloc": Role("MemAlloc", (POINTER(_ptr), c_size_t)),
    "mem_free": Role("MemFree", (_ptr,)),
    "mem_get_info": Role("MemGetInfo", (POINTER(c_size_t), POINTER(c_size_t))),
    "host_alloc": Role("MemHostAlloc", (POINTER(c_void_p), c_size_t, c_uint)),
    "host_free": Role("MemFreeHost", (c_void_p,)),
    "host_get_device_pointer": Role("MemHostGetDevicePointer", (POINTER(_ptr), c_void_p, c_uint)),
    "host_register": Role("MemHostRegister", (c_void_p, c_size_t, c_uint)),
    "host_unregister": Role("MemHostUnregister", (c_void_p,)),
    "memcpy_htod_async": Role("MemcpyHtoDAsync", (_ptr, c_void_p, c_size_t, _h)),
    "memcpy_dtoh_async": Role("MemcpyDtoHAsync", (c_void_p, _ptr, c_size_t, _h)),
    "memcpy_dtod_async": Role("MemcpyDtoDAsync", (_ptr, _ptr, c_size_t, _h)),
    "memset_d8_async": Role("MemsetD8Async", (_ptr, c_ubyte, c_size_t, _h)),
    "memset_d16_async": Role("MemsetD16Async", (_ptr, c_ushort, c_size_t, _h)),
    "memset_d32_async": Role("MemsetD32Async", (_ptr, c_uint, c_size_t, _h)),  # HIP declares int: the same bits
    "module_load": Role("ModuleLoadData", (POINTER(_h), c_void_p)),
    "module_unload": Role("ModuleUnload", (_h,)),
    "module_get_function": Role("ModuleGetFunction", (POINTER(_h), _h, c_char_p)),
    # Optional: a backend without them stages large copies from foreign page-locked memory, reads
    # kernel limits from the binary, has no shared-memory opt-in and cannot count parameters.
    "pointer_get_attribute": Role("PointerGetAttribute", (c_void_p, c_int, _ptr), optional=True),
    "func_get_attribute": Role("FuncGetAttribute", (POINTER(c_int), c_int, _h), optional=True),
    "func_set_attribute": Role("FuncSetAttribute", (_h, c_int, c_int), optional=True),
    "func_get_param_info": Role("FuncGetParamInfo", (_h, c_size_t, POINTER(c_size_t), POINTER(c_size_t)),
                                optional=True),
    # Copies between two devices' memory (driver/peer.py). Both drivers take a context's token where
    # the peer is named (CUDA: its CUcontext; HIP: its device ordinal), so these two have no argtypes:
    # the caller passes ready-made ctypes objects. Optional: without them copies are staged.
    "device_can_access_peer": Role("DeviceCanAccessPeer", (POINTER(c_int), c_int, c_int), optional=True),
    "ctx_enable_peer_access": Role("CtxEnablePeerAccess", None, optional=True),     # (peer token, flags)
    "memcpy_peer_async": Role("MemcpyPeerAsync", None, optional=True),  # (dst, dst token, src, src token, n, stream)
}


def call_table(spell: Callable[[str], "str | None"], extra: Mapping[str, Function] = {}) -> dict[str, Function]:
    """role -> Function for a LazyLibrary: every kit role under the backend's spelling of its stem
    (None: not offered, bound as None), then the backend's own functions."""
    table: dict[str, Function] = {}
    for role, r in ROLES.items():
        symbol = spell(r.stem)
        assert symbol is not None or r.optional, f"the driver kit needs {r.stem}"
        table[role] = Function(symbol, r.argtypes, optional=r.optional, fast=r.fast)
    table.update(extra)
    return table
