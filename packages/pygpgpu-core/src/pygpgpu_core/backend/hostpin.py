"""Page-locking the numpy arrays that keep coming back (the pin cache), backend-neutral.

A copy from ordinary (pageable) host memory goes through the driver's bounce buffer; from
page-locked memory it is a direct DMA (on the H200 machine: 11-15 GB/s against ~50 GB/s for
4 MiB). Page-locking an array in place (``cuMemHostRegister``) costs about one pageable copy,
so an array is registered the second time it is transferred, not the first, and then stays
registered while it keeps being used: a loop calling kernels on the same numpy arrays pays
the registration once.

Registered memory must not be freed before it is unregistered, or a later allocation at the
same address could be read through stale pages. The cache therefore holds a strong reference to
each registered array's memory owner (an ndarray that owns its data), and lets go (unregister
first, then drop the reference) once nothing else references the owner: checked on every
lookup, after full garbage collections, when room is needed and at :meth:`PinCache.clear`. A
dead array thus stays allocated until one of those, within the cache's byte limit. (A weak
reference is not enough: numpy 2.5 frees an array's memory before running its weak-reference
callbacks, measured on the GPU machine.) Arrays whose memory belongs to something else (bytes,
mmap, ctypes, another library) are never registered.
"""
from __future__ import annotations

import gc
import os
import sys
import threading
import weakref
from collections import OrderedDict
from typing import Callable

import numpy as np

__all__ = ["PinCache", "pin_cache_limit", "data_owner", "PIN_MIN"]

# Below this a pageable copy is a few tens of microseconds: not worth pinning memory for.
PIN_MIN = 1 << 20
_SEEN_MAX = 64          # arrays seen once, remembered to spot the second transfer


