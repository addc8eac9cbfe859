"""A device's context (the retained primary context, shared with CuPy/torch/Numba) and its stream."""
from __future__ import annotations

import threading
import weakref
from ctypes import byref, c_void_p
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from pygpgpu_core.handles import Closeable
from pygpgpu_core.errors import ClosedError
from pygpgpu_core.forking import FORKED, ForkedLibrary, closed_error
from pygpgpu_core.hostpin import PIN_MIN, PinCache

from . import _fork  # noqa: F401  (registers the fork handler)
from ._driver import check, driver
from ._memory import STAGING_THRESHOLD, CudaBuffer, PinnedStaging, host_mapped, is_pinned, pinned_empty


if TYPE_CHECKING:
    from ._device import CudaDevice
    from ._program import CudaProgram

__all__ = ["CudaContext", "CudaStream"]

_live_contexts: "weakref.WeakSet[CudaContext]" = weakref.WeakSet()   # dropped in a forked child


class CudaStream:
    """The context's queue: every copy and launch of a context is ordered on it.

    A blocking stream (flag 0) so that work on the legacy default stream, which Numba and
    many libraries use, stays ordered with ours.
    """

    def __init__(self, context: "CudaContext"):
        self.context = context
        self.handle = c_void_p()
        context.make_current()
        check(context.drv.cuStreamCreate(byref(self.handle), 0), "cuStreamCreate")

    @property
    def ptr(self) -> int:
        """The CUstream as an int (for torch.cuda.ExternalStream, cupy.cuda.ExternalStream)."""
        return self.handle.value or 0

    def wait_for_stream(self, stream: int) -> None:
        """Order later work on this stream after everything already queued on ``stream`` (a
        CUstream as an int, or 1 / 2 for the legacy / per-thread default stream), without
        blocking the host: the CUDA array interface v3 ``stream`` of a producer."""
        if not self.handle:
            raise ClosedError("this CUDA stream")
        ctx, drv = self.context, self.context.drv
        ctx.make_current()
        event = c_void_p()
        check(drv.cuEventCreate(byref(event), 2), "cuEventCreate")  # CU_EVENT_DISABLE_TIMING
        try:
            check(drv.cuEventRecord(event, c_void_p(int(stream))), "cuEventRecord",
                  f"{stream:#x} is not a CUDA stream of this device's context")
            check(drv.cuStreamWaitEvent(self.handle, event, 0), "cuStreamWaitEvent")
        finally:
            drv.cuEventDestroy(event)  # freed once the wait has been satisfied

    def synchronize(self) -> None:
        if not self.handle:
            raise ClosedError("this CUDA stream")
        self.context.make_current()
        check(self.context.drv.cuStreamSynchronize(self.handle), "cuStreamSynchronize")

    def close(self) -> None:
        handle, self.handle = self.handle, c_void_p()
        if handle:
            self.context.make_current()
            self.context.drv.cuStreamDestroy(handle)


