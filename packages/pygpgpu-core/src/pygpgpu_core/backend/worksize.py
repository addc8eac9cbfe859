"""Work sizes as every backend takes them: total work items per dimension (OpenCL style).

CUDA and HIP turn a (global, local) pair into a grid of ``ceil(global / local)`` blocks of
``local`` threads; :func:`block_geometry` does that once for both.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

__all__ = ["work_dims", "block_geometry", "default_group_shape"]

# Per dimension count: 256 work items a group, the usual sweet spot for occupancy on NVIDIA and AMD GPUs.
# In 2-D the first dimension (x, the contiguous one of a C-order array) is 32 wide, so that a warp
# reads 128 consecutive bytes of a float32 row: on the H200 a 5-point stencil went from 1.03x to
# 1.015x of handwritten CUDA with (32, 8) blocks and a naive matmul from 1.01x to 0.81x (bench_cuda.py).
DEFAULT_LOCAL_SIZE = {1: (256,), 2: (32, 8), 3: (8, 8, 4)}


def default_group_shape(ndim: int, max_group: int) -> tuple[int, ...]:
    """The group (block) shape of a GPU launch that gives no local size: 256 work items, halved
    per dimension until the device's (or kernel's) limit ``max_group`` allows it."""
    shape = DEFAULT_LOCAL_SIZE[ndim]
    limit = max(1, max_group)
    while math.prod(shape) > limit:
        shape = tuple(max(1, s // 2) for s in shape)
    return shape


def work_dims(value: Any, what: str) -> tuple[int, ...]:
    """An int or a sequence of 1..3 non-negative ints, as a tuple."""
    if isinstance(value, (tuple, list)):
        dims = tuple(operator.index(v) for v in value)
    else:
        try:
            dims = (operator.index(value),)
        except TypeError:
            raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 0 for d in dims):
        raise ValueError(f"{what} must have 1 to 3 non-negative dimensions, got {value!r}")
    return dims


def block_geometry(global_size: Any, local_size: Any, *, default_local: Sequence[int], max_threads: int,
                   max_block_dims: Sequence[int], max_grid_dims: Sequence[int], device_name: str,
                   kernel_name: str, max_work_per_dim: "int | None" = None) -> "tuple[int, ...] | None":
    """``(gx, gy, gz, bx, by, bz)`` for total-work sizes, or None when there is no work.

    ``local_size`` None picks ``default_local`` (for that many dimensions), clipped to the
    global size and halved until it fits ``max_threads``. Launches past ``max_grid_dims`` blocks
    (or ``max_work_per_dim`` threads, rounded up to whole blocks) in a dimension raise ValueError:
    the driver would refuse them or wrap the count.
    """
    g = work_dims(global_size, "global_size")
    if local_size is None:
        block = [min(d, max(x, 1)) for d, x in zip(default_local, g)]
        while math.prod(block) > max_threads:
            i = block.index(max(block))
            block[i] = max(1, block[i] // 2)
        b = tuple(block)
    else:
        b = work_dims(local_size, "local_size")
        if len(b) != len(g):
            raise ValueError(f"local_size {local_size!r} must have as many dimensions as global_size {global_size!r}")
        threads = math.prod(b)
        if threads == 0:
            raise ValueError(f"local_size {local_size!r} must be positive in every dimension")
        if threads > max_threads:
            raise ValueError(f"local_size {b} is {threads} threads a block; kernel {kernel_name!r} allows at most "
                             f"{max_threads} on {device_name}")
        for d, (x, limit) in enumerate(zip(b, max_block_dims)):
            if x > limit:
                raise ValueError(f"local_size {b}: dimension {d} exceeds {device_name}'s limit {limit}")
    if 0 in g:
        return None
    grid = tuple(-(-x // y) for x, y in zip(g, b))
    for d, (x, limit) in enumerate(zip(grid, max_grid_dims)):
        if x > limit:
            raise ValueError(f"global_size {g} needs {x} blocks in dimension {d}; {device_name} allows {limit}: "
                             "use a larger local size, several launches or a loop inside the kernel")
        if max_work_per_dim is not None and x * b[d] > max_work_per_dim:
            raise ValueError(f"global_size {g} needs {x * b[d]} threads in dimension {d}; {device_name} launches at "
                             f"most {max_work_per_dim} a dimension: use several launches or a loop inside the kernel")
    return (grid + (1, 1, 1))[:3] + (b + (1, 1, 1))[:3]
