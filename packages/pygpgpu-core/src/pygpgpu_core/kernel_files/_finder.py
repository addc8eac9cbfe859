"""The ``sys.meta_path`` finder and loader that make ``import vecadd`` find ``vecadd.cl``.

The finder is appended after Python's own finders, so a ``vecadd.py`` (or package) next to
``vecadd.cl`` still wins, and ordinary imports never pay for it. It searches ``sys.path``
for top-level names and the parent package's ``__path__`` for ``pkg.kernels``.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Iterable, Sequence

from ._module import KINDS, Kind, populate_module

__all__ = ["KernelFileFinder", "KernelFileLoader", "install", "uninstall", "installed"]


class KernelFileLoader(importlib.abc.Loader):
    def __init__(self, fullname: str, path: str, kind: Kind, options: "tuple[str, ...]" = ()):
        self.name = fullname
        self.path = path
        self.kind = kind
        self.options = options

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module) -> None:
        populate_module(module, Path(self.path).resolve(), self.kind, self.options)

    def get_filename(self, fullname: "str | None" = None) -> str:
        return self.path

    def get_source(self, fullname: "str | None" = None) -> str:
        return Path(self.path).read_text(encoding="utf-8", errors="replace")


class KernelFileFinder(importlib.abc.MetaPathFinder):
    """Finds ``name.cl`` (or ``.cu``, ``.hip``) for ``import name`` (``pygpgpu.climport`` installs it)."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<pygpgpu {self.kind.extension} kernel file finder>"

    def __call__(self, path: "str | os.PathLike[str]", options: "str | Iterable[str] | None" = None,
                 name: "str | None" = None) -> ModuleType:
        """Import the kernel file at ``path`` with build ``options`` (``climport("blur.cl",
        options=["-DRADIUS=3"])``); the same as ``kernel_files.load(path, kind, options=...)``."""
        from . import load

        return load(Path(path), self.kind.name, name=name, options=options)

    def find_spec(self, fullname: str, path: "Sequence[str] | None" = None,
                  target: "ModuleType | None" = None) -> "ModuleSpec | None":
        leaf = fullname.rpartition(".")[2]
        search = sys.path if path is None else path
        for entry in list(search):
            if not isinstance(entry, str):
                continue
            candidate = os.path.join(entry or os.getcwd(), leaf + self.kind.extension)
            if os.path.isfile(candidate):
                loader = KernelFileLoader(fullname, candidate, self.kind)
                return importlib.util.spec_from_file_location(fullname, candidate, loader=loader)
        return None


def _finder_of(kind: str) -> "KernelFileFinder | None":
    for f in sys.meta_path:
        if isinstance(f, KernelFileFinder) and f.kind.name == kind:
            return f
    return None


def _kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise ValueError(f"unknown kernel file kind {kind!r}; expected one of {', '.join(KINDS)}")
    return KINDS[kind]


def install(kind: str) -> KernelFileFinder:
    """Make ``import name`` find ``name.<kind>`` files (kind: ``cl``, ``cu`` or ``hip``). Idempotent."""
    k = _kind(kind)
    finder = _finder_of(kind)
    if finder is None:
        finder = KernelFileFinder(k)
        sys.meta_path.append(finder)
    return finder


def uninstall(kind: str) -> None:
    """Remove the finder for ``kind`` (modules already imported stay usable)."""
    _kind(kind)
    finder = _finder_of(kind)
    if finder is not None:
        sys.meta_path.remove(finder)


def installed() -> "list[str]":
    return [f.kind.name for f in sys.meta_path if isinstance(f, KernelFileFinder)]
