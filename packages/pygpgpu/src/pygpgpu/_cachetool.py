"""``pygpgpu cache info`` / ``cache clear``: the size of the on-disk cache, and emptying it.

Everything in the cache is rebuilt on demand (generated sources, compiled binaries, parsed
kernel-file metadata), so clearing only costs the next first calls their compile time.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

__all__ = ["cache_stats", "clear_cache"]


def _folder(folder: "Path | str | None") -> Path:
    from pygpgpu_core.backend.cache import cache_dir

    return Path(folder) if folder is not None else cache_dir()


def cache_stats(folder: "Path | str | None" = None) -> dict[str, Any]:
    """Where the cache is, and the files and bytes in it, also per top-level folder
    (``translate``, ``opencl``, ``cuda``, ``hip``, ``kernel_files``...)."""
    folder = _folder(folder)
    total = files = 0
    parts: dict[str, int] = {}
    for root, _dirs, names in os.walk(folder):
        rel = os.path.relpath(root, folder)
        part = "." if rel == "." else rel.split(os.sep)[0]
        for n in names:
            try:
                size = os.lstat(os.path.join(root, n)).st_size
            except OSError:
                continue  # removed while we looked
            total += size
            files += 1
            parts[part] = parts.get(part, 0) + size
    return {"directory": str(folder), "size_bytes": total, "files": files, "by_folder": dict(sorted(parts.items()))}


def _refuse_reason(folder: Path) -> str:
    """Why emptying ``folder`` could destroy more than a cache ('' when it cannot)."""
    real = folder.resolve()
    home = Path(os.path.expanduser("~")).resolve()
    if real == Path(real.anchor):
        return "it is a filesystem root"
    if real == home or real in home.parents:
        return "it is your home directory or one of its parents"
    if real in Path.cwd().resolve().parents or real == Path.cwd().resolve():
        return "it is the current directory or one of its parents"
    return ""


def clear_cache(folder: "Path | str | None" = None) -> dict[str, Any]:
    """Delete everything inside the cache directory (the directory itself stays). Symbolic links
    are removed, never followed. Returns what was there (``cache_stats`` before clearing).
    Raises ``ValueError`` when ``$PYGPGPU_CACHE_DIR`` points somewhere that must not be emptied."""
    folder = _folder(folder)
    reason = _refuse_reason(folder)
    if reason:
        raise ValueError(f"refusing to empty {folder}: {reason}. Point PYGPGPU_CACHE_DIR at a folder of its own")
    before = cache_stats(folder)
    for entry in list(os.scandir(folder)):
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except FileNotFoundError:
            pass  # another process removed it first
    return before
