"""Local memory sized at launch: ``gpu.local_array(n, dtype)`` with ``n`` an int parameter of the
kernel (Numba's dynamic ``cuda.shared.array(0, ...)`` with the bytes in the launch configuration)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_code_object, assert_cubin
from pygpgpu import gpu, kernel
from pygpgpu_translate._kernel import build_options


@pytest.fixture
def on(backend):
    return backend


@kernel
def reverse_groups(x, out, n):
    gpu.work_size(x)
    tile = gpu.local_array(n, np.float64)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    if i < x.shape[0]:
        tile[lid] = x[i]
    gpu.barrier()
    if i < x.shape[0]:
        out[i] = tile[n - 1 - lid]


def _reversed_groups(x, group):
    return x.reshape(-1, group)[:, ::-1].ravel()


@pytest.mark.parametrize("group", [8, 32, 128])
def test_a_local_array_sized_by_an_argument_takes_each_launchs_size(on, group):
    x = np.random.default_rng(group).random(1024)
    out = np.zeros_like(x)
    reverse_groups[on][(1024, group)](x, out, group)
    np.testing.assert_array_equal(out, _reversed_groups(x, group))


@kernel
def block_sums(x, out, n):
    """A tree reduction in local memory of n int64 elements, one sum per group."""
    gpu.work_size(x)
    part = gpu.local_array(shape=n, dtype=np.int64)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    part[lid] = x[i] if i < x.shape[0] else 0
    gpu.barrier()
    step = n // 2
    while step > 0:
        if lid < step:
            part[lid] += part[lid + step]
        gpu.barrier()
        step //= 2
    if lid == 0:
        out[gpu.get_group_id(0)] = part[0]


def test_a_reduction_in_launch_sized_local_memory(on):
    x = np.arange(4096, dtype=np.int64)
    out = np.zeros(4096 // 64, np.int64)
    block_sums[on][(4096, 64)](x, out, 64)
    np.testing.assert_array_equal(out, x.reshape(-1, 64).sum(axis=1))


def test_debug_mode_checks_a_launch_sized_local_array(on):
    @kernel(debug=True)
    def past_the_end(x, n):
        gpu.work_size(x)
        tile = gpu.local_array(n, np.float32)
        i = gpu.get_global_id(0)
        tile[gpu.get_local_id(0) + n] = 1.0
        gpu.barrier()
        if i < x.shape[0]:
            x[i] = tile[0]

    with pytest.raises(IndexError, match="tile"):
        past_the_end[on][(64, 16)](np.zeros(64, np.float32), 16)


def test_the_size_must_be_a_positive_int():
    x = np.zeros(16)
    with pytest.raises(ValueError, match="positive element count"):
        reverse_groups[(16, 16)](x, x.copy(), 0)

    @kernel
    def float_size(x, n):
        gpu.work_size(x)
        t = gpu.local_array(n, np.float32)
        t[0] = 1.0
        x[0] = t[0]

    with pytest.raises(SyntaxError, match="not an int"):
        float_size.inspect(np.zeros(4, np.float32), 2.0, backend="opencl")


def test_one_launch_sized_array_per_kernel():
    @kernel
    def two(x, n, m):
        gpu.work_size(x)
        a = gpu.local_array(n, np.float32)
        b = gpu.local_array(m, np.float32)
        a[0] = 1.0
        b[0] = 2.0
        x[0] = a[0] + b[0]

    with pytest.raises(SyntaxError, match="at most one gpu.local_array sized at launch"):
        two.inspect(np.zeros(4, np.float32), 4, 4, backend="opencl")


def test_cuda_source_uses_dynamic_shared_memory(nvrtc_compile):
    x = np.zeros(64)
    source = reverse_groups.inspect(x, x.copy(), 16, backend="cuda").source
    assert "extern __shared__" in source and ", int n," in source
    assert_cubin(nvrtc_compile(source, "sm_90", build_options(None, "cuda", False)), source)


def test_hip_source_uses_dynamic_shared_memory(hiprtc_compile):
    x = np.zeros(64)
    source = reverse_groups.inspect(x, x.copy(), 16, backend="hip").source
    assert "extern __shared__" in source
    assert_code_object(hiprtc_compile(source, "gfx90a", list(build_options(None, "hip", False))), source)


def test_opencl_source_takes_a_local_pointer():
    x = np.zeros(64)
    source = reverse_groups.inspect(x, x.copy(), 16, backend="opencl").source
    assert "__local double* tile" in source
