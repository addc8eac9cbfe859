"""In a process forked after OpenCL was loaded: forget the parent's contexts, never call PoCL.

PoCL's worker threads do not exist in the child, so any wait on its queues (and even building
a program) blocks forever. The child drops every inherited context, queue, program, kernel and
buffer without releasing them, and the ICD loader is replaced by a stand-in that raises
ForkedProcessError (which says to use the spawn or forkserver start method). See
``pygpgpu_core.forking``.
"""
from __future__ import annotations

import sys
from typing import Any

from pygpgpu_core.forking import ForkedLibrary, mark_forked, on_fork_child, on_fork_report_use

__all__: list = []


def _drop_after_fork() -> None:
    library: Any = sys.modules.get("pygpgpu_opencl._library")
    if library is None or library._loaded is None:
        return                       # never loaded in the parent: the child may use OpenCL normally
    library._loaded = ForkedLibrary("opencl")
    context = sys.modules.get("pygpgpu_opencl._context")
    if context is not None:
        for ctx in list(context._live_contexts):
            ctx._forget_after_fork()
    mark_forked("opencl")


def _in_use() -> "set[str]":
    library: Any = sys.modules.get("pygpgpu_opencl._library")
    return {"opencl"} if library is not None and isinstance(library._loaded, library.OpenCLLibrary) else set()


on_fork_child(_drop_after_fork)
on_fork_report_use(_in_use)
