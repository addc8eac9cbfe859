"""Device buffers, page-locked host memory and the staged (double-buffered) host transfers.

Why staging: a copy from ordinary (pageable) numpy memory goes through the driver's own
small bounce buffer (about 9 GB/s measured on the H200's host), while page-locked memory
is DMA'd directly (about 55 GB/s). Large transfers are therefore cut into chunks that are
copied by host threads into two pinned buffers in turn, while the GPU DMAs the other one.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from ctypes import byref, c_uint, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import ClosedError
from ..handles import Closeable
from .waits import defer, wait, wait_before_copy, wait_event

if TYPE_CHECKING:
    from .context import DriverContext

__all__ = ["DriverBuffer", "PinnedStaging", "pinned_empty", "host_mapped", "is_pinned", "host_memmove",
           "staging_settings"]


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, "") or default)
    except ValueError:
        return default


# Tuned on the H200 machine (16 cores; pageable 9-15 GB/s, pinned 55 GB/s): below 16 MiB the
# driver's own path is as fast; 64 MiB staged in 8 MiB chunks by 4 threads ran at 22-24 GB/s,
# 1 GiB in 32 MiB chunks by 8 threads at 25-40 GB/s. Host memcpy is the limit: one thread
# copies about 9 GB/s, and pieces under ~2 MiB cost more in hand-off than they gain.
STAGING_THRESHOLD = 16 << 20
STAGING_CHUNK = 32 << 20
SMALL_CHUNK = 8 << 20
MIN_PIECE = 2 << 20


def staging_settings(backend: str) -> tuple[int, int]:
    """``(threshold, chunk)``: pageable copies from ``threshold`` bytes on are staged in chunks of
    ``chunk`` bytes; ``$PYGPGPU_<BACKEND>_STAGING_THRESHOLD`` / ``_STAGING_CHUNK`` override them."""
    prefix = f"PYGPGPU_{backend.upper()}_"
    return _env_int(prefix + "STAGING_THRESHOLD", STAGING_THRESHOLD), _env_int(prefix + "STAGING_CHUNK", STAGING_CHUNK)


def _copy_threads() -> int:
    """Threads that copy a staged transfer: ``$PYGPGPU_COPY_THREADS`` (``$PYGPGPU_CUDA_COPY_THREADS``,
    its older name), else up to 8."""
    for name in ("PYGPGPU_COPY_THREADS", "PYGPGPU_CUDA_COPY_THREADS"):
        if os.environ.get(name):
            return max(1, _env_int(name, 1))
    return min(8, os.cpu_count() or 1)


COPY_THREADS = _copy_threads()
_pool: "ThreadPoolExecutor | None" = None
_pool_lock = threading.Lock()


def _copy_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(COPY_THREADS - 1, thread_name_prefix="pygpgpu-copy")
    return _pool


def host_memmove(dst: int, src: int, nbytes: int) -> None:
    """memmove split across threads (ctypes.memmove releases the GIL): one core cannot
    saturate the host-to-device link on its own."""
    parts = min(COPY_THREADS, nbytes // MIN_PIECE)
    if parts <= 1:
        ctypes.memmove(dst, src, nbytes)
        return
    step = -(-nbytes // parts)
    step = (step + 4095) & ~4095
    pool = _copy_pool()
    futures = [
        pool.submit(ctypes.memmove, dst + off, src + off, min(step, nbytes - off))
        for off in range(step, nbytes, step)
    ]
    ctypes.memmove(dst, src, min(step, nbytes))
    for f in futures:
        f.result()


class _PinnedBlock:
    """One page-locked host allocation; freed when the last numpy view of it dies."""

    ptr: int = 0        # until the allocation succeeds: __del__ then has nothing to free

    def __init__(self, context: "DriverContext", nbytes: int, flags: int = 0):
        """``flags``: host_alloc's (1, PORTABLE in both drivers: page-locked for every context,
        as copies between two devices need)."""
        self.context = context
        self.nbytes = nbytes
        ptr = c_void_p()
        context.make_current()
        calls = context.calls
        calls.check(calls.host_alloc(byref(ptr), max(nbytes, 1), flags), calls.host_alloc,
                    f"could not page-lock {nbytes} bytes of host memory")
        self.ptr = ptr.value or 0           # 0 once freed

    def close(self) -> None:
        ptr, self.ptr = self.ptr, 0
        ctx = self.context
        if ptr and not ctx.closed:
            if ctx._interrupted is not None and defer(ctx, self._free, ptr):
                return      # freeing waits for the device: not while an interrupted kernel runs
            self._free(ptr)

    def _free(self, ptr: int) -> None:
        self.context.make_current()
        self.context.calls.host_free(ptr)

    def __del__(self, _is_finalizing=sys.is_finalizing):  # bound early: globals may be gone at exit
        if not _is_finalizing():
            self.close()


def pinned_empty(context: "DriverContext", shape: Any, dtype: Any = np.float32) -> np.ndarray:
    """A numpy array in page-locked host memory (transfers to and from it run at full speed)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    block = _PinnedBlock(context, count * dtype.itemsize)
    raw = (ctypes.c_uint8 * max(block.nbytes, 1)).from_address(block.ptr)
    raw._pygpgpu_block = block  # type: ignore[attr-defined]  # the numpy view keeps the ctypes array, which keeps the block
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(shape)  # type: ignore[call-overload]  # a ctypes array is a buffer


