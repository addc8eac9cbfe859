"""The optional native launcher (``_native_launch.c``): building it, loading it, wrapping a launcher.

PyGPGPU installs as pure Python. A warm launch then spends much of its host time in Python and
ctypes around the driver call (benchmarks/RESULTS.md, issue 17). ``python -m pygpgpu
build-native`` compiles ``_native_launch.c`` with the system's C compiler and the running
Python's headers into an ordinary extension module beside its source, in the installed package
(never in the cache folder, which holds no code), and later processes import it like any other
module. Without it, or with ``PYGPGPU_NATIVE=0``, everything runs as before.

:func:`wrap` turns a generated launcher (``backend/launcher.py``) into the native one when the
module is there and the kernel's arguments are ones it packs; the native launcher hands any
call off its happy path back to the Python launcher, so errors stay the same. :func:`wrap_repeat`
does the same for an OpenCL launcher, whose C part only repeats a launch with the arguments
already set.
"""
from __future__ import annotations

import ctypes
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Sequence

__all__ = ["build", "remove", "load", "source_hash", "status", "wrap", "wrap_repeat", "MODULE", "SOURCE"]

MODULE = "pygpgpu_core.backend._native_launch"
SOURCE = Path(__file__).with_name("_native_launch.c")
_loaded: "list[ModuleType | None]" = []
_FUNCTION_POINTER: Any = ctypes.CFUNCTYPE(ctypes.c_int).__mro__[1]   # ctypes._CFuncPtr, every function object's base


def _switched_off(variable: str) -> bool:
    return os.environ.get(variable, "").strip().lower() in ("0", "off", "no", "false")


def _disabled() -> bool:
    return _switched_off("PYGPGPU_NATIVE")


def source_hash() -> "str | None":
    """The hash of ``_native_launch.c`` that a module built from it carries (``SOURCE_HASH``):
    a module left by another version (pip does not remove it: it is not in the install's
    record) is then not used, whatever changed in the source. None: the source is missing."""
    import hashlib

    try:
        return hashlib.sha256(SOURCE.read_bytes()).hexdigest()[:16]
    except OSError:
        return None


def load() -> "ModuleType | None":
    """The built module, or None (not built, built from another source, or ``PYGPGPU_NATIVE=0``)."""
    if _disabled():
        return None
    if not _loaded:
        try:
            module: "ModuleType | None" = importlib.import_module(MODULE)
        except ImportError:
            module = None
        expected = source_hash()
        if module is not None and (expected is None or getattr(module, "SOURCE_HASH", None) != expected):
            module = None
        _loaded.append(module)
    return _loaded[0]


def status() -> str:
    """One line for ``pygpgpu info``: whether warm launches go through the module."""
    if _disabled():
        return "off (PYGPGPU_NATIVE=0)"
    module = load()
    if module is None:
        stale = sys.modules.get(MODULE)      # imported, but built from another source than this version's
        if stale is not None:
            return (f"stale ({getattr(stale, '__file__', MODULE)} was built from another version's source: run "
                    "python -m pygpgpu build-native again)")
        return "not built (python -m pygpgpu build-native: faster warm launches)"
    return f"built ({module.__file__})"


def target_path(folder: "Path | None" = None) -> Path:
    """Where the module goes: beside its source, named for this Python (``EXT_SUFFIX``)."""
    import sysconfig

    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return (folder or SOURCE.parent) / f"_native_launch{suffix}"


