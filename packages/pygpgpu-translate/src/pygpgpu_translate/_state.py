"""Process-wide translator state: counters, the debug switch and the warm-call staleness check.

Kept apart from the translator so ``import pygpgpu_translate`` stays light: the AST machinery
loads on the first translation.
"""
from __future__ import annotations

import logging
import os

__all__ = ["stats", "log", "debug_enabled", "refs_current"]

log = logging.getLogger("pygpgpu.translate")
stats = {"translations": 0, "source_cache_hits": 0, "compiles": 0}
"""``translations``: AST -> source runs; ``source_cache_hits``: sources reused from disk;
``compiles``: programs handed to a backend to build (the backend may hit its binary cache)."""

_MISSING = object()


def debug_enabled() -> bool:
    return os.environ.get("PYGPGPU_DEBUG", "") not in ("", "0")


def refs_current(refs) -> bool:
    """True while every global a translation read still holds the same object (warm-call check)."""
    for g, name, value in refs:
        if g.get(name, _MISSING) is not value:
            return False
    return True
