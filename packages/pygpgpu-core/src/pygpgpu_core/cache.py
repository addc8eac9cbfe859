"""The per-user on-disk cache for generated sources and compiled binaries.

Entries are plain files named by a hash of everything that affects their content (the
caller builds that key). Writes are atomic (temp file + rename); an entry that fails its
integrity check is deleted and reported as a miss, never trusted. No pickle, no code.

Where it lives and when a folder is trusted: :mod:`pygpgpu_core._cachedir`. A folder that is
unsafe (not yours, or writable by group or others) or unusable (cannot be created or written)
is skipped after one :class:`CacheWarning`; every call still works, without the disk cache.
Its size is bounded (``PYGPGPU_CACHE_MAX``, least recently used entries first: see
:mod:`pygpgpu_core._cachesize`); :func:`clear_cache` empties it and :func:`cache_info` reports it.
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from ._cachedir import CacheWarning, checked_folder, default_location, make_private_dirs, unsafe_reason, warn_once
from ._cachesize import NAMESPACES, after_write, cache_limit, clear, namespaces, touch, usage
from ._version import __version__ as PACKAGE_VERSION

__all__ = ["cache_dir", "cache_root", "cache_key", "DiskCache", "atomic_write", "read_entry", "MAX_ENTRY_BYTES", "PACKAGE_VERSION", "CacheWarning",
           "CacheUnavailable", "clear_cache", "cache_info"]

_MAGIC = b"PYGPGPU1"


class CacheUnavailable(OSError):
    """The disk cache is not in use (an unsafe or unusable folder; a CacheWarning said why)."""


_FIX = {
    "PYGPGPU_CACHE_DIR": "Point PYGPGPU_CACHE_DIR at a folder of your own.",
    "XDG_CACHE_HOME": "Point XDG_CACHE_HOME (or PYGPGPU_CACHE_DIR) at a folder of your own.",
}
_folders: dict = {}        # folder -> False once found unusable or unsafe in this process


def _usable(folder: Path, origin: str = "") -> bool:
    """Created (once) and safe: ownership and mode are checked again on every use (one stat),
    so a folder opened up to others after the first check is not trusted either."""
    key = str(folder)
    if _folders.get(key) is False:
        return False
    fix = _FIX.get(origin, "Set PYGPGPU_CACHE_DIR to a folder of your own.")
    if key in _folders and unsafe_reason(folder) is None:
        return True
    ok = _folders[key] = checked_folder(folder, "the cache folder", fix)
    return ok


def cache_root() -> "Path | None":
    """The cache folder for this platform and environment (see ``_cachedir``), created 0700;
    None, after one CacheWarning, when it is unsafe or cannot be created."""
    path, origin = default_location()
    return path if _usable(path, origin) else None


def cache_dir() -> Path:
    """The cache folder (:func:`cache_root`); raises CacheUnavailable (an OSError) when the
    disk cache is not in use."""
    path = cache_root()
    if path is None:
        raise CacheUnavailable(f"the disk cache is not in use ({default_location()[0]} is unsafe or unusable)")
    return path


def cache_key(*parts: "str | bytes | int | float | tuple | None") -> str:
    """A hex digest over ``parts`` (each length-prefixed, so ``("ab","c") != ("a","bc")``); parts other
    than bytes enter as their ``repr``, so a tuple of those types is a part too."""
    h = hashlib.sha256()
    h.update(PACKAGE_VERSION.encode())
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


_WRITE_TRIES = 5          # another process clearing the cache may remove the folder between two steps


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see either the old file or the whole new one. A folder
    that vanishes meanwhile (``pygpgpu cache clear`` in another process) is made again."""
    path = Path(path)
    for attempt in range(_WRITE_TRIES):
        try:
            if not path.parent.is_dir():
                make_private_dirs(path.parent)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
            break
        except FileNotFoundError:
            if attempt == _WRITE_TRIES - 1:
                raise
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


MAX_ENTRY_BYTES = 1 << 30    # no entry the library writes comes near this; a larger file is a miss


def read_entry(path: "Path | str", limit: "int | None" = None) -> "bytes | None":
    """The bytes of cache file ``path``, or None (a miss) unless it is a regular file of at most
    ``limit`` bytes (default :data:`MAX_ENTRY_BYTES`) that belongs to the current user, as the
    opened descriptor says: the open never waits (a FIFO) nor follows a symbolic link, and at most
    the file's size is read (a link to ``/dev/zero`` or a device is never read)."""
    limit = MAX_ENTRY_BYTES if limit is None else limit
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        fd = os.open(path, flags)
    except OSError:             # missing, a symbolic link (ELOOP), unreadable
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            return None         # planted by someone else, even inside your own folder
        chunks = []
        left = st.st_size
        while left > 0:         # never past the size fstat gave (a file still growing is cut there)
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