def pin_cache_limit(env: str = "PYGPGPU_PIN_CACHE") -> int:
    """Bytes of user arrays that may stay page-locked: ``$PYGPGPU_PIN_CACHE`` (0 turns the cache
    off), else an eighth of physical memory, at most 4 GiB."""
    text = os.environ.get(env, "").strip()
    if text:
        try:
            return max(0, int(float(text)))
        except ValueError:
            raise ValueError(f"{env}={text!r} is not a byte count; set it to an integer such as "
                             f"2147483648, or 0 to never page-lock numpy arrays") from None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        total = 8 << 30
    return min(total // 8, 4 << 30)


def data_owner(a: np.ndarray) -> "np.ndarray | None":
    """The ndarray that allocated ``a``'s memory (``a`` itself or the end of its ``base``
    chain), or None when the memory belongs to another kind of object."""
    while True:
        base = a.base
        if base is None:
            return a if a.flags.owndata else None
        if type(base) is not np.ndarray:
            return None
        a = base


def _baseline_refcount() -> int:
    """What ``sys.getrefcount`` reports for an object referenced only by one attribute, read
    the way :meth:`PinCache._only_ours` reads it."""
    class Holder:
        __slots__ = ("owner",)
        owner: object

    h = Holder()
    h.owner = object()
    return sys.getrefcount(h.owner)


_ONLY_OURS = _baseline_refcount()


class _Pinned:
    __slots__ = ("owner", "ptr", "nbytes")

    def __init__(self, owner: np.ndarray, ptr: int, nbytes: int):
        self.owner: "np.ndarray | None" = owner      # None once unregistered (PinCache._drop)
        self.ptr = ptr
        self.nbytes = nbytes


class PinCache:
    """Which user arrays are page-locked, for one context.

    ``register(ptr, nbytes) -> bool`` page-locks a range (False: it could not, e.g. another
    library registered it already); ``unregister(ptr)`` undoes it. ``limit``: bytes held at most.
    """

    def __init__(self, register: Callable[[int, int], bool], unregister: Callable[[int], None],
                 limit: "int | None" = None):
        self._register = register
        self._unregister = unregister
        self.limit = pin_cache_limit() if limit is None else int(limit)
        self._lock = threading.Lock()
        self._pinned: "OrderedDict[int, _Pinned]" = OrderedDict()   # id(owner) -> entry, LRU order
        self._seen: "OrderedDict[int, tuple[int, int]]" = OrderedDict()  # id(owner) -> (ptr, nbytes)
        self.held = 0
        self._gc_hook: "Callable[[str, dict], None] | None" = None

    def pinned(self, host: np.ndarray) -> bool:
        """Whether ``host``'s memory is page-locked for the copy about to be made; registers it
        when this is the second transfer of the same array and there is room."""
        if self.limit <= 0:
            return False
        owner = data_owner(host)
        if owner is None or owner.nbytes < PIN_MIN or owner.nbytes > self.limit:
            return False
        key = id(owner)
        ptr, nbytes = owner.__array_interface__["data"][0], owner.nbytes
        with self._lock:
            self._release_unused(keep=key)
            entry = self._pinned.get(key)
            if entry is not None:
                if entry.owner is owner and entry.ptr == ptr and entry.nbytes == nbytes:
                    self._pinned.move_to_end(key)
                    return True
                self._drop(key)               # resized in place (refcheck=False): re-register
            if self._seen.pop(key, None) != (ptr, nbytes):
                self._seen[key] = (ptr, nbytes)
                while len(self._seen) > _SEEN_MAX:
                    self._seen.popitem(last=False)
                return False
            if not self._make_room(nbytes) or not self._register(ptr, nbytes):
                return False
            self._pinned[key] = _Pinned(owner, ptr, nbytes)
            self.held += nbytes
            self._watch_gc()
            return True

    def forget(self) -> None:
        """Drop every entry without unregistering (in a forked child: the registrations are the
        parent's, and the driver must not be called)."""
        self._lock = threading.Lock()        # another thread may have held the old one at fork
        self._pinned.clear()                 # the arrays stay alive as long as anything uses them
        self._seen.clear()
        self.held = 0
        self._unwatch_gc()

    def clear(self) -> None:
        """Unregister everything (before the context goes away)."""
        with self._lock:
            while self._pinned:
                self._drop(next(iter(self._pinned)))
            self._seen.clear()
            self._unwatch_gc()

    def __len__(self) -> int:
        return len(self._pinned)

    # -- internals (called with the lock held) ----------------------------------------------
    def _only_ours(self, entry: _Pinned) -> bool:
        return sys.getrefcount(entry.owner) <= _ONLY_OURS

    def _release_unused(self, keep: "int | None") -> None:
        for key in [k for k, e in self._pinned.items() if k != keep and self._only_ours(e)]:
            self._drop(key)

    def _make_room(self, nbytes: int) -> bool:
        while self.held + nbytes > self.limit and self._pinned:
            self._drop(next(iter(self._pinned)))   # least recently used
        return self.held + nbytes <= self.limit

    def _drop(self, key: int) -> None:
        entry = self._pinned.pop(key)
        self.held -= entry.nbytes
        try:
            self._unregister(entry.ptr)
        finally:
            entry.owner = None                 # only now may numpy free the memory
        if not self._pinned:
            self._unwatch_gc()

    # A full collection is when dropped arrays are likeliest to be garbage: let go of them then
    # too, so that a program that stops transferring does not keep them until the context closes.
    def _watch_gc(self) -> None:
        if self._gc_hook is None:
            ref = weakref.ref(self)

            def hook(phase: str, info: dict) -> None:
                cache = ref()
                if cache is not None and phase == "stop" and info.get("generation") == 2:
                    cache._release_unused_if_free()

            self._gc_hook = hook
            gc.callbacks.append(hook)

    def _unwatch_gc(self) -> None:
        hook, self._gc_hook = self._gc_hook, None
        if hook is not None:
            try:
                gc.callbacks.remove(hook)
            except ValueError:
                pass

    def _release_unused_if_free(self, _is_finalizing=sys.is_finalizing) -> None:
        # The collection may have started inside our own critical section (any allocation can
        # trigger one): then skip this round rather than wait on ourselves.
        if not _is_finalizing() and self._lock.acquire(blocking=False):
            try:
                self._release_unused(keep=None)
            finally:
                self._lock.release()
