"""Pickling kernels of imported kernel files (``pickle``, ``multiprocessing``, joblib, Dask).

A kernel travels by reference, as Python pickles a function: the path of its file, the file's
kind, the build options it was imported with, the kernel's name and its brackets (a device selector, a work size). The receiving process
uses the module it already imported from that path, or imports the file itself (from the
metadata cache when the file has not changed) and compiles on the first call there; nothing
compiled and no driver state crosses. The file must exist at the same path in that process:
the same machine, or a shared file system.
"""
from __future__ import annotations

import sys
import threading
import types
from pathlib import Path
from typing import Any

__all__ = ["reduce_kernel", "restore_kernel"]

# Modules this process imported to unpickle kernels, by path: every kernel of one file unpickled
# here shares one module, so one program table and one compile per device.
_loaded: "dict[tuple[str, tuple[str, ...]], types.ModuleType]" = {}
_lock = threading.Lock()


def reduce_kernel(kernel: Any) -> tuple:
    """``FileKernel.__reduce__``."""
    state = kernel._state
    return restore_kernel, (str(state.path), state.kind.name, kernel.name, kernel._selector, kernel._work,
                            tuple(state.options))


def _module_of(path: str, kind: str, options: "tuple[str, ...]") -> types.ModuleType:
    with _lock:
        module = _loaded.get((path, options))
        if module is None:
            # A module imported here by the hook or load() (a spawn worker re-running the main
            # script's ``import vecadd``) is reused, with the programs it has built. Read from
            # each module's __dict__ (sys.modules may hold None, and a module-level __getattr__
            # elsewhere may do anything).
            module = next((m for m in list(sys.modules.values()) if _imported_as(m, path, options)), None)
            if module is None:
                from . import load
                module = load(Path(path), kind, options=options)
            _loaded[(path, options)] = module
        return module


def _imported_as(module: Any, path: str, options: "tuple[str, ...]") -> bool:
    state = (getattr(module, "__dict__", None) or {}).get("__kernel_file__")
    return str(getattr(state, "path", "")) == path and tuple(getattr(state, "options", ())) == options


def restore_kernel(path: str, kind: str, name: str, selector: Any, work: Any, options: "tuple[str, ...]" = ()) -> Any:
    """The kernel ``name`` of the kernel file at ``path`` imported with build ``options``, with
    its brackets (the inverse of :func:`reduce_kernel`)."""
    module = _module_of(path, kind, tuple(options))
    kernel = module.__kernel_file__.kernels.get(name)
    if kernel is None:
        kernel = getattr(module, name)   # gone or broken since: the module's AttributeError says why
    if selector is None and work is None:
        return kernel
    return type(kernel)(kernel._decl, kernel._state, selector, work)
