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

Launches whose numpy arguments are all small (``SMALL_ARRAY_MAX``) take :class:`SmallBatch`
instead: one device block holds every argument (a sub-buffer view each), one host staging area
mirrors it, and the whole launch makes at most one upload, one download and one wait.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from .. import mempool
from ..errors import ClosedError, GPGPUError
from ..protocols import AsyncCopies, BufferViews, HostMappedMemory, PinnedHostMemory, option, supports
from ._device import resolve_target
from ._transfer import download, record_transfer, upload

__all__ = ["StagedArgument", "stage_numpy", "natural_alignment", "ALIAS_WRITTEN_MIN", "SyncOnce",
           "SmallBatch", "SmallBatchCache", "SMALL_ARRAY_MAX", "UPLOAD", "BOTH", "DOWNLOAD", "UNUSED"]

# A written array that aliases the numpy memory needs a map/unmap pair after the launch to make
# the kernel's writes current (~80 µs on PoCL here); below this size a pooled block and a memcpy
# each way cost less (measured: 1 MiB is where the two meet). Read-only arrays alias at any size.
ALIAS_WRITTEN_MIN = 1 << 20


class SyncOnce:
    """``context.synchronize()`` the first time it is called, nothing after: a launcher staging
    several arrays passes one as ``sync=`` so the launch waits once, and only if some argument
    actually needs the wait (aliased and device-copied arguments never call it)."""

    __slots__ = ("context", "done")
    context: Any
    done: bool

    def __init__(self, context: Any) -> None:
        self.context = context
        self.done = False

    def __call__(self) -> None:
        if not self.done:
            self.context.synchronize()
            self.done = True


class StagedArgument:
    """A numpy array made available to a kernel; call :meth:`finish` once the launch is queued."""

    __slots__ = ("buffer", "host", "_download", "_alias", "_pool", "_block")
    buffer: Any             # the Buffer the kernel takes
    host: np.ndarray

    def __init__(self, buffer: Any, host: np.ndarray, download_after: bool, alias: bool, pool: Any = None,
                 block: Any = None) -> None:
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
            staging = block.host
            assert staging is not None, "host_access pools hand out zero-copy blocks, each with its host array"
            staging[:host.nbytes] = host.reshape(-1).view(np.uint8)
            record_transfer("h2d", host.nbytes)
        else:
            upload(block.buffer, host)
    return StagedArgument(block.buffer, host, write, False, pool, block)


def _zero_copy_buffer(ctx: Any, host: np.ndarray, align: int) -> Any:
    """A buffer aliasing ``host``, or None when the backend would copy (misaligned, or a backend
    without ``align``, which then demands its own base-address alignment)."""
    base = int(option(ctx.device, "mem_base_addr_align") or 1)
    if host.ctypes.data % min(align, base):
        return None  # cheaper to decide here than to create and close a copying buffer
    try:
        buf = ctx.buffer_from_host(host, zero_copy=True, align=align)
    except TypeError:  # a backend whose buffer_from_host has no align keyword
        if host.ctypes.data % base:
            return None
        buf = ctx.buffer_from_host(host, zero_copy=True)
    if option(buf, "zero_copy"):
        return buf
    buf.close()  # the backend copied after all: use the counted path
    return None


# -- small-argument batches -----------------------------------------------------------------------

# Each host<->device copy is a driver round trip (~10 us on CUDA); below this size per array the
# round trips, not the bytes, are the cost, so a launch's small arrays travel together.
# PYGPGPU_SMALL_ARRAY_MAX overrides it (bytes; -1 turns batching off, e.g. to compare).
def _small_array_max() -> int:
    env = os.environ.get("PYGPGPU_SMALL_ARRAY_MAX", "").strip()
    if not env:
        return 64 << 10
    try:
        return int(float(env))
    except ValueError:
        raise ValueError(f"PYGPGPU_SMALL_ARRAY_MAX={env!r} is not a byte count; set it to an integer such as "
                         "65536, or -1 to stage every array separately") from None


SMALL_ARRAY_MAX = _small_array_max()
SMALL_BATCH_MAX = 1 << 20      # the whole batch: beyond this the per-array paths stream better
# Batches up to this size live in host memory the kernel accesses in place where the backend
# offers it (CUDA's ``host_mapped``): no copy commands at all, but every kernel access crosses
# the bus, which only pays while the arguments are a few KiB (measured on the H200, see
# benchmarks/RESULTS.md).
MAPPED_BATCH_MAX = 4 << 10
# ... and up to this size when the kernel touches each element about once (the translator's
# "streamed" arrays: read and written only at the work item's own index), where the bus carries
# no more than a copy would.
STREAMED_MAPPED_MAX = SMALL_BATCH_MAX
# Host-visible pool memory is filled in place (no queued copy); tests switch this off to run the
# staging-area path (the one CUDA takes) on PoCL.
SMALL_BATCH_DIRECT = True
# Slot alignment inside the batch block: CUDA allocations start on 256 bytes and OpenCL
# sub-buffers on CL_DEVICE_MEM_BASE_ADDR_ALIGN (128 on PoCL); kernels may assume either.
_SLOT_ALIGN = 256
_HOST_ALIGN = 4096

