"""A simulated CUDA-like driver for the driver kit (``pygpgpu_core.backend.driver``) without a GPU.

"Device" memory is host memory, copies are ``memmove``, and a launch reads every argument
through the ``void** kernelParams`` array exactly as cuLaunchKernel and hipModuleLaunchKernel do
(at the sizes the module declares), then runs the kernel's Python body over the whole grid. So
the kit's code (buffers, staging, pin cache, programs, the generated launcher, errors, lifetime)
runs for real here; only the vendor call at the bottom is stood in for. The call table is
checked against the roles the CUDA and HIP backends bind (test_backend_kit.py).

``hold(stream)`` stands in for a long kernel: the stream (and events recorded on it) stays
"not ready" until ``release(stream)``, and the driver's blocking waits on it block, with
SIGINT held back as a wait inside C holds it back from Python (test_processes_ctrl_c_kit.py);
``hold_next_launch`` holds the stream of the next launch from that launch on.
"""
from __future__ import annotations

import ctypes
import itertools
import json
import signal
import struct
import threading
from typing import Any, Callable

import numpy as np

from pygpgpu_core.backend.driver import DriverBackend, DriverBuffer, DriverContext, DriverDevice, DriverKernel, \
    DriverProgram
from pygpgpu_core.backend.driver.module import KernelInfo
from pygpgpu_core.backend.errors import ErrorTable
from pygpgpu_core.backend.library import Calls

ERRORS = ErrorTable("sim", fatal={700: "SIM_ILLEGAL_ADDRESS"}, hints={2: "out of simulated memory"},
                    lost="the simulated context is lost", unknown="sim status {code}")


def _out(ref: Any) -> Any:
    """The ctypes object behind ``byref(obj)`` (what a C function would write through)."""
    return ref._obj


def check_failed_launch_and_closed_program(backend: "SimBackend", launch: Any, prog: Any, buf: Any) -> None:
    """What every driver-kit launcher of ``vecadd`` (Q Q Q i) must do: a failed launch raises the
    driver's error with its hint and the next launch works; once the program is closed a launch
    raises ClosedError naming the kernel and reaches no driver."""
    import pytest

    from pygpgpu_core.errors import ClosedError, DriverError

    backend.sim.fail_next_launch = 701
    with pytest.raises(DriverError, match="kernel 'vecadd' needs too many"):
        launch(4, None, (buf, buf, buf, 4))
    launch(4, None, (buf, buf, buf, 4))
    prog.close()
    before = len(backend.sim.launches)
    with pytest.raises(ClosedError, match="program of kernel 'vecadd'"):
        launch(4, None, (buf, buf, buf, 4))
    assert len(backend.sim.launches) == before


def check_vecadd_geometries(backend: "SimBackend", kernel: Any, launch: Any,
                            after: "Callable[[bool], None] | None" = None) -> None:
    """Launch ``vecadd`` (Q Q Q i) over 300 floats at several (global, local) sizes, each through
    the grid and block it must take, and compare the sums; ``after(cached)`` runs after each
    launch (``cached``: the geometry was in the kernel's cache before it)."""
    ctx, n = kernel.context, 300
    a = np.arange(n, dtype=np.float32)
    da, dout = ctx.buffer_from_host(a), ctx.buffer(a.nbytes)
    out = np.empty_like(a)
    for size, local, grid, block in ((n, (64,), (5, 1, 1), (64, 1, 1)), (n, (64,), (5, 1, 1), (64, 1, 1)),
                                     (40, (8,), (5, 1, 1), (8, 1, 1)), ((n,), (100,), (3, 1, 1), (100, 1, 1))):
        dout.fill(np.float32(0).tobytes())
        cached = (size, local) in kernel._geometry_cache
        launch(size, local, [da, da, dout, n])
        assert backend.sim.launches[-1][:2] == (grid, block)
        count = size if isinstance(size, int) else size[0]
        want = np.zeros(n, np.float32)
        want[:count] = 2 * a[:count]
        dout.read(out)
        np.testing.assert_array_equal(out, want)
        if after is not None:
            after(cached)


