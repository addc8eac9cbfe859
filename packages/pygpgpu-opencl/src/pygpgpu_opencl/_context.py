"""An OpenCL context on one device with its in-order command queue."""
from __future__ import annotations

import ctypes
import threading
import weakref
from ctypes import c_int32, c_void_p
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from pygpgpu_core.backend.handles import OwnedHandle, drain_at_exit

from . import _fork  # noqa: F401  (registers the fork handler)
from ._buffer import Buffer
from ._library import lib
from ._program import Program
from ._status import check
from ._wait import busy, keep_alive, launch_events, wait

if TYPE_CHECKING:
    from ._device import Device

__all__ = ["Context", "Queue"]

_live_contexts: "weakref.WeakSet[Context]" = weakref.WeakSet()   # dropped in a forked child
_abandoned: list = []     # what interrupted kernels of closed contexts may still use: kept until exit


class Queue(OwnedHandle):
    """An in-order ``cl_command_queue``; commands run in the order they were enqueued."""

    _kind = "Queue"

    def __init__(self, context: "Context"):
        err = c_int32(0)
        handle = lib().clCreateCommandQueue(context._require(), context.device.handle, 0, ctypes.byref(err))
        check(err.value, "clCreateCommandQueue")
        self._handle = int(handle)
        self.context = context

    def synchronize(self) -> None:
        """Wait until every enqueued command has finished (Ctrl-C interrupts the wait)."""
        wait(self.context, self._require())

    def flush(self) -> None:
        """Submit enqueued commands to the device without waiting for them."""
        check(lib().clFlush(self._require()), "clFlush")

    def _release(self, handle: int) -> None:
        check(lib().clReleaseCommandQueue(handle), "clReleaseCommandQueue")

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<OpenCL Queue (in-order) on {self.context.device.selector} {self.context.device.name!r} ({state})>"


