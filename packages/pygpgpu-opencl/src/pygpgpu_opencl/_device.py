"""OpenCL platforms and devices, numbered flat across platforms (GPUs first), and the backend object."""
from __future__ import annotations

import ctypes
import re
import threading
from ctypes import c_uint32, c_void_p
from typing import TYPE_CHECKING

from pygpgpu_core.backend.worksize import default_group_shape
from pygpgpu_core.device_order import order_devices
from pygpgpu_core.errors import BackendUnavailable, DriverError
from pygpgpu_core.scoped_device import ScopedDefault

from . import _constants as C
from ._diagnose import no_device_reason, no_platform_reason, pocl_abort_reason
from ._library import info_sizes, info_str, info_uint, info_ulong, lib
from ._status import check

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["OpenCLBackend", "Platform", "Device", "device_arch"]


class Platform:
    """One installed OpenCL driver (ICD)."""

    def __init__(self, handle: int, index: int):
        cl = lib()
        self.handle = handle
        self.index = index
        self.name = info_str(cl.clGetPlatformInfo, "clGetPlatformInfo", handle, C.CL_PLATFORM_NAME)
        self.vendor = info_str(cl.clGetPlatformInfo, "clGetPlatformInfo", handle, C.CL_PLATFORM_VENDOR)
        self.version = info_str(cl.clGetPlatformInfo, "clGetPlatformInfo", handle, C.CL_PLATFORM_VERSION)
        self.extensions = frozenset(
            info_str(cl.clGetPlatformInfo, "clGetPlatformInfo", handle, C.CL_PLATFORM_EXTENSIONS).split()
        )

    def __repr__(self) -> str:
        return f"<OpenCL platform {self.index}: {self.name!r} {self.version!r}>"


_CPU_PREFIXES = ("pthread", "cpu", "basic", "tbb", "cpu-minimal")


def device_arch(name: str, vendor: str, platform: str, nv_cc: "tuple[int, int] | None") -> str:
    """A short architecture string used in selectors and cache keys.

    NVIDIA: ``sm_90`` from the compute capability; AMD: the ``gfxNNNN`` target that its
    OpenCL driver reports as the device name; PoCL CPU devices: the LLVM CPU name
    (``skylake-avx512``); anything else: the device name lowercased with dashes.
    """
    if nv_cc is not None:
        return f"sm_{nv_cc[0]}{nv_cc[1]}"
    gfx = re.search(r"\bgfx[0-9a-f]+", name.lower())
    if gfx:
        return gfx.group(0)
    if "portable computing language" in platform.lower():
        parts = name.split("-")
        if len(parts) > 1 and parts[0] in _CPU_PREFIXES:
            cpu = []
            for part in parts[1:]:
                if part != part.lower() or " " in part:
                    break  # the human-readable model name starts here
                cpu.append(part)
            if cpu:
                return "-".join(cpu)
    cleaned = re.sub(r"\((r|tm|c)\)", "", name.lower())
    return re.sub(r"[^a-z0-9]+", "-", cleaned).strip("-") or "unknown"


def pocl_own_build_options(platform_version: str, index: int, slot: int = 0) -> "tuple[str, ...]":
    """``Device.own_build_options`` for a platform's version string, a device's index and a
    context's slot."""
    found = re.search(r"\bPoCL (\d+)\.", platform_version or "")
    if not found or int(found.group(1)) not in (4, 5):
        return ()
    return (f"-DPYGPGPU_POCL_DEVICE={index}",) + ((f"-DPYGPGPU_POCL_CONTEXT={slot}",) if slot else ())


