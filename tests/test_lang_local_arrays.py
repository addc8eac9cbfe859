"""gpu.local_array sized by constants (issue 15, item 7): a module constant, a constant of the
enclosing function, tuples of them and arithmetic on them give the compile-time shape; the
group size a call without one gets follows that shape. Results are compared with numpy."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_code_object, assert_cubin
from pygpgpu import gpu, kernel
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture

TILE = 32
BLOCK = (8, 8)


@kernel
def block_sums(x, out):
    gpu.work_size(x)
    t = gpu.local_array(TILE, np.float32)          # a module constant
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    t[lid] = x[i]
    gpu.barrier()
    if lid == 0:
        s = 0.0
        for k in range(TILE):
            s += t[k]
        out[gpu.get_group_id(0)] = s


def make_block_sums(tile):
    @kernel
    def sums(x, out):
        gpu.work_size(x)
        t = gpu.local_array(tile * 2 // 2, np.int64)   # a captured constant, folded
        i = gpu.get_global_id(0)
        lid = gpu.get_local_id(0)
        t[lid] = x[i]
        gpu.barrier()
        if lid == 0:
            s = 0
            for k in range(tile):
                s += t[k]
            out[gpu.get_group_id(0)] = s
    return sums


@kernel
def transpose_tiles(a, out):
    gpu.work_size(out)
    t = gpu.local_array(BLOCK, np.float32)          # a module tuple: a 2-D tile
    y = gpu.get_local_id(1)
    x = gpu.get_local_id(0)
    t[y, x] = a[gpu.get_global_id(1), gpu.get_global_id(0)]
    gpu.barrier()
    out[gpu.get_global_id(1), gpu.get_global_id(0)] = t[x, y]


def test_a_module_constant_sizes_the_array_and_the_group(backend):
    x = np.random.default_rng(0).random(TILE * 8).astype(np.float32)
    out = np.zeros(8, np.float32)
    block_sums[backend](x, out)                    # no local size: groups of TILE
    np.testing.assert_allclose(out, x.reshape(8, TILE).sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize("tile", [16, 64])
def test_a_captured_constant_sizes_the_array(backend, tile):
    x = np.arange(tile * 4, dtype=np.int64)
    out = np.zeros(4, np.int64)
    make_block_sums(tile)[backend](x, out)
    np.testing.assert_array_equal(out, x.reshape(4, tile).sum(axis=1))


def test_a_tuple_constant_gives_a_2d_tile(backend):
    a = np.arange(16 * 24, dtype=np.float32).reshape(16, 24)
    out = np.zeros_like(a)
    transpose_tiles[backend](a, out)                # groups of BLOCK (reversed: x first)
    host = np.empty_like(a)
    for by in range(0, 16, 8):
        for bx in range(0, 24, 8):
            host[by:by + 8, bx:bx + 8] = a[by:by + 8, bx:bx + 8].T
    np.testing.assert_array_equal(out, host)


def test_a_captured_tuple_shape(backend):
    shape = (4, 16)

    @kernel
    def row_max(a, out):
        gpu.work_size(a)
        t = gpu.local_array(shape, np.float32)
        y = gpu.get_local_id(1)
        x = gpu.get_local_id(0)
        t[y, x] = a[gpu.get_global_id(1), gpu.get_global_id(0)]
        gpu.barrier()
        if x == 0:
            m = t[y, 0]
            for k in range(shape[1]):
                m = max(m, t[y, k])
            out[gpu.get_global_id(1), gpu.get_group_id(0)] = m

    a = np.random.default_rng(1).random((8, 32)).astype(np.float32)
    out = np.zeros((8, 2), np.float32)
    row_max[backend](a, out)
    np.testing.assert_array_equal(out, a.reshape(8, 2, 16).max(axis=2))


def test_a_size_known_only_at_run_time_says_what_is_accepted():
    @kernel
    def dynamic(x, n):
        gpu.work_size(x)
        t = gpu.local_array(n * 2, np.float32)      # an expression: only a parameter itself sizes at launch
        x[gpu.get_global_id(0)] = t[0]

    with pytest.raises(SyntaxError, match="needs a compile-time shape") as info:
        dynamic.inspect(np.zeros(4, np.float32), 4, backend="opencl")
    assert "enclosing function" in info.value.msg and "TILE = (16, 16)" in info.value.msg
    assert "an int parameter of the kernel" in info.value.msg


def test_local_arrays_sized_by_constants_compile_for_cuda_and_hip(rtc_compile):
    dialect, compile_ = rtc_compile
    for k, args in ((block_sums, (np.zeros(64, np.float32), np.zeros(2, np.float32))),
                    (make_block_sums(16), (np.zeros(64, np.int64), np.zeros(4, np.int64))),
                    (transpose_tiles, (np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32)))):
        src = k.inspect(*args, backend=dialect).source
        image = compile_(src)
        (assert_cubin if dialect == "cuda" else assert_code_object)(image, src)
