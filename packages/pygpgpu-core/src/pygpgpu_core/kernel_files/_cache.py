"""``__clcache__/`` (``__cucache__/``, ``__hipcache__/``) beside a kernel file.

Two kinds of entries, both written atomically:

- ``<stem>.meta.json``: the parsed declarations plus the mtime, size and SHA-256 of the file
  and of every local header it includes. The content decides: a changed mtime or size is a
  miss without reading the file, and when both match the content hash must match too (an
  edit that keeps size and mtime, e.g. ``int*`` for ``float*`` within the clock's resolution
  or by a tool that restores mtimes, is still seen).
- ``<stem>.<device>-<key>.bin``: a compiled program for one device, checksummed, keyed by
  a hash of the compiled text (headers inlined), device name/arch, driver/compiler version
  and options; older binaries of the same file and device are removed when a new one lands.

When the folder beside the source cannot be written, the same layout goes under the user
cache (``cache_root()/kernel_files/<hash of the folder>/``). A cache folder that is not yours or
that group or others may write to is never used (one CacheWarning); when no folder is usable the
file is parsed and built in memory (``folder`` is None).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from .._cachedir import make_private_dirs, unsafe_reason, warn_once
from ..cache import PACKAGE_VERSION, DiskCache, atomic_write, cache_root, read_entry
from ..cdecl import ParsedFile

__all__ = ["SourceCache", "file_stamp", "stamp_matches"]


def file_stamp(path: str) -> "list | None":
    """``[mtime_ns, size, sha256 hex]`` of a file, or None when it cannot be read."""
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, digest]


def stamp_matches(path: str, stamp) -> bool:
    """Whether ``path`` still has the content ``stamp`` recorded: mtime and size first (no
    read when they differ), then the content hash."""
    if not (isinstance(stamp, list) and len(stamp) == 3):
        return False             # an older layout without a content hash: parse again
    try:
        st = os.stat(path)
    except OSError:
        return False
    if [st.st_mtime_ns, st.st_size] != stamp[:2]:
        return False
    current = file_stamp(path)
    return current is not None and current[2] == stamp[2]


def _usable_beside(folder: Path) -> bool:
    """Whether the cache folder beside a kernel file can be used: created (0700) or existing,
    writable, yours and not writable by others. Read-only installs fall back silently; a
    folder that exists but is unsafe is reported once."""
    try:
        make_private_dirs(folder)
    except OSError:
        return False
    reason = unsafe_reason(folder)
    if reason is not None:
        warn_once(("unsafe", str(folder)),
                  f"pygpgpu: the kernel-file cache {folder} is not used because {reason}: cached programs "
                  f"are code that runs in this process. The per-user cache is used instead. To fix: "
                  f"chown $USER {folder} && chmod 700 {folder}, or delete it")
        return False
    return os.access(folder, os.W_OK | os.X_OK)


class SourceCache:
    def __init__(self, source: Path, folder_name: str):
        self.source = source
        self.stem = source.stem
        beside = source.parent / folder_name
        self.folder: "Path | None" = None       # None: no usable folder, nothing is cached
        if _usable_beside(beside):
            self.folder = beside
        else:
            root = cache_root()
            if root is not None:
                digest = hashlib.sha256(str(source.parent).encode()).hexdigest()[:16]
                fallback = DiskCache(folder_name, root=root / "kernel_files" / digest)
                self.folder = fallback.usable_folder()

    # ---- parsed metadata -------------------------------------------------------------------
    @property
    def meta_path(self) -> Path:
        assert self.folder is not None, "callers check for a folder first"
        return self.folder / f"{self.stem}{self.source.suffix.replace('.', '_')}.meta.json"

    def load_meta(self, options: "tuple[str, ...]" = ()) -> "ParsedFile | None":
        """The parsed declarations stored for this file under the same given build options
        (their ``-D`` change what ``#if`` keeps), or None."""
        if self.folder is None:
            return None
        try:
            blob = read_entry(self.meta_path)         # never a FIFO, a link or someone else's file
            if blob is None:
                return None
            doc = json.loads(blob.decode("utf-8"))
            if doc.get("package") != PACKAGE_VERSION or doc.get("source") != str(self.source) or \
                    doc.get("options") != list(options):
                return None
            for path, stamp in doc["stamps"].items():
                if not stamp_matches(path, stamp):
                    return None
            return ParsedFile.from_json(doc["parsed"])
        except (OSError, ValueError, LookupError, TypeError, AttributeError):
            # Missing, stale or corrupt: reparse. The JSON is not checksummed, so a document of
            # another shape (a list, a wrong index) fails as a lookup or attribute error.
            return None

    def store_meta(self, parsed: ParsedFile, stamps: "dict[str, list | None]", options: "tuple[str, ...]" = ()) -> None:
        if self.folder is None or any(s is None for s in stamps.values()):
            return
        doc = {"package": PACKAGE_VERSION, "source": str(self.source), "options": list(options), "stamps": stamps,
               "parsed": parsed.to_json()}
        try:
            atomic_write(self.meta_path, json.dumps(doc, indent=1).encode())
        except OSError:
            pass  # a cache that cannot be written only costs a reparse

    # ---- compiled programs -----------------------------------------------------------------
    def _binaries(self) -> DiskCache:
        assert self.folder is not None, "callers check for a folder first"
        return DiskCache(self.folder.name, root=self.folder.parent)

    @staticmethod
    def device_slug(device) -> str:
        text = f"{getattr(device.backend, 'name', 'dev')}-{getattr(device, 'arch', '') or device.name}"
        return re.sub(r"[^A-Za-z0-9_.+-]+", "_", text)[:60]

    def binary_name(self, device, key: str) -> str:
        return f"{self.stem}{self.source.suffix.replace('.', '_')}.{self.device_slug(device)}-{key[:20]}"

    def load_binary(self, device, key: str) -> "bytes | None":
        if self.folder is None:
            return None
        return self._binaries().get(self.binary_name(device, key))

    def store_binary(self, device, key: str, binary: bytes) -> None:
        if self.folder is None:
            return
        name = self.binary_name(device, key)
        self._binaries().put(name, binary)
        prefix = name.rsplit("-", 1)[0] + "-"
        try:
            for old in self.folder.glob(f"{glob_escape(prefix)}*.bin"):
                if old.name != f"{name}.bin":
                    old.unlink()
        except OSError:
            pass


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)
