"""The per-user on-disk cache for generated sources and compiled binaries.

Entries are plain files named by a hash of everything that affects their content (the
caller builds that key). Writes are atomic (temp file + rename); an entry that fails its
integrity check is deleted and reported as a miss, never trusted. No pickle.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from ._version import __version__ as PACKAGE_VERSION

__all__ = ["cache_dir", "cache_key", "DiskCache", "atomic_write", "PACKAGE_VERSION"]

_MAGIC = b"PYGPGPU1"


def cache_dir() -> Path:
    """``$PYGPGPU_CACHE_DIR`` or ``$XDG_CACHE_HOME/pygpgpu`` (default ``~/.cache/pygpgpu``), mode 0700."""
    env = os.environ.get("PYGPGPU_CACHE_DIR")
    if env:
        path = Path(env)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "pygpgpu"
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def cache_key(*parts: "str | bytes | int | float | None") -> str:
    """A hex digest over ``parts`` (each length-prefixed, so ``("ab","c") != ("a","bc")``)."""
    h = hashlib.sha256()
    h.update(PACKAGE_VERSION.encode())
    for part in parts:
        data = part if isinstance(part, bytes) else repr(part).encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see either the old file or the whole new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
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


class DiskCache:
    """A folder of checksummed blobs. ``get`` returns None on a miss or a corrupt entry."""

    def __init__(self, namespace: str, root: "Path | None" = None):
        self.namespace = namespace
        self._root = root

    @property
    def folder(self) -> Path:
        return (self._root or cache_dir()) / self.namespace

    def path(self, key: str, suffix: str = ".bin") -> Path:
        return self.folder / f"{key}{suffix}"

    def get(self, key: str, suffix: str = ".bin") -> "bytes | None":
        path = self.path(key, suffix)
        try:
            blob = path.read_bytes()
        except OSError:
            return None
        head = len(_MAGIC) + 32
        if len(blob) >= head and blob[: len(_MAGIC)] == _MAGIC:
            payload = blob[head:]
            if hashlib.sha256(payload).digest() == blob[len(_MAGIC):head]:
                return payload
        try:  # corrupt or truncated: drop it so the caller rebuilds
            path.unlink()
        except OSError:
            pass
        return None

    def put(self, key: str, payload: bytes, suffix: str = ".bin") -> None:
        try:
            atomic_write(self.path(key, suffix), _MAGIC + hashlib.sha256(payload).digest() + payload)
        except OSError:
            pass  # an unwritable cache only costs a rebuild next time
