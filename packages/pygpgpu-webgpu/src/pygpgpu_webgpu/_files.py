"""Handwritten ``.wgsl`` files as Python modules: one kernel object per ``@compute`` entry point.

A kernel's parameters are the bindings the entry point reaches, in (group, binding) order, and
take their WGSL names as keywords. ``var<storage>`` bindings take numpy arrays (uploaded, and
read back when ``read_write``), device arrays of the device (``pygpgpu.numpy``) or buffers;
``var<uniform>`` scalars and vectors take numbers. Brackets pick the device and the work size
(``m.saxpy["webgpu:0"][(n,)]``); without a work size it is the first array's length, and the
shader itself guards the items past the end (``if (i >= arrayLength(&out)) { return; }``).

The C kernel-file machinery of ``pygpgpu_core.kernel_files`` parses C declarations, so WGSL has
its own small loader here (docs/webgpu.md; what a shared one would need is in the plug-in notes).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
import types
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pygpgpu_core import registry
from pygpgpu_core.kernel_files import parse_work_size
from pygpgpu_core.selector import Selector

from ._wgsl import Binding, EntryPoint, WGSLDeclError, scan

__all__ = ["WGSLFile", "WGSLFileKernel", "WGSLFinder", "load", "install", "uninstall"]

SUFFIX = ".wgsl"


class WGSLFile:
    """One imported file: its path, declarations, and a program per device (built on first call)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.source = path.read_text(encoding="utf-8")
        self.decls = scan(self.source, str(path))
        self._programs: dict[int, tuple[Any, Any]] = {}
        self._lock = threading.Lock()

    def program(self, device: Any) -> Any:
        hit = self._programs.get(id(device))
        if hit is not None and hit[0] is device and not hit[1].context.closed:
            return hit[1]
        with self._lock:
            program = device.context().program(self.source, name=str(self.path))
            self._programs[id(device)] = (device, program)
            return program


def _device(selector: Any) -> Any:
    if selector is not None and not isinstance(selector, str):
        device = selector
    else:
        env = registry.env_selector()
        if selector is None and env is not None and env.backend == "webgpu":
            device = registry.select_device(None)
        else:
            device = registry.select_device(selector if selector is not None else Selector(backend="webgpu"))
    if getattr(getattr(device, "backend", None), "name", None) != "webgpu":
        raise ValueError(f"a .wgsl kernel runs on a webgpu device; {getattr(device, 'selector', device)!r} "
                         "belongs to another backend")
    return device


def _is_array(a: Any) -> bool:
    return isinstance(a, np.ndarray) or hasattr(a, "buffer") and hasattr(a, "dtype") and hasattr(a, "shape")


