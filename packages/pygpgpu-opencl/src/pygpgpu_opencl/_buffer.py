"""Device memory (``cl_mem`` buffers): allocate, write, read, copy, fill, release."""
from __future__ import annotations

import ctypes
import sys
from ctypes import c_int32
from typing import TYPE_CHECKING, Any

import numpy as np

from pygpgpu_core.errors import GPGPUError
from pygpgpu_core.logs import get_logger
from pygpgpu_core.backend.handles import OwnedHandle

from . import _constants as C
from ._library import lib
from ._status import check
from ._wait import enqueue, settle, track, wait, wait_keeping

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["Buffer", "aligned_empty", "host_address"]


def aligned_empty(shape: Any, dtype: Any = np.float32, align: int = 4096) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts on an ``align``-byte boundary.

    Such arrays can back zero-copy buffers (``buffer_from_host(a, zero_copy=True)``) on
    devices that share memory with the host.
    """
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = count * dtype.itemsize
    raw = np.empty(nbytes + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start : start + nbytes].view(dtype).reshape(shape)


_char_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def host_address(arr: np.ndarray) -> int:
    """The address of a C-contiguous array's data (4x cheaper than ``arr.ctypes.data`` for
    the writable arrays of the launch path; read-only arrays take the slow route)."""
    try:
        # numpy's stubs give ndarray the buffer protocol (__buffer__) only for Python >= 3.12
        return _addressof(_char_from_buffer(arr))  # type: ignore[arg-type]
    except (TypeError, ValueError, BufferError):
        return arr.ctypes.data


_staged_pairs: "set[tuple[int, int]]" = set()


def _log_staged(src: "Context", dst: "Context") -> None:
    """Say once per pair of contexts that their copies go through the host, and why."""
    key = (id(src), id(dst))
    if key in _staged_pairs:
        return
    _staged_pairs.add(key)
    get_logger("transfer").debug(
        "%s -> %s: staged through host memory (the devices have contexts of their own: OpenCL copies "
        "between contexts only through the host)", src.device.selector, dst.device.selector)


def _readable(host: Any, what: str) -> np.ndarray:
    if isinstance(host, np.ndarray):
        return host if host.flags.c_contiguous else np.ascontiguousarray(host)
    if isinstance(host, (bytes, bytearray, memoryview)):
        return np.frombuffer(host, dtype=np.uint8)
    raise TypeError(f"{what} needs a numpy array (or bytes), got {type(host).__name__}")


def _writable(host: Any, what: str) -> np.ndarray:
    if not isinstance(host, np.ndarray):
        raise TypeError(f"{what} needs a writable numpy array to copy into, got {type(host).__name__}")
    if not host.flags.c_contiguous:
        raise ValueError(f"{what} needs a C-contiguous array; pass np.ascontiguousarray(...) and copy back")
    if not host.flags.writeable:
        raise ValueError(f"{what} needs a writable array; this one is read-only")
    return host


class Buffer(OwnedHandle):
    """``nbytes`` of device memory in one :class:`Context`. Transfers are blocking."""

    _kind = "Buffer"
    _parent: "Buffer"    # views only (see view()): the buffer they are a region of

    def __init__(
        self, context: "Context", nbytes: int, *, _host: "np.ndarray | None" = None, _flags: int = 0,
        _host_ptr: "int | None" = None,
    ):
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)):
            raise TypeError(f"a buffer size is an int number of bytes, got {type(nbytes).__name__}")
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError(f"a buffer size cannot be negative (got {nbytes})")
        ctx_handle = context._require()
        device = context.device
        if nbytes > device.max_mem_alloc_size:
            raise ValueError(
                f"cannot allocate {nbytes} bytes on {device.name!r}: its largest single allocation is "
                f"{device.max_mem_alloc_size} bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE); split the data"
            )
        flags = C.CL_MEM_READ_WRITE | _flags
        host_ptr = (_host_ptr or host_address(_host)) if _host is not None and nbytes else None
        if host_ptr is None:
            flags &= ~(C.CL_MEM_USE_HOST_PTR | C.CL_MEM_COPY_HOST_PTR)
        err = c_int32(0)
        # OpenCL has no empty buffers; an empty array still gets a valid (1-byte) handle.
        handle = lib().clCreateBuffer(ctx_handle, flags, max(nbytes, 1), host_ptr, ctypes.byref(err))
        check(err.value, "clCreateBuffer")
        self._handle = int(handle)
        self.context = context
        self.nbytes = nbytes
        self.zero_copy = bool(flags & C.CL_MEM_USE_HOST_PTR)
        # A zero-copy buffer lives in the host array's memory: keep the array alive with it.
        self._host = _host if self.zero_copy else None
        # (zero_copy implies host_ptr: without one the flag was cleared above)
        self._host_ptr: int = host_ptr if host_ptr is not None and self.zero_copy else 0
        context._adopt(self)

    @classmethod
    def from_host(cls, context: "Context", host: Any, *, zero_copy: bool = False, align: "int | None" = None) -> "Buffer":
        """See :meth:`Context.buffer_from_host`. ``align`` lowers the alignment a zero-copy
        buffer needs when the caller knows the kernel's pointee type (its natural alignment)."""
        arr = host if isinstance(host, np.ndarray) else _readable(host, "buffer_from_host()")
        device = context.device
        # Compilers may assume buffers start on CL_DEVICE_MEM_BASE_ADDR_ALIGN (PoCL emits
        # aligned vector loads for double16* and faults on host memory that is not).
        flags = arr.flags
        if zero_copy and device.host_unified_memory and flags.c_contiguous and flags.writeable and arr.nbytes:
            need = device.mem_base_addr_align if align is None else max(1, min(int(align), device.mem_base_addr_align))
            ptr = host_address(arr)
            if ptr % need == 0:
                return cls(context, arr.nbytes, _host=arr, _flags=C.CL_MEM_USE_HOST_PTR, _host_ptr=ptr)
        if not flags.c_contiguous:
            arr = np.ascontiguousarray(arr)
        return cls(context, arr.nbytes, _host=arr, _flags=C.CL_MEM_COPY_HOST_PTR)

    def view(self, offset: int, nbytes: "int | None" = None) -> "Buffer":
        """A sub-buffer over ``[offset, offset + nbytes)`` of this one (``clCreateSubBuffer``):
        kernels see it as a buffer of its own. ``offset`` must be a multiple of the device's
        ``mem_base_addr_align``; the view keeps this buffer alive and is closed with its context."""
        handle = self._require()
        offset = int(offset)
        nbytes = self.nbytes - offset if nbytes is None else int(nbytes)
        if offset < 0 or nbytes < 1 or offset + nbytes > self.nbytes:
            raise ValueError(f"view [{offset}, {offset + nbytes}) is not a non-empty range of this "
                             f"{self.nbytes}-byte buffer")
        align = self.context.device.mem_base_addr_align
        if offset % align:
            raise ValueError(f"a sub-buffer must start on a multiple of {align} bytes (the device's "
                             f"CL_DEVICE_MEM_BASE_ADDR_ALIGN), got offset {offset}")
        cl = lib()
        if cl.clCreateSubBuffer is None:
            raise GPGPUError("this OpenCL library has no clCreateSubBuffer (OpenCL 1.0); "
                             "allocate separate buffers instead")
        region = (ctypes.c_size_t * 2)(offset, nbytes)
        err = c_int32(0)
        sub = cl.clCreateSubBuffer(handle, C.CL_MEM_READ_WRITE, C.CL_BUFFER_CREATE_TYPE_REGION,
                                   region, ctypes.byref(err))
        check(err.value, "clCreateSubBuffer")
        view = Buffer.__new__(Buffer)
        view._handle = int(sub)
        view.context = self.context
        view.nbytes = nbytes
        view.zero_copy = self.zero_copy
        view._host = None            # the parent owns the host memory; the view only refers to it
        view._host_ptr = 0
        view._parent = self          # OpenCL keeps the parent alive too; this keeps the Python side
        self.context._adopt(view)
        return view

    # --- transfers ----------------------------------------------------------------------
    def _check_range(self, what: str, offset: int, nbytes: int) -> None:
        if offset < 0 or offset + nbytes > self.nbytes:
            raise ValueError(
                f"{what}: {nbytes} bytes at offset {offset} do not fit in this {self.nbytes}-byte buffer"
            )

    def _aliases(self, arr: np.ndarray, offset: int) -> bool:
        return self._host is not None and host_address(arr) == self._host_ptr + offset

    def _enqueue_sync_host(self, queue: int, offset: int, nbytes: int, flags: int) -> None:
        """Enqueue map + unmap, which makes a zero-copy buffer's host memory current.

        Both are enqueued without waiting (the in-order queue runs them after earlier
        work); one clFinish afterwards costs a single wait instead of three.
        """
        cl = lib()
        err = c_int32(0)
        event = ctypes.c_void_p()
        with self.context._enqueue_lock:    # the unmap is the queue's last command (see _wait.enqueue)
            ptr = cl.clEnqueueMapBuffer(queue, self._handle, 0, flags, offset, nbytes, 0, None, None,
                                        ctypes.byref(err))
            check(err.value, "clEnqueueMapBuffer")
            check(cl.clEnqueueUnmapMemObject(queue, self._handle, ptr, 0, None, ctypes.byref(event)),
                  "clEnqueueUnmapMemObject")
            track(self.context, event.value)

    def _enqueue_read(self, host: np.ndarray, offset: int = 0, blocking: bool = False) -> bool:
        """Read into ``host`` (alive until the queue finishes). Returns True if it waited for
        the queue, i.e. ``blocking`` was asked and a plain read was possible."""
        queue = self.context.queue_handle()
        ptr = host_address(host)
        if self._host is not None and ptr == self._host_ptr + offset:
            self._enqueue_sync_host(queue, offset, host.nbytes, C.CL_MAP_READ)
            return False
        check(
            enqueue(self.context, lib().clEnqueueReadBuffer, queue, self._require(), int(blocking), offset,
                    host.nbytes, ptr, 0, None),
            "clEnqueueReadBuffer",
        )
        return blocking

    def write(self, host: Any, offset: int = 0) -> None:
        """Copy ``host`` (numpy array or bytes) into the buffer at byte ``offset``; blocking."""
        handle = self._require()
        queue = self.context.queue_handle()
        arr = _readable(host, "Buffer.write()")
        offset = int(offset)
        self._check_range("Buffer.write()", offset, arr.nbytes)
        if arr.nbytes == 0:
            return
        if self._aliases(arr, offset):  # the bytes are already there; only synchronise
            self._enqueue_sync_host(queue, offset, arr.nbytes, C.CL_MAP_WRITE)
            wait(self.context, queue)
            return
        # enqueued without blocking, then waited for in slices: Ctrl-C can interrupt it
        check(
            enqueue(self.context, lib().clEnqueueWriteBuffer, queue, handle, 0, offset, arr.nbytes,
                    host_address(arr), 0, None),
            "clEnqueueWriteBuffer",
        )
        wait_keeping(self.context, queue, (arr, host))

    def read(self, host: "np.ndarray | None" = None, offset: int = 0) -> np.ndarray:
        """Copy from byte ``offset`` into ``host`` (writable, C-contiguous); blocking.

        Without ``host`` a new ``uint8`` array holding the rest of the buffer is returned.
        """
        handle = self._require()
        queue = self.context.queue_handle()
        offset = int(offset)
        if host is None:
            host = np.empty(max(self.nbytes - offset, 0), dtype=np.uint8)
        arr = _writable(host, "Buffer.read()")
        self._check_range("Buffer.read()", offset, arr.nbytes)
        if arr.nbytes == 0:
            return host
        if self._aliases(arr, offset):
            self._enqueue_sync_host(queue, offset, arr.nbytes, C.CL_MAP_READ)
            wait(self.context, queue)
            return host
        check(                        # not blocking in the driver: Ctrl-C can interrupt the wait
            enqueue(self.context, lib().clEnqueueReadBuffer, queue, handle, 0, offset, arr.nbytes,
                    host_address(arr), 0, None),
            "clEnqueueReadBuffer",
        )
        wait_keeping(self.context, queue, (arr,))
        return host

    def write_async(self, host: np.ndarray, offset: int = 0) -> None:
        """Queue a copy of ``host`` into the buffer at byte ``offset`` without waiting: keep
        ``host`` alive and unchanged until ``context.synchronize()``."""
        handle = self._require()
        arr = _readable(host, "Buffer.write_async()")
        offset = int(offset)
        self._check_range("Buffer.write_async()", offset, arr.nbytes)
        if arr.nbytes == 0:
            return
        check(
            enqueue(self.context, lib().clEnqueueWriteBuffer, self.context.queue_handle(), handle, 0, offset,
                    arr.nbytes, host_address(arr), 0, None),
            "clEnqueueWriteBuffer",
        )

    def read_async(self, host: np.ndarray, offset: int = 0) -> None:
        """Queue a copy from byte ``offset`` into ``host`` (writable, C-contiguous) without
        waiting; its contents are valid after ``context.synchronize()``."""
        handle = self._require()
        arr = _writable(host, "Buffer.read_async()")
        offset = int(offset)
        self._check_range("Buffer.read_async()", offset, arr.nbytes)
        if arr.nbytes == 0:
            return
        check(
            enqueue(self.context, lib().clEnqueueReadBuffer, self.context.queue_handle(), handle, 0, offset,
                    arr.nbytes, host_address(arr), 0, None),
            "clEnqueueReadBuffer",
        )

    def copy_from(self, src: "Buffer", nbytes: "int | None" = None, *, src_offset: int = 0, dst_offset: int = 0) -> None:
        """Device-to-device copy of ``nbytes`` (default: all of ``src``); ordered on the queue."""
        if not isinstance(src, Buffer):
            raise TypeError(f"copy_from() needs a Buffer, got {type(src).__name__}; use write() for host data")
        handle = self._require()
        src_handle = src._require()
        if src.context is not self.context:
            raise ValueError("copy_from(): both buffers must belong to the same Context")
        queue = self.context.queue_handle()
        nbytes = src.nbytes - int(src_offset) if nbytes is None else int(nbytes)
        src._check_range("copy_from() source", int(src_offset), nbytes)
        self._check_range("copy_from() destination", int(dst_offset), nbytes)
        if nbytes == 0:
            return
        if src is self and abs(int(src_offset) - int(dst_offset)) < nbytes:
            raise ValueError("copy_from(): source and destination ranges overlap")
        check(
            enqueue(self.context, lib().clEnqueueCopyBuffer, queue, src_handle, handle, int(src_offset),
                    int(dst_offset), nbytes, 0, None),
            "clEnqueueCopyBuffer",
        )

    def copy_from_device(self, src: "Buffer", nbytes: "int | None" = None, src_offset: int = 0,
                         dst_offset: int = 0) -> str:
        """Copy ``nbytes`` (default: the rest of ``src``) from byte ``src_offset`` of a buffer of
        any OpenCL device to byte ``dst_offset`` of this one; returns how: ``"device"`` (both in
        one context: ``clEnqueueCopyBuffer``, in queue order) or ``"staged"`` (each device has a
        context of its own, and OpenCL copies between contexts only through the host: the source
        is mapped, its bytes written into this buffer from the mapping, so there is one host copy
        and none on a device whose memory is the host's, such as PoCL). A staged copy returns
        once the bytes arrived."""
        if not isinstance(src, Buffer):
            raise TypeError(f"copy_from_device() needs a Buffer, got {type(src).__name__}")
        src_offset, dst_offset = int(src_offset), int(dst_offset)
        n = src.nbytes - src_offset if nbytes is None else int(nbytes)
        src._check_range("copy_from_device() source", src_offset, n)
        self._check_range("copy_from_device() destination", dst_offset, n)
        if src.context is self.context:
            self.copy_from(src, n, src_offset=src_offset, dst_offset=dst_offset)
            return "device"
        handle, src_handle = self._require(), src._require()
        if n == 0:
            return "staged"
        _log_staged(src.context, self.context)
        cl = lib()
        sctx, squeue = src.context, src.context.queue_handle()
        err = c_int32(0)
        event = ctypes.c_void_p()
        with sctx._enqueue_lock:        # the map becomes the source queue's last command (see _wait.enqueue)
            ptr = cl.clEnqueueMapBuffer(squeue, src_handle, 0, C.CL_MAP_READ, src_offset, n, 0, None,
                                        ctypes.byref(event), ctypes.byref(err))
            check(err.value, "clEnqueueMapBuffer")
            track(sctx, event.value)
        wait(sctx, squeue)              # the source's earlier work is done and the mapping holds its bytes
        written = False
        try:
            check(enqueue(self.context, cl.clEnqueueWriteBuffer, self.context.queue_handle(), handle, 0,
                          dst_offset, n, ptr, 0, None), "clEnqueueWriteBuffer")
            wait(self.context, self.context.queue_handle())
            written = True
        finally:
            if written or not isinstance(sys.exc_info()[1], KeyboardInterrupt):
                # (an interrupted write may still read the mapping: it stays mapped then)
                check(enqueue(sctx, cl.clEnqueueUnmapMemObject, squeue, src_handle, ptr, 0, None),
                      "clEnqueueUnmapMemObject")
        return "staged"

    def fill(self, value: Any) -> None:
        """Set every element to ``value`` (a numpy scalar, ctypes value or bytes pattern)."""
        handle = self._require()
        queue = self.context.queue_handle()
        if isinstance(value, (bytes, bytearray)):
            pattern = bytes(value)
        elif isinstance(value, (np.generic, ctypes._SimpleCData, ctypes.Structure, ctypes.Array)):
            # numpy's stubs give np.generic the buffer protocol (__buffer__) only for Python >= 3.12
            pattern = bytes(memoryview(value).cast("B"))  # type: ignore[arg-type]
        elif isinstance(value, (int, float)) and value == 0:
            pattern = b"\0"
        else:
            raise TypeError(
                f"fill() needs a numpy scalar (e.g. np.float32(1.5)), a ctypes value or a bytes pattern, "
                f"got {type(value).__name__}: the element type would be ambiguous"
            )
        if not pattern:
            raise ValueError("fill(): the pattern is empty")
        if self.nbytes % len(pattern):
            raise ValueError(f"fill(): the buffer size {self.nbytes} is not a multiple of the {len(pattern)}-byte pattern")
        if self.nbytes == 0:
            return
        cl = lib()
        size = len(pattern)
        if cl.clEnqueueFillBuffer is not None and size in (1, 2, 4, 8, 16, 32, 64, 128):
            buf = ctypes.create_string_buffer(pattern, size)
            check(enqueue(self.context, cl.clEnqueueFillBuffer, queue, handle, buf, size, 0, self.nbytes, 0, None),
                  "clEnqueueFillBuffer")
            # The pattern is copied at enqueue time per the spec, but waiting keeps the
            # semantics of write() (done when it returns) and the pattern buffer alive.
            wait_keeping(self.context, queue, (buf,))
            return
        self.write(np.frombuffer(pattern * (self.nbytes // size), dtype=np.uint8))

    # --- lifetime -----------------------------------------------------------------------
    def _release(self, handle: int) -> None:
        self.context._disown(self)
        if self._host is not None:
            # Commands may still read the host memory this buffer lives in: wait for them
            # before letting the array go (or keep it alive while an interrupted kernel runs).
            q = self.context._queue_handle
            if q is not None:
                settle(self.context, q, (self._host,))
            self._host = None
        check(lib().clReleaseMemObject(handle), "clReleaseMemObject")

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("zero-copy" if self.zero_copy else "device")
        return f"<OpenCL Buffer {self.nbytes} bytes on {self.context.device.selector} ({state})>"
