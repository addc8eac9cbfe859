"""Process-wide translator state: counters, the ``pygpgpu.translate`` logger and the warm-call staleness check.

Kept apart from the translator so ``import pygpgpu_translate`` stays light: the AST machinery
loads on the first translation.
"""
from __future__ import annotations

from pygpgpu_core.logs import get_logger

__all__ = ["stats", "log", "refs_current"]

log = get_logger("translate")
stats = {"translations": 0, "source_cache_hits": 0, "compiles": 0, "typed_by_whole_passes": 0}
"""``translations``: AST -> source runs; ``source_cache_hits``: sources reused from disk;
``compiles``: programs handed to a backend to build (the backend may hit its binary cache);
``typed_by_whole_passes``: functions (kernels and helper specialisations) whose local types the
first pass and its worklist did not settle, so whole provisional passes ran (``_builder.run_passes``):
what the planned inference pass must make unneeded (docs/architecture.md, issue 34)."""

_MISSING = object()


def refs_current(refs) -> bool:
    """True while every global a translation read still holds the same object (warm-call check)."""
    for g, name, value in refs:
        if g.get(name, _MISSING) is not value:
            return False
    return True
