"""The disk cache's size cap (least recently used entries go first), its usage and clearing.

``PYGPGPU_CACHE_MAX`` bounds the bytes under the cache folder: a number of bytes, or with a
``K``/``M``/``G`` suffix (``500M``); ``0`` means no bound; the default is 512 MiB. A hit marks its
entry used (its modification time); after a process has written about a sixteenth of the bound
the folder is measured, and when it is over the bound the least recently used entries are
deleted until it is under 90 % of it. Several processes may trim at once: an entry already gone
is skipped, and a reader that opened an entry keeps reading it.
"""
from __future__ import annotations

import os
import re
import stat
import threading
import time
from pathlib import Path

from ._cachedir import warn_once

__all__ = ["DEFAULT_MAX", "cache_limit", "touch", "after_write", "usage", "trim", "clear"]

DEFAULT_MAX = 512 << 20
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_TEMP_GRACE = 3600.0        # a temp file younger than this may be another process's write in progress
_written: dict = {}         # cache root -> bytes written by this process since it was last measured
_lock = threading.Lock()


def cache_limit() -> "int | None":
    """The byte bound from ``PYGPGPU_CACHE_MAX`` (default 512 MiB); None for no bound."""
    text = os.environ.get("PYGPGPU_CACHE_MAX", "").strip()
    if not text:
        return DEFAULT_MAX
    m = _SIZE_RE.match(text)
    unit = _UNITS.get(m.group(2).upper()) if m else None
    if unit is None:
        warn_once(("max", text), f"pygpgpu: PYGPGPU_CACHE_MAX={text!r} is not a size (write e.g. 500M, 2G or a "
                                 f"number of bytes; 0 for no bound); using the default of {DEFAULT_MAX >> 20} MiB")
        return DEFAULT_MAX
    value = int(float(m.group(1)) * unit)
    return value or None


def touch(path: Path) -> None:
    """Mark a cache entry used now (hits keep entries from being the oldest)."""
    try:
        os.utime(path)
    except OSError:
        pass


def after_write(root: Path, nbytes: int) -> None:
    """Account ``nbytes`` written under ``root``; trims it when enough has been written."""
    limit = cache_limit()
    if limit is None:
        return
    key = str(root)
    with _lock:
        seen = key in _written
        written = _written.get(key, 0) + nbytes
        due = not seen or written > max(limit // 16, 4096)
        _written[key] = 0 if due else written
    if due:
        trim(root, limit)


def _entries(root: Path) -> "list[tuple[float, int, str]]":
    """``(mtime, size, path)`` of every cache file under ``root`` (symbolic links not followed)."""
    out = []
    now = time.time()
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(entry.path)
                    elif stat.S_ISREG(st.st_mode):
                        if entry.name.startswith(".tmp-") and now - st.st_mtime < _TEMP_GRACE:
                            continue
                        out.append((st.st_mtime, st.st_size, entry.path))
        except OSError:
            continue
    return out


def usage(root: Path) -> "tuple[int, int]":
    """``(bytes, entries)`` under ``root``."""
    entries = _entries(root)
    return sum(size for _, size, _ in entries), len(entries)


def trim(root: Path, limit: int) -> int:
    """Delete least recently used entries until ``root`` holds at most 90 % of ``limit`` (when it
    holds more than ``limit``); returns the bytes freed."""
    entries = _entries(root)
    total = sum(size for _, size, _ in entries)
    if total <= limit:
        return 0
    target = limit * 9 // 10
    freed = 0
    for _mtime, size, path in sorted(entries):
        if total - freed <= target:
            break
        try:
            os.unlink(path)
            freed += size
        except OSError:
            continue        # gone already (another process trimmed it) or not ours to delete
    return freed


def clear(folder: Path) -> int:
    """Delete every file under ``folder`` and the emptied sub-folders; returns the bytes freed."""
    freed = 0
    for _mtime, size, path in _entries(folder):
        try:
            os.unlink(path)
            freed += size
        except OSError:
            pass
    for dirpath, _dirs, _files in sorted(os.walk(folder, followlinks=False), key=lambda w: -len(w[0])):
        if Path(dirpath) != Path(folder):
            try:
                os.rmdir(dirpath)
            except OSError:
                pass        # not empty (another process wrote meanwhile): fine
    return freed
