"""A device's context and its stream, for CUDA-like drivers.

The context owns everything made from it (buffers, programs, pinned blocks) and one blocking
stream on which every copy and launch is ordered. Every call that needs a current context
makes this one current first: CUDA keeps the current context per thread (HIP the current
device), and other libraries in the process may switch it.
"""
from __future__ import annotations

import threading
import weakref
from ctypes import byref, c_int, c_size_t, c_void_p
from typing import TYPE_CHECKING, Any, ClassVar, Sequence

import numpy as np

from ...errors import ClosedError
from ...forking import FORKED, ForkedLibrary, closed_error
from ..handles import Closeable, drain_at_exit
from ..hostpin import PIN_MIN, PinCache
from ..library import on_library_forked
from .memory import DriverBuffer, PinnedStaging, host_mapped, is_pinned, pinned_empty, staging_settings
from .waits import Interrupted, busy, defer, wait, wait_before_copy

if TYPE_CHECKING:
    from .device import DriverDevice
    from .module import DriverProgram

__all__ = ["DriverContext", "DriverStream"]

_CU_EVENT_DISABLE_TIMING = 2     # the same value in HIP (hipEventDisableTiming)
_live_contexts: "weakref.WeakSet[DriverContext]" = weakref.WeakSet()   # dropped in a forked child
_abandoned: "list[DriverContext]" = []   # closed while an interrupted kernel ran: kept until exit


def _forget_contexts_after_fork(backend: str) -> None:
    for ctx in list(_live_contexts):
        if ctx.backend_name == backend:
            ctx._forget_after_fork()


on_library_forked(_forget_contexts_after_fork)


class DriverStream:
    """The context's queue: every copy and launch of a context is ordered on it.

    A blocking stream (flag 0) so that work on the legacy default stream, which Numba and
    many libraries use, stays ordered with ours.
    """

    def __init__(self, context: "DriverContext"):
        self.context = context
        self.handle = c_void_p()
        context.make_current()
        calls = context.calls
        calls.check(calls.stream_create(byref(self.handle), 0), calls.stream_create)

    @property
    def ptr(self) -> int:
        """The stream as an int (for torch.cuda.ExternalStream, cupy.cuda.ExternalStream)."""
        return self.handle.value or 0

    def _live(self) -> None:
        if not self.handle:
            raise ClosedError(f"this {self.context.title} stream")

    def wait_for_stream(self, stream: int) -> None:
        """Order later work on this stream after everything already queued on ``stream`` (a
        stream handle as an int, or 1 / 2 for the legacy / per-thread default stream), without
        blocking the host: the CUDA array interface v3 ``stream`` of a producer."""
        self._live()
        ctx, calls = self.context, self.context.calls
        ctx.make_current()
        event = c_void_p()
        calls.check(calls.event_create(byref(event), _CU_EVENT_DISABLE_TIMING), calls.event_create)
        try:
            calls.check(calls.event_record(event, c_void_p(int(stream))), calls.event_record,
                        f"{stream:#x} is not a {ctx.title} stream of this device's context")
            calls.check(calls.stream_wait_event(self.handle, event, 0), calls.stream_wait_event)
        finally:
            calls.event_destroy(event)  # freed once the wait has been satisfied

    def synchronize(self) -> None:
        """Wait for everything queued on the stream (Ctrl-C interrupts the wait: waits.py)."""
        self._live()
        wait(self.context)

    def close(self) -> None:
        handle, self.handle = self.handle, c_void_p()
        if handle:
            self.context.make_current()
            self.context.calls.stream_destroy(handle)