class CudaContext(Closeable):
    """The primary context of one device, retained once, plus one stream.

    Every call that needs a current context makes this one current first: CUDA keeps the
    current context per thread, and other libraries in the process may switch it.
    """

    closed = True          # until the primary context is retained: the finalizer then does nothing

    def __init__(self, device: "CudaDevice"):
        self.device = device
        self.drv = driver()
        self._handle = c_void_p()
        check(self.drv.cuDevicePrimaryCtxRetain(byref(self._handle), device.ordinal), "cuDevicePrimaryCtxRetain")
        self.closed = False
        self._lock = threading.Lock()
        self._live: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._staging: "PinnedStaging | None" = None
        self._pins: "PinCache | None" = None
        self._programs: dict[tuple, "CudaProgram"] = {}
        self.queue = CudaStream(self)
        _live_contexts.add(self)

    @property
    def handle(self) -> int:
        """The CUcontext as an int."""
        return self._handle.value or 0

    def make_current(self) -> None:
        if self.closed:     # ForkedProcessError when it was inherited across fork
            raise closed_error(self, f"the CUDA context of {self.device.selector}", "cuda")
        check(self.drv.cuCtxSetCurrent(self._handle), "cuCtxSetCurrent")

    def _track(self, obj: Any) -> None:
        self._live.add(obj)

    # -- memory ------------------------------------------------------------------------------
    def buffer(self, nbytes: int) -> CudaBuffer:
        """Uninitialised device memory."""
        return CudaBuffer(self, nbytes)

    def buffer_from_host(self, host: np.ndarray, *, zero_copy: bool = False) -> CudaBuffer:
        """A device buffer holding a copy of ``host``'s bytes (``zero_copy`` is only a hint: a
        discrete GPU cannot alias pageable host memory, so the bytes are copied)."""
        host = np.ascontiguousarray(host)
        buf = CudaBuffer(self, host.nbytes)
        if host.nbytes:
            buf.write(host)
        return buf

    def buffer_from_pointer(self, ptr: int, nbytes: int, owner: Any = None) -> CudaBuffer:
        """Wrap device memory allocated elsewhere (torch, CuPy, ``__cuda_array_interface__``)
        without taking ownership: ``owner`` is kept alive while the buffer is, nothing is freed."""
        ptr = int(ptr)
        if ptr <= 0 and int(nbytes) > 0:
            raise ValueError(f"buffer_from_pointer needs a device pointer, got {ptr}")
        return CudaBuffer(self, nbytes, ptr, owner)

    def pinned_empty(self, shape: Any, dtype: Any = np.float32) -> np.ndarray:
        """A numpy array in page-locked host memory: copies to/from it skip the staging step."""
        return pinned_empty(self, shape, dtype)

    def host_mapped(self, nbytes: int) -> "tuple[np.ndarray, CudaBuffer]":
        """``(host, buffer)``: page-locked host bytes that kernels access in place, no copies
        (each access crosses the bus: for a launch's tiny arguments, not for working data)."""
        return host_mapped(self, nbytes)

    def memory_info(self) -> tuple[int, int]:
        """``(free, total)`` device memory in bytes."""
        from ctypes import c_size_t

        free, total = c_size_t(), c_size_t()
        self.make_current()
        check(self.drv.cuMemGetInfo(byref(free), byref(total)), "cuMemGetInfo")
        return free.value, total.value

    def _staging_buffers(self) -> PinnedStaging:
        if self._staging is None:
            with self._lock:
                if self._staging is None:
                    self._staging = PinnedStaging(self)
        return self._staging

    def _pin_cache(self) -> PinCache:
        if self._pins is None:
            with self._lock:
                if self._pins is None:
                    self._pins = PinCache(self._host_register, self._host_unregister)
        return self._pins

    def _host_register(self, ptr: int, nbytes: int) -> bool:
        self.make_current()
        return self.drv.cuMemHostRegister(ptr, nbytes, 0) == 0   # refused: copy as pageable

    def _host_unregister(self, ptr: int) -> None:
        if not self.closed:
            self.make_current()
            self.drv.cuMemHostUnregister(ptr)

    def _copies_directly(self, hptr: int, nbytes: int, host: "np.ndarray | None") -> bool:
        """Small copies and page-locked memory (ours, another library's, or a numpy array the
        pin cache registered because it keeps coming back) go straight to the driver; large
        pageable ones through the staging buffers."""
        if nbytes >= PIN_MIN and host is not None and self._pin_cache().pinned(host):
            return True
        return nbytes < STAGING_THRESHOLD or is_pinned(self, hptr)

    def _upload(self, dptr: int, hptr: int, nbytes: int, host: "np.ndarray | None" = None) -> None:
        if nbytes == 0:
            return
        self.make_current()
        if self._copies_directly(hptr, nbytes, host):
            stream = self.queue.handle
            check(self.drv.cuMemcpyHtoDAsync(dptr, hptr, nbytes, stream), "cuMemcpyHtoDAsync")
            check(self.drv.cuStreamSynchronize(stream), "cuStreamSynchronize")
        else:
            self._staging_buffers().upload(dptr, hptr, nbytes)

    def _download(self, hptr: int, dptr: int, nbytes: int, host: "np.ndarray | None" = None) -> None:
        if nbytes == 0:
            return
        self.make_current()
        if self._copies_directly(hptr, nbytes, host):
            stream = self.queue.handle
            check(self.drv.cuMemcpyDtoHAsync(hptr, dptr, nbytes, stream), "cuMemcpyDtoHAsync")
            check(self.drv.cuStreamSynchronize(stream), "cuStreamSynchronize")
        else:
            self._staging_buffers().download(hptr, dptr, nbytes)

    # -- code --------------------------------------------------------------------------------
    def program(self, source: str, options: Sequence[str] = (), *, name: str = "") -> "CudaProgram":
        """Compile ``source`` with NVRTC for this device's exact ``sm_XY`` (disk-cached CUBIN)
        and load it. Raises CompileError with NVRTC's log."""
        from ._program import CudaProgram

        key = (source, tuple(str(o) for o in options), name)
        prog = self._programs.get(key)
        if prog is None or prog.closed:
            prog = CudaProgram(self, source, key[1], name=name)
            self._programs[key] = prog
        return prog

    def program_from_binary(self, binary: bytes, *, source: str = "", options: Sequence[str] = (),
                            name: str = "") -> "CudaProgram":
        """Load a CUBIN/PTX built earlier for this device (``program.binary``). With ``source``
        given, an image the driver rejects (another driver or arch) is rebuilt from it."""
        from ._program import CudaProgram

        return CudaProgram(self, source, tuple(str(o) for o in options), name=name, binary=binary)

    def synchronize(self) -> None:
        """Wait for every queued copy and launch of this context."""
        self.queue.synchronize()

    # -- lifetime ----------------------------------------------------------------------------
    def _forget_after_fork(self) -> None:
        """In a forked child: drop this context and everything made from it without a driver
        call (they belong to the parent); using them raises ForkedProcessError."""
        self.drv = ForkedLibrary("cuda")
        self._closed_reason = FORKED
        self.closed = True                    # buffers and pinned blocks then skip the driver
        for obj in list(self._programs.values()) + list(self._live):
            for k in getattr(obj, "_kernels", {}).values():
                k.handle.value = None         # cached launchers refuse (see _launch._fail)
        if self._pins is not None:
            self._pins.forget()
            self._pins = None
        self._staging = None
        self._programs = {}
        self.device._forget_context(self)

    def close(self) -> None:
        """Free every buffer and module of this context and release the primary context."""
        if self.closed:
            return
        from pygpgpu_core.mempool import release_context

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
        self.drv.cuDevicePrimaryCtxRelease(self.device.ordinal)
        self.device._forget_context(self)


    def __repr__(self) -> str:
        return f"<CudaContext {self.device.selector} ({self.device.name}){' closed' if self.closed else ''}>"
