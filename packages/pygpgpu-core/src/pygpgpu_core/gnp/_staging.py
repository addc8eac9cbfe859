"""Numpy arguments of a kernel launch: the fewest copies the kernel's access pattern allows.

The kernel launcher calls :func:`stage_numpy` per numpy argument with what its read/write analysis
found, passes ``staged.buffer`` to the kernel and calls ``staged.finish()`` after the launch.

* Host-unified devices (PoCL, integrated GPUs), when the array is writable and starts on the
  alignment of the kernel's pointer type (by default its own element type's: 4 bytes for
  float32, 16 for float4): the buffer aliases the numpy array itself (``CL_MEM_USE_HOST_PTR``);
  nothing is copied and nothing is counted. ``finish()`` (a map/unmap) makes the kernel's
  writes visible, so written arrays under ``ALIAS_WRITTEN_MIN`` take the pooled path instead.
* Elsewhere: a pooled device buffer; upload only if the kernel reads the argument or may leave
  some elements unwritten, read back only if it writes. Both copies are counted.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import mempool
from ._device import resolve_target
from ._transfer import download, record_transfer, upload

__all__ = ["StagedArgument", "stage_numpy", "natural_alignment", "ALIAS_WRITTEN_MIN", "SyncOnce"]

# A written array that aliases the numpy memory needs a map/unmap pair after the launch to make
# the kernel's writes current (~80 µs on PoCL here); below this size a pooled block and a memcpy
# each way cost less (measured: 1 MiB is where the two meet). Read-only arrays alias at any size.
ALIAS_WRITTEN_MIN = 1 << 20


class SyncOnce:
    """``context.synchronize()`` the first time it is called, nothing after: a launcher staging
    several arrays passes one as ``sync=`` so the launch waits once, and only if some argument
    actually needs the wait (aliased and device-copied arguments never call it)."""

    __slots__ = ("context", "done")

    def __init__(self, context):
        self.context = context
        self.done = False

    def __call__(self) -> None:
        if not self.done:
            self.context.synchronize()
            self.done = True


class StagedArgument:
    """A numpy array made available to a kernel; call :meth:`finish` once the launch is queued."""

    __slots__ = ("buffer", "host", "_download", "_alias", "_pool", "_block")

    def __init__(self, buffer, host, download_after, alias, pool=None, block=None):
        self.buffer = buffer
        self.host = host
        self._download = download_after
        self._alias = alias
        self._pool = pool
        self._block = block

    @property
    def zero_copy(self) -> bool:
        return self._alias

    def finish(self, sync: "SyncOnce | None" = None) -> None:
        """Bring the kernel's writes back into the numpy array (waits for the kernel) and release
        the device memory. Idempotent. ``sync``: shared by a launch's arguments so that reading
        several back waits for the kernel once (a new SyncOnce after the launch)."""
        buf, self.buffer = self.buffer, None
        if buf is None:
            return
        try:
            if self._download:
                if self._alias:
                    buf.read(self.host, 0)  # same memory: waits for the kernel, copies nothing
                elif self._pool.host_access:
                    if sync is None:
                        self._pool.context.synchronize()
                    else:
                        sync()
                    self.host.reshape(-1).view(np.uint8)[...] = self._block.host[:self.host.nbytes]
                    record_transfer("d2h", self.host.nbytes)
                else:
                    download(buf, self.host)
        finally:
            if self._alias:
                buf.close()
            else:
                self._pool.release(self._block)
            self._block = self._pool = None


def natural_alignment(dtype: np.dtype) -> int:
    """The alignment a kernel compiler may assume for a pointer to ``dtype`` elements.

    A scalar's is its size; OpenCL vectors (``float4.dtype``, ``float3.dtype``: 16 bytes) are
    aligned to their size too. A C struct's size is a multiple of its alignment, a power of two,
    so the largest power of two dividing the size is always enough."""
    size = dtype.itemsize
    return size & -size if size else 1


def stage_numpy(host: np.ndarray, device: Any, *, read: bool = True, write: bool = True,
                overwrite: bool = False, align: "int | None" = None,
                sync: "SyncOnce | None" = None) -> StagedArgument:
    """Stage C-contiguous ``host`` for one launch on ``device`` (a Device, Context or selector).
    ``read``/``write``: whether the kernel may read/write it; ``overwrite``: the kernel provably
    writes every element (then nothing is uploaded). ``align``: the alignment of the pointer type
    the kernel reads it through; by default that of ``host``'s own element type (what translated
    kernels declare). A zero-copy alias needs the array to start on that boundary: PoCL faults on
    wide vector loads from memory aligned less than the pointer type says. ``sync``: one SyncOnce
    shared by the arguments of a launch, so staging them waits for earlier work once."""
    if not isinstance(host, np.ndarray) or not host.flags.c_contiguous:
        raise ValueError("stage_numpy needs a C-contiguous numpy array (copy non-contiguous inputs first)")
    if write and not host.flags.writeable:
        raise ValueError("the kernel writes this argument but the numpy array is read-only")
    device, ctx = resolve_target(device)
    if (getattr(device, "host_unified_memory", False) and host.nbytes and host.flags.writeable
            and (not write or host.nbytes >= ALIAS_WRITTEN_MIN)):
        need = natural_alignment(host.dtype) if align is None else max(1, int(align))
        buf = _zero_copy_buffer(ctx, host, need)
        if buf is not None:
            return StagedArgument(buf, host, write, True)
    pool = mempool.get_pool(ctx)
    block = pool.allocate(host.nbytes)
    if (read or (write and not overwrite)) and host.nbytes:
        if pool.host_access:  # host-visible pool memory: copy in directly, no queued command
            if sync is None:
                ctx.synchronize()
            else:
                sync()
            block.host[:host.nbytes] = host.reshape(-1).view(np.uint8)
            record_transfer("h2d", host.nbytes)
        else:
            upload(block.buffer, host)
    return StagedArgument(block.buffer, host, write, False, pool, block)


def _zero_copy_buffer(ctx: Any, host: np.ndarray, align: int) -> Any:
    """A buffer aliasing ``host``, or None when the backend would copy (misaligned, or a backend
    without ``align``, which then demands its own base-address alignment)."""
    base = int(getattr(ctx.device, "mem_base_addr_align", 1) or 1)
    if host.ctypes.data % min(align, base):
        return None  # cheaper to decide here than to create and close a copying buffer
    try:
        buf = ctx.buffer_from_host(host, zero_copy=True, align=align)
    except TypeError:  # a backend whose buffer_from_host has no align keyword
        if host.ctypes.data % base:
            return None
        buf = ctx.buffer_from_host(host, zero_copy=True)
    if getattr(buf, "zero_copy", False):
        return buf
    buf.close()  # the backend copied after all: use the counted path
    return None
