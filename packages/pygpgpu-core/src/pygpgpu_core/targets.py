"""Targets: what a language the devices compile is, as one plug-in object per language.

A :class:`Target` names everything that depends on the language and not on the driver: the
translator's dialect (its words, reserved words, kernel signature and prelude bodies, a
``pygpgpu_translate.target.Dialect``), the C-declaration facts handwritten kernel files of the
language are parsed with (a :class:`~pygpgpu_core.cdecl.Language`, whose ``suffix`` is the
kernel files' suffix) and the cache namespace its translations and binaries go to. A backend
names its target in its ``dialect`` attribute.

The three built-in targets are listed here; a plug-in registers one object, either in code
(:func:`register_target`) or through the ``pygpgpu.targets`` entry-point group (read on first
look-up of a name not registered). Core's tables of languages (``cdecl.LANGUAGES``, and from it
the kernel-file kinds and import hooks) and of cache namespaces are derived from what is
registered here. Core holds the dialect as a reference (``"module:attribute"``) that only the
translator resolves, so core never imports the translator (docs/architecture.md#targets).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Optional

from .cdecl._languages import CUDA_CPP, HIP_CPP, OPENCL_C, Language, register_language

__all__ = ["Target", "ENTRY_POINT_GROUP", "register_target", "target", "target_names", "cache_namespaces",
           "load_entry_points", "why_missing", "BUILTIN_TARGETS"]

ENTRY_POINT_GROUP = "pygpgpu.targets"


@dataclass(frozen=True)
class Target:
    name: str
    """The target's name: what a backend's ``dialect`` attribute says, the dialect's registry name,
    the language name of its kernel files."""
    dialect: Any
    """The translator's dialect: a ``pygpgpu_translate.target.Dialect`` instance or subclass, or a
    ``"module:attribute"`` reference to one, imported when the translator first writes for it."""
    language: Optional[Language] = None
    """The C-declaration facts of its handwritten kernel files (None: the language has no kernel
    files); its ``name`` must be the target's."""
    cache_namespace: str = ""
    """The cache folder its entries live under ("" means the target's name): ``pygpgpu cache clear
    NAME`` and the cache's size bound reach it."""

    def __post_init__(self) -> None:
        if not (isinstance(self.name, str) and self.name.isidentifier()):
            raise ValueError(f"a target name is an identifier, got {self.name!r}")
        if self.language is not None and self.language.name != self.name:
            raise ValueError(f"target {self.name!r} has the kernel-file language {self.language.name!r}; "
                             "give the Language the target's name")

    @property
    def namespace(self) -> str:
        return self.cache_namespace or self.name


_lock = threading.RLock()
_targets: "dict[str, Target]" = {}
_entry_points: "dict[str, Any] | None" = None
_failed: "dict[str, str]" = {}


def register_target(t: Target) -> Target:
    """Make ``t`` the target called ``t.name``: its kernel-file language is registered with
    ``cdecl.register_language`` and its namespace joins the cache's. The same target again is a
    no-op; another one under a taken name is a ``ValueError``."""
    if not isinstance(t, Target):
        raise TypeError(f"register_target needs a pygpgpu_core.targets.Target, got {type(t).__name__}")
    with _lock:
        known = _targets.get(t.name)
        if known is not None:
            if known == t:
                return known
            raise ValueError(f"a target named {t.name!r} is registered already; pick another name")
        if t.language is not None:
            register_language(t.language)
        _targets[t.name] = t
    return t


BUILTIN_TARGETS = (Target("opencl", "pygpgpu_translate.target:OpenCL", OPENCL_C),
                   Target("cuda", "pygpgpu_translate.target:CUDA", CUDA_CPP),
                   Target("hip", "pygpgpu_translate.target:HIP", HIP_CPP))
"""The languages this project ships (one per built-in backend, each named as it)."""
_BUILTIN_NAMES = frozenset(t.name for t in BUILTIN_TARGETS)
for _builtin in BUILTIN_TARGETS:
    register_target(_builtin)


def _scan() -> "dict[str, Any]":
    global _entry_points
    if _entry_points is None:
        from importlib.metadata import entry_points
        found: "dict[str, Any]" = {}
        try:
            for ep in entry_points(group=ENTRY_POINT_GROUP):
                found.setdefault(ep.name, ep)
        except Exception as exc:          # broken metadata must not take kernel files or caches down
            _failed["*"] = f"reading the {ENTRY_POINT_GROUP!r} entry points raised {exc!r}"
        _entry_points = found
    return _entry_points


def _load(name: str) -> "Target | None":
    ep = _scan().get(name)
    if ep is None or name in _failed:
        return None
    try:
        obj = ep.load()
        if not isinstance(obj, Target):
            raise TypeError(f"it gave a {type(obj).__name__}, not a pygpgpu_core.targets.Target")
        if obj.name != name:
            raise ValueError(f"the entry point is named {name!r} but its target {obj.name!r}")
        return register_target(obj)
    except Exception as exc:
        _failed[name] = f"loading entry point {ep.value!r} raised {type(exc).__name__}: {exc}"
        return None


def target(name: str) -> "Target | None":
    """The target registered as ``name``, loading its entry point on first use; None when there is
    none (:func:`why_missing` says why, for an entry point that failed)."""
    with _lock:
        found = _targets.get(name)
        return found if found is not None else _load(name)


def why_missing(name: str) -> str:
    """Why an entry point of ``name`` gave no target ("" when none was found or it loaded)."""
    return _failed.get(name, _failed.get("*", ""))


def load_entry_points() -> None:
    """Register every target of the entry-point group (tables derived from all targets call this)."""
    with _lock:
        for name in list(_scan()):
            if name not in _targets:
                _load(name)


def target_names() -> "list[str]":
    """Every registered target: the built-ins, then plug-ins (their entry points loaded) alphabetically."""
    load_entry_points()
    return [t.name for t in BUILTIN_TARGETS] + sorted(set(_targets) - _BUILTIN_NAMES)


def cache_namespaces() -> "set[str]":
    """The cache namespace of every registered target."""
    load_entry_points()
    return {t.namespace for t in list(_targets.values())}


def _reset_for_tests() -> None:
    """Forget the entry-point scan and every plug-in target with its kernel-file language (tests
    put a plug-in on the path after the first scan and take it off again)."""
    from .cdecl import _languages
    global _entry_points
    with _lock:
        _entry_points = None
        _failed.clear()
        for name in set(_targets) - _BUILTIN_NAMES:
            del _targets[name]
            _languages._registered.pop(name, None)