def host_mapped(context: "DriverContext", nbytes: int) -> "tuple[np.ndarray, DriverBuffer]":
    """Page-locked host memory that kernels read and write in place: ``(host, buffer)``, a
    uint8 numpy view and a buffer over the same bytes. Every kernel access crosses the bus,
    so this suits a few KiB touched about once (a launch's tiny arguments), not working data."""
    host = pinned_empty(context, nbytes, np.uint8)
    dptr = c_uint64()
    context.make_current()
    calls = context.calls
    calls.check(calls.host_get_device_pointer(byref(dptr), host.ctypes.data, 0), calls.host_get_device_pointer)
    return host, context.buffer_class(context, nbytes, dptr.value, owner=host)


def is_pinned(context: "DriverContext", hptr: int) -> bool:
    """Whether host address ``hptr`` is page-locked (ours, torch's pin_memory(), ...)."""
    query = context.pointer_host_memory
    if query is None or not context.calls.has("pointer_get_attribute"):
        return False
    memtype = c_uint()
    return context.calls.pointer_get_attribute(ctypes.addressof(memtype), query[0], hptr) == 0 \
        and memtype.value == query[1]


def _page_locked(context: "DriverContext", host: np.ndarray) -> bool:
    """Whether ``host`` is page-locked: from ``pinned_empty`` (its memory's owner carries the
    block), or where the driver can tell, anyone's (torch's pin_memory(), the pin cache)."""
    owner: Any = host
    while isinstance(owner, np.ndarray):
        owner = owner.base
    return getattr(owner, "_pygpgpu_block", None) is not None or is_pinned(context, host.ctypes.data)


