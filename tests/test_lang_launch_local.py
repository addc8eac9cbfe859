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


@kernel
def three_tiles(x, out, n, m, k):
    """Three launch-sized arrays of 1-, 8- and 4-byte elements (declared narrowest first, so a
    plain back-to-back layout would misalign the int64 one): each group writes its own values into
    all three, then every work item reads its mirror image from each."""
    gpu.work_size(x)
    flags = gpu.local_array(k, np.int8)
    wide = gpu.local_array(n, np.int64)
    mid = gpu.local_array(shape=m, dtype=np.float32)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    v = x[i] if i < x.shape[0] else 0
    wide[lid] = np.int64(v) * 3000000000
    mid[lid] = v * 0.5
    flags[lid] = v % 7
    gpu.barrier()
    if i < x.shape[0]:
        out[i, 0] = wide[n - 1 - lid] // 1000
        out[i, 1] = mid[m - 1 - lid] * 4
        out[i, 2] = flags[k - 1 - lid]


def _three_tiles_model(x, group):
    mirror = x.reshape(-1, group)[:, ::-1].ravel().astype(np.int64)
    return np.stack([mirror * 3000000000 // 1000, mirror * 2, mirror % 7], axis=1)


@pytest.mark.parametrize("group", [8, 64])
def test_several_launch_sized_arrays_of_different_widths(on, group):
    x = np.random.default_rng(group).integers(0, 1000, 512).astype(np.int32)
    out = np.zeros((512, 3), np.int64)
    three_tiles[on][(512, group)](x, out, group, group, group)
    np.testing.assert_array_equal(out, _three_tiles_model(x, group))


def test_cuda_carves_several_arrays_out_of_the_dynamic_shared_memory_widest_first():
    x = np.zeros(64, np.int32)
    source = three_tiles.inspect(x, np.zeros((64, 3), np.int64), 8, 8, 8, backend="cuda").source
    body = source.split("three_tiles(", 1)[1]
    wide, mid, flags = (body.index(f"* {name} = ") for name in ("wide", "mid", "flags"))
    assert wide < mid < flags
    assert "(pg_launch_local + 0)" in body.splitlines()[body[:wide].count("\n")]


@pytest.mark.parametrize("compiler", ["nvrtc", "hiprtc"])
def test_several_launch_sized_arrays_compile_for_cuda_and_hip(request, compiler):
    x = np.zeros(64, np.int32)
    if compiler == "nvrtc":
        compile_ = request.getfixturevalue("nvrtc_compile")
        source = three_tiles.inspect(x, np.zeros((64, 3), np.int64), 8, 8, 8, backend="cuda").source
        assert_cubin(compile_(source, "sm_90", build_options(None, "cuda", False)), source)
    else:
        compile_ = request.getfixturevalue("hiprtc_compile")
        source = three_tiles.inspect(x, np.zeros((64, 3), np.int64), 8, 8, 8, backend="hip").source
        assert_code_object(compile_(source, "gfx90a", list(build_options(None, "hip", False))), source)


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


@kernel
def group_rotate(x, out):
    """Local memory sized by the bracket's local size: each group rotates its values by one."""
    gpu.work_size(x)
    tile = gpu.local_array(gpu.get_local_size(0), np.float32)
    ids = gpu.local_array(shape=gpu.get_local_size(0), dtype=np.int16)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    size = gpu.get_local_size(0)
    tile[lid] = x[i] if i < x.shape[0] else 0.0
    ids[lid] = lid
    gpu.barrier()
    if i < x.shape[0]:
        out[i] = tile[(lid + 1) % size] + ids[size - 1 - lid] * 100     # fits int16 for groups <= 327


def _rotated(x, group):
    rows = x.reshape(-1, group)
    return (np.roll(rows, -1, axis=1) + np.arange(group)[::-1] * 100).ravel().astype(np.float32)


@pytest.mark.parametrize("group", [4, 32, 256])
def test_a_local_array_sized_by_the_brackets_local_size(on, group):
    x = np.random.default_rng(group).random(1024).astype(np.float32)
    out = np.zeros_like(x)
    group_rotate[on][(1024, group)](x, out)
    np.testing.assert_array_equal(out, _rotated(x, group))


def test_a_2d_group_sizes_local_memory_along_each_dimension(on):
    @kernel
    def transpose_tiles(x, out):
        gpu.work_size(out)
        rows = gpu.local_array(gpu.get_local_size(1), np.int64)
        cols = gpu.local_array(gpu.get_local_size(0), np.int64)
        j, k = gpu.global_ids(2)
        lj, lk = gpu.get_local_id(1), gpu.get_local_id(0)
        if lk == 0:
            rows[lj] = x[j, k]
        if lj == 0:
            cols[lk] = x[j, k]
        gpu.barrier()
        if j < out.shape[0] and k < out.shape[1]:
            out[j, k] = rows[lj] * 10 + cols[lk]

    x = np.random.default_rng(1).integers(0, 1000, (16, 32))
    out = np.zeros_like(x)
    transpose_tiles[on][((32, 16), (8, 4))](x, out)
    first_col = np.repeat(x[:, ::8], 8, axis=1)          # x[j, k - k % 8]: lane 0 of the group's row
    first_row = np.repeat(x[::4, :], 4, axis=0)          # x[j - j % 4, k]
    np.testing.assert_array_equal(out, first_col * 10 + first_row)


def test_a_local_size_sized_array_needs_a_local_size_at_the_call():
    @kernel
    def no_barrier(x):
        gpu.work_size(x)
        t = gpu.local_array(gpu.get_local_size(0), np.float32)
        i = gpu.get_global_id(0)
        t[gpu.get_local_id(0)] = 1.0
        if i < x.shape[0]:
            x[i] = t[gpu.get_local_id(0)]

    with pytest.raises(ValueError, match=r"needs the local size at the call: no_barrier\[\(total, local\)\]"):
        no_barrier(np.zeros(64, np.float32))


@pytest.mark.parametrize("dialect", ["cuda", "hip"])
def test_cuda_and_hip_size_it_by_the_block(dialect, request):
    x = np.zeros(64, np.float32)
    source = group_rotate.inspect(x, x.copy(), backend=dialect).source
    assert "(pg_launch_local + " in source and "blockDim.x" in source.split("* ids = ", 1)[1].split(";", 1)[0]
    if dialect == "cuda":
        assert_cubin(request.getfixturevalue("nvrtc_compile")(source, "sm_90", build_options(None, "cuda", False)),
                     source)
    else:
        assert_code_object(request.getfixturevalue("hiprtc_compile")(source, "gfx90a",
                                                                      list(build_options(None, "hip", False))), source)


def test_debug_mode_checks_each_of_several_launch_sized_arrays(on):
    checked = kernel(debug=True)(three_tiles.__wrapped__)
    x = np.random.default_rng(2).integers(0, 1000, 512).astype(np.int32)
    out = np.zeros((512, 3), np.int64)
    checked[on][(512, 64)](x, out, 64, 64, 64)
    np.testing.assert_array_equal(out, _three_tiles_model(x, 64))
    with pytest.raises(IndexError, match="array 'flags' of shape \\(32,\\)"):
        checked[on][(512, 64)](x, out, 64, 64, 32)
    rotate = kernel(debug=True)(group_rotate.__wrapped__)
    xf = np.random.default_rng(1).random(1024).astype(np.float32)
    got = np.zeros_like(xf)
    rotate[on][(1024, 32)](xf, got)
    np.testing.assert_array_equal(got, _rotated(xf, 32))


def test_a_launch_without_a_local_size_is_refused_with_the_bracket_to_write():
    x = np.zeros(64, np.float32)
    with pytest.raises(ValueError, match=r"declares no gpu.local_array of a fixed shape, .* "
                                         r"give one: group_rotate\[\(total, local\)\]"):
        group_rotate(x, x.copy())


def _mirror(tile, k, n):
    return tile[n - 1 - k]


@kernel
def mirrored_by_a_helper(x, out, n):
    """Launch-sized and group-sized local arrays passed to a helper."""
    gpu.work_size(x)
    tile = gpu.local_array(n, np.float32)
    ids = gpu.local_array(gpu.get_local_size(0), np.int32)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    tile[lid] = x[i] if i < x.shape[0] else 0.0
    ids[lid] = lid
    gpu.barrier()
    if i < x.shape[0]:
        out[i] = _mirror(tile, lid, n) + _mirror(ids, lid, gpu.get_local_size(0))


def test_launch_sized_arrays_pass_to_helpers(on):
    x = np.arange(256, dtype=np.float32)
    out = np.zeros_like(x)
    mirrored_by_a_helper[on][(256, 32)](x, out, 32)
    np.testing.assert_array_equal(out, _reversed_groups(x, 32) + np.tile(np.arange(32)[::-1], 8))


@pytest.mark.parametrize("dialect", ["cuda", "hip"])
def test_launch_sized_arrays_pass_to_helpers_compile(dialect, request):
    x = np.zeros(64, np.float32)
    source = mirrored_by_a_helper.inspect(x, x.copy(), 32, backend=dialect).source
    if dialect == "cuda":
        assert_cubin(request.getfixturevalue("nvrtc_compile")(source, "sm_90", build_options(None, "cuda", False)),
                     source)
    else:
        assert_code_object(request.getfixturevalue("hiprtc_compile")(source, "gfx90a",
                                                                      list(build_options(None, "hip", False))), source)


@kernel
def group_transpose(x, out):
    """A 2-D group's tile sized by the product of its sizes: each group transposes its block."""
    gpu.work_size(x)
    tile = gpu.local_array(gpu.get_local_size(1) * gpu.get_local_size(0), np.float64)
    j, k = gpu.global_ids(2)
    lj, lk = gpu.get_local_id(1), gpu.get_local_id(0)
    w = gpu.get_local_size(0)
    tile[lj * w + lk] = x[j, k]
    gpu.barrier()
    if j < out.shape[0] and k < out.shape[1]:
        out[j, k] = tile[lk * w + lj]


def test_a_2d_tile_sized_by_the_groups_work_items(on):
    x = np.random.default_rng(3).random((32, 32))
    out = np.zeros_like(x)
    group_transpose[on][((32, 32), (8, 8))](x, out)
    blocks = x.reshape(4, 8, 4, 8).transpose(0, 2, 3, 1).transpose(0, 2, 1, 3).reshape(32, 32)
    np.testing.assert_array_equal(out, blocks)


def test_only_products_of_distinct_group_sizes_size_a_local_array():
    @kernel
    def squared(x):
        gpu.work_size(x)
        t = gpu.local_array(gpu.get_local_size(0) * gpu.get_local_size(0), np.float32)
        t[0] = 1.0
        x[0] = t[0]

    with pytest.raises(SyntaxError, match="needs a compile-time shape"):
        squared.inspect(np.zeros(4, np.float32), backend="opencl")


@pytest.mark.parametrize("dialect", ["cuda", "hip"])
def test_a_2d_group_sized_tile_compiles(dialect, request):
    x = np.zeros((32, 32))
    source = group_transpose.inspect(x, x.copy(), backend=dialect).source
    if dialect == "cuda":
        assert_cubin(request.getfixturevalue("nvrtc_compile")(source, "sm_90", build_options(None, "cuda", False)),
                     source)
    else:
        assert_code_object(request.getfixturevalue("hiprtc_compile")(source, "gfx90a",
                                                                      list(build_options(None, "hip", False))), source)
