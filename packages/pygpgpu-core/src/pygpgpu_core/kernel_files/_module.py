"""Turning a parsed kernel file into module attributes, and the per-module runtime state.

Nothing here touches a backend at import time: devices are chosen and the program is
built when a kernel is first called.
"""
from __future__ import annotations

import threading
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, Mapping

from .. import registry
from ..targets import load_entry_points
from ..cdecl import LANGUAGES, CDeclError, Language, ParsedFile, language, parse_file
from ..errors import PyGPGPUWarning
from ._cache import SourceCache, file_stamp
from ._kernel import FileKernel, LaunchPlan, _is_device, resolve_family_selector
from ._program import FilePrograms
from ..selector import Selector, canonical_backend
from ._structs import struct_ctype
from ._stub import write_stub

__all__ = ["Kind", "KINDS", "KernelFileState", "KernelFileWarning", "load_parsed", "populate_module"]


class KernelFileWarning(PyGPGPUWarning):
    """An imported kernel file lacks something: a kernel whose declaration could not be
    understood (left out, the others work), or any kernel to call at all."""


@dataclass(frozen=True)
class Kind:
    name: str
    """``cl``, ``cu`` or ``hip``: the language's file suffix."""
    extension: str
    dialect: str
    backend: str
    """Backend used when no bracket names a device."""
    cache_folder: str

    @classmethod
    def of(cls, lang: Language) -> "Kind":
        """The kind of kernel file written in ``lang``: every fact comes from the language."""
        return cls(lang.suffix, f".{lang.suffix}", lang.name, lang.name, f"__{lang.suffix}cache__")


class _Kinds(Mapping[str, Kind]):
    """Kernel-file kinds by suffix, derived from the registered languages (``cdecl.LANGUAGES``) on
    each look-up, so a language registered later is a kind too."""

    def _table(self) -> "dict[str, Kind]":
        load_entry_points()           # a plug-in target's language is a kind too
        return {lang.suffix: Kind.of(lang) for lang in LANGUAGES.values()}

    def __getitem__(self, suffix: str) -> Kind:
        return self._table()[suffix]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


KINDS: "Mapping[str, Kind]" = _Kinds()
"""Every kernel-file kind by suffix: ``cl`` (OpenCL C), ``cu`` (CUDA C++), ``hip`` (HIP C++), then
registered languages."""


def load_parsed(path: Path, kind: Kind, cache: SourceCache, options: "tuple[str, ...]" = ()) -> ParsedFile:
    """Parsed declarations from the metadata cache when every stamp and the given build options
    match, else a fresh parse (a kernel that cannot be understood is listed in ``broken``)."""
    parsed = cache.load_meta(options)
    if parsed is not None:
        return parsed
    stamp = file_stamp(str(path))  # taken before reading, so an edit during parsing invalidates
    parsed = parse_file(path, kind.dialect, options=options, partial=True)
    stamps = {str(path): stamp}
    stamps.update({inc: file_stamp(inc) for inc in parsed.includes})
    cache.store_meta(parsed, stamps, options)
    return parsed


class KernelFileState:
    """Per imported file: where it is, what it declares, its compiled programs and launch plans."""

    def __init__(self, path: Path, kind: Kind, parsed: ParsedFile, cache: SourceCache,
                 options: "tuple[str, ...]" = ()):
        self.path = path
        self.kind = kind
        self.parsed = parsed
        self.options = options
        """The build options given at import (``parsed.options`` adds the file's own first)."""
        self.programs = FilePrograms(path, cache, tuple(parsed.options))
        self.kernels: "Mapping[str, FileKernel]" = MappingProxyType({})
        """Every importable kernel by its C name, also those whose name a module attribute
        cannot carry (``__file__``, ``__name__``, ``pass``): ``module.kernels["__file__"]``."""
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
        if hit is not None and hit[0] is device and not getattr(hit[1].context, "closed", False):
            return hit[1]
        with self._lock:
            program = self.programs.program(device)
            plan = LaunchPlan(decl, program, device.context())
            self._plans[key] = (device, plan)
            return plan


def populate_module(module: types.ModuleType, path: Path, kind: Kind, options: "tuple[str, ...]" = ()) -> None:
    cache = SourceCache(path, kind.cache_folder)
    try:
        parsed = load_parsed(path, kind, cache, options)
    except CDeclError as exc:
        raise ImportError(f"{exc.file or path}:{exc.line}: {exc.message}", name=module.__name__,
                          path=str(path)) from None
    write_stub(parsed, path)  # also when only the stub was deleted; unchanged text is not rewritten
    state = KernelFileState(path, kind, parsed, cache, options)
    ns = module.__dict__
    for name, value in parsed.constants.items():
        if name.isidentifier() and not _is_dunder(name):
            ns[name] = value
    for name, s in parsed.structs.items():
        try:
            cls = struct_ctype(s)
            cls.__module__ = module.__name__
            ns[name] = cls
        except (TypeError, ValueError, AssertionError) as exc:
            parsed.skipped[name] = f"no ctypes equivalent: {exc}"
    kernels = {name: FileKernel(decl, state) for name, decl in parsed.kernels.items()}
    state.kernels = MappingProxyType(kernels)
    for name, k in kernels.items():
        if not _is_dunder(name):   # __file__, __name__, __spec__ ... stay the module's own
            ns[name] = k
    ns.setdefault("kernels", state.kernels)   # unless the file declares something called kernels
    ns["__kernels__"] = list(parsed.kernels)
    ns["__all__"] = [n for n in (*parsed.constants, *parsed.structs, *parsed.kernels)
                     if n in ns and not _is_dunder(n)]
    ns["__file__"] = str(path)
    ns["__kernel_file__"] = state
    ns["__dialect__"] = kind.dialect
    skipped = dict(parsed.skipped)
    broken = dict(parsed.broken)
    _warn_about_missing_kernels(path, parsed)

    def __getattr__(name: str):
        if name in broken:
            raise AttributeError(f"kernel {name!r} of {path.name} could not be imported: {broken[name]}. The file's "
                                 "other kernels work; fix this declaration (define the type in the file or an "
                                 "included header, or give the -D options it needs) and import the file again")
        if name in skipped:
            raise AttributeError(f"{path.name} declares {name!r} but it cannot be used from Python: {skipped[name]}")
        raise AttributeError(f"kernel file {path.name} has no kernel, struct or constant {name!r} "
                             f"(kernels: {', '.join(parsed.kernels) or 'none'})")

    ns["__getattr__"] = __getattr__


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def _warn_about_missing_kernels(path: Path, parsed: ParsedFile) -> None:
    """One warning per kernel that could not be understood (``from m import k`` would otherwise
    only say "cannot import name"), and one for a file with nothing to call."""
    for name, reason in parsed.broken.items():
        warnings.warn(f"{path}: kernel {name!r} is left out of the module: {reason}", KernelFileWarning,
                      stacklevel=4)
    if not parsed.kernels and not parsed.broken:
        if parsed.skipped:
            why = "; ".join(f"{n}: {r}" for n, r in parsed.skipped.items())
            detail = f"no kernel of it can be called from Python ({why})"
        else:
            lang = language(parsed.dialect)
            marked = " or ".join(sorted(lang.kernel_words)) + (' inside extern "C"' if lang.kernels_need_extern_c else "")
            detail = (f"it declares no kernel (a function marked {marked}); check the file, or the -D options "
                      "an #if around its kernels needs")
        warnings.warn(f"{path}: imported with nothing to call: {detail}", KernelFileWarning, stacklevel=4)