class PinnedStaging:
    """Two page-locked chunks + events that let host copies and DMA overlap."""

    def __init__(self, context: "DriverContext", chunk: int = STAGING_CHUNK):
        self.context = context
        self.chunk = chunk
        self.lock = threading.Lock()
        self.blocks: list[_PinnedBlock] = []  # sized on first use: page-locking costs ~ms per MiB
        self.events: list[c_void_p] = []
        calls = context.calls
        for _ in range(2):
            ev = c_void_p()
            calls.check(calls.event_create(byref(ev), 2), calls.event_create)  # disable timing
            self.events.append(ev)

    def chunk_for(self, nbytes: int) -> int:
        # Several chunks are needed for copy and DMA to overlap at all.
        chunk = min(self.chunk, SMALL_CHUNK) if nbytes <= 128 << 20 else self.chunk
        if not self.blocks or self.blocks[0].nbytes < chunk:
            for block in self.blocks:
                block.close()
            self.blocks = []
            self.blocks = [_PinnedBlock(self.context, chunk), _PinnedBlock(self.context, chunk)]
        return chunk

    def upload(self, dptr: int, hptr: int, nbytes: int) -> None:
        calls, stream = self.context.calls, self.context.queue.handle
        check = calls.check
        with self.lock:
            chunk = self.chunk_for(nbytes)
            for i, off in enumerate(range(0, nbytes, chunk)):
                n = min(chunk, nbytes - off)
                slot = i & 1
                wait_event(self.context, self.events[slot])    # the DMA out of this slot is done
                host_memmove(self.blocks[slot].ptr, hptr + off, n)
                check(calls.memcpy_htod_async(dptr + off, self.blocks[slot].ptr, n, stream), calls.memcpy_htod_async)
                check(calls.event_record(self.events[slot], stream), calls.event_record)
            wait(self.context, True)

    def download(self, hptr: int, dptr: int, nbytes: int) -> None:
        calls, stream = self.context.calls, self.context.queue.handle
        check = calls.check

        def issue(i: int) -> None:
            off = offsets[i]
            slot = self.blocks[i & 1].ptr
            check(calls.memcpy_dtoh_async(slot, dptr + off, min(chunk, nbytes - off), stream), calls.memcpy_dtoh_async)
            check(calls.event_record(self.events[i & 1], stream), calls.event_record)

        with self.lock:
            chunk = self.chunk_for(nbytes)
            offsets = list(range(0, nbytes, chunk))
            issue(0)
            for i, off in enumerate(offsets):
                if i + 1 < len(offsets):
                    issue(i + 1)  # its slot was drained by the previous iteration's host copy
                wait_event(self.context, self.events[i & 1])
                host_memmove(hptr + off, self.blocks[i & 1].ptr, min(chunk, nbytes - off))

    def close(self) -> None:
        for ev in self.events:
            if ev.value:
                self.context.calls.event_destroy(ev)
        self.events = []
        for block in self.blocks:
            block.close()
        self.blocks = []


def _host_array(host: Any, *, writable: bool, what: str) -> np.ndarray:
    if not isinstance(host, np.ndarray):
        if writable:
            raise TypeError(f"{what} needs a writable numpy array, got {type(host).__name__}")
        host = np.asarray(memoryview(host)) if not hasattr(host, "__array_interface__") else np.asarray(host)
    if host.dtype.hasobject:
        raise TypeError(f"{what} cannot copy Python objects (dtype {host.dtype}) to a GPU")
    if not host.flags.c_contiguous:
        if writable:
            raise ValueError(f"{what} needs a C-contiguous array: read into np.empty(...) and copy into the view")
        host = np.ascontiguousarray(host)
    if writable and not host.flags.writeable:
        raise ValueError(f"{what} needs a writable array; this one is read-only")
    return host


