"""Facts about loaded vendor libraries for ``pygpgpu info``: where a library was loaded from,
and a probe that turns a failing query into the reason instead of an exception."""
from __future__ import annotations

import ctypes
import os
from typing import Any, Callable

from .errors import BackendUnavailable

__all__ = ["library_path", "probe", "unavailable"]


def library_path(lib: "ctypes.CDLL | str") -> str:
    """The file a loaded library came from: its own path if it was loaded by path, else the
    mapping in ``/proc/self/maps`` whose name starts with the soname (Linux); else the name."""
    name = lib if isinstance(lib, str) else (getattr(lib, "_name", "") or "")
    if os.sep in name and os.path.exists(name):
        return os.path.realpath(name)
    base = os.path.basename(name).split(".so")[0]
    if base:
        try:
            with open("/proc/self/maps") as maps:
                for line in maps:
                    path = line.rstrip("\n").split(" ")[-1]
                    if os.path.basename(path).startswith(base + ".so"):
                        return os.path.realpath(path)
        except OSError:
            pass
    return name


def unavailable(exc: BaseException) -> str:
    """The text ``probe`` reports for a failed query."""
    reason = exc.reason if isinstance(exc, BackendUnavailable) else f"{type(exc).__name__}: {exc}"
    return f"unavailable: {reason}"


def probe(query: Callable[[], Any]) -> Any:
    """``query()``, or ``"unavailable: <reason>"`` when it raises (a report must show every
    backend, including the broken ones)."""
    try:
        return query()
    except Exception as exc:  # the reason is the answer here
        return unavailable(exc)