class Context(OwnedHandle):
    """A ``cl_context`` for one device plus its queue. Owns every buffer and program made from it.

    ``device.context()`` returns a shared one; ``Context(device)`` makes a private one.
    Closing a context closes its buffers, programs and kernels first.
    """

    _kind = "Context"
    # (kernel name, arguments) of the last launch on the queue, set by the kernels' launch paths
    # (absent before the first): a Ctrl-C during a wait names them (see _wait.wait)
    _last_launch: "tuple[str, Sequence[Any]]"

    def __init__(self, device: "Device"):
        err = c_int32(0)
        dev = c_void_p(device.handle)
        handle = lib().clCreateContext(None, 1, ctypes.byref(dev), None, None, ctypes.byref(err))
        check(err.value, "clCreateContext")
        self._handle = int(handle)
        self.device = device
        self._build_slot = device.take_build_slot()     # see own_build_options
        # the event of the last command enqueued (None: none since the last completed wait); a
        # wait for the queue waits for it (see _wait.enqueue)
        self._last_event: "int | None" = None
        # whether kernel launches return an event of their own (see _wait.launch_events); without
        # one a launch sets _untracked and a wait for the whole queue enqueues a marker instead
        self.launch_events = launch_events(device)
        self._untracked = False
        # reentrant: the garbage collector may run a finalizer that waits for the queue (a released
        # buffer or program settles it first) in the middle of an enqueue on the same thread
        self._enqueue_lock = threading.RLock()
        # id -> weak reference of every live buffer and program (a plain dict: adding and
        # removing costs far less than a WeakSet on the per-buffer path).
        self._children: "dict[int, weakref.ref[OwnedHandle]]" = {}
        try:
            self.queue = Queue(self)
        except BaseException:
            self.close()
            raise
        self._queue_handle: "int | None" = self.queue._handle
        drain_at_exit(self)
        _live_contexts.add(self)

    # --- lifetime ---------------------------------------------------------------------
    def _adopt(self, child: OwnedHandle) -> None:
        self._children[id(child)] = weakref.ref(child)

    def _disown(self, child: OwnedHandle) -> None:
        self._children.pop(id(child), None)

    def queue_handle(self) -> int:
        """The queue's handle; raises ClosedError once this context is closed."""
        q = self._queue_handle
        if q is None:
            self._require()  # raises ClosedError("this Context")
            q = self.queue._require()
        return q

    def _forget_after_fork(self, backend: str = "opencl") -> None:
        """In a forked child: drop this context, its queue and everything made from it without
        a driver call (they belong to the parent); using them raises ForkedProcessError.
        ``backend``: OwnedHandle's parameter, always "opencl" here (the fork handler omits it)."""
        for ref in list(self._children.values()):
            child = ref()
            if child is not None:
                for k in list(child.__dict__.get("_kernels", {}).values()):
                    k._forget_after_fork(backend)
                child._forget_after_fork(backend)
        self._children.clear()
        self._queue_handle = None
        queue = self.__dict__.get("queue")
        if queue is not None:
            queue._forget_after_fork(backend)
        OwnedHandle._forget_after_fork(self, backend)

    def close(self) -> None:
        """Free the device-array pool's cached blocks, then every buffer, program and kernel, then
        the context. Calling it again does nothing."""
        if self._handle is not None:
            from pygpgpu_core.mempool import release_context

            release_context(self)  # its blocks are buffers of this context: freed while it is alive
        super().close()

    def _release(self, handle: int) -> None:
        queue = getattr(self, "queue", None)
        self._queue_handle = None
        if queue is not None and not queue.closed and busy(self):
            self._abandon()       # an interrupted kernel still runs: never block here
            return
        if queue is not None and not queue.closed:
            try:
                wait(self, queue._handle)
            finally:
                for ref in list(self._children.values()):
                    child = ref()
                    if child is not None:
                        child._close_because(" (its Context was closed)")
                self._children.clear()
                queue.close()
        check(lib().clReleaseContext(handle), "clReleaseContext")
        self.device.give_back_build_slot(self._build_slot)   # (not when abandoned: its kernel may still run)

    @property
    def own_build_options(self) -> "tuple[str, ...]":
        """What every program built here adds to the caller's options (``Device.own_build_options``)."""
        return self.device.own_build_options(self._build_slot)

    def _abandon(self) -> None:
        """Close this context in Python while an interrupted kernel still runs on its queue:
        release nothing through the driver (that could wait for the kernel) and keep all host
        memory the kernel may use alive; the process exit reclaims the rest."""
        for ref in list(self._children.values()):
            child = ref()
            if child is not None:
                keep_alive(self, child, child.__dict__.get("_host"))
                for k in list(child.__dict__.get("_kernels", {}).values()):
                    k._handle = None
                    k._closed_reason = " (its Context was closed)"
                child._handle = None
                child._closed_reason = " (its Context was closed)"
        self._children.clear()
        keep_alive(self, self.queue)
        _abandoned.append(self.__dict__.get("_interrupted"))
        self.queue._handle = None

    # --- factories --------------------------------------------------------------------
    def buffer(self, nbytes: int) -> "Buffer":
        """Uninitialised device memory of ``nbytes`` bytes."""
        return Buffer(self, nbytes)

    def buffer_from_host(self, host: np.ndarray, *, zero_copy: bool = False, align: "int | None" = None) -> "Buffer":
        """A buffer holding a copy of ``host``'s bytes.

        With ``zero_copy=True`` on a device that shares memory with the host (PoCL, integrated
        GPUs) the buffer uses ``host``'s memory directly (``CL_MEM_USE_HOST_PTR``) when the
        array is C-contiguous, writable and aligned; otherwise it silently copies, and
        ``buffer.zero_copy`` says which happened. The alignment needed is the device's
        base-address alignment (``device.mem_base_addr_align``, 128 bytes on PoCL:
        compilers may assume it, and PoCL faults on vector loads from less) unless ``align``
        lowers it: pass the size of the widest type the kernels read through this buffer
        (e.g. ``arr.dtype.itemsize``, or 16 for ``float4``). ``aligned_empty()`` makes
        arrays that always qualify. Read a zero-copy buffer back into ``host`` with
        ``buffer.read(host)``: it then only synchronises.
        """
        return Buffer.from_host(self, host, zero_copy=zero_copy, align=align)

    def program(self, source: str, options: "Sequence[str] | str" = (), *, name: str = "") -> "Program":
        """Build ``source`` for this device (``-cl-std=CL1.2`` unless ``options`` choose another).

        The binary is cached on disk; a failing build raises CompileError with the build log.
        """
        return Program(self, source, options, name=name)

    def program_from_binary(self, binary: bytes, *, source: str = "", options: "Sequence[str] | str" = (),
                            name: str = "") -> "Program":
        """Load a binary built earlier for this device (``program.binary``) without compiling.

        ``options`` are passed to ``clBuildProgram`` again (PoCL and most drivers expect the
        original ones). When the driver rejects the binary (another device or driver version, a
        damaged file) and ``source`` is given, the program is built from ``source`` instead and
        ``program.from_binary`` is False; without ``source`` a DriverError says so.
        """
        return Program(self, source, options, name=name, binary=binary)

    def gemm(self, a: Any, b: Any, c: Any) -> bool:
        """``c = a @ b`` for 2-D device arrays (or views) of one float/complex type in this
        context through CLBlast, queued on this context's queue; False (nothing done) where
        CLBlast is not installed or turned off (``pygpgpu_opencl._clblast``), or an operand's
        strides are not ones it takes, so the caller makes it contiguous or runs its own kernel."""
        from . import _clblast       # loads nothing until the first product

        if not all(x.buffer.context is self for x in (a, b, c)):
            return False
        da, db, dc = (_clblast.operand(x) for x in (a, b, c))
        if da is None or db is None or dc is None:
            return False
        (m, k), n = a.shape, b.shape[1]
        return _clblast.gemm(self, np.dtype(c.dtype), m, n, k, da, db, dc)

    def fft_plan(self, kind: str, shape: tuple, dtype: Any, axis: int, n: int) -> Any:
        """What runs the unnormalised length-``n`` DFT along ``axis`` of a C-contiguous array of
        ``shape`` and ``dtype`` through clFFT (``run(x, out)``, queued on this context's queue;
        ``pygpgpu_opencl._clfft`` lists the kinds, lengths and axes it takes), or None where clFFT is
        not installed, turned off, or lacks the transform, so the caller runs its own kernels."""
        from . import _clfft         # loads nothing until the first transform

        return _clfft.plan(self, kind, tuple(shape), np.dtype(dtype), axis, n)

    def synchronize(self) -> None:
        """Wait for every command enqueued on this context's queue. Ctrl-C interrupts the wait
        even while a kernel runs: the KeyboardInterrupt says what the device may still use."""
        wait(self, self.queue_handle())

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<OpenCL Context on {self.device.selector} {self.device.name!r} ({state})>"
