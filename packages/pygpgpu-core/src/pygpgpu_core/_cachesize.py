"""The disk cache's size cap (least recently used entries go first), its usage and clearing.

``PYGPGPU_CACHE_MAX`` bounds the bytes under the cache folder: a number of bytes, or with a
``K``/``M``/``G`` suffix (``500M``); ``0`` means no bound; the default is 512 MiB. A hit marks its
entry used (its modification time); after a process has written about a sixteenth of the bound
the folder is measured, and when it is over the bound the least recently used entries are
deleted until it is under 90 % of it. Several processes may trim at once: an entry already gone
is skipped, and a reader that opened an entry keeps reading it.

Only files the library writes are ever deleted: entries named as the caches name them, inside
the namespace folders the library uses (``translate``, ``kernel_files``, ``failed``, one per
backend, built-in or registered, named as the backend, and any other DiskCache namespace of this
process: :func:`namespaces`), never in a
folder that is a filesystem root, the home folder or one of its parents, or the working folder
(``PYGPGPU_CACHE_DIR`` set to such a place by mistake costs nothing).
"""
from __future__ import annotations

import os
import re
import stat
import threading
import time
from pathlib import Path

from ._cachedir import warn_once
from .registry import known_backend_names
from .targets import cache_namespaces

__all__ = ["DEFAULT_MAX", "namespaces", "cache_limit", "touch", "after_write", "usage", "trim", "clear"]

DEFAULT_MAX = 512 << 20
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20,
          "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
_TEMP_GRACE = 3600.0        # a temp file younger than this may be another process's write in progress
# the library's own namespaces; DiskCache adds its own, namespaces() adds one per backend
NAMESPACES = {"translate", "kernel_files", "failed"}
_ENTRY_RE = re.compile(r"^(?:[0-9a-f]{64}\.(?:bin|json|cubin|hsaco|ptx)"      # DiskCache entries
                       r"|.+-[0-9a-f]{20}\.bin|.+\.meta\.json"                 # kernel-file binaries, metadata
                       r"|\.tmp-.+)$")                                          # interrupted atomic writes
_FAILED_RE = re.compile(r"^.+\.(?:cl|cu|hip|c)$")                             # sources kept for failed builds
_written: dict = {}         # cache root -> bytes written by this process since it was last measured
_lock = threading.Lock()


def cache_limit() -> "int | None":
    """The byte bound from ``PYGPGPU_CACHE_MAX`` (default 512 MiB); None for no bound."""
    text = os.environ.get("PYGPGPU_CACHE_MAX", "").strip()
    if not text:
        return DEFAULT_MAX
    m = _SIZE_RE.match(text)
    unit = _UNITS.get(m.group(2).upper()) if m else None
    if m is None or unit is None:
        warn_once(("max", text), f"pygpgpu: PYGPGPU_CACHE_MAX={text!r} is not a size (write e.g. 500M, 2G or a "
                                 f"number of bytes; 0 for no bound); using the default of {DEFAULT_MAX >> 20} MiB")
        return DEFAULT_MAX
    value = int(float(m.group(1)) * unit)
    return value or None


def touch(path: Path) -> None:
    """Mark a cache entry used now (hits keep entries from being the oldest)."""
    try:                  # an entry swapped for a link since it was read: the link, not its target
        os.utime(path, follow_symlinks=os.utime not in os.supports_follow_symlinks)
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


def unsafe_to_empty(folder: Path) -> str:
    """Why deleting files under ``folder`` could destroy more than a cache ('' when it cannot)."""
    try:
        real = Path(folder).resolve()
        home = Path(os.path.expanduser("~")).resolve()
        cwd = Path.cwd().resolve()
    except OSError as exc:
        return f"it cannot be resolved ({exc})"
    if real == Path(real.anchor):
        return "it is a filesystem root"
    if real == home or real in home.parents:
        return "it is your home folder or one of its parents"
    if real == cwd or real in cwd.parents:
        return "it is the working folder or one of its parents"
    return ""


def namespaces() -> "set[str]":
    """Every cache namespace folder: the library's own, those of this process's DiskCaches, and
    one per backend, each named as the backend (a backend caches its binaries under its registry
    name: ``DiskCache("opencl")``), the built-ins whether installed or not, then registered plug-ins."""
    return NAMESPACES | set(known_backend_names()) | cache_namespaces()


def _ours(root: Path, path: str, names: "set[str]") -> bool:
    parts = Path(os.path.relpath(path, root)).parts
    if len(parts) < 2 or parts[0] not in names:
        return False
    name = parts[-1]
    return bool(_ENTRY_RE.match(name) or ("failed" in parts[:-1] and _FAILED_RE.match(name)))


def _in_namespace(root: Path, folder: str, names: "set[str]") -> bool:
    parts = Path(os.path.relpath(folder, root)).parts
    return bool(parts) and parts[0] in names


def _entries(root: Path, within: "Path | None" = None) -> "list[tuple[float, int, str]]":
    """``(mtime, size, path)`` of every cache file under ``within`` (default ``root``; symbolic
    links not followed), only files the library writes (see the module notes)."""
    out: list = []
    if unsafe_to_empty(root):
        return out
    now = time.time()
    names = namespaces()
    stack = [str(within if within is not None else root)]
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
                    elif stat.S_ISREG(st.st_mode) and _ours(root, entry.path, names):
                        if entry.name.startswith(".tmp-") and now - st.st_mtime < _TEMP_GRACE:
                            continue
                        out.append((st.st_mtime, st.st_size, entry.path))
        except OSError:
            continue
    return out


def usage(root: Path, within: "Path | None" = None) -> "tuple[int, int]":
    """``(bytes, entries)`` of the library's files under ``within`` (default: all of ``root``)."""
    entries = _entries(root, within)
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


def clear(root: Path, folder: "Path | None" = None) -> int:
    """Delete the library's files under ``folder`` (default: all of ``root``) and the emptied
    sub-folders; returns the bytes freed. ValueError when ``root`` must not be emptied."""
    reason = unsafe_to_empty(root)
    if reason:
        raise ValueError(f"the cache folder {root} is not emptied because {reason}; point PYGPGPU_CACHE_DIR "
                         f"at a folder of its own")
    folder = root if folder is None else folder
    freed = 0
    names = namespaces()
    for _mtime, size, path in _entries(root, folder):
        try:
            os.unlink(path)
            freed += size
        except OSError:
            pass
    for dirpath, _dirs, _files in sorted(os.walk(folder, followlinks=False), key=lambda w: -len(w[0])):
        if Path(dirpath) != Path(folder) and _in_namespace(root, dirpath, names):
            try:
                os.rmdir(dirpath)
            except OSError:
                pass        # not empty (another process wrote meanwhile): fine
    return freed