# What a launch does with one argument; the block is laid out in this order so that the upload
# is one leading range and the download one range right after it.
UPLOAD, BOTH, DOWNLOAD, UNUSED = 0, 1, 2, 3


def access_group(read: bool, write: bool, overwrite: bool) -> int:
    """UPLOAD (read only), BOTH (written, and read or not provably overwritten), DOWNLOAD
    (written everywhere, never read) or UNUSED."""
    if write:
        return DOWNLOAD if overwrite and not read else BOTH
    return UPLOAD if read else UNUSED


def batch_supported(context: Any) -> bool:
    """Whether ``context``'s buffers have ``view`` (CUDA, OpenCL 1.1+); others stage per array."""
    try:
        probe = mempool.get_pool(context)
        block = probe.allocate(1)
    except Exception:  # noqa: BLE001 - any failure here only means "use the per-array path"
        return False
    try:
        buf = block.buffer
        if not supports(buf, BufferViews):
            return False
        try:
            buf.view(0, 1).close()
        except (NotImplementedError, GPGPUError, ValueError):
            return False
        return True
    finally:
        probe.release(block)


class SmallBatch:
    """The device block, host staging area and per-argument views for one layout of small
    arguments: ``key`` is one ``(nbytes, group)`` per array argument, in argument order;
    ``mapped_max``: the largest batch kept in host-mapped memory (None: MAPPED_BATCH_MAX).
    ``self.key`` is ``(key, mapped_max)``, what a :class:`SmallBatchCache` files it under.

    Used by one launch at a time (a :class:`SmallBatchCache` hands it out exclusively).
    ``pending``: queued work may still use the block or the staging area, so the next user
    waits for the queue first."""

    __slots__ = ("context", "key", "pool", "block", "buffer", "host", "views", "offsets", "up_end",
                 "down_start", "down_end", "direct", "pending")

    def __init__(self, context: Any, key: tuple, align: int = 1, mapped_max: "int | None" = None):
        self.context = context
        self.key = (key, mapped_max)
        device = getattr(context, "device", None)
        step = max(_SLOT_ALIGN, int(option(device, "mem_base_addr_align") or 1), int(align))
        order = sorted(range(len(key)), key=lambda i: key[i][1])
        offsets = [0] * len(key)
        end = {g: 0 for g in (UPLOAD, BOTH, DOWNLOAD, UNUSED)}
        at = 0
        for i in order:
            nbytes, group = key[i]
            offsets[i] = at
            at += -(-max(nbytes, 1) // step) * step
            end[group] = at
        for g in (BOTH, DOWNLOAD, UNUSED):     # empty groups end where the previous one does
            end[g] = max(end[g], end[g - 1])
        self.offsets = offsets
        self.up_end = end[BOTH]
        self.down_start = end[UPLOAD]           # BOTH slots follow the UPLOAD ones
        self.down_end = end[DOWNLOAD]
        self.pool: "mempool.MemoryPool | None" = None
        self.block: "mempool.Block | None" = None
        self.buffer: Any = None
        self.host: "np.ndarray | None" = None     # None once closed
        self.pending = False
        self.views: list[Any] = []
        staging_bytes = 0                         # a separate staging area's size (not direct)
        limit = MAPPED_BATCH_MAX if mapped_max is None else mapped_max
        if SMALL_BATCH_DIRECT and at <= limit and supports(context, HostMappedMemory):
            # Host memory the kernel uses in place: the host copies in and out, nothing is queued.
            self.host, self.buffer = context.host_mapped(at)
            self.direct = True
        else:
            pool = self.pool = mempool.get_pool(context)
            block = self.block = pool.allocate(at)
            self.buffer = block.buffer
            staging_bytes = block.nbytes
            # Host-visible pool memory (PoCL): the host copies into the block itself. Elsewhere a
            # staging area (page-locked on CUDA) makes each direction one DMA copy.
            self.direct = SMALL_BATCH_DIRECT and pool.host_access and block.host is not None
            if self.direct:
                self.host = block.host
        try:
            self.views = [self.buffer.view(offsets[i], max(key[i][0], 1)) for i in range(len(key))]
            if self.host is None and supports(context, PinnedHostMemory):
                self.host = context.pinned_empty(staging_bytes, np.uint8)
            elif self.host is None:
                raw = np.empty(staging_bytes + _HOST_ALIGN, np.uint8)
                start = (-raw.ctypes.data) % _HOST_ALIGN
                self.host = raw[start:start + staging_bytes]
        except BaseException:
            self.close()
            raise

    @property
    def usable(self) -> bool:
        buf = self.buffer
        return buf is not None and not option(buf, "closed")

    def upload(self, arrays) -> None:
        """Copy ``arrays`` (one per argument; None where nothing goes up) into the block with
        one host->device transfer, queued without waiting where the backend allows."""
        if self.pending:
            self.context.synchronize()      # the last launch may still read the block / staging
            self.pending = False
        host, offsets = self.host, self.offsets
        if host is None:
            raise ClosedError("this SmallBatch")
        copied = 0
        for i, a in enumerate(arrays):
            if a is not None:
                off = offsets[i]
                if a.flags.c_contiguous:
                    host[off:off + a.nbytes] = a.reshape(-1).view(np.uint8)
                else:
                    host[off:off + a.nbytes].view(a.dtype).reshape(a.shape)[...] = a
                copied += a.nbytes
        self.pending = True
        n = self.up_end
        if n:
            # Counted as one transfer of what crosses: the host's own copies into shared memory
            # (direct), else the whole staged range, alignment gaps included.
            if not self.direct:
                buf = self.buffer
                if supports(buf, AsyncCopies):
                    buf.write_async(host[:n], 0)
                else:
                    buf.write(host[:n], 0)
                copied = n
            record_transfer("h2d", copied)

    def download(self, arrays) -> None:
        """After the launch: one device->host transfer of the written range, one wait, then the
        bytes into ``arrays`` (one per argument; None where nothing comes back)."""
        start, end = self.down_start, self.down_end
        if end <= start:
            return       # nothing written: no wait (``pending`` makes the next user wait instead)
        host = self.host
        if host is None:
            raise ClosedError("this SmallBatch")
        if not self.direct:
            buf = self.buffer
            if supports(buf, AsyncCopies):
                buf.read_async(host[start:end], start)
            else:
                buf.read(host[start:end], start)
        self.context.synchronize()
        self.pending = False
        offsets = self.offsets
        copied = 0
        for i, a in enumerate(arrays):
            if a is not None:
                off = offsets[i]
                a.reshape(-1).view(np.uint8)[...] = host[off:off + a.nbytes]
                copied += a.nbytes
        record_transfer("d2h", copied if self.direct else end - start)

    def close(self) -> None:
        """Release the views and the memory (the pool's block back to the pool). Idempotent."""
        views, self.views = self.views, []
        block, self.block = self.block, None
        buf, self.buffer = self.buffer, None
        if buf is None:
            return
        if self.pending and not option(buf, "closed"):
            try:
                self.context.synchronize()   # queued work may still use the staging area
            except GPGPUError:
                pass
        for v in views:
            try:
                v.close()
            except GPGPUError:
                pass
        pool = self.pool
        if block is not None and pool is not None:     # a pool's block: back to the pool
            pool.release(block)
        else:
            buf.close()                      # host-mapped: freed with the host array
        self.host = None


class SmallBatchCache:
    """A few :class:`SmallBatch` layouts kept for one launch plan; each is lent to one caller at
    a time (``take``/``give``), so concurrent launches of the plan never share one."""

    __slots__ = ("context", "limit", "_free")

    def __init__(self, context: Any, limit: int = 4):
        self.context = context
        self.limit = limit
        self._free: dict = {}

    def take(self, key: tuple, align: int = 1, mapped_max: "int | None" = None) -> SmallBatch:
        batch = self._free.pop((key, mapped_max), None)      # dict.pop is atomic: one caller gets it
        if batch is not None:
            if batch.usable:
                return batch
            batch.close()
        return SmallBatch(self.context, key, align, mapped_max)

    def give(self, batch: SmallBatch) -> None:
        free = self._free
        if len(free) >= self.limit:
            try:
                old = free.pop(next(iter(free)))
            except (KeyError, StopIteration, RuntimeError):
                old = None
            if old is not None:
                old.close()
        old = free.pop(batch.key, None)
        free[batch.key] = batch
        if old is not None and old is not batch:
            old.close()

    def close(self) -> None:
        free, self._free = self._free, {}
        for batch in free.values():
            batch.close()
