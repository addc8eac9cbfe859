"""One compiled program per (kernel file, device), built on first use.

The compiled text is the file with its local headers inlined (``cdecl.compile_source``), so
the backend's own content-keyed cache also sees header edits. A binary is kept beside the
source when the backend exposes one (``program.binary``) and reloaded through
``context.program_from_binary(binary, source=...)`` when the backend offers that method (all
three do); a binary the driver rejects is rebuilt from source and replaced.
``module.__kernel_file__.programs.stats`` counts binary loads and builds.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..cache import cache_key
from ..cdecl import compile_source
from ..cdecl._source import name_log_places
from ..errors import CompileError, GPGPUError
from ..logs import get_logger
from ..protocols import BinaryPrograms, supports
from ._cache import SourceCache

__all__ = ["FilePrograms"]


def _declared(obj: Any, name: str) -> Any:
    """``obj.name`` only when the object or its class really has it: an OpenCL Program answers
    any attribute with the kernel of that name, and a kernel called ``binary`` is no binary."""
    own = getattr(obj, "__dict__", {})
    if name in own:
        return own[name]
    if getattr(type(obj), name, None) is None:
        return None
    return getattr(obj, name, None)


class FilePrograms:
    def __init__(self, path: Path, cache: SourceCache, options: "tuple[str, ...]" = ()):
        self.path = path
        self.cache = cache
        self.options = tuple(options)
        self._programs: dict = {}
        self._lock = threading.Lock()
        self.stats = {"binary_loads": 0, "builds": 0}
        """How each program was made: loaded from a binary kept in the cache folder without
        compiling, or built from source (also after a stale or damaged binary)."""

    def program(self, device: Any) -> Any:
        """This file's program for ``device``, built once; again after its context was closed (a
        closed shared context is replaced by the next ``device.context()``)."""
        key = id(device)
        hit = self._programs.get(key)
        if hit is not None and hit[0] is device and not getattr(hit[1], "closed", False):
            return hit[1]
        with self._lock:
            hit = self._programs.get(key)
            if hit is not None and hit[0] is device and not getattr(hit[1], "closed", False):
                return hit[1]
            program = self._build(device)
            self._programs[key] = (device, program)
            return program

    def _build(self, device: Any) -> Any:
        source = compile_source(self.path)
        context = device.context()
        backend = device.backend
        try:
            version = backend.version()
        except GPGPUError:
            version = "?"
        # (own_build_options: what the backend adds to every build in this context, e.g. PoCL 4-5's
        # device define, without which identical devices would share one cached binary)
        key = cache_key("kernel-file", source, getattr(backend, "name", ""), device.name, getattr(device, "arch", ""),
                        version, *self.options, *getattr(context, "own_build_options", ()))
        from_binary = context.program_from_binary if supports(context, BinaryPrograms) else None
        if from_binary is not None:
            binary = self.cache.load_binary(device, key)  # None when missing or failing its checksum
            if binary is not None:
                program = self._load_binary(from_binary, binary, source)
                if program is not None:
                    loaded = _declared(program, "from_binary")
                    if loaded is None:  # a backend that does not say: did it keep our binary?
                        current = _binary_of(program)
                        loaded = current is None or current == binary
                    if loaded:
                        self.stats["binary_loads"] += 1
                        get_logger(getattr(backend, "name", "backend")).debug(
                            "kernel file %s: binary loaded from %s for %s (key %s)", self.path, self.cache.folder,
                            device.selector, key)
                        return program
                    self._store(device, key, program)  # the backend rebuilt it from source
                    self.stats["builds"] += 1
                    return program
        try:
            program = context.program(source, self.options, name=str(self.path))
        except CompileError as exc:
            raise CompileError(
                f"{self.path.name} failed to build for {device.selector} ({device.name})",
                name_log_places(exc.log, source), source, str(self.path),
            ) from None
        self._store(device, key, program)
        self.stats["builds"] += 1
        return program

    def _load_binary(self, from_binary: Any, binary: bytes, source: str) -> Any:
        try:
            return from_binary(binary, source=source, options=self.options, name=str(self.path))
        except TypeError:
            try:
                return from_binary(binary)
            except GPGPUError:
                return None
        except GPGPUError:
            return None  # stale for this driver after all: rebuilt from source by the caller

    def _store(self, device: Any, key: str, program: Any) -> None:
        binary = _binary_of(program)
        if binary:
            try:
                self.cache.store_binary(device, key, bytes(binary))
            except OSError:
                pass  # a cache that cannot be written only costs a build next time


def _binary_of(program: Any) -> "bytes | None":
    binary = _declared(program, "binary")
    if callable(binary):
        binary = binary()
    return bytes(binary) if isinstance(binary, (bytes, bytearray)) else None