class Device(ScopedDefault):
    """One OpenCL device. Attributes are read once, at enumeration; ``with dev:`` makes it the
    default device of the block (pygpgpu_core.scoped_device)."""

    def __init__(self, backend: "OpenCLBackend", index: int, platform: Platform, handle: int):
        cl = lib()
        get = cl.clGetDeviceInfo
        call = "clGetDeviceInfo"
        self.backend = backend
        self.index = index
        self.platform = platform
        self.handle = handle
        self.name = info_str(get, call, handle, C.CL_DEVICE_NAME)
        self.vendor = info_str(get, call, handle, C.CL_DEVICE_VENDOR)
        self.driver_version = info_str(get, call, handle, C.CL_DRIVER_VERSION)
        self.version = info_str(get, call, handle, C.CL_DEVICE_VERSION)
        self.opencl_c_version = info_str(get, call, handle, C.CL_DEVICE_OPENCL_C_VERSION)
        self.extensions = frozenset(info_str(get, call, handle, C.CL_DEVICE_EXTENSIONS).split())
        self.type = info_ulong(get, call, handle, C.CL_DEVICE_TYPE)
        self.global_mem_size = info_ulong(get, call, handle, C.CL_DEVICE_GLOBAL_MEM_SIZE)
        self.local_mem_size = info_ulong(get, call, handle, C.CL_DEVICE_LOCAL_MEM_SIZE)
        self.max_mem_alloc_size = info_ulong(get, call, handle, C.CL_DEVICE_MAX_MEM_ALLOC_SIZE)
        self.compute_units = info_uint(get, call, handle, C.CL_DEVICE_MAX_COMPUTE_UNITS)
        self.max_clock_mhz = info_uint(get, call, handle, C.CL_DEVICE_MAX_CLOCK_FREQUENCY)
        self.max_work_group_size = info_sizes(get, call, handle, C.CL_DEVICE_MAX_WORK_GROUP_SIZE)[0]
        self.max_work_item_sizes = info_sizes(get, call, handle, C.CL_DEVICE_MAX_WORK_ITEM_SIZES)
        self.address_bits = info_uint(get, call, handle, C.CL_DEVICE_ADDRESS_BITS)
        # CL_DEVICE_MEM_BASE_ADDR_ALIGN is in bits; USE_HOST_PTR memory should honour it.
        self.mem_base_addr_align = max(1, info_uint(get, call, handle, C.CL_DEVICE_MEM_BASE_ADDR_ALIGN) // 8)
        # Deprecated in 2.0 but still answered by every driver we know; a failure means "no".
        try:
            self.host_unified_memory = bool(info_uint(get, call, handle, C.CL_DEVICE_HOST_UNIFIED_MEMORY))
        except DriverError:
            self.host_unified_memory = False
        try:
            double_config = info_ulong(get, call, handle, C.CL_DEVICE_DOUBLE_FP_CONFIG)
        except DriverError:
            double_config = 0
        self.fp64 = bool(double_config) or "cl_khr_fp64" in self.extensions
        try:
            single_config = info_ulong(get, call, handle, C.CL_DEVICE_SINGLE_FP_CONFIG)
        except DriverError:
            single_config = 0
        # OpenCL lets float32 `/` and sqrt be off by ulps (NVIDIA's are); numpy's are exact.
        # Translated kernels ask for IEEE results where the device can give them.
        self.exact_math_options: tuple = (
            ("-cl-fp32-correctly-rounded-divide-sqrt",)
            if single_config & C.CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT else ()
        )
        self.fp16 = "cl_khr_fp16" in self.extensions
        nv_cc = None
        if "cl_nv_device_attribute_query" in self.extensions:
            try:
                nv_cc = (
                    info_uint(get, call, handle, C.CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV),
                    info_uint(get, call, handle, C.CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV),
                )
            except DriverError:
                nv_cc = None
        self.board_name = ""
        if "cl_amd_device_attribute_query" in self.extensions:
            try:
                self.board_name = info_str(get, call, handle, C.CL_DEVICE_BOARD_NAME_AMD)
            except DriverError:
                pass
        self.arch = device_arch(self.name, self.vendor, platform.name, nv_cc)
        self._context: "Context | None" = None
        self._lock = threading.Lock()
        self._build_slots: "set[int]" = set()      # held by open contexts (take_build_slot)
        self._slots_lock = threading.Lock()

    def guarded_local_size(self, ndim: int, max_group: int) -> "tuple[int, ...] | None":
        """The group shape for a launch of ``ndim`` dimensions that gives no local size, of a
        kernel that guards the work items past its domain (``@kernel``'s); None: the runtime
        picks. On a GPU 256 work items a group (as CUDA launches get): NVIDIA's OpenCL, left to
        pick, takes a divisor of the global size (1 for a prime one) and spends 0.6-0.8 us a
        launch on the pick (benchmarks/launch_floor.c). CPUs keep the runtime's pick (PoCL
        sizes its groups for its vectorizer)."""
        if not self.type & C.CL_DEVICE_TYPE_GPU or not 1 <= ndim <= 3:
            return None
        return default_group_shape(ndim, min(max_group, self.max_work_group_size))

    @property
    def selector(self) -> str:
        return f"opencl:{self.index}"

    def own_build_options(self, slot: int = 0) -> "tuple[str, ...]":
        """Options every program built for a context of this device gets beside the caller's (and
        so part of every cache key of a build for it); ``slot``: the context's (``take_build_slot``).

        PoCL 4.x and 5.x: defines naming the device, and the context where two are open on it at
        once. Those versions keep one process-wide list of loaded kernels keyed by a hash of the
        source, the options and the device *type*, so two queues running builds of the same hash
        (two identical devices, ``POCL_DEVICES="pthread pthread"``, or two contexts on one device)
        share its entries; the same kernel running on both with grid sizes that differ then
        releases one entry twice and PoCL aborts on an assertion in ``pocl_release_dlhandle_cache``
        (fixed in PoCL 6.0, commit 9184812d6). The defines give each queue's builds their own hash.
        Binaries a caller loads with ``program_from_binary`` keep the hash they were built with."""
        return pocl_own_build_options(self.platform.version, self.index, slot)

    def take_build_slot(self) -> int:
        """The lowest slot no open context of this device holds (0 unless ``own_build_options``
        tells contexts apart: PoCL 4-5); a context gives it back when it is released."""
        if not self.own_build_options():
            return 0
        with self._slots_lock:
            slot = next(i for i in range(len(self._build_slots) + 1) if i not in self._build_slots)
            self._build_slots.add(slot)
        return slot

    def give_back_build_slot(self, slot: int) -> None:
        with self._slots_lock:
            self._build_slots.discard(slot)

    @property
    def is_cpu(self) -> bool:
        return bool(self.type & C.CL_DEVICE_TYPE_CPU)

    @property
    def is_gpu(self) -> bool:
        return bool(self.type & C.CL_DEVICE_TYPE_GPU)

    def context(self) -> "Context":
        """The device's shared context and in-order queue, created on first use.

        Closing it is allowed; the next call then creates a fresh one.
        """
        ctx = self._context
        if ctx is not None and not ctx.closed:
            return ctx
        with self._lock:
            if self._context is None or self._context.closed:
                from ._context import Context

                self._context = Context(self)
            return self._context

    def __repr__(self) -> str:
        return f"<OpenCL device {self.selector} {self.name!r} ({self.platform.name}, arch {self.arch})>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.handle == self.handle

    def __hash__(self) -> int:
        return hash(("opencl", self.handle))

    def __reduce__(self):
        """Pickles as its selector; the receiving process looks the device up itself."""
        from pygpgpu_core.pickling import reduce_device

        return reduce_device(self)


class OpenCLBackend:
    """The ``opencl`` entry in the ``pygpgpu.backends`` registry. Creating it loads nothing."""

    name = "opencl"
    dialect = "opencl"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._platforms: "list[Platform] | None" = None
        self._devices: "list[Device] | None" = None

    def platforms(self) -> list[Platform]:
        self.devices()
        return list(self._platforms or ())

    def devices(self) -> list[Device]:
        """Every device of every platform (``opencl:0``, ``opencl:1``...): GPUs, then other
        accelerators, then CPUs, each kind in platform and enumeration order."""
        if self._devices is not None:
            return list(self._devices)
        with self._lock:
            if self._devices is None:
                self._platforms, self._devices = self._enumerate()
        return list(self._devices)

    def _enumerate(self) -> "tuple[list[Platform], list[Device]]":
        cl = lib()
        fatal = pocl_abort_reason()
        if fatal is not None:
            raise BackendUnavailable("opencl", fatal)
        count = c_uint32(0)
        status = cl.clGetPlatformIDs(0, None, ctypes.byref(count))
        if status == -1001 or (status == 0 and count.value == 0):  # CL_PLATFORM_NOT_FOUND_KHR
            raise BackendUnavailable("opencl", no_platform_reason(cl.path))
        check(status, "clGetPlatformIDs")
        ids = (c_void_p * count.value)()
        check(cl.clGetPlatformIDs(count.value, ids, None), "clGetPlatformIDs")
        platforms = [Platform(int(h), i) for i, h in enumerate(ids) if h]
        devices: list[Device] = []
        for platform in platforms:
            n = c_uint32(0)
            status = cl.clGetDeviceIDs(platform.handle, C.CL_DEVICE_TYPE_ALL, 0, None, ctypes.byref(n))
            if status == -1 or n.value == 0:  # CL_DEVICE_NOT_FOUND: a platform without devices
                continue
            check(status, "clGetDeviceIDs")
            handles = (c_void_p * n.value)()
            check(cl.clGetDeviceIDs(platform.handle, C.CL_DEVICE_TYPE_ALL, n.value, handles, None), "clGetDeviceIDs")
            for h in handles:
                if h:                        # a NULL handle is no device (as for platforms above)
                    devices.append(Device(self, len(devices), platform, int(h)))
        if not devices:     # e.g. PoCL that failed to start: say why, not "install a driver"
            raise BackendUnavailable("opencl", no_device_reason(platforms))
        # GPUs and accelerators first, CPUs (PoCL) last, each kind in platform order; the
        # numbering follows, so opencl:0 is the GPU on a machine that has one
        devices = order_devices(devices)
        for i, device in enumerate(devices):
            device.index = i
        return platforms, devices

    def version(self) -> str:
        """Every platform's version and every device's driver version (part of cache keys)."""
        devices = self.devices()
        parts = [f"{p.name} {p.version}" for p in self._platforms or ()]
        parts += [f"{d.name}: driver {d.driver_version}" for d in devices]
        return "; ".join(parts)

    def describe(self) -> dict:
        """The loader, ICD files and platforms, for ``pygpgpu info`` (loads libOpenCL; never raises)."""
        from ._describe import describe

        return describe(self)

    def __repr__(self) -> str:
        state = "not loaded" if self._devices is None else f"{len(self._devices)} device(s)"
        return f"<pygpgpu OpenCL backend ({state})>"
