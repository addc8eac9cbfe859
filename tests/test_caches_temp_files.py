"""Trimming and clearing the disk cache leave another process's write in progress alone: a
young ``.tmp-*`` file (atomic_write's temporary, not yet renamed into place) is neither deleted
nor counted, while an old one (an interrupted write) is an entry like any other."""
from __future__ import annotations

import os
import time

import pytest

from pygpgpu_core import _cachesize


def _cache(root):
    ns = root / "translate"
    ns.mkdir(parents=True)
    old = time.time() - 3 * 24 * 3600
    entries = {}
    for k in range(4):
        p = ns / (f"{k:064x}" + ".bin")
        p.write_bytes(b"x" * 1000)
        os.utime(p, (old + k, old + k))
        entries[p] = 1000
    young = ns / ".tmp-in-flight-1234"
    young.write_bytes(b"y" * 5000)                     # another process is writing it now
    stale = ns / ".tmp-interrupted-99"
    stale.write_bytes(b"z" * 700)
    os.utime(stale, (old, old))                        # left by a write that died days ago
    return entries, young, stale


@pytest.mark.parametrize("operation", ["usage", "trim", "clear"])
def test_a_young_temporary_file_is_left_alone(tmp_path, operation):
    root = tmp_path / "cache"
    entries, young, stale = _cache(root)
    if operation == "usage":
        assert _cachesize.usage(root) == (4 * 1000 + 700, 5)
        return
    if operation == "trim":
        freed = _cachesize.trim(root, 2000)               # over the limit: oldest first, down to 1800 bytes
        assert freed == 700 + 3 * 1000
        assert not stale.exists()
    else:
        freed = _cachesize.clear(root)
        assert freed == 4 * 1000 + 700
        assert not stale.exists() and not any(p.exists() for p in entries)
    assert young.exists() and young.read_bytes() == b"y" * 5000
