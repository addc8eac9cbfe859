"""In a process forked after the HIP runtime was loaded: forget the parent's contexts, never call it.

The HIP runtime does not survive fork(): the child drops every inherited stream, buffer, module
and kernel without releasing them, and the runtime is replaced by a stand-in that raises
ForkedProcessError (which says to use the spawn or forkserver start method). See
``pygpgpu_core.forking``.
"""
from __future__ import annotations

import sys

from pygpgpu_core.forking import ForkedLibrary, mark_forked, on_fork_child

__all__: list = []


def _drop_after_fork() -> None:
    hipapi = sys.modules.get("pygpgpu_hip._hipapi")
    if hipapi is None or hipapi._api is None:
        return                       # never loaded in the parent: the child may use HIP normally
    hipapi._api = ForkedLibrary("hip")
    context = sys.modules.get("pygpgpu_hip._context")
    if context is not None:
        for ctx in list(context._live_contexts):
            ctx._forget_after_fork()
    mark_forked("hip")


on_fork_child(_drop_after_fork)
