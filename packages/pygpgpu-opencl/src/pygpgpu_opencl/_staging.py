"""Numpy arrays passed straight to a kernel launch: temporary device memory for one launch.

They never escape the launch, so they are raw ``cl_mem`` handles rather than Buffer
objects (a launch with three small arrays is dominated by per-object Python work otherwise).
On host-unified devices an array aligned to its element type is used in place
(``CL_MEM_USE_HOST_PTR``); small arrays that are read back are copied instead, because a
copy costs less than the map/unmap pair that makes an aliased array current. One array passed
for several parameters is one buffer (``pygpgpu_core.host_aliases``).
"""
from __future__ import annotations

import ctypes
from ctypes import c_int32
from typing import TYPE_CHECKING

import numpy as np
from pygpgpu_core.host_aliases import earlier_same

from . import _constants as C
from ._buffer import host_address
from ._library import lib
from ._status import check
from ._wait import enqueue, settle, track, wait_keeping

if TYPE_CHECKING:
    from ._context import Context

__all__ = ["ArrayStaging", "ZERO_COPY_READBACK_MIN"]

# Below this size an array that is read back is copied rather than aliased (measured on
# PoCL: map+unmap ~25 µs, about a 256 KiB memcpy).
ZERO_COPY_READBACK_MIN = 256 * 1024


class ArrayStaging:
    """The temporary buffers of one launch: ``add()`` each array, then ``finish()``, and
    always ``release()`` (in a ``finally``)."""

    __slots__ = ("context", "mems", "readbacks", "aliased", "done", "hosts", "arrays", "staged")

    def __init__(self, context: "Context"):
        self.context = context
        self.mems: list[int] = []
        self.readbacks: list[tuple[int, np.ndarray, np.ndarray, bool]] = []
        self.aliased = False  # some buffer lives in a caller's array
        self.done = False
        self.hosts: list = []  # host memory the device reads or writes: alive until it is done
        self.arrays: list[tuple[np.ndarray, bool, str]] = []   # (array, read back, argument) per buffer
        self.staged: list[tuple[int, np.ndarray, bool]] = []   # (cl_mem, contiguous host, zero copy) per buffer

    def add(self, arr: np.ndarray, readback: bool, align: "int | None", label: str) -> int:
        """A ``cl_mem`` holding ``arr`` for this launch (``label`` names the argument), the one
        made for an earlier argument when ``arr`` is that same array."""
        k = earlier_same(arr, readback, self.arrays)
        if k is not None:
            mem, contiguous, zero_copy = self.staged[k]
            first, read_back, first_label = self.arrays[k]
            if readback and not read_back:
                self.arrays[k] = (first, True, first_label)
                if arr.nbytes:
                    self.readbacks.append((mem, arr, contiguous, zero_copy))
            return mem
        flags = arr.flags
        contiguous = arr if flags.c_contiguous else np.ascontiguousarray(arr)
        writeable = flags.writeable or contiguous is not arr  # a fresh copy may be written
        nbytes = contiguous.nbytes
        ptr = host_address(contiguous) if nbytes else None
        device = self.context.device
        base = device.mem_base_addr_align
        need = base if align is None else max(1, min(align, base))
        zero_copy = (
            ptr is not None
            and device.host_unified_memory
            and (not readback or nbytes >= ZERO_COPY_READBACK_MIN)
            and writeable  # a kernel must not write into a read-only array
            and ptr % need == 0
        )
        if zero_copy:
            mem_flags = C.CL_MEM_READ_WRITE | C.CL_MEM_USE_HOST_PTR
        elif ptr is not None:
            mem_flags = C.CL_MEM_READ_WRITE | C.CL_MEM_COPY_HOST_PTR
        else:
            mem_flags = C.CL_MEM_READ_WRITE  # an empty array: OpenCL has no empty buffers
        err = c_int32(0)
        mem = lib().clCreateBuffer(self.context._require(), mem_flags, max(nbytes, 1), ptr, ctypes.byref(err))
        check(err.value, "clCreateBuffer")
        self.mems.append(mem)
        self.aliased = self.aliased or zero_copy
        self.hosts.append(contiguous)
        self.arrays.append((arr, readback, label))
        self.staged.append((mem, contiguous, zero_copy))
        if readback and nbytes:
            self.readbacks.append((mem, arr, contiguous, zero_copy))
        return mem

    def finish(self, queue: int) -> None:
        """After the launch is enqueued: bring written arrays back, waiting once."""
        cl = lib()
        for mem, _, contiguous, zero_copy in self.readbacks:
            if zero_copy:  # map + unmap makes the host memory current; no copy
                err = c_int32(0)
                event = ctypes.c_void_p()
                with self.context._enqueue_lock:   # the unmap is the queue's last command (_wait.enqueue)
                    ptr = cl.clEnqueueMapBuffer(queue, mem, 0, C.CL_MAP_READ, 0, contiguous.nbytes, 0, None, None,
                                                ctypes.byref(err))
                    check(err.value, "clEnqueueMapBuffer")
                    check(cl.clEnqueueUnmapMemObject(queue, mem, ptr, 0, None, ctypes.byref(event)),
                          "clEnqueueUnmapMemObject")
                    track(self.context, event.value)
            else:
                check(
                    enqueue(self.context, cl.clEnqueueReadBuffer, queue, mem, 0, 0, contiguous.nbytes,
                            host_address(contiguous), 0, None),
                    "clEnqueueReadBuffer",
                )
        # One wait for everything on the in-order queue (in slices: Ctrl-C can interrupt it).
        # Aliased inputs live in the caller's arrays: they must outlive the kernel's reads.
        if self.readbacks or self.aliased:
            wait_keeping(self.context, queue, tuple(self.hosts))
        self.done = True
        for _, original, contiguous, _ in self.readbacks:
            if contiguous is not original:
                np.copyto(original, contiguous)

    def release(self) -> None:
        if not self.mems:
            return
        cl = lib()
        if not self.done:  # an error (or Ctrl-C) stopped the launch half-way
            queue = self.context._queue_handle
            if queue is not None and (self.aliased or self.readbacks):   # reads may be queued into them
                settle(self.context, queue, tuple(self.hosts))
        for mem in self.mems:
            cl.clReleaseMemObject(mem)
        self.mems.clear()