class DiskCache:
    """A folder of checksummed blobs. ``get`` returns None on a miss or a corrupt entry."""

    def __init__(self, namespace: str, root: "Path | None" = None):
        self.namespace = namespace
        self._root = root
        if root is None:
            NAMESPACES.add(namespace)     # its entries count towards the bound and are cleared

    @property
    def folder(self) -> Path:
        """The namespace's folder; raises CacheUnavailable when it is unsafe or unusable."""
        folder = self.usable_folder()
        if folder is None:
            raise CacheUnavailable(f"the {self.namespace} cache folder is not in use (see the CacheWarning)")
        return folder

    def usable_folder(self) -> "Path | None":
        """The namespace's folder (created 0700, owned by you, not writable by others) or None."""
        root = self._root if self._root is not None else cache_root()
        if root is None:
            return None
        folder = Path(root) / self.namespace
        return folder if _usable(folder) else None

    def path(self, key: str, suffix: str = ".bin") -> Path:
        return self.folder / f"{key}{suffix}"

    def get(self, key: str, suffix: str = ".bin") -> "bytes | None":
        folder = self.usable_folder()
        if folder is None:
            return None
        path = folder / f"{key}{suffix}"
        blob = read_entry(path)
        if blob is None:
            return None         # a miss; put() replaces whatever is there (rename over it)
        head = len(_MAGIC) + 32
        if len(blob) >= head and blob[: len(_MAGIC)] == _MAGIC:
            payload = blob[head:]
            if hashlib.sha256(payload).digest() == blob[len(_MAGIC):head]:
                touch(path)    # recently used: trimmed last
                return payload
        try:  # corrupt or truncated: drop it so the caller rebuilds
            path.unlink()
        except OSError:
            pass
        return None

    def put(self, key: str, payload: bytes, suffix: str = ".bin") -> None:
        folder = self.usable_folder()
        if folder is None:
            return
        try:
            atomic_write(folder / f"{key}{suffix}", _MAGIC + hashlib.sha256(payload).digest() + payload)
            root = default_location()[0]
            if folder.is_relative_to(root):       # not __clcache__ beside a source: bounded by one-per-device
                after_write(root, len(payload) + len(_MAGIC) + 32)
        except OSError as exc:   # an unwritable cache only costs a rebuild next time
            warn_once(("write", str(folder)), f"pygpgpu: cannot write to the cache folder {folder} "
                      f"({exc.strerror or exc}); entries are not kept, so kernels are rebuilt in each process. "
                      "Make the folder writable or set PYGPGPU_CACHE_DIR to a folder of your own.")


def clear_cache(namespace: "str | None" = None) -> int:
    """Delete the disk cache's entries (generated sources, compiled binaries, kernel-file data kept
    in the user cache): all of them, or those of one ``namespace`` (``"translate"``,
    ``"kernel_files"`` or a backend's name: ``"opencl"``, ``"cuda"``, ``"hip"``, a plug-in's).
    Returns the bytes freed. ``__clcache__`` folders beside kernel files are not touched (delete them like ``__pycache__``). Safe while other
    processes use the cache: they rebuild what they miss."""
    root = cache_root()
    if root is None:
        return 0
    known = namespaces()
    if namespace is not None and namespace not in known:
        raise ValueError(f"{namespace!r} is not a cache namespace; use one of {', '.join(sorted(known))}")
    folder = root if namespace is None else root / namespace
    return clear(root, folder) if folder.is_dir() else 0


def cache_info() -> dict[str, Any]:
    """Where the disk cache is and what it holds: ``path`` (None when not in use), ``bytes``,
    ``entries``, ``limit`` (``PYGPGPU_CACHE_MAX`` in bytes, None for no bound), ``namespaces``."""
    root = cache_root()
    namespaces: dict[str, dict[str, int]] = {}
    info: dict[str, Any] = {"path": str(root) if root is not None else None, "bytes": 0, "entries": 0,
                            "limit": cache_limit(), "namespaces": namespaces}
    if root is None:
        return info
    info["bytes"], info["entries"] = usage(root)
    try:
        names = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        names = []
    for name in names:
        size, count = usage(root, root / name)
        if count:
            namespaces[name] = {"bytes": size, "entries": count}
    return info
