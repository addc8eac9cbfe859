"""A HIP context: one device plus one stream, owning the buffers and modules made from it.

HIP has no context objects of its own (each device has one primary context); the current
device is per host thread, so calls that allocate or load select the device first.
"""
from __future__ import annotations

import ctypes
import weakref
from ctypes import c_void_p
from typing import TYPE_CHECKING, Sequence

import numpy as np

from pygpgpu_core.handles import OwnedHandle, is_shared_context

from . import _fork  # noqa: F401  (registers the fork handler)
from ._hipapi import api, check

if TYPE_CHECKING:
    from ._device import Device
    from ._module import Program

__all__ = ["Context", "Stream", "Buffer"]

_live_contexts: "weakref.WeakSet[Context]" = weakref.WeakSet()   # dropped in a forked child


class Stream(OwnedHandle):
    """A ``hipStream_t``; work on it runs in order."""

    _kind = "Stream"

    def __init__(self, device: "Device"):
        hip = api()
        check(hip.hipSetDevice(device.index), "hipSetDevice")
        handle = c_void_p()
        check(hip.hipStreamCreate(ctypes.byref(handle)), "hipStreamCreate")
        self._handle = handle.value or 0
        self.device = device

    def synchronize(self) -> None:
        check(api().hipStreamSynchronize(c_void_p(self._require())), "hipStreamSynchronize")

    def _release(self, handle: int) -> None:
        check(api().hipStreamDestroy(c_void_p(handle)), "hipStreamDestroy")


class Context:
    """The device and its stream. ``device.context()`` returns the shared one.

    Closing it waits for the stream, then closes every buffer and module made from it.
    """

    def __init__(self, device: "Device"):
        self.device = device
        self.queue = Stream(device)
        self._children: "weakref.WeakSet[OwnedHandle]" = weakref.WeakSet()
        _live_contexts.add(self)

    @property
    def closed(self) -> bool:
        return self.queue.closed

    def stream_handle(self) -> int:
        return self.queue._require()

    def activate(self) -> None:
        """Make this context's device current on the calling thread."""
        check(api().hipSetDevice(self.device.index), "hipSetDevice")

    def _adopt(self, child: OwnedHandle) -> None:
        self._children.add(child)

    def buffer(self, nbytes: int) -> "Buffer":
        """Uninitialised device memory of ``nbytes`` bytes."""
        return Buffer(self, nbytes)

    def buffer_from_host(self, host: np.ndarray, *, zero_copy: bool = False) -> "Buffer":
        """A device buffer holding a copy of ``host`` (HIP device memory is never host-aliased here)."""
        host = np.ascontiguousarray(host)
        buf = Buffer(self, host.nbytes)
        if host.nbytes:
            buf.write(host)
        return buf

    def program(self, source: str, options: "Sequence[str] | str" = (), *, name: str = "") -> "Program":
        """Compile ``source`` for this device's target (disk-cached) and load it as a module."""
        from ._module import Program

        return Program(self, source, options, name=name)

    def program_from_binary(self, binary: bytes, *, source: str = "", options: "Sequence[str] | str" = (),
                            name: str = "") -> "Program":
        """Load a code object built earlier for this device's target (``program.binary``)."""
        from ._module import Program

        return Program(self, source, options, name=name, binary=binary)

    def synchronize(self) -> None:
        self.queue.synchronize()

    def _forget_after_fork(self) -> None:
        """In a forked child: drop the stream and everything made from it without a runtime
        call (they belong to the parent); using them raises ForkedProcessError."""
        for child in list(self._children):
            for k in list(child.__dict__.get("_kernels", {}).values()):
                k._forget_after_fork("hip")
            child._forget_after_fork("hip")
        self.queue._forget_after_fork("hip")

    def close(self) -> None:
        if self.queue.closed:
            return
        from pygpgpu_core.mempool import release_context

        release_context(self)  # the device-array pool's cached blocks first, while the context lives
        try:
            self.queue.synchronize()
        finally:
            for child in list(self._children):
                child._close_because(" (its Context was closed)")
            self.queue.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if not is_shared_context(self):    # ``with device.context()`` borrows the shared one
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<HIP Context on {self.device.selector} {self.device.name!r} ({state})>"


def _host_view(host: np.ndarray, writable: bool, what: str) -> np.ndarray:
    if not isinstance(host, np.ndarray):
        raise TypeError(f"{what} needs a numpy array, got {type(host).__name__}")
    if not host.flags.c_contiguous:
        raise ValueError(f"{what} needs a C-contiguous array; pass np.ascontiguousarray(a)")
    if writable and not host.flags.writeable:
        raise ValueError(f"{what} needs a writable array to copy into")
    return host


