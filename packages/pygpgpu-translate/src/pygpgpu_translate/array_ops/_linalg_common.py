"""What ``gnp.linalg``'s kernels share: one work group per matrix of a stack, its size chosen from
the work per step, and the barrier that orders both local and global memory (the kernels update
their matrices in global memory between steps)."""
from __future__ import annotations

import numpy as np

from .._kernel import _Config
from ._codegen import grid, np_type

__all__ = ["BARRIER", "group_grid", "scalar_type"]

BARRIER = "gpu.barrier(gpu.LOCAL | gpu.GLOBAL)"


def group_grid(batch: int, work: int) -> _Config:
    """``batch`` groups of the smallest power of two from 32 to 256 covering ``work`` items of a step."""
    size = 32
    while size < 256 and size < work:
        size *= 2
    return grid(batch * size, size)


def scalar_type(dtype: np.dtype) -> str:
    return np_type(dtype)
