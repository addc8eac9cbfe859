"""Where the per-user cache lives, and whether a cache folder may be trusted.

Location: ``$PYGPGPU_CACHE_DIR`` when set (a relative value against the working folder of the
first time it is read); else platformdirs' per-user cache folder for the app ``pygpgpu``:
``$XDG_CACHE_HOME/pygpgpu`` (an absolute ``XDG_CACHE_HOME`` only, as the XDG spec says) or
``~/.cache/pygpgpu`` on Linux and other Unix systems, ``~/Library/Caches/pygpgpu`` on macOS,
``%LOCALAPPDATA%\\pygpgpu\\Cache`` on Windows (the shell's Local AppData folder). platformdirs is
imported on the first use of the cache, not with ``import pygpgpu`` (it costs 6-15 ms).

Trust rule (as pip and ccache apply it): cached programs are code the process runs, so a
folder is used only when it belongs to the current user and neither group nor others may
write to it. Folders the library creates are made 0700 at every level. A folder that is
unsafe or cannot be created costs the disk cache, never a call: one :class:`CacheWarning`
says why and how to fix it, and kernels are built in memory.
"""
from __future__ import annotations

import errno
import os
import stat
import sys
import threading
from pathlib import Path

from .errors import PyGPGPUWarning
from .logs import warn

__all__ = ["CacheWarning", "default_location", "unsafe_reason", "make_private_dirs", "checked_folder",
           "warn_once"]


class CacheWarning(PyGPGPUWarning):
    """The disk cache cannot be used (unsafe or unusable folder); PyGPGPU runs without it."""


_warned: set = set()
_lock = threading.Lock()
# PYGPGPU_CACHE_DIR values made absolute against the working folder when first seen, so a
# relative one keeps naming one folder after os.chdir (not a cache per working folder).
_absolute: "dict[str, Path]" = {}


def warn_once(key, message: str) -> None:
    """One CacheWarning per ``key`` and process, attributed to the caller's own code."""
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    warn(message, CacheWarning)


def default_location() -> "tuple[Path, str]":
    """``(folder, where the choice came from)`` for this platform and environment."""
    env = os.environ.get("PYGPGPU_CACHE_DIR")
    if env:
        path = _absolute.get(env)
        if path is None:
            path = _absolute.setdefault(env, Path(os.path.abspath(os.path.expanduser(env))))
        return path, "PYGPGPU_CACHE_DIR"
    folder = Path(_platform_dirs()(_APP, appauthor=False).user_cache_dir)
    if sys.platform == "win32":
        return folder, "LOCALAPPDATA"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return folder, "XDG_CACHE_HOME" if xdg and os.path.isabs(xdg) else "the home folder"


_APP = "pygpgpu"


def _platform_dirs() -> type:
    """platformdirs' class for ``sys.platform`` as this module sees it (tests set it to check the
    other platforms' folders); its own choice (Linux, BSD, Android...) everywhere else."""
    if sys.platform == "win32":
        from platformdirs.windows import Windows
        return Windows
    if sys.platform == "darwin":
        from platformdirs.macos import MacOS
        return MacOS
    from platformdirs import PlatformDirs
    return PlatformDirs


def unsafe_reason(path: Path) -> "str | None":
    """Why ``path`` (an existing folder) must not hold a cache, or None when it may."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return "it is not a folder"
    if os.name != "posix":
        return None               # Windows: the per-user profile folder's ACLs protect it
    uid = os.geteuid()
    if st.st_uid != uid:
        return f"it belongs to user id {st.st_uid}, not to the current user ({uid})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = " and ".join(w for w, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH)) if st.st_mode & bit)
        return f"{who} may write to it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def make_private_dirs(path: Path) -> None:
    """Create ``path`` and any missing parents with mode 0700 (``mkdir -p`` would give them
    the umask's default); raises OSError when it cannot."""
    missing = []
    p = Path(path)
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        os.chmod(folder, 0o700)        # the umask may have removed bits; never added others'
    if not Path(path).is_dir():
        if not os.path.lexists(path):        # made, then removed by another process clearing the cache
            raise FileNotFoundError(errno.ENOENT, "removed while it was being made", str(path))
        raise NotADirectoryError(f"{path} is not a folder")


_TRIES = 5


def checked_folder(path: Path, what: str, fix: str) -> bool:
    """Make ``path`` (0700) or check the existing one; False, after one warning, when it cannot
    be used. ``what`` names the folder in the warning, ``fix`` says how to repair it."""
    for attempt in range(_TRIES):
        try:
            make_private_dirs(path)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError) and attempt < _TRIES - 1:
                continue        # a parent removed meanwhile (another process clearing the cache)
            warn_once(("unusable", str(path)),
                      f"pygpgpu: {what} {path} cannot be used ({exc.strerror or exc}); running without the "
                      f"disk cache (kernels are rebuilt in each process). {fix}")
            return False
        reason = unsafe_reason(path)
        if reason is None or os.path.lexists(path) or attempt == _TRIES - 1:
            break               # else: removed again right after it was made; make it once more
    if reason is not None:
        warn_once(("unsafe", str(path)),
                  f"pygpgpu: {what} {path} is not used because {reason}: cached programs are code that "
                  f"runs in this process, so the folder must belong to you and be writable only by you. "
                  f"Running without the disk cache. To fix: chown $USER {path} && chmod 700 {path}, "
                  f"or {fix[0].lower() + fix[1:]}")
        return False
    return True
