"""A per-context pool of device buffers, so repeated allocations of similar sizes cost no driver call.

Requests are rounded up to a *size class* (512-byte steps below 1 MiB, then steps of 1/8 of the
power of two, so at most 12.5 % is wasted) and a freed buffer waits in its class's bin for the next
request of that class. Cached (free) bytes are bounded; past the bound the least recently freed
buffers are released to the driver. A failed allocation empties the cache and retries once, so
cached memory never causes an out-of-memory error. Pools belong to one context and are emptied
when the context closes (backends call :func:`release_context` from ``Context.close``; a pool
whose context reports ``closed`` is also dropped on its next use).

On devices with host-unified memory (PoCL, integrated GPUs) blocks are host arrays wrapped as
zero-copy buffers, so the device works on host memory directly and a block can be exported to the
CPU (DLPack) without a copy.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from .errors import GPGPUError
from .protocols import option

__all__ = [
    "Block",
    "MemoryPool",
    "size_class",
    "get_pool",
    "release_context",
    "pools",
    "DEFAULT_LIMIT_BYTES",
]

_SMALL_STEP = 512
_LARGE_FROM = 1 << 20
_HOST_ALIGN = 4096  # page alignment keeps CL_MEM_USE_HOST_PTR truly zero-copy


def _default_limit() -> int:
    env = os.environ.get("PYGPGPU_POOL_LIMIT", "").strip()
    if env:
        try:
            return max(0, int(float(env)))
        except ValueError:
            raise ValueError(
                f"PYGPGPU_POOL_LIMIT={env!r} is not a byte count; set it to an integer such as 268435456"
            ) from None
    return 1 << 30


DEFAULT_LIMIT_BYTES = _default_limit()


def size_class(nbytes: int) -> int:
    """The byte size actually allocated for a request of ``nbytes`` (never 0)."""
    n = max(int(nbytes), 1)
    if n < _LARGE_FROM:
        return (n + _SMALL_STEP - 1) // _SMALL_STEP * _SMALL_STEP
    step = 1 << (n.bit_length() - 4)
    return (n + step - 1) // step * step


def _aligned_host(nbytes: int) -> np.ndarray:
    raw = np.empty(nbytes + _HOST_ALIGN, dtype=np.uint8)
    start = (-raw.ctypes.data) % _HOST_ALIGN
    return raw[start:start + nbytes]


class Block:
    """One pooled allocation: a backend buffer of ``nbytes`` (a size class) and, for zero-copy
    blocks, the host array it aliases (kept alive as long as the buffer)."""

    __slots__ = ("buffer", "nbytes", "host", "__weakref__")

    def __init__(self, buffer: Any, nbytes: int, host: "np.ndarray | None" = None):
        self.buffer = buffer
        self.nbytes = nbytes
        self.host = host

    def close(self) -> None:
        buf, self.buffer, self.host = self.buffer, None, None
        if buf is not None:
            try:
                buf.close()
            except GPGPUError:
                pass  # the context is already gone; the driver freed it with the context


class MemoryPool:
    """Size-class bins of free blocks for one context. Thread-safe."""

    def __init__(self, context: Any, limit_bytes: int | None = None, *, zero_copy: bool | None = None):
        self.context = context
        self.limit_bytes = DEFAULT_LIMIT_BYTES if limit_bytes is None else int(limit_bytes)
        if zero_copy is None:
            zero_copy = bool(getattr(getattr(context, "device", None), "host_unified_memory", False))
        self.zero_copy = zero_copy
        # reentrant: an array's finalizer gives its block back (release) and the garbage collector
        # may run it inside allocate() or release() on the same thread, at an allocation there
        self._lock = threading.RLock()
        self._bins: dict[int, list[Block]] = {}
        self._lru: "OrderedDict[int, Block]" = OrderedDict()  # id(block) -> block, oldest first
        self.cached_bytes = 0
        self.in_use_bytes = 0
        self.hits = 0
        self.misses = 0
        self.closed = False
        self._host_access: "bool | None" = None

    # -- allocation ---------------------------------------------------------------------------
    def allocate(self, nbytes: int) -> Block:
        """A block of at least ``nbytes`` (its contents are undefined)."""
        cls = size_class(nbytes)
        with self._lock:
            if self.closed:
                from .errors import ClosedError

                raise ClosedError("memory pool (its context was closed)")
            free = self._bins.get(cls)
            while free:
                block = free.pop()
                del self._lru[id(block)]
                self.cached_bytes -= cls
                if getattr(block.buffer, "closed", False):
                    continue  # finalized behind our back (see release); forget it
                self.in_use_bytes += cls
                self.hits += 1
                return block
            self.misses += 1
        block = self._new_block(cls)
        with self._lock:
            self.in_use_bytes += cls
        return block

    def _new_block(self, cls: int) -> Block:
        try:
            return self._driver_alloc(cls)
        except GPGPUError:
            # Out of memory is the usual cause: give back everything cached and try once more.
            if not self.free_all_blocks():
                raise
            return self._driver_alloc(cls)

    def _driver_alloc(self, cls: int) -> Block:
        if self.zero_copy:
            host = _aligned_host(cls)
            return Block(self.context.buffer_from_host(host, zero_copy=True), cls, host)
        return Block(self.context.buffer(cls), cls)

    @property
    def host_access(self) -> bool:
        """Whether the host may read and write this pool's zero-copy blocks through their host
        arrays directly (after ``context.synchronize()``), skipping a queued copy command.

        Probed once per pool: the device must see host writes and the host must see device
        writes in the same memory. True on PoCL; False for pools of device memory."""
        if self._host_access is None:
            self._host_access = self.zero_copy and self._probe_host_access()
        return self._host_access

    def _probe_host_access(self) -> bool:
        try:
            block = self._driver_alloc(_SMALL_STEP)
        except GPGPUError:
            return False
        try:
            if block.host is None or not option(block.buffer, "zero_copy"):
                return False
            words = block.host.view(np.uint32)
            words[:] = 0x11111111
            block.buffer.fill(np.uint32(0x22222222).tobytes())
            self.context.synchronize()
            device_to_host = bool((words == 0x22222222).all())
            words[:] = 0x33333333
            seen = np.empty_like(words)
            block.buffer.read(seen)
            host_to_device = bool((seen == 0x33333333).all())
            return device_to_host and host_to_device
        except (GPGPUError, NotImplementedError):
            return False
        finally:
            block.close()

    def release(self, block: Block) -> None:
        """Return a block; it is reused or, past the cache bound, released to the driver."""
        if block.buffer is None:
            return
        evicted: list[Block] = []
        with self._lock:
            self.in_use_bytes -= block.nbytes
            # When an array dies inside a garbage cycle, the collector may have finalized (closed)
            # its buffer before the array's allocation came back here: never cache such a buffer.
            if self.closed or block.nbytes > self.limit_bytes or getattr(block.buffer, "closed", False):
                evicted.append(block)
            else:
                self._bins.setdefault(block.nbytes, []).append(block)
                self._lru[id(block)] = block
                self.cached_bytes += block.nbytes
                while self.cached_bytes > self.limit_bytes and self._lru:
                    evicted.append(self._take_oldest())
        for b in evicted:
            b.close()

    def _take_oldest(self) -> Block:
        _, block = self._lru.popitem(last=False)
        self._bins[block.nbytes].remove(block)
        if not self._bins[block.nbytes]:
            del self._bins[block.nbytes]
        self.cached_bytes -= block.nbytes
        return block

    # -- housekeeping -------------------------------------------------------------------------
    def free_all_blocks(self) -> int:
        """Release every cached (unused) block to the driver; returns the bytes released."""
        with self._lock:
            blocks = list(self._lru.values())
            self._lru.clear()
            self._bins.clear()
            released, self.cached_bytes = self.cached_bytes, 0
        for b in blocks:
            b.close()
        return released

    def set_limit(self, limit_bytes: int) -> None:
        """Change the bound on cached bytes (0 disables caching); trims at once."""
        evicted = []
        with self._lock:
            self.limit_bytes = max(0, int(limit_bytes))
            while self.cached_bytes > self.limit_bytes and self._lru:
                evicted.append(self._take_oldest())
        for b in evicted:
            b.close()

    def used_bytes(self) -> int:
        """Bytes held by live arrays (CuPy's name)."""
        return self.in_use_bytes

    def free_bytes(self) -> int:
        """Bytes cached for reuse (CuPy's name)."""
        return self.cached_bytes

    def total_bytes(self) -> int:
        """Bytes allocated from the driver and not yet released (CuPy's name)."""
        return self.in_use_bytes + self.cached_bytes

    def n_free_blocks(self) -> int:
        with self._lock:
            return len(self._lru)

    def stats(self) -> dict:
        with self._lock:
            return {
                "cached_bytes": self.cached_bytes,
                "in_use_bytes": self.in_use_bytes,
                "free_blocks": len(self._lru),
                "hits": self.hits,
                "misses": self.misses,
                "limit_bytes": self.limit_bytes,
            }

    def close(self) -> None:
        """Release every cached block; blocks still in use are released when returned."""
        with self._lock:
            self.closed = True
        self.free_all_blocks()

    def __repr__(self) -> str:
        s = self.stats()
        return (f"<MemoryPool {getattr(getattr(self.context, 'device', None), 'selector', '?')} "
                f"in_use={s['in_use_bytes']} cached={s['cached_bytes']} limit={s['limit_bytes']}>")


_pools: dict[int, MemoryPool] = {}
_pools_lock = threading.Lock()


def get_pool(context: Any) -> MemoryPool:
    """The pool of ``context`` (created on first use; a closed context's pool is replaced)."""
    key = id(context)
    pool = _pools.get(key)
    if pool is not None and pool.context is context and not pool.closed:
        if not getattr(context, "closed", False):
            return pool
    with _pools_lock:
        pool = _pools.get(key)
        if pool is not None and (pool.context is not context or getattr(context, "closed", False)):
            pool.close()
            pool = None
        if pool is None or pool.closed:
            if getattr(context, "closed", False):
                from .forking import closed_error   # ForkedProcessError for a context inherited across fork

                selector = getattr(context.device, "selector", "the device")
                raise closed_error(context, f"context of {selector}", selector.split(":")[0])
            pool = MemoryPool(context)
            _pools[key] = pool
        return pool


def release_context(context: Any) -> None:
    """Empty and forget ``context``'s pool. Backends call this first thing in ``Context.close()``."""
    with _pools_lock:
        pool = _pools.pop(id(context), None)
    if pool is not None and pool.context is context:
        pool.close()


def pools() -> list[MemoryPool]:
    """Every live pool (diagnostics)."""
    return list(_pools.values())