class DriverBuffer(Closeable):
    """``nbytes`` of device memory. ``ptr`` is the device address as an int (None once closed).

    A buffer made by ``context.buffer_from_pointer`` wraps memory owned by someone else (torch,
    CuPy, ...): it keeps ``owner`` alive and never frees the memory itself.
    """

    __slots__ = ("context", "nbytes", "ptr", "_owner", "_owns", "__weakref__")
    zero_copy = False
    """Never an alias of host memory (``buffer_from_host`` copies)."""

    def __init__(self, context: "DriverContext", nbytes: int, ptr: "int | None" = None, owner: Any = None):
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError(f"a buffer size must be >= 0, got {nbytes}")
        self.context = context
        self.nbytes = nbytes
        self._owner = owner
        self._owns = ptr is None
        if ptr is None:
            handle = c_uint64()
            context.make_current()
            calls = context.calls
            # The drivers reject 0 bytes; an empty array still needs a distinct valid pointer.
            calls.check(calls.mem_alloc(byref(handle), max(nbytes, 1)), calls.mem_alloc,
                        f"could not allocate {nbytes} bytes on {context.device.name}; free buffers or use smaller data")
            ptr = handle.value
        self.ptr: "int | None" = int(ptr)
        context._track(self)

    # -- interop ---------------------------------------------------------------------------
    @property
    def owns_memory(self) -> bool:
        return self._owns

    def view(self, offset: int, nbytes: "int | None" = None) -> "DriverBuffer":
        """A non-owning buffer over ``[offset, offset + nbytes)`` of this one (keeps it alive)."""
        self._live()
        offset = int(offset)
        nbytes = self.nbytes - offset if nbytes is None else int(nbytes)
        if offset < 0 or nbytes < 0 or offset + nbytes > self.nbytes:
            raise ValueError(f"view [{offset}, {offset + nbytes}) is outside the {self.nbytes}-byte buffer")
        return type(self)(self.context, nbytes, self.ptr + offset, owner=self)  # type: ignore[operator]

    # -- transfers ---------------------------------------------------------------------------
    def _live(self) -> None:
        if self.ptr is None:
            raise ClosedError(f"this {self.context.title} buffer")

    def _range(self, nbytes: int, offset: int, what: str) -> None:
        self._live()
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(
                f"{what} of {nbytes} bytes at offset {offset} does not fit the {self.nbytes}-byte buffer"
            )

    def write(self, host: Any, offset: int = 0) -> None:
        """Copy ``host`` into the buffer at byte ``offset``; returns when the copy is done."""
        host = _host_array(host, writable=False, what=f"{type(self).__name__}.write")
        self._range(host.nbytes, offset, "write")
        self.context._upload(self.ptr + offset, host.ctypes.data, host.nbytes, host)  # type: ignore[operator]

    def read(self, host: np.ndarray, offset: int = 0) -> None:
        """Copy into ``host`` from byte ``offset`` (after all queued work); blocking."""
        host = _host_array(host, writable=True, what=f"{type(self).__name__}.read")
        self._range(host.nbytes, offset, "read")
        self.context._download(host.ctypes.data, self.ptr + offset, host.nbytes, host)  # type: ignore[operator]

    def write_async(self, host: np.ndarray, offset: int = 0) -> None:
        """Queue a copy from ``host`` (keep it alive and unchanged until ``synchronize()``);
        asynchronous only when ``host`` is page-locked (see ``context.pinned_empty``)."""
        host = _host_array(host, writable=False, what=f"{type(self).__name__}.write_async")
        self._range(host.nbytes, offset, "write")
        ctx = self.context
        ctx.make_current()
        if (ctx._last_launch is not None or ctx._interrupted is not None) and not _page_locked(ctx, host):
            wait_before_copy(ctx)   # a pageable copy may wait for queued kernels inside the driver
        calls = ctx.calls
        calls.check(calls.memcpy_htod_async(self.ptr + offset, host.ctypes.data, host.nbytes,  # type: ignore[operator]
                                            ctx.queue.handle), calls.memcpy_htod_async)

    def read_async(self, host: np.ndarray, offset: int = 0) -> None:
        """Queue a copy into ``host``; its contents are valid after ``synchronize()``."""
        host = _host_array(host, writable=True, what=f"{type(self).__name__}.read_async")
        self._range(host.nbytes, offset, "read")
        ctx = self.context
        ctx.make_current()
        if (ctx._last_launch is not None or ctx._interrupted is not None) and not _page_locked(ctx, host):
            wait_before_copy(ctx)   # into pageable memory the copy returns only once it is done
        calls = ctx.calls
        calls.check(calls.memcpy_dtoh_async(host.ctypes.data, self.ptr + offset, host.nbytes,  # type: ignore[operator]
                                            ctx.queue.handle), calls.memcpy_dtoh_async)

    def copy_from(self, src: "DriverBuffer", nbytes: "int | None" = None) -> None:
        """Copy ``nbytes`` (default: all of ``src``) from another buffer, in queue order; a
        buffer of another device (or backend) is copied through the host."""
        self._live()
        if not isinstance(src, DriverBuffer):
            raise TypeError(f"copy_from needs a device buffer, got {type(src).__name__}")
        src._live()
        n = src.nbytes if nbytes is None else int(nbytes)
        if n < 0 or n > src.nbytes or n > self.nbytes:
            raise ValueError(f"cannot copy {n} bytes from a {src.nbytes}-byte buffer into a {self.nbytes}-byte one")
        if n == 0:
            return
        if src.context is not self.context and src.context.device is not self.context.device:
            self.copy_from_device(src, n)
            return
        ctx = self.context
        ctx.make_current()
        calls = ctx.calls
        calls.check(calls.memcpy_dtod_async(self.ptr, src.ptr, n, ctx.queue.handle), calls.memcpy_dtod_async)

    def copy_from_device(self, src: "DriverBuffer", nbytes: "int | None" = None, src_offset: int = 0,
                         dst_offset: int = 0) -> str:
        """Copy ``nbytes`` (default: the rest of ``src``) from byte ``src_offset`` of a buffer of
        any device to byte ``dst_offset`` of this one, the fastest way the driver allows; returns
        how: ``"device"`` (one context), ``"peer"`` (device to device, driver/peer.py),
        ``"staged"`` (through page-locked host memory) or ``"host"`` (another backend: through
        a numpy array). Ordered after the work queued on both devices; "staged" and "host"
        return once the bytes arrived, "device" and "peer" may still be in flight (in order on
        this buffer's queue)."""
        from .peer import copy_between_devices

        self._live()
        if not isinstance(src, DriverBuffer):
            raise TypeError(f"copy_from_device needs a device buffer, got {type(src).__name__}")
        src._live()
        src_offset, dst_offset = int(src_offset), int(dst_offset)
        n = src.nbytes - src_offset if nbytes is None else int(nbytes)
        src._range(n, src_offset, "copy_from_device source")
        self._range(n, dst_offset, "copy_from_device destination")
        if n == 0:
            return "device"
        if src.context.calls is not self.context.calls:         # another backend (or library): numpy between
            staged = np.empty(n, np.uint8)
            src.read(staged, src_offset)
            self.write(staged, dst_offset)
            return "host"
        return copy_between_devices(self, dst_offset, src, src_offset, n)

    def fill(self, value: Any) -> None:
        """Set every element to ``value`` (a numpy scalar, or a bytes pattern), in queue order."""
        self._live()
        pattern = value if isinstance(value, (bytes, bytearray)) else np.asarray(value).tobytes()
        size = len(pattern)
        if size == 0 or self.nbytes % size:
            raise ValueError(f"a {size}-byte fill pattern does not tile a {self.nbytes}-byte buffer")
        ctx, count = self.context, self.nbytes // size
        if count == 0:
            return
        ctx.make_current()
        calls, stream, ptr = ctx.calls, ctx.queue.handle, self.ptr
        if len(set(pattern)) == 1:
            calls.check(calls.memset_d8_async(ptr, pattern[0], self.nbytes, stream), calls.memset_d8_async)
        elif size == 2:
            calls.check(calls.memset_d16_async(ptr, int.from_bytes(pattern, "little"), count, stream),
                        calls.memset_d16_async)
        elif size == 4:
            calls.check(calls.memset_d32_async(ptr, int.from_bytes(pattern, "little"), count, stream),
                        calls.memset_d32_async)
        else:
            # Any other pattern: write it once, then double the filled prefix with device copies.
            head = np.frombuffer(bytes(pattern), np.uint8)
            self.write(head)
            done = size
            while done < self.nbytes:
                n = min(done, self.nbytes - done)
                calls.check(calls.memcpy_dtod_async(ptr + done, ptr, n, stream), calls.memcpy_dtod_async)  # type: ignore[operator]
                done += n

    # -- lifetime ----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self.ptr is None

    def close(self) -> None:
        """Free the device memory (idempotent). Wrapped foreign memory is only released."""
        ptr, self.ptr = self.ptr, None
        self._owner = None
        ctx = self.context
        if ptr is not None and self._owns and not ctx.closed:
            if ctx._interrupted is not None and defer(ctx, _mem_free, ctx, ptr):
                return      # cuMemFree / hipFree wait for the device: not while an interrupted kernel runs
            _mem_free(ctx, ptr)

    def __int__(self) -> int:
        self._live()
        return self.ptr  # type: ignore[return-value]

    def __repr__(self) -> str:
        state = "closed" if self.ptr is None else hex(self.ptr)
        return f"<{type(self).__name__} {self.nbytes} bytes at {state} on {self.context.device.selector}>"


def _mem_free(ctx: "DriverContext", ptr: int) -> None:
    ctx.make_current()
    ctx.calls.mem_free(ptr)  # an error here (lost context) cannot be acted on
