"""Turning a parsed kernel file into module attributes, and the per-module runtime state.

Nothing here touches a backend at import time: devices are chosen and the program is
built when a kernel is first called.
"""
from __future__ import annotations

import threading
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import registry
from ..cdecl import CDeclError, ParsedFile, parse_file
from ._cache import SourceCache, file_stamp
from ._kernel import FileKernel, LaunchPlan, _is_device, resolve_family_selector
from ._program import FilePrograms
from ..selector import Selector, canonical_backend
from ._structs import struct_ctype
from ._stub import write_stub

__all__ = ["Kind", "KINDS", "KernelFileState", "load_parsed", "populate_module"]


@dataclass(frozen=True)
class Kind:
    name: str
    """``cl``, ``cu`` or ``hip``."""
    extension: str
    dialect: str
    backend: str
    """Backend used when no bracket names a device."""
    cache_folder: str


KINDS = {
    "cl": Kind("cl", ".cl", "opencl", "opencl", "__clcache__"),
    "cu": Kind("cu", ".cu", "cuda", "cuda", "__cucache__"),
    "hip": Kind("hip", ".hip", "hip", "hip", "__hipcache__"),
}


def load_parsed(path: Path, kind: Kind, cache: SourceCache) -> ParsedFile:
    """Parsed declarations from the metadata cache when every stamp matches, else a fresh parse."""
    parsed = cache.load_meta()
    if parsed is not None:
        return parsed
    stamp = file_stamp(str(path))  # taken before reading, so an edit during parsing invalidates
    parsed = parse_file(path, kind.dialect)
    stamps = {str(path): stamp}
    stamps.update({inc: file_stamp(inc) for inc in parsed.includes})
    cache.store_meta(parsed, stamps)
    return parsed


class KernelFileState:
    """Per imported file: where it is, what it declares, its compiled programs and launch plans."""

    def __init__(self, path: Path, kind: Kind, parsed: ParsedFile, cache: SourceCache):
        self.path = path
        self.kind = kind
        self.parsed = parsed
        self.programs = FilePrograms(path, cache)
        self._devices: dict = {}
        self._plans: dict = {}
        self._lock = threading.Lock()

    def same_family(self, device: Any) -> bool:
        return getattr(getattr(device, "backend", None), "dialect", None) == self.kind.dialect

    def device(self, selector: Any) -> Any:
        if _is_device(selector):
            if not self.same_family(selector):
                raise ValueError(f"{self.path.name} is {self.kind.dialect} source; device {selector.selector} "
                                 f"belongs to another backend")
            return selector
        dev = self._devices.get(selector)
        if dev is None:
            if selector is None:
                dev = self._default_device()
            else:
                sel = resolve_family_selector(selector, self.kind.backend, self.kind.dialect, self.path.name)
                dev = registry.select_device(sel)
            self._devices[selector] = dev
        return dev

    def _default_device(self) -> Any:
        """No bracket: the device ``$PYGPGPU_BACKEND`` selects when this file's backend can run
        it (``opencl:1`` for a .cl file: one worker process per device, as with @kernel), else
        the first device of the file's backend (a .cl file under ``PYGPGPU_BACKEND=cuda:1``)."""
        env = registry.env_selector()
        if env is not None and (env.backend is None or canonical_backend(env.backend) == self.kind.backend):
            dev = registry.select_device(None)       # the variable's device; errors name the variable
            if self.same_family(dev):
                return dev
        return registry.select_device(Selector(backend=self.kind.backend))

    def plan(self, decl, device: Any) -> LaunchPlan:
        key = (decl.name, id(device))
        hit = self._plans.get(key)
        if hit is not None and hit[0] is device:
            return hit[1]
        with self._lock:
            program = self.programs.program(device)
            plan = LaunchPlan(decl, program, device.context())
            self._plans[key] = (device, plan)
            return plan


def populate_module(module: types.ModuleType, path: Path, kind: Kind) -> None:
    cache = SourceCache(path, kind.cache_folder)
    try:
        parsed = load_parsed(path, kind, cache)
    except CDeclError as exc:
        raise ImportError(f"{exc.file or path}:{exc.line}: {exc.message}", name=module.__name__,
                          path=str(path)) from None
    write_stub(parsed, path)  # also when only the stub was deleted; unchanged text is not rewritten
    state = KernelFileState(path, kind, parsed, cache)
    ns = module.__dict__
    for name, value in parsed.constants.items():
        if name.isidentifier() and not (name.startswith("__") and name.endswith("__")):
            ns[name] = value
    for name, s in parsed.structs.items():
        try:
            cls = struct_ctype(s)
            cls.__module__ = module.__name__
            ns[name] = cls
        except (TypeError, ValueError, AssertionError) as exc:
            parsed.skipped[name] = f"no ctypes equivalent: {exc}"
    for name, decl in parsed.kernels.items():
        ns[name] = FileKernel(decl, state)
    ns["__kernels__"] = list(parsed.kernels)
    ns["__all__"] = [n for n in (*parsed.constants, *parsed.structs, *parsed.kernels) if n in ns]
    ns["__file__"] = str(path)
    ns["__kernel_file__"] = state
    ns["__dialect__"] = kind.dialect
    skipped = dict(parsed.skipped)

    def __getattr__(name: str):
        if name in skipped:
            raise AttributeError(f"{path.name} declares {name!r} but it cannot be used from Python: {skipped[name]}")
        raise AttributeError(f"kernel file {path.name} has no kernel, struct or constant {name!r} "
                             f"(kernels: {', '.join(parsed.kernels) or 'none'})")

    ns["__getattr__"] = __getattr__
