"""In a process forked after CUDA was initialized: forget the parent's contexts, never call libcuda.

CUDA does not support fork() after cuInit: the child drops every inherited context, module,
stream, pinned block and pin-cache entry without releasing them, and the driver is replaced by
a stand-in that raises ForkedProcessError (which says to use the spawn or forkserver start
method). See ``pygpgpu_core.forking``.
"""
from __future__ import annotations

import sys

from pygpgpu_core.forking import ForkedLibrary, mark_forked, on_fork_child

__all__: list = []


def _drop_after_fork() -> None:
    driver = sys.modules.get("pygpgpu_cuda._driver")
    if driver is None or driver._driver is None:
        return                       # never initialized in the parent: the child may use CUDA normally
    driver._driver = ForkedLibrary("cuda")
    context = sys.modules.get("pygpgpu_cuda._context")
    if context is not None:
        for ctx in list(context._live_contexts):
            ctx._forget_after_fork()
    mark_forked("cuda")


on_fork_child(_drop_after_fork)