def build(folder: "Path | None" = None, compiler: "str | None" = None) -> Path:
    """Compile the module for the running Python; returns its path. Raises ``OSError`` saying
    what is missing (a C compiler, Python's headers, a writable package folder)."""
    import shlex        # (here, not at import: a launch never needs them)
    import subprocess
    import sysconfig

    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        raise OSError(f"Python's C headers are not installed ({include}/Python.h is missing): install the "
                      f"python{sys.version_info.major}.{sys.version_info.minor}-dev package (Debian, Ubuntu) "
                      "or python3-devel (Fedora)")
    cc = shlex.split(compiler or os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    target = target_path(folder)
    if not os.access(target.parent, os.W_OK):
        raise OSError(f"cannot write to {target.parent}: run this with the rights of whoever installed PyGPGPU")
    partial = target.with_name(target.name + f".{os.getpid()}.tmp")
    command = [*cc, "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall", "-Werror=implicit-function-declaration",
               f'-DPYGPGPU_SOURCE_HASH="{source_hash()}"', f"-I{include}", str(SOURCE), "-o", str(partial)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except FileNotFoundError:
        raise OSError(f"no C compiler ({cc[0]}): install gcc or clang, or name one with CC=...") from None
    if done.returncode:
        partial.unlink(missing_ok=True)
        raise OSError(f"compiling {SOURCE.name} failed:\n{' '.join(command)}\n{done.stderr.strip()}")
    os.replace(partial, target)
    _loaded.clear()
    return target


def remove(folder: "Path | None" = None) -> "list[Path]":
    """Delete every module ``build`` left beside the source (for any Python version, and a partial
    file of an interrupted build); returns what was deleted. ``pip uninstall`` does not do it: the
    file is not in the install's record. Processes that already loaded the module keep it."""
    where = folder or SOURCE.parent
    removed = []
    for path in sorted(where.glob("_native_launch*")):
        if path.suffix in (".so", ".pyd", ".tmp") and path.is_file():
            path.unlink()
            removed.append(path)
    _loaded.clear()
    return removed


def _address(fn: Any) -> int:
    """The C address of a ctypes function object (0: not one, e.g. a test's Python stand-in)."""
    if fn is None or not isinstance(fn, _FUNCTION_POINTER):
        return 0
    return ctypes.cast(fn, ctypes.c_void_p).value or 0


GRAPH_ROLES = ("graph_create", "graph_add_kernel_node", "graph_instantiate", "graph_exec_kernel_node_set_params",
               "graph_launch", "graph_exec_destroy", "graph_destroy")


def _graph_functions(calls: Any) -> "tuple[int, ...]":
    """The addresses of the graph functions (CUDA), or () where the driver lacks one, where
    ``PYGPGPU_GRAPH_LAUNCH=0``, or under ``CUDA_LAUNCH_BLOCKING=1`` (a debugging setting that
    graph replays would not honour as launches do)."""
    if _switched_off("PYGPGPU_GRAPH_LAUNCH") or os.environ.get("CUDA_LAUNCH_BLOCKING", "").strip() == "1":
        return ()
    addresses = tuple(_address(getattr(calls, role, None)) for role in GRAPH_ROLES)
    return addresses if all(addresses) else ()


def wrap(launch: Callable[..., None], kernel: Any, codes: "Sequence[str] | None", slack: int,
         launch_ex: Any, module: "ModuleType | None" = None) -> Callable[..., None]:
    """The native launcher for ``launch`` (the generated Python one, also its fallback), or
    ``launch`` itself when the module is missing or cannot take these arguments (``codes`` None:
    an argument kind it does not pack; more than 64 of them; the driver's functions not ctypes
    functions)."""
    module = module or load()
    ctx = kernel.context
    calls = ctx.calls
    set_current, plain_launch = _address(calls.set_current_unchecked), _address(calls.launch_unchecked)
    ex = _address(launch_ex)
    token, handle, stream = ctx.current_token, kernel.handle, ctx.queue.handle
    if (module is None or codes is None or len(codes) > module.MAX_PARAMS or not (ex or plain_launch) or not set_current
            or not isinstance(handle, ctypes.c_void_p) or not isinstance(stream, ctypes.c_void_p)
            or not isinstance(token, (ctypes.c_void_p, ctypes.c_int))):
        return launch
    native = module.make(set_current, isinstance(token, ctypes.c_int), token.value or 0, ex, 0 if ex else plain_launch,
                         ctypes.addressof(handle), ctypes.addressof(stream), slack, "".join(codes).encode(),
                         (handle, stream, token, calls), kernel._geometry_cache, launch, kernel.launch_failed,
                         ctx, kernel.name, _graph_functions(calls) if ex else ())
    natives = getattr(kernel, "_native_launchers", None)
    if natives is not None:
        natives.add(native)     # released (their graphs destroyed) when the program closes
    # arg_kinds, layout, config, source: as the Python launcher's (``again`` is the native one itself)
    native.__dict__.update((k, v) for k, v in launch.__dict__.items() if k != "again")
    native.python = launch
    return native


def wrap_repeat(launch: Any, kernel: Any, buffers: Sequence[bool], enqueue: Any, release_event: Any,
                module: "ModuleType | None" = None) -> Callable[..., None]:
    """The native OpenCL launcher for ``launch`` (pygpgpu_opencl's generated launcher, also its
    fallback): in C it repeats a launch whose arguments are each the object set last in their
    slot and whose work size equals the last one, which is every warm call of a kernel on
    resident arrays; any other call goes to ``launch``. ``buffers``: per argument, whether it is
    a Buffer (a closed one goes to ``launch``, which raises). ``enqueue`` and ``release_event``:
    ctypes functions of ``clEnqueueNDRangeKernel`` and ``clReleaseEvent``. ``launch`` itself
    where the module is missing or a function is not a ctypes one."""
    module = module or load()
    enqueue_at, release_at = _address(enqueue), _address(release_event)
    if module is None or not enqueue_at or not release_at:
        return launch
    context = kernel.context
    native = module.make_repeat(enqueue_at, release_at, context.launch_events, bytes(map(bool, buffers)), kernel,
                                context, kernel._last, kernel._work, kernel._launch_lock, context._enqueue_lock,
                                launch, launch.failed, kernel.name)
    native.__dict__.update(launch.__dict__)     # source, failed
    native.python = launch
    return native
