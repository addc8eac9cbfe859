"""Parsing of device selectors such as ``"cuda"``, ``"opencl:0"``, ``"hip:gfx1036"``, ``"geforce:1"``.

Grammar: ``[backend][:device][:nth]`` where *backend* is a backend name or alias, *device*
is an index into that backend's device list or a case-insensitive substring of the
device's name/vendor/arch, and *nth* picks the n-th device among several matches.
"""
from __future__ import annotations

from dataclasses import dataclass

from .builtin_backends import BUILTIN_BACKENDS

__all__ = ["Selector", "parse_selector", "canonical_backend", "BACKEND_ALIASES"]

# every word a selector may use for a built-in backend -> its registry name (a plug-in's name is its own)
BACKEND_ALIASES = {word: b.name for b in BUILTIN_BACKENDS for word in (b.name, *b.aliases)}


def canonical_backend(name: str) -> str:
    """The registry name for ``name`` or an alias of it (unknown names pass through lowercased)."""
    key = name.strip().lower()
    return BACKEND_ALIASES.get(key, key)


@dataclass(frozen=True)
class Selector:
    backend: str | None = None
    """Canonical backend name, or None for "any backend, in probe order"."""
    index: int | None = None
    """Position in the backend's device list (flat across OpenCL platforms)."""
    match: str | None = None
    """Lowercased substring matched against name, vendor and arch."""
    nth: int = 0
    """Which of several matches to take."""

    def __str__(self) -> str:
        parts = [self.backend or "*"]
        if self.index is not None:
            parts.append(str(self.index))
        elif self.match is not None:
            parts.append(self.match)
            if self.nth:
                parts.append(str(self.nth))
        return ":".join(parts)


def parse_selector(text: str, known_backends: "set[str] | frozenset[str] | None" = None) -> Selector:
    """Parse a selector string. ``known_backends`` adds third-party backend names to the aliases."""
    if not isinstance(text, str):
        raise TypeError(f"a device selector must be a str such as 'opencl:0', got {type(text).__name__}")
    raw = text.strip()
    if not raw:
        raise ValueError("empty device selector; use e.g. 'cuda', 'opencl:0' or 'hip:gfx1036'")
    parts = [p.strip() for p in raw.split(":")]
    if len(parts) > 3 or any(p == "" for p in parts):
        raise ValueError(
            f"malformed device selector {text!r}; expected [backend][:device][:n], "
            "e.g. 'cuda', 'opencl:0', 'hip:gfx1036', 'geforce:1'"
        )
    names = set(BACKEND_ALIASES) | set(known_backends or ())
    backend = None
    if parts[0].lower() in names:
        backend = canonical_backend(parts.pop(0))
    if not parts:
        return Selector(backend=backend)
    device = parts.pop(0)
    nth = 0
    if parts:
        if not parts[0].isdigit():
            raise ValueError(f"in device selector {text!r}, the part after the device name must be a number (the n-th match)")
        nth = int(parts[0])
    if device.isdigit():
        if parts:
            raise ValueError(f"device selector {text!r}: an index cannot be followed by another number")
        return Selector(backend=backend, index=int(device))
    return Selector(backend=backend, match=device.lower(), nth=nth)
