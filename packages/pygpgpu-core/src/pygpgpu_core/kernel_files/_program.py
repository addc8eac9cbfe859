"""One compiled program per (kernel file, device), built on first use.

The compiled text is the file with its local headers inlined (``cdecl.compile_source``), so
the backend's own content-keyed cache also sees header edits. A binary is kept beside the
source when the backend exposes one (``program.binary``) and reloaded through
``context.program_from_binary(binary)`` when the backend offers that method.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..cache import cache_key
from ..cdecl import compile_source
from ..errors import CompileError, GPGPUError
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

    def program(self, device: Any) -> Any:
        key = id(device)
        hit = self._programs.get(key)
        if hit is not None and hit[0] is device:
            return hit[1]
        with self._lock:
            hit = self._programs.get(key)
            if hit is not None and hit[0] is device:
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
        key = cache_key("kernel-file", source, getattr(backend, "name", ""), device.name, getattr(device, "arch", ""),
                        version, *self.options)
        from_binary = _declared(context, "program_from_binary")
        if from_binary is not None:
            binary = self.cache.load_binary(device, key)
            if binary is not None:
                try:
                    return from_binary(binary, source=source, options=self.options, name=str(self.path))
                except TypeError:
                    return from_binary(binary)
                except GPGPUError:
                    pass  # stale for this driver after all: rebuild from source below
        try:
            program = context.program(source, self.options, name=str(self.path))
        except CompileError as exc:
            raise CompileError(
                f"{self.path.name} failed to build for {device.selector} ({device.name})",
                exc.log, source, str(self.path),
            ) from None
        binary = _declared(program, "binary")
        if callable(binary):
            binary = binary()
        if isinstance(binary, (bytes, bytearray)) and binary:
            self.cache.store_binary(device, key, bytes(binary))
        return program