class WGSLFileKernel:
    """``module.name``: call it like a function; ``k[device]`` and ``k[work size]`` configure it."""

    def __init__(self, file: WGSLFile, entry: EntryPoint, selector: Any = None,
                 work: "tuple[Any, Any] | None" = None) -> None:
        self._file = file
        self._entry = entry
        self._selector = selector
        self._work = work
        self.__name__ = entry.name
        self.__qualname__ = entry.name
        self.params = entry.params
        self.__doc__ = (f"@compute fn {entry.name} of {file.path.name} (line {entry.line}); parameters: "
                        + ", ".join(f"{b.name}: var<{b.space}{', ' + b.access if b.space == 'storage' else ''}> "
                                    f"{b.type}" for b in entry.params))

    def __repr__(self) -> str:
        return f"<WGSL kernel {self._entry.name} of {self._file.path.name}>"

    def __getitem__(self, config: Any) -> "WGSLFileKernel":
        if isinstance(config, str) or hasattr(config, "selector"):
            return WGSLFileKernel(self._file, self._entry, config, self._work)
        return WGSLFileKernel(self._file, self._entry, self._selector, parse_work_size(config))

    def _bind(self, args: Sequence[Any], kwargs: "dict[str, Any]") -> list:
        params = self.params
        if len(args) > len(params):
            raise TypeError(f"{self.__name__}() takes {len(params)} arguments "
                            f"({', '.join(b.name for b in params)}), got {len(args)}")
        values = list(args) + [None] * (len(params) - len(args))
        given = [True] * len(args) + [False] * (len(params) - len(args))
        index = {b.name: i for i, b in enumerate(params)}
        for key, value in kwargs.items():
            if key not in index:
                raise TypeError(f"{self.__name__}() has no binding {key!r} (bindings: {', '.join(index)})")
            if given[index[key]]:
                raise TypeError(f"{self.__name__}() got {key!r} twice")
            values[index[key]], given[index[key]] = value, True
        missing = [b.name for b, g in zip(params, given) if not g]
        if missing:
            raise TypeError(f"{self.__name__}() is missing {', '.join(missing)}")
        return values

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        values = self._bind(args, kwargs)
        device = _device(self._selector)
        kernel = self._file.program(device).kernel(self._entry.name)
        ctx = device.context()
        staged: list[tuple[np.ndarray, Any]] = []
        passed: list[Any] = []
        kinds: list[Any] = []
        for b, v in zip(self.params, values):
            if b.space == "uniform" and not _is_array(v) and not hasattr(v, "gpu"):
                kinds.append(b.dtype.base.type if b.dtype is not None else np.asarray(v).dtype.type)
                passed.append(v)
                continue
            kinds.append("buffer")
            passed.append(self._buffer(b, v, ctx, staged))
        work = self._work or (None, None)
        global_size = work[0] or self._default_size(values)
        kernel.launcher(kinds)(global_size, work[1], passed)
        for host, buf in staged:
            buf.read(host)
            buf.close()

    def _buffer(self, b: Binding, v: Any, ctx: Any, staged: list) -> Any:
        if hasattr(v, "gpu") and hasattr(v, "nbytes"):          # one of our buffers
            return v
        if isinstance(v, np.ndarray):
            self._check_dtype(b, v.dtype)
            if b.access == "read_write" and not (v.flags.c_contiguous and v.flags.writeable):
                raise ValueError(f"{self.__name__}(): {b.name!r} is read_write, so the array given is written "
                                 "back; pass a C-contiguous, writable array (np.ascontiguousarray(a))")
            buf = ctx.buffer_from_host(np.ascontiguousarray(v))
            if b.access == "read_write":
                staged.append((v, buf))
            return buf
        if hasattr(v, "buffer") and hasattr(v, "dtype"):         # a device array (pygpgpu.numpy)
            self._check_dtype(b, np.dtype(v.dtype))
            if getattr(v.buffer, "context", None) is not ctx:
                raise ValueError(f"{self.__name__}(): {b.name!r} is a device array of another device; "
                                 f"kernel runs on {ctx.device.selector}")
            if getattr(v, "offset", 0) or not v.flags.c_contiguous:
                raise ValueError(f"{self.__name__}(): {b.name!r} is a view into a device array; WGSL binds whole "
                                 "buffers, so pass a contiguous copy (g[1:].copy())")
            return v.buffer
        raise TypeError(f"{self.__name__}(): binding {b.name!r} is var<{b.space}> {b.type}; pass a numpy array or a "
                        f"device array, not {type(v).__name__}")

    def _check_dtype(self, b: Binding, dtype: np.dtype) -> None:
        want = b.element
        if want is not None and want.base != dtype:
            raise TypeError(f"{self.__name__}(): binding {b.name!r} is {b.type}; the array given is {dtype} "
                            f"(pass .astype(np.{want.base}))")

    def _default_size(self, values: list) -> "tuple[int, ...]":
        for v in values:
            if _is_array(v):
                return (int(np.prod(v.shape)),)
        raise ValueError(f"{self.__name__}() has no array argument to take the work size from; give one: "
                         f"module.{self.__name__}[(n,)](...)")


def load(path: "str | Path", name: "str | None" = None) -> types.ModuleType:
    """Import the ``.wgsl`` file at ``path`` as a module (not added to ``sys.modules``)."""
    path = Path(path).resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no WGSL file at {path}")
    module = types.ModuleType(name or path.stem)
    _populate(module, path)
    return module


def _populate(module: types.ModuleType, path: Path) -> None:
    try:
        file = WGSLFile(path)
    except WGSLDeclError as exc:
        raise ImportError(str(exc), name=module.__name__, path=str(path)) from None
    ns = module.__dict__
    for entry in file.decls.entry_points.values():
        ns[entry.name] = WGSLFileKernel(file, entry)
    ns["__kernels__"] = list(file.decls.entry_points)
    ns["__all__"] = list(file.decls.entry_points)
    ns["__file__"] = str(path)
    ns["__dialect__"] = "wgsl"
    ns["__wgsl_file__"] = file


class _Loader(importlib.abc.Loader):
    def __init__(self, path: Path) -> None:
        self.path = path

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        _populate(module, self.path)


class WGSLFinder(importlib.abc.MetaPathFinder):
    """Finds ``name.wgsl`` on ``sys.path`` (or in a package) for ``import name``."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        leaf = fullname.rpartition(".")[2]
        for folder in (path if path is not None else sys.path):
            candidate = Path(folder or ".") / f"{leaf}{SUFFIX}"
            if candidate.is_file():
                return importlib.util.spec_from_file_location(fullname, str(candidate),
                                                              loader=_Loader(candidate.resolve()))
        return None


def install() -> WGSLFinder:
    """Make ``import name`` find ``name.wgsl``. Idempotent."""
    for f in sys.meta_path:
        if isinstance(f, WGSLFinder):
            return f
    finder = WGSLFinder()
    sys.meta_path.append(finder)
    return finder


def uninstall() -> None:
    for f in list(sys.meta_path):
        if isinstance(f, WGSLFinder):
            sys.meta_path.remove(f)