class DriverContext(Closeable):
    """The context of one device plus one stream. A subclass sets ``buffer_class``,
    ``program_class`` (and ``stream_class``) and, where the driver has context objects, how to
    retain and release one (``_retain`` returns the token ``set_current`` takes)."""

    closed = True          # until the context is retained: the finalizer then does nothing
    buffer_class: "ClassVar[type[DriverBuffer]]" = DriverBuffer
    program_class: "ClassVar[type[DriverProgram]]"
    stream_class: "ClassVar[type[DriverStream]]" = DriverStream
    pointer_host_memory: ClassVar["tuple[int, int] | None"] = None
    """``(attribute, value)``: ``pointer_get_attribute(attribute)`` returns ``value`` for
    page-locked host memory; None: the driver cannot tell (large copies are then staged)."""
    _last_launch: "tuple[str, Any] | None" = None
    """``(kernel name, arguments)`` of the last launch not yet seen complete (set by the
    launcher): a copy waits for it in slices first, and Ctrl-C names it (waits.py)."""
    _interrupted: "Interrupted | None" = None
    """Set while a kernel whose wait Ctrl-C interrupted may still run (waits.py)."""

    def __init__(self, device: "DriverDevice"):
        self.device = device
        self.backend_name = device.backend.name
        self.title = device.backend.title
        self.calls = device.backend.driver()
        self.current_token = self._retain()
        self.closed = False
        self._lock = threading.Lock()
        self._live: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._staging: "PinnedStaging | None" = None
        self._pins: "PinCache | None" = None
        self._programs: dict[tuple, "DriverProgram"] = {}
        self.staging_threshold, self.staging_chunk = staging_settings(self.backend_name)
        self.queue = self.stream_class(self)
        drain_at_exit(self)     # queued work (and its printf output) finishes before the process exits
        _live_contexts.add(self)

    # -- the context handle (per backend) -----------------------------------------------------
    def _retain(self) -> Any:
        """Make the context exist; returns what ``set_current`` takes (here: the device ordinal)."""
        return c_int(self.device.ordinal)

    def _release(self) -> None:
        """Give the context back to the driver (after everything made from it was freed)."""

    def make_current(self) -> None:
        if self.closed:     # ForkedProcessError when it was inherited across fork
            raise closed_error(self, f"the {self.title} context of {self.device.selector}", self.backend_name)
        self.calls.check(self.calls.set_current(self.current_token), self.calls.set_current)

    def _track(self, obj: Any) -> None:
        self._live.add(obj)

    # -- memory ------------------------------------------------------------------------------
    def buffer(self, nbytes: int) -> DriverBuffer:
        """Uninitialised device memory."""
        return self.buffer_class(self, nbytes)

    def buffer_from_host(self, host: np.ndarray, *, zero_copy: bool = False) -> DriverBuffer:
        """A device buffer holding a copy of ``host``'s bytes (``zero_copy`` is only a hint: a
        discrete GPU cannot alias pageable host memory, so the bytes are copied)."""
        host = np.ascontiguousarray(host)
        buf = self.buffer_class(self, host.nbytes)
        if host.nbytes:
            buf.write(host)
        return buf

    def buffer_from_pointer(self, ptr: int, nbytes: int, owner: Any = None) -> DriverBuffer:
        """Wrap device memory allocated elsewhere (torch, CuPy, ``__cuda_array_interface__``)
        without taking ownership: ``owner`` is kept alive while the buffer is, nothing is freed."""
        ptr = int(ptr)
        if ptr <= 0 and int(nbytes) > 0:
            raise ValueError(f"buffer_from_pointer needs a device pointer, got {ptr}")
        return self.buffer_class(self, nbytes, ptr, owner)

    def pinned_empty(self, shape: Any, dtype: Any = np.float32) -> np.ndarray:
        """A numpy array in page-locked host memory: copies to/from it skip the staging step."""
        return pinned_empty(self, shape, dtype)

    def host_mapped(self, nbytes: int) -> "tuple[np.ndarray, DriverBuffer]":
        """``(host, buffer)``: page-locked host bytes that kernels access in place, no copies
        (each access crosses the bus: for a launch's tiny arguments, not for working data)."""
        return host_mapped(self, nbytes)

    def memory_info(self) -> tuple[int, int]:
        """``(free, total)`` device memory in bytes."""
        free, total = c_size_t(), c_size_t()
        self.make_current()
        self.calls.check(self.calls.mem_get_info(byref(free), byref(total)), self.calls.mem_get_info)
        return free.value, total.value

    def _staging_buffers(self) -> PinnedStaging:
        if self._staging is None:
            with self._lock:
                if self._staging is None:
                    self._staging = PinnedStaging(self, self.staging_chunk)
        return self._staging

    def _pin_cache(self) -> PinCache:
        if self._pins is None:
            with self._lock:
                if self._pins is None:
                    self._pins = PinCache(self._host_register, self._host_unregister)
        return self._pins

    def _host_register(self, ptr: int, nbytes: int) -> bool:
        self.make_current()
        return self.calls.host_register(ptr, nbytes, 0) == 0   # refused: copy as pageable

    def _host_unregister(self, ptr: int) -> None:
        if not self.closed:
            if self._interrupted is not None and defer(self, self._host_unregister, ptr):
                return      # unregistering waits for the device: not while an interrupted kernel runs
            self.make_current()
            self.calls.host_unregister(ptr)

    def _copies_directly(self, hptr: int, nbytes: int, host: "np.ndarray | None") -> bool:
        """Small copies and page-locked memory (ours, another library's, or a numpy array the
        pin cache registered because it keeps coming back) go straight to the driver; large
        pageable ones through the staging buffers."""
        if nbytes >= PIN_MIN and host is not None and self._pin_cache().pinned(host):
            return True
        return nbytes < self.staging_threshold or is_pinned(self, hptr)

    def _upload(self, dptr: int, hptr: int, nbytes: int, host: "np.ndarray | None" = None) -> None:
        self._copy(True, dptr, hptr, nbytes, host)

    def _download(self, hptr: int, dptr: int, nbytes: int, host: "np.ndarray | None" = None) -> None:
        self._copy(False, dptr, hptr, nbytes, host)

    def _copy(self, upload: bool, dptr: int, hptr: int, nbytes: int, host: "np.ndarray | None") -> None:
        """A blocking copy between device address ``dptr`` and host address ``hptr``."""
        if nbytes == 0:
            return
        self.make_current()
        wait_before_copy(self)   # a pageable copy would wait for queued kernels inside the driver
        if not self._copies_directly(hptr, nbytes, host):
            if upload:
                self._staging_buffers().upload(dptr, hptr, nbytes)
            else:
                self._staging_buffers().download(hptr, dptr, nbytes)
            return
        calls, stream = self.calls, self.queue.handle
        if upload:
            calls.check(calls.memcpy_htod_async(dptr, hptr, nbytes, stream), calls.memcpy_htod_async)
        else:
            calls.check(calls.memcpy_dtoh_async(hptr, dptr, nbytes, stream), calls.memcpy_dtoh_async)
        wait(self, True)

    # -- code --------------------------------------------------------------------------------
    def program(self, source: str, options: "Sequence[str] | str" = (), *, name: str = "") -> "DriverProgram":
        """Compile ``source`` for this device (disk-cached binary) and load it. Raises
        CompileError with the compiler's log."""
        key = (source, _options(options), name)
        prog = self._programs.get(key)
        if prog is None or prog.closed:
            prog = self.program_class(self, source, key[1], name=name)
            self._programs[key] = prog
        return prog

    def program_from_binary(self, binary: bytes, *, source: str = "", options: "Sequence[str] | str" = (),
                            name: str = "") -> "DriverProgram":
        """Load a binary built earlier for this device (``program.binary``). With ``source``
        given, an image the driver rejects (another driver or arch) is rebuilt from it."""
        return self.program_class(self, source, _options(options), name=name, binary=binary)

    def synchronize(self) -> None:
        """Wait for every queued copy and launch of this context."""
        self.queue.synchronize()

    # -- lifetime ----------------------------------------------------------------------------
    def _forget_after_fork(self) -> None:
        """In a forked child: drop this context and everything made from it without a driver
        call (they belong to the parent); using them raises ForkedProcessError."""
        self.calls = ForkedLibrary(self.backend_name)  # type: ignore[assignment]
        self._closed_reason = FORKED
        self.closed = True                    # buffers and pinned blocks then skip the driver
        for obj in list(self._programs.values()) + list(self._live):
            for k in getattr(obj, "_kernels", {}).values():
                k.handle.value = None         # cached launchers refuse (see DriverKernel.launch_failed)
        if self._pins is not None:
            self._pins.forget()
            self._pins = None
        self._staging = None
        self._programs = {}
        self.device._forget_context(self)

    def close(self) -> None:
        """Free every buffer and module of this context and release it."""
        if self.closed:
            return
        if self._interrupted is not None and busy(self):
            self._abandon()       # an interrupted kernel still runs: freeing would wait for it
            return
        from ...mempool import release_context

        release_context(self)  # the device-array pool's cached blocks first, while the context lives
        try:
            self.queue.synchronize()
        except Exception:
            pass  # a lost context cannot be drained; release what we hold anyway
        for obj in list(self._live):
            obj.close()
        self._programs.clear()
        if self._staging is not None:
            self._staging.close()
            self._staging = None
        if self._pins is not None:
            self._pins.clear()
        self.queue.close()
        self.closed = True
        self._release()
        self.device._forget_context(self)

    def _abandon(self) -> None:
        """Close this context in Python while an interrupted kernel still runs on its stream:
        no driver call (frees, unloads and the stream's release may wait for the kernel); its
        memory, modules and stream stay allocated until the process exits, the kernel's
        arguments with them. The device's next ``context()`` is a new one."""
        _abandoned.append(self)
        self.closed = True                    # buffers, pinned blocks and programs then skip the driver
        for obj in list(self._programs.values()) + list(self._live):
            for k in getattr(obj, "_kernels", {}).values():
                k.handle.value = None         # cached launchers refuse (see DriverKernel.launch_failed)
        self._programs = {}
        self.device._forget_context(self)

    def __repr__(self) -> str:
        state = " closed" if self.closed else ""
        return f"<{type(self).__name__} {self.device.selector} ({self.device.name}){state}>"


def _options(options: "Sequence[str] | str") -> tuple[str, ...]:
    """Compiler options as a tuple of strings (one string is one option)."""
    if isinstance(options, str):
        return (options,) if options.strip() else ()
    return tuple(str(o) for o in options)
