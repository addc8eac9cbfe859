"""Copies between the memory of two devices of one driver (CUDA, HIP).

Three ways, fastest first:

- one context (or one device): ``memcpy_dtod_async`` on its stream;
- peer to peer: where the driver says the destination device can reach the source's memory
  (``device_can_access_peer``: NVLink or PCIe peer DMA), the destination's context is given
  access once (``ctx_enable_peer_access``) and ``memcpy_peer_async`` runs on its stream. Events
  order it after the work queued on the source's stream and order the source's later work after
  it, so nothing waits on the host;
- staged: otherwise (no peer access, or ``PYGPGPU_PEER_COPIES=0``) the bytes go through two
  page-locked host chunks in turn (portable: page-locked for both contexts), the download of
  one chunk overlapping the upload of the other; the call returns once they arrived.

Whether a pair of contexts has peer access is asked once and remembered (per destination
context, for the source context object). Which way a copy took is logged at DEBUG on
``pygpgpu.transfer`` once per pair.
"""
from __future__ import annotations

import os
import threading
import weakref
from ctypes import byref, c_int, c_size_t, c_uint, c_uint64, c_void_p
from typing import TYPE_CHECKING, Any

from ...logs import get_logger
from .memory import STAGING_CHUNK, _PinnedBlock
from .waits import wait, wait_event

if TYPE_CHECKING:
    from .context import DriverContext
    from .memory import DriverBuffer

__all__ = ["copy_between_devices", "peer_access", "peer_copies_enabled", "PEER_ENV"]

PEER_ENV = "PYGPGPU_PEER_COPIES"
_ALREADY_ENABLED = 704       # CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, hipErrorPeerAccessAlreadyEnabled
_EVENT_DISABLE_TIMING = 2    # the same value in both drivers
_HOST_ALLOC_PORTABLE = 1     # CU_MEMHOSTALLOC_PORTABLE, hipHostMallocPortable
_log = get_logger("transfer")
_lock = threading.Lock()
_logged: "weakref.WeakKeyDictionary[Any, set]" = weakref.WeakKeyDictionary()
_kept: list = []             # the chunks and events of staged copies cut short: in use until they end


def peer_copies_enabled() -> bool:
    """``PYGPGPU_PEER_COPIES=0`` stages every copy between devices (to compare, or to work around a
    platform whose peer copies misbehave)."""
    return os.environ.get(PEER_ENV, "").strip() != "0"


def _note(dst: "DriverContext", src: "DriverContext", text: str) -> None:
    """Log ``text`` once per (destination, source, text)."""
    with _lock:
        seen = _logged.setdefault(dst, set())
        key = (id(src), text)
        if key in seen:
            return
        seen.add(key)
    _log.debug("%s -> %s: %s", src.device.selector, dst.device.selector, text)


def peer_access(dst: "DriverContext", src: "DriverContext") -> bool:
    """Whether ``dst``'s context can read ``src``'s memory directly, its access enabled (asked
    of the driver once per pair; a refusal is logged, and copies between them are staged)."""
    cache: "weakref.WeakKeyDictionary[Any, bool]" = dst.__dict__.setdefault("_peer_access",
                                                                               weakref.WeakKeyDictionary())
    known = cache.get(src)
    if known is not None:
        return known
    calls = dst.calls
    why = ""
    if not all(calls.has(r) for r in ("device_can_access_peer", "ctx_enable_peer_access", "memcpy_peer_async")):
        why = f"this {dst.title} driver has no peer copies"
    else:
        can = c_int(0)
        calls.check(calls.device_can_access_peer(byref(can), dst.device.ordinal, src.device.ordinal),
                    calls.device_can_access_peer)
        if not can.value:
            why = "the driver reports no peer access between these devices (no NVLink or PCIe peer path)"
        else:
            dst.make_current()
            status = calls.ctx_enable_peer_access(src.current_token, c_uint(0))
            if status not in (0, _ALREADY_ENABLED):
                name = calls.errors.name(status, calls) if calls.errors is not None else str(status)
                why = f"enabling peer access failed ({name})"
    cache[src] = not why
    if why:
        _note(dst, src, f"staged through page-locked host memory: {why}")
    return not why


def _event(ctx: "DriverContext") -> c_void_p:
    ev = c_void_p()
    ctx.make_current()
    ctx.calls.check(ctx.calls.event_create(byref(ev), _EVENT_DISABLE_TIMING), ctx.calls.event_create)
    return ev


def _after(waiter: "DriverContext", recorder: "DriverContext") -> None:
    """Order later work on ``waiter``'s stream after everything queued so far on ``recorder``'s,
    without blocking the host (the event is freed by the driver once the wait is satisfied)."""
    calls = waiter.calls
    ev = _event(recorder)
    try:
        calls.check(calls.event_record(ev, recorder.queue.handle), calls.event_record)
        waiter.make_current()
        calls.check(calls.stream_wait_event(waiter.queue.handle, ev, 0), calls.stream_wait_event)
    finally:
        _destroy(recorder, [ev])


def _destroy(ctx: "DriverContext", events: list) -> None:
    """Free events made in ``ctx`` (with it current; the driver frees one still pending once it completes)."""
    ctx.make_current()
    for ev in events:
        ctx.calls.event_destroy(ev)


