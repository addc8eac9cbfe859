"""Prefix sum (inclusive scan) of an int32 array: the classic three-step GPU scan.

    python examples/11_prefix_sum.py [n]

1. `scan_blocks`: each work group of BLOCK items loads its part of the array into local memory,
   `gpu.local_array(BLOCK, np.int32)` (sized by a module constant), and scans it in log2(BLOCK)
   rounds (Hillis-Steele), with `gpu.barrier()` between reading a neighbour and writing; the last
   item writes the group's total to `block_sums`.
2. The block totals are scanned the same way (recursively: more than BLOCK blocks need a level
   more).
3. `add_offsets`: every element adds the scanned total of the blocks before its own.

The arrays stay on the device (pygpgpu.numpy) across the three steps. A barrier needs every
work item of the group, so `scan_blocks` is a gid-style kernel (`gpu.work_size`: one work item
per element, rounded up to whole groups of BLOCK) that guards only its loads and stores.
"""
import numpy as np
from _common import example_size

import pygpgpu
import pygpgpu.numpy as gnp
from pygpgpu import gpu, kernel

BLOCK = 256             # work items per group = local memory per group (a module constant)


@kernel
def scan_blocks(x, out, block_sums):
    gpu.work_size(x)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    tile = gpu.local_array(BLOCK, np.int32)
    tile[lid] = x[i] if i < x.shape[0] else 0           # the last group is padded with zeros
    gpu.barrier()
    offset = 1
    while offset < BLOCK:
        v = tile[lid - offset] if lid >= offset else 0
        gpu.barrier()                                   # everyone has read before anyone writes
        tile[lid] += v
        gpu.barrier()
        offset *= 2
    if i < x.shape[0]:
        out[i] = tile[lid]
    if lid == BLOCK - 1:
        block_sums[gpu.get_group_id(0)] = tile[lid]


@kernel
def add_offsets(out, scanned_sums):
    for i in range(out.shape[0]):
        block = i // BLOCK
        if block > 0:
            out[i] += scanned_sums[block - 1]


def prefix_sum(x, device):
    """Inclusive scan of a 1-D int32 device array on `device`; a new device array."""
    out = gnp.empty_like(x)
    blocks = -(-x.shape[0] // BLOCK)
    sums = gnp.empty(blocks, np.int32, device=device)
    scan_blocks[device.selector](x, out, sums)
    if blocks > 1:
        add_offsets[device.selector](out, prefix_sum(sums, device))
    return out


def main(n: int = 1_000_000) -> dict:
    device = pygpgpu.get_device()
    x = np.random.default_rng(5).integers(0, 10, n, dtype=np.int32)
    result = prefix_sum(gnp.asarray(x, device=device), device).get()
    print(f"inclusive scan of {n:,} int32 values on {device.selector}: total {int(result[-1]):,}")
    return {"x": x, "result": result}


if __name__ == "__main__":
    main(example_size(1_000_000))