def array_at(ptr: int, dtype: Any, n: int) -> np.ndarray:
    """A numpy view of ``n`` elements of simulated device memory at ``ptr``."""
    dtype = np.dtype(dtype)
    return np.frombuffer((ctypes.c_char * (n * dtype.itemsize)).from_address(ptr), dtype)


class SimKernel:
    """A kernel body: ``body(gid, *params)`` runs once per work item (gid: (x, y, z))."""

    def __init__(self, param_formats: str, body: Callable[..., None], max_threads: int = 1024):
        self.formats = [f for f in param_formats.split()]
        self.sizes = tuple(struct.calcsize("<" + f) for f in self.formats)
        self.body = body
        self.max_threads = max_threads


class SimDriver:
    """The call table's functions, bound under the kit's role names; records what it is asked."""

    def __init__(self, kernels: "dict[str, SimKernel]"):
        self.kernels = kernels
        self.memory: dict[int, Any] = {}      # address -> ctypes buffer (device and pinned host memory)
        self.registered: dict[int, int] = {}  # host_register'ed address -> bytes
        self.modules: dict[int, list[str]] = {}
        self.functions: dict[int, str] = {}
        self.streams: set = set()
        self.events: set = set()
        self.log: list[str] = []
        self.fail_next_launch = 0
        self.launches: list[tuple] = []
        self._ids = itertools.count(0x1000)
        self.held: dict[int, threading.Event] = {}     # stream -> set once the "kernel" ends
        self.event_streams: dict[int, int] = {}        # event -> the stream it was last recorded on
        self.queries = 0
        self.hold_next_launch: "float | None" = None   # seconds: the next launch does not end for so long
        self.peer = True                               # device_can_access_peer's answer
        self.enable_peer_status = 0                    # ctx_enable_peer_access's status
        self.host_alloc_flags: list[int] = []

    def calls(self) -> Calls:
        calls = Calls("sim", None, "simulated driver", ERRORS)  # type: ignore[arg-type]
        for role in ("set_current", "stream_create", "stream_synchronize", "stream_query", "stream_destroy",
                     "stream_wait_event", "event_create", "event_record", "event_synchronize", "event_query",
                     "event_destroy", "mem_alloc", "mem_free",
                     "mem_get_info", "host_alloc", "host_free", "host_get_device_pointer", "host_register",
                     "host_unregister", "memcpy_htod_async", "memcpy_dtoh_async", "memcpy_dtod_async",
                     "memset_d8_async", "memset_d16_async", "memset_d32_async", "module_load", "module_unload",
                     "module_get_function", "launch", "device_count", "device_name", "device_total_mem",
                     "device_attribute", "device_can_access_peer", "ctx_enable_peer_access", "memcpy_peer_async"):
            fn = getattr(self, role)
            setattr(calls, role, fn)
        calls.set_current_unchecked = self.set_current
        calls.launch_unchecked = self.launch
        return calls

    # -- memory -------------------------------------------------------------------------------
    def _allocate(self, n: int) -> int:
        buf = ctypes.create_string_buffer(n)
        addr = ctypes.addressof(buf)
        self.memory[addr] = buf
        return addr

    def mem_alloc(self, out, n):
        self.log.append("mem_alloc")
        _out(out).value = self._allocate(n)
        return 0

    def mem_free(self, ptr):
        self.log.append("mem_free")
        return 0 if self.memory.pop(int(ptr), None) is not None else 1

    def mem_get_info(self, free, total):
        _out(free).value, _out(total).value = 1 << 30, 2 << 30
        return 0

    def host_alloc(self, out, n, flags):
        self.log.append("host_alloc")
        self.host_alloc_flags.append(int(flags))
        _out(out).value = self._allocate(n)
        return 0

    def host_free(self, ptr):
        return 0 if self.memory.pop(int(ptr), None) is not None else 1

    def host_get_device_pointer(self, out, host, flags):
        _out(out).value = int(host)   # the simulated device sees host memory at its own address
        return 0

    def host_register(self, ptr, n, flags):
        self.registered[int(ptr)] = int(n)
        return 0

    def host_unregister(self, ptr):
        return 0 if self.registered.pop(int(ptr), None) is not None else 1

    def memcpy_htod_async(self, dst, src, n, stream):
        self.log.append("memcpy_htod")
        ctypes.memmove(int(dst), int(src), n)
        return 0

    def memcpy_dtoh_async(self, dst, src, n, stream):
        self.log.append("memcpy_dtoh")
        ctypes.memmove(int(dst), int(src), n)
        return 0

    def memcpy_dtod_async(self, dst, src, n, stream):
        self.log.append("memcpy_dtod")
        ctypes.memmove(int(dst), int(src), n)
        return 0

    # -- several devices: "device" memory is host memory, so a peer copy is a memmove too -----------
    def device_can_access_peer(self, out, dev, peer):
        self.log.append("device_can_access_peer")
        _out(out).value = int(self.peer and dev != peer)
        return 0

    def ctx_enable_peer_access(self, peer_token, flags):
        self.log.append("ctx_enable_peer_access")
        return self.enable_peer_status

    def memcpy_peer_async(self, dst, dst_token, src, src_token, n, stream):
        self.log.append("memcpy_peer")
        # the drivers take ctypes objects here (no argtypes): ints would be truncated to 32 bits
        assert isinstance(dst, ctypes.c_uint64) and isinstance(src, ctypes.c_uint64), (dst, src)
        assert isinstance(n, ctypes.c_size_t), n
        ctypes.memmove(dst.value, src.value, n.value)
        return 0

    def memset_d8_async(self, ptr, value, count, stream):
        array_at(int(ptr), np.uint8, count)[:] = value
        return 0

    def memset_d16_async(self, ptr, value, count, stream):
        array_at(int(ptr), np.uint16, count)[:] = value
        return 0

    def memset_d32_async(self, ptr, value, count, stream):
        array_at(int(ptr), np.uint32, count)[:] = value
        return 0

    # -- streams and events -------------------------------------------------------------------
    def set_current(self, token):
        return 0

    def stream_create(self, out, flags):
        h = next(self._ids)
        self.streams.add(h)
        _out(out).value = h
        return 0

    def hold(self, stream, limit: float = 60.0) -> None:
        """Keep ``stream`` busy (a kernel that does not end) until release(), at most ``limit`` s."""
        ended = threading.Event()
        self.held[getattr(stream, "value", stream)] = ended
        timer = threading.Timer(limit, ended.set)
        timer.daemon = True
        timer.start()

    def release(self, stream) -> None:
        ended = self.held.pop(getattr(stream, "value", stream), None)
        if ended is not None:
            ended.set()

    def _busy(self, stream) -> bool:
        ended = self.held.get(stream)
        return ended is not None and not ended.is_set()

    def _block(self, stream) -> None:
        """A driver's blocking wait: in C, where Python cannot run its SIGINT handler."""
        ended = self.held.get(stream)
        if ended is None:
            return
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            ended.wait()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def stream_synchronize(self, stream):
        self.log.append("stream_synchronize")
        stream = getattr(stream, "value", stream)
        if stream not in self.streams:
            return 400
        self._block(stream)
        return 0

    def stream_query(self, stream):
        self.queries += 1
        stream = getattr(stream, "value", stream)
        if stream not in self.streams:
            return 400
        return 600 if self._busy(stream) else 0

    def stream_destroy(self, stream):
        self.streams.discard(getattr(stream, "value", stream))
        return 0

    def stream_wait_event(self, stream, event, flags):
        self.log.append("stream_wait_event")
        return 0

    def event_create(self, out, flags):
        h = next(self._ids)
        self.events.add(h)
        _out(out).value = h
        return 0

    def event_record(self, event, stream):
        value = getattr(stream, "value", stream)
        self.event_streams[getattr(event, "value", event)] = value
        return 0 if value in self.streams or value in (None, 1, 2) else 400

    def event_synchronize(self, event):
        self.log.append("event_synchronize")
        self._block(self.event_streams.get(getattr(event, "value", event)))
        return 0

    def event_query(self, event):
        self.log.append("event_query")
        return 600 if self._busy(self.event_streams.get(getattr(event, "value", event))) else 0

    def event_destroy(self, event):
        self.events.discard(getattr(event, "value", event))
        return 0

    # -- modules and launches -----------------------------------------------------------------
    def module_load(self, out, image):
        names = json.loads(bytes(image)[len(SIM_MAGIC):].decode())
        h = next(self._ids)
        self.modules[h] = names
        _out(out).value = h
        return 0

    def module_unload(self, module):
        self.modules.pop(getattr(module, "value", module), None)
        return 0

    def module_get_function(self, out, module, name):
        name = name.decode()
        if name not in self.modules.get(getattr(module, "value", module), ()):
            return 500
        h = next(self._ids)
        self.functions[h] = name
        _out(out).value = h
        return 0

    def launch(self, func, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        if self.fail_next_launch:
            status, self.fail_next_launch = self.fail_next_launch, 0
            return status
        kernel = self.kernels[self.functions[func.value]]
        # What the driver does: copy each parameter from where its pointer points.
        values = [struct.unpack("<" + f, ctypes.string_at(params[i], size))[0]
                  for i, (f, size) in enumerate(zip(kernel.formats, kernel.sizes))]
        self.launches.append(((gx, gy, gz), (bx, by, bz), shared, values))
        if self.hold_next_launch is not None:
            self.hold(stream, self.hold_next_launch)
            self.hold_next_launch = None
        for z in range(gz * bz):
            for y in range(gy * by):
                for x in range(gx * bx):
                    kernel.body((x, y, z), *values)
        return 0

    # -- devices (unused by SimDevice, which sets its properties itself) ----------------------
    def device_count(self, out):
        _out(out).value = 1
        return 0

    def device_name(self, buf, n, ordinal):
        buf.value = b"sim"
        return 0

    def device_total_mem(self, out, ordinal):
        _out(out).value = 2 << 30
        return 0

    def device_attribute(self, out, code, ordinal):
        _out(out).value = 1024
        return 0


SIM_MAGIC = b"SIMMOD"


class SimLibrary:
    """Stands in for a LazyLibrary: ``lib()`` is the call table, ``lib.calls`` too once made."""

    def __init__(self, driver: SimDriver):
        self.driver = driver
        self.calls = driver.calls()

    def __call__(self) -> Calls:
        return self.calls


class SimKernelObject(DriverKernel):
    pass


class SimProgram(DriverProgram):
    default_name = "kernel.sim"
    kernel_class = SimKernelObject
    bad_image_codes = frozenset({200})

    def _build(self, source, options, name, use_cache):
        names = [n.strip() for n in source.split(",") if n.strip()]
        return SIM_MAGIC + json.dumps(names).encode(), "", False

    def _image_problem(self, image):
        return None if image.startswith(SIM_MAGIC) else "it is not a simulated module"

    def _kernels_of(self, image):
        kernels = self.context.device.backend.sim.kernels
        names = json.loads(image[len(SIM_MAGIC):].decode())
        return {n: KernelInfo(n, kernels[n].sizes, 0, kernels[n].max_threads) for n in names if n in kernels}

    def _binary_kind(self, image):
        return "sim"


class SimBuffer(DriverBuffer):
    __slots__ = ()


class SimContext(DriverContext):
    buffer_class = SimBuffer
    program_class = SimProgram


class SimDevice(DriverDevice):
    vendor = "PyGPGPU"
    context_class = SimContext

    def __init__(self, backend: Any, index: int):
        super().__init__(backend, index)
        self.name = "simulated GPU"
        self.arch = "sim"
        self.global_mem_size = 2 << 30
        self.compute_units = 4
        self.max_work_group_size = 256
        self.max_block_dims = (256, 256, 64)
        self.max_grid_dims = (1 << 20,) * 3
        self.local_mem_size = self.local_mem_size_optin = 64 << 10


class SimBackend(DriverBackend):
    name = "sim"
    dialect = "cuda"
    title = "SIM"

    def __init__(self, kernels: "dict[str, SimKernel]", devices: int = 1):
        super().__init__()
        self.sim = SimDriver(kernels)
        self.driver = SimLibrary(self.sim)  # type: ignore[misc]
        self.count = devices

    def _enumerate(self):
        return [SimDevice(self, i) for i in range(self.count)]

    def version(self) -> str:
        return "sim 1.0"
