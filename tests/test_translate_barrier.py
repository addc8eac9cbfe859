"""Barriers with a gid-style domain: every work item must reach them, also the ones past the end
of the data, so the translator adds no early return when the kernel (or a helper) synchronizes."""
import numpy as np

from pygpgpu import gpu, kernel

GROUP = 64


def group_sum_into(tile, lid):
    """Tree reduction of one group's tile; every work item takes part in every barrier."""
    step = GROUP // 2
    while step > 0:
        gpu.barrier()
        if lid < step:
            tile[lid] += tile[lid + step]
        step //= 2
    gpu.barrier()


@kernel
def block_sums(x, out):
    gpu.work_size(x)
    tile = gpu.local_array(GROUP, np.float32)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    tile[lid] = x[i] if i < x.shape[0] else 0.0
    group_sum_into(tile, lid)
    if lid == 0:
        out[gpu.get_group_id(0)] = tile[0]


def test_barrier_in_a_helper_with_a_ragged_domain(backend):
    n = 1000  # not a multiple of the group size: the last group has idle work items
    x = np.arange(n, dtype=np.float32) % 7
    groups = -(-n // GROUP)
    out = np.zeros(groups, np.float32)
    block_sums[backend][(n, GROUP)](x, out)
    want = np.array([x[g * GROUP:(g + 1) * GROUP].sum() for g in range(groups)], np.float32)
    np.testing.assert_allclose(out, want)
    src = block_sums.inspect(x, out, backend="opencl").source
    kernel_body = src[src.index("__kernel void block_sums"):]
    assert "return" not in kernel_body  # no early exit: idle work items still reach the barriers