class Buffer(OwnedHandle):
    """Device memory from ``hipMalloc``. Copies are blocking for the host."""

    _kind = "Buffer"

    def __init__(self, context: Context, nbytes: int):
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError(f"a buffer size cannot be negative, got {nbytes}")
        context.activate()
        ptr = c_void_p()
        check(api().hipMalloc(ctypes.byref(ptr), max(nbytes, 1)), "hipMalloc")
        self._handle = ptr.value or 0
        self.context = context
        self.nbytes = nbytes
        context._adopt(self)

    @property
    def ptr(self) -> int:
        """The device address, as passed to kernels."""
        return self._require()

    def _range(self, nbytes: int, offset: int, what: str) -> None:
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(f"{what}: {nbytes} bytes at offset {offset} do not fit in this {self.nbytes}-byte buffer")

    def write(self, host: np.ndarray, offset: int = 0) -> None:
        host = _host_view(host, False, "Buffer.write")
        self._range(host.nbytes, offset, "Buffer.write")
        if host.nbytes:
            stream = c_void_p(self.context.stream_handle())
            check(api().hipMemcpyHtoDAsync(c_void_p(self._require() + offset), c_void_p(host.ctypes.data),
                                           host.nbytes, stream), "hipMemcpyHtoDAsync")
            self.context.synchronize()

    def read(self, host: np.ndarray, offset: int = 0) -> None:
        host = _host_view(host, True, "Buffer.read")
        self._range(host.nbytes, offset, "Buffer.read")
        if host.nbytes:
            stream = c_void_p(self.context.stream_handle())
            check(api().hipMemcpyDtoHAsync(c_void_p(host.ctypes.data), c_void_p(self._require() + offset),
                                           host.nbytes, stream), "hipMemcpyDtoHAsync")
            self.context.synchronize()

    def write_async(self, host: np.ndarray, offset: int = 0) -> None:
        """Queue a copy of ``host`` into the buffer at byte ``offset`` without waiting: keep
        ``host`` alive and unchanged until ``context.synchronize()``."""
        host = _host_view(host, False, "Buffer.write_async")
        self._range(host.nbytes, offset, "Buffer.write_async")
        if host.nbytes:
            stream = c_void_p(self.context.stream_handle())
            check(api().hipMemcpyHtoDAsync(c_void_p(self._require() + offset), c_void_p(host.ctypes.data),
                                           host.nbytes, stream), "hipMemcpyHtoDAsync")

    def read_async(self, host: np.ndarray, offset: int = 0) -> None:
        """Queue a copy from byte ``offset`` into ``host``; valid after ``context.synchronize()``."""
        host = _host_view(host, True, "Buffer.read_async")
        self._range(host.nbytes, offset, "Buffer.read_async")
        if host.nbytes:
            stream = c_void_p(self.context.stream_handle())
            check(api().hipMemcpyDtoHAsync(c_void_p(host.ctypes.data), c_void_p(self._require() + offset),
                                           host.nbytes, stream), "hipMemcpyDtoHAsync")

    def view(self, offset: int, nbytes: "int | None" = None) -> "Buffer":
        """A non-owning buffer over ``[offset, offset + nbytes)`` of this one (keeps it alive)."""
        base = self._require()
        offset = int(offset)
        nbytes = self.nbytes - offset if nbytes is None else int(nbytes)
        if offset < 0 or nbytes < 0 or offset + nbytes > self.nbytes:
            raise ValueError(f"view [{offset}, {offset + nbytes}) is outside the {self.nbytes}-byte buffer")
        view = Buffer.__new__(Buffer)
        view._handle = base + offset
        view.context = self.context
        view.nbytes = nbytes
        view._parent = self            # the memory is the parent's: only the parent frees it
        self.context._adopt(view)
        return view

    def copy_from(self, src: "Buffer", nbytes: "int | None" = None) -> None:
        if not isinstance(src, Buffer):
            raise TypeError(f"Buffer.copy_from needs a HIP Buffer, got {type(src).__name__}")
        n = min(self.nbytes, src.nbytes) if nbytes is None else int(nbytes)
        self._range(n, 0, "Buffer.copy_from")
        src._range(n, 0, "Buffer.copy_from (source)")
        if n:
            check(api().hipMemcpyDtoDAsync(c_void_p(self._require()), c_void_p(src._require()), n,
                                           c_void_p(self.context.stream_handle())), "hipMemcpyDtoDAsync")

    def fill(self, value: "np.generic | bytes") -> None:
        """Repeat ``value`` (a numpy scalar or a byte pattern) over the whole buffer."""
        pattern = bytes(value) if isinstance(value, (bytes, bytearray)) else np.asarray(value).tobytes()
        if not pattern or self.nbytes % len(pattern):
            raise ValueError(f"a {len(pattern)}-byte fill pattern does not tile a {self.nbytes}-byte buffer")
        if not self.nbytes:
            return
        hip, ptr = api(), c_void_p(self._require())
        stream = c_void_p(self.context.stream_handle())
        count = self.nbytes // len(pattern)
        if len(pattern) == 1:
            check(hip.hipMemsetD8Async(ptr, pattern[0], count, stream), "hipMemsetD8Async")
        elif len(pattern) == 2:
            check(hip.hipMemsetD16Async(ptr, int.from_bytes(pattern, "little"), count, stream), "hipMemsetD16Async")
        elif len(pattern) == 4:
            check(hip.hipMemsetD32Async(ptr, int.from_bytes(pattern, "little", signed=True), count, stream),
                  "hipMemsetD32Async")
        else:
            self.write(np.frombuffer(pattern * count, dtype=np.uint8))

    _parent: "Buffer | None" = None

    def _release(self, handle: int) -> None:
        if self._parent is not None:     # a view: nothing of its own to free
            self._parent = None
            return
        check(api().hipFree(c_void_p(handle)), "hipFree")

    def __repr__(self) -> str:
        return f"<HIP Buffer {self.nbytes} bytes on {self.context.device.selector}>"
