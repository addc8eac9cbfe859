"""The pin cache's policy (pygpgpu_core.backend.hostpin), with a recording stand-in for the driver's
register/unregister: which arrays get page-locked, when, and that memory is never freed while
registered. The real thing runs in the CUDA tests (tests/test_gnp_transfers.py) on a GPU."""
from __future__ import annotations

import ctypes
import gc

import numpy as np
import pytest

from pygpgpu_core.backend.hostpin import PIN_MIN, PinCache, data_owner, pin_cache_limit


class FakeDriver:
    def __init__(self, refuse=()):
        self.registered = {}
        self.refuse = set(refuse)
        self.calls = []

    def register(self, ptr, nbytes):
        self.calls.append(("register", ptr, nbytes))
        if ptr in self.refuse:
            return False
        assert ptr not in self.registered
        self.registered[ptr] = nbytes
        return True

    def unregister(self, ptr):
        self.calls.append(("unregister", ptr))
        del self.registered[ptr]
        # what the memory holds at this moment (the arrays here are all ones): freed memory
        # would hold the allocator's bookkeeping, or fault
        self.first_value_at_unregister = ctypes.c_float.from_address(ptr).value


def _cache(limit=1 << 30, **kw):
    drv = FakeDriver(**kw)
    return PinCache(drv.register, drv.unregister, limit), drv


def _big(n=PIN_MIN):
    return np.ones(n // 4, np.float32)


def test_registered_on_the_second_transfer_and_kept():
    cache, drv = _cache()
    a = _big()
    assert not cache.pinned(a) and drv.registered == {}   # first sight: remembered only
    assert cache.pinned(a)                                 # second: registered
    assert drv.registered == {a.ctypes.data: a.nbytes}
    assert cache.pinned(a) and cache.pinned(a[10:])        # views of it share the registration
    assert [c[0] for c in drv.calls] == ["register"]


def test_small_foreign_and_oversized_memory_is_never_pinned():
    cache, drv = _cache(limit=4 * PIN_MIN)
    small = np.ones(1000, np.float32)
    foreign = np.frombuffer(bytearray(2 * PIN_MIN), np.uint8)   # owned by a bytearray
    huge = np.ones(8 * PIN_MIN, np.uint8)
    for a in (small, foreign, huge):
        for _ in range(3):
            assert not cache.pinned(a)
    assert drv.calls == []
    assert data_owner(foreign) is None and data_owner(huge[5:]) is huge


def test_kept_allocated_until_unregistered_then_released():
    cache, drv = _cache()
    a, b = _big(), _big()
    cache.pinned(a), cache.pinned(a)
    ptr = a.ctypes.data
    view = a[5:]
    del a
    cache.pinned(b)                                        # a lookup sweeps: the view keeps a alive
    assert ptr in drv.registered
    del view
    assert ptr in drv.registered                           # the cache's reference holds the memory
    cache.pinned(b)                                        # the next lookup lets go of it (and pins b)
    assert set(drv.registered) == {b.ctypes.data} and cache.held == b.nbytes
    assert drv.first_value_at_unregister == 1.0            # unregistered while still allocated


def test_a_full_garbage_collection_releases_dead_arrays():
    cache, drv = _cache()
    a = _big()
    cache.pinned(a), cache.pinned(a)
    assert cache._gc_hook in gc.callbacks
    del a
    gc.collect()
    assert drv.registered == {} and cache.held == 0
    assert cache._gc_hook is None                          # nothing pinned: no hook left behind


def test_a_resize_behind_the_cache_re_registers():
    cache, drv = _cache()
    b = _big()
    cache.pinned(b), cache.pinned(b)
    with pytest.raises(ValueError, match="resize"):
        b.resize(2 * b.size)                               # the cache's reference: numpy refuses
    old = b.ctypes.data
    b.resize(2 * b.size, refcheck=False)                   # forced: the data moves
    assert not cache.pinned(b)                             # the stale entry goes, seen again
    assert old not in drv.registered
    assert cache.pinned(b) and drv.registered == {b.ctypes.data: b.nbytes}


def test_least_recently_used_goes_when_room_is_needed():
    cache, drv = _cache(limit=2 * PIN_MIN)
    a, b, c = _big(), _big(), _big()
    for x in (a, a, b, b):
        cache.pinned(x)
    assert len(drv.registered) == 2
    cache.pinned(a)                                        # a is now the most recent
    cache.pinned(c), cache.pinned(c)
    assert set(drv.registered) == {a.ctypes.data, c.ctypes.data}
    assert cache.held == 2 * PIN_MIN


def test_a_refused_registration_falls_back():
    a = _big()
    cache, drv = _cache(refuse={a.ctypes.data})
    assert not cache.pinned(a) and not cache.pinned(a)     # e.g. another library pinned it
    assert drv.registered == {} and cache.held == 0 and len(cache) == 0
    assert not cache.pinned(a) and cache.pinned(a) is False


def test_clear_and_the_off_switch(monkeypatch):
    cache, drv = _cache()
    a = _big()
    cache.pinned(a), cache.pinned(a)
    cache.clear()
    assert drv.registered == {} and cache.held == 0
    off, drv2 = _cache(limit=0)
    off.pinned(a), off.pinned(a)
    assert drv2.calls == []
    monkeypatch.setenv("PYGPGPU_PIN_CACHE", "0")
    assert pin_cache_limit() == 0
    monkeypatch.setenv("PYGPGPU_PIN_CACHE", "lots")
    with pytest.raises(ValueError, match="byte count"):
        pin_cache_limit()
    monkeypatch.delenv("PYGPGPU_PIN_CACHE")
    assert 0 < pin_cache_limit() <= 4 << 30