def _copy_peer(dst: "DriverBuffer", dst_offset: int, src: "DriverBuffer", src_offset: int, n: int) -> None:
    dctx, sctx = dst.context, src.context
    calls = dctx.calls
    _after(dctx, sctx)                 # what the source's stream will write first is written
    dctx.make_current()
    calls.check(calls.memcpy_peer_async(c_uint64(dst.ptr + dst_offset), dctx.current_token,  # type: ignore[operator]
                                        c_uint64(src.ptr + src_offset), sctx.current_token,  # type: ignore[operator]
                                        c_size_t(n), dctx.queue.handle), calls.memcpy_peer_async)
    _after(sctx, dctx)                 # the source's later work waits for the copy to read it


def _take_chunks(ctx: "DriverContext", nbytes: int, count: int) -> list:
    """``count`` portable page-locked blocks of at least ``nbytes``: kept ones of ``ctx`` first
    (page-locking costs about a millisecond per few MiB, so repeated copies reuse them), new ones
    (a power of two of at least 1 MiB, so that copies of similar sizes share them) for the rest."""
    with _lock:
        kept = ctx.__dict__.setdefault("_peer_chunks", [])
        got = [b for b in kept if b.ptr and b.nbytes >= nbytes][:count]
        for b in got:
            kept.remove(b)
    while len(got) < count:
        block = _PinnedBlock(ctx, max(1 << 20, 1 << (nbytes - 1).bit_length()), _HOST_ALLOC_PORTABLE)
        ctx._track(block)           # freed with the context
        got.append(block)
    return got


def _give_back(ctx: "DriverContext", blocks: list) -> None:
    """Keep the two largest live blocks for the next staged copy from ``ctx``; free the others."""
    with _lock:
        kept = ctx.__dict__.setdefault("_peer_chunks", [])
        pool = sorted((b for b in kept + blocks if b.ptr), key=lambda b: -b.nbytes)
        kept[:] = pool[:2]
        extra = pool[2:]
    for block in extra:
        block.close()


def _copy_staged(dst: "DriverBuffer", dst_offset: int, src: "DriverBuffer", src_offset: int, n: int) -> None:
    """Through two portable page-locked chunks: the source's stream downloads chunk i+1 while the
    destination's uploads chunk i; returns when the last upload is done."""
    dctx, sctx = dst.context, src.context
    calls = dctx.calls
    chunk = min(n, max(1 << 20, sctx.staging_chunk or STAGING_CHUNK))
    offsets = list(range(0, n, chunk))
    slots = min(2, len(offsets))
    blocks = _take_chunks(sctx, chunk, slots)
    filled = [_event(sctx) for _ in range(slots)]      # recorded on the source's stream
    emptied = [_event(dctx) for _ in range(slots)]     # recorded on the destination's stream
    used = [False] * slots
    dptr, sptr = dst.ptr + dst_offset, src.ptr + src_offset  # type: ignore[operator]
    done = False
    try:
        for i, off in enumerate(offsets):
            k, m = i % slots, min(chunk, n - off)
            if used[k]:
                wait_event(dctx, emptied[k])           # the upload out of this chunk is done
            sctx.make_current()
            calls.check(calls.memcpy_dtoh_async(blocks[k].ptr, sptr + off, m, sctx.queue.handle),
                        calls.memcpy_dtoh_async)
            calls.check(calls.event_record(filled[k], sctx.queue.handle), calls.event_record)
            dctx.make_current()
            calls.check(calls.stream_wait_event(dctx.queue.handle, filled[k], 0), calls.stream_wait_event)
            calls.check(calls.memcpy_htod_async(dptr + off, blocks[k].ptr, m, dctx.queue.handle),
                        calls.memcpy_htod_async)
            calls.check(calls.event_record(emptied[k], dctx.queue.handle), calls.event_record)
            used[k] = True
        wait(dctx)
        done = True
    finally:
        if done:
            _destroy(sctx, filled)
            _destroy(dctx, emptied)
            _give_back(sctx, blocks)
        else:       # interrupted or failed: copies may still use the chunks, which stay until exit
            _kept.append((blocks, filled, emptied))


def copy_between_devices(dst: "DriverBuffer", dst_offset: int, src: "DriverBuffer", src_offset: int,
                         n: int) -> str:
    """Copy ``n`` bytes between two buffers of one driver (see the module doc); returns the way:
    ``"device"``, ``"peer"`` or ``"staged"``."""
    dctx, sctx = dst.context, src.context
    if dctx is sctx or dctx.device is sctx.device:
        dctx.make_current()
        calls = dctx.calls
        if dctx is not sctx:
            _after(dctx, sctx)
        calls.check(calls.memcpy_dtod_async(dst.ptr + dst_offset, src.ptr + src_offset, n,  # type: ignore[operator]
                                            dctx.queue.handle), calls.memcpy_dtod_async)
        return "device"
    if not peer_copies_enabled():
        _note(dctx, sctx, f"staged through page-locked host memory ({PEER_ENV}=0)")
    elif peer_access(dctx, sctx):
        _note(dctx, sctx, "peer to peer (memcpy_peer_async, no host round trip)")
        _copy_peer(dst, dst_offset, src, src_offset, n)
        return "peer"
    _copy_staged(dst, dst_offset, src, src_offset, n)
    return "staged"
