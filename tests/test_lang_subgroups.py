"""Subgroup (warp / wavefront) operations: gpu.shuffle & co run on PoCL through the OpenCL local-memory
emulation and are compared with a numpy model of 32-lane subgroups; CUDA and HIP sources compile."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_code_object, assert_cubin, first_device
from pygpgpu import gpu, kernel
from pygpgpu_translate._kernel import build_options

W = 32          # CUDA's warp, and OpenCL's emulated subgroup
GROUP = 256     # the group size a subgroup kernel runs with when the call gives none


@pytest.fixture
def on(backend):
    """Each backend that executes kernels in this run (PoCL here; CUDA and OpenCL on a GPU machine)."""
    return backend


@kernel
def every_op(x, out):
    gpu.work_size(x)
    i = gpu.get_global_id(0)
    v = x[i] if i < x.shape[0] else x[0] * 0 + 7   # the work items past the end take part too
    lane = gpu.subgroup_local_id()
    a = gpu.shuffle(v, lane + 3)
    b = gpu.shuffle_xor(v, 5)
    c = gpu.shuffle_down(v, 4)
    d = gpu.shuffle_up(v, 4)
    s = gpu.subgroup_add(v)
    lo = gpu.subgroup_min(v)
    hi = gpu.subgroup_max(v)
    any_big = gpu.subgroup_any(v > 60)
    all_even = gpu.subgroup_all(v % 2 == 0)
    mask = gpu.ballot(v % 3 == 0)
    if i < x.shape[0]:
        out[i, 0] = a
        out[i, 1] = b
        out[i, 2] = c
        out[i, 3] = d
        out[i, 4] = s
        out[i, 5] = lo
        out[i, 6] = hi
        out[i, 7] = any_big
        out[i, 8] = all_even
        out[i, 9] = mask
        out[i, 10] = lane
        out[i, 11] = gpu.subgroup_size()


def _model(x: np.ndarray) -> np.ndarray:
    """What every_op computes, from 32-lane runs of the groups of 256 (padded with 7s)."""
    n = len(x)
    padded = np.full(-(-n // GROUP) * GROUP, 7, dtype=x.dtype)
    padded[:n] = x
    out = np.zeros((len(padded), 12), dtype=np.float64)
    for base in range(0, len(padded), W):
        run = padded[base:base + W]
        for lane in range(W):
            v = run[lane]
            out[base + lane] = [run[(lane + 3) % W], run[lane ^ 5],
                                run[lane + 4] if lane + 4 < W else v, run[lane - 4] if lane >= 4 else v,
                                run.sum(), run.min(), run.max(), (run > 60).any(), (run % 2 == 0).all(),
                                sum(1 << k for k in range(W) if run[k] % 3 == 0), lane, W]
    return out[:n]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64])
def test_every_subgroup_op_matches_a_32_lane_model(on, dtype):
    x = (np.random.default_rng(5).integers(0, 64, 1000)).astype(dtype)
    out = np.zeros((1000, 12), np.float64)
    every_op[on](x, out)
    np.testing.assert_array_equal(out, _model(x))


@kernel
def warp_sums(x, out):
    """Numba's warp reduction, ported: shuffle_down to lane 0, one atomic per warp."""
    gpu.work_size(x)
    i = gpu.get_global_id(0)
    v = x[i] if i < x.shape[0] else 0.0
    offset = 16
    while offset > 0:
        v += gpu.shuffle_down(v, offset)
        offset //= 2
    if gpu.subgroup_local_id() == 0:
        gpu.atomic_add(out, 0, v)


def test_a_warp_reduction_port_sums(on):
    x = np.random.default_rng(2).random(100_000)
    out = np.zeros(1)
    warp_sums[on](x, out)
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-12)


def test_a_2d_launch_runs_subgroups_over_the_linear_local_id(on):
    @kernel
    def lanes_2d(out):
        gpu.work_size(out)
        j, k = gpu.global_ids(2)
        lane = gpu.subgroup_local_id()
        total = gpu.subgroup_add(1)
        if j < out.shape[0] and k < out.shape[1]:
            out[j, k] = lane * 100 + total

    out = np.zeros((16, 64), np.int32)
    lanes_2d[on](out)
    # groups of (32, 8): a row of 32 work items along dimension 0 (k) is one subgroup
    np.testing.assert_array_equal(out, (np.arange(64) % 32) * 100 + 32 + np.zeros((16, 1), np.int32))


def test_subgroup_ops_are_refused_behind_a_bounds_guard_also_through_a_helper():
    x = np.zeros(64, np.float32)

    @kernel
    def in_loop(x):
        for i in range(x.shape[0]):
            x[i] = gpu.shuffle(x[i], 0)

    with pytest.raises(SyntaxError, match=r"gpu.shuffle\(\) cannot be inside a magic loop"):
        in_loop.inspect(x, backend="opencl")

    @kernel
    def helper_in_loop(x):
        for i in range(x.shape[0]):
            x[i] = _lane_sum(x[i])

    with pytest.raises(SyntaxError, match=r"gpu.subgroup_add\(\) cannot be inside a magic loop"):
        helper_in_loop.inspect(x, backend="opencl")

    @kernel
    def built_before_the_loop(x):
        s = _lane_sum(x[0])
        for i in range(x.shape[0]):
            x[i] = _lane_sum(x[i]) + s

    with pytest.raises(SyntaxError, match=r"_lane_sum\(\) calls a subgroup operation, which cannot be inside"):
        built_before_the_loop.inspect(x, backend="opencl")


def _lane_sum(v):
    return gpu.subgroup_add(v)


def _spread(v):
    """Subgroup ops two helpers deep, beside a call of a helper that has none."""
    return _lane_sum(v) * 1000 + gpu.shuffle_xor(v, 1) + _twice(gpu.ballot(v > 3) & 1)


def _twice(v):
    return v * 2


@kernel
def via_helpers(x, out):
    gpu.work_size(x)
    i = gpu.get_global_id(0)
    v = x[i] if i < x.shape[0] else 0
    a = _spread(v)
    b = _lane_sum(v + 1)        # the same helper called from the kernel too
    if i < x.shape[0]:
        out[i, 0] = a
        out[i, 1] = b


def _via_helpers_model(x: np.ndarray) -> np.ndarray:
    padded = np.zeros(-(-len(x) // GROUP) * GROUP, x.dtype)
    padded[:len(x)] = x
    out = np.zeros((len(padded), 2), np.int64)
    for base in range(0, len(padded), W):
        run = padded[base:base + W]
        for lane in range(W):
            out[base + lane] = [run.sum() * 1000 + run[lane ^ 1] + (int(run[0] > 3) * 2), (run + 1).sum()]
    return out[:len(x)]


def test_subgroup_ops_work_in_helpers(on):
    x = np.random.default_rng(8).integers(0, 8, 1000).astype(np.int32)
    out = np.zeros((1000, 2), np.int64)
    via_helpers[on](x, out)
    np.testing.assert_array_equal(out, _via_helpers_model(x))


def test_opencl_helpers_take_the_kernels_scratch_only_where_they_reach_a_subgroup_op():
    x, out = np.zeros(64, np.int32), np.zeros((64, 2), np.int64)
    source = via_helpers.inspect(x, out, backend="opencl").source
    assert source.count("__local ulong* pg_sg_scratch)") == 2          # _spread and _lane_sum, not _twice
    assert "pyg__twice(" in source and "pg_sg_scratch);" in source
    for dialect in ("cuda", "hip"):
        assert "pg_sg_scratch" not in via_helpers.inspect(x, out, backend=dialect).source


def test_cuda_subgroup_helpers_compile(nvrtc_compile):
    x, out = np.zeros(64, np.int32), np.zeros((64, 2), np.int64)
    source = via_helpers.inspect(x, out, backend="cuda").source
    assert_cubin(nvrtc_compile(source, "sm_90", build_options(None, "cuda", False)), source)


def test_hip_subgroup_helpers_compile(hiprtc_compile):
    x, out = np.zeros(64, np.int32), np.zeros((64, 2), np.int64)
    source = via_helpers.inspect(x, out, backend="hip").source
    assert_code_object(hiprtc_compile(source, "gfx90a", list(build_options(None, "hip", False))), source)


def test_a_vector_is_refused_with_the_types_that_move():
    from pygpgpu import float2

    @kernel
    def vec(x):
        gpu.work_size(x)
        i = gpu.get_global_id(0)
        v = gpu.shuffle(float2(1.0, 2.0), 0)
        if i < x.shape[0]:
            x[i] = v.x

    with pytest.raises(TypeError, match="moves one number"):
        vec.inspect(np.zeros(4, np.float32), backend="opencl")


def test_an_opencl_group_past_the_emulations_scratch_is_refused():
    x = np.zeros(4096)
    with pytest.raises(ValueError, match="at most 1024 work items per group"):
        warp_sums[first_device("opencl").selector][(4096, 2048)](x, np.zeros(1))


def test_on_the_host_a_subgroup_is_the_caller():
    assert gpu.subgroup_size() == 1 and gpu.subgroup_local_id() == 0
    assert gpu.shuffle(7, 3) == 7 and gpu.shuffle_xor(7, 1) == 7
    assert gpu.shuffle_down(2.5, 1) == 2.5 and gpu.shuffle_up(2.5, 1) == 2.5
    assert gpu.subgroup_add(4) == 4 and gpu.subgroup_min(4) == 4 and gpu.subgroup_max(4) == 4
    assert gpu.subgroup_any(1) is True and gpu.subgroup_all(0) is False
    assert gpu.ballot(True) == np.uint64(1) and gpu.ballot(False) == 0


@pytest.mark.parametrize("dtype", [np.int32, np.uint64, np.float32, np.float64])
def test_cuda_subgroup_source_compiles(nvrtc_compile, dtype):
    x, out = np.zeros(64, dtype), np.zeros((64, 12))
    source = every_op.inspect(x, out, backend="cuda").source
    assert "__shfl_down_sync(0xffffffffu" in source and "__ballot_sync" in source
    ptx = nvrtc_compile(source, "compute_90", build_options(None, "cuda", False)).decode(errors="replace")
    assert "shfl.sync.bfly" in ptx and "vote.sync.ballot" in ptx
    assert_cubin(nvrtc_compile(source, "sm_90", build_options(None, "cuda", False)), source)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1030"])
def test_hip_subgroup_source_compiles(hiprtc_compile, arch):
    x, out = np.zeros(64, np.float32), np.zeros((64, 12))
    source = every_op.inspect(x, out, backend="hip").source
    assert "__shfl_xor(" in source and "warpSize" in source
    assert_code_object(hiprtc_compile(source, arch, list(build_options(None, "hip", False))), source)


@pytest.mark.parametrize("dialect", ["opencl", "cuda", "hip"])
def test_a_subgroup_kernel_keeps_every_work_item(dialect):
    """No early return for the work items past gpu.work_size's extent: every lane must reach each
    exchange (on a GPU a lane that returned would leave a warp's *_sync or a barrier waiting).
    PoCL happens to tolerate it, so the generated code itself is checked."""
    x, out = np.zeros(100, np.int32), np.zeros((100, 12))
    source = every_op.inspect(x, out, backend=dialect).source
    assert "return;" not in source.split("every_op(", 1)[1]


def _wavefront_size(code: bytes) -> int:
    """The wavefront size an AMDGPU code object's kernel metadata (msgpack) declares."""
    key = b".wavefront_size"
    at = code.find(key)
    assert at >= 0, "no .wavefront_size in the code object's metadata"
    return code[at + len(key)]         # a msgpack positive fixint: 32 or 64


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64])
@pytest.mark.parametrize("arch, options, lanes", [("gfx90a", [], 64), ("gfx1030", [], 32),
                                                  ("gfx1030", ["-mwavefrontsize64"], 64)])
def test_hip_subgroups_follow_the_wavefront(hiprtc_compile, dtype, arch, options, lanes):
    """CDNA (gfx90a) runs wavefronts of 64: the reductions' butterfly starts at warpSize / 2, the
    shuffles take warpSize as their width, and gpu.ballot keeps all 64 bits of __ballot."""
    x, out = np.zeros(64, dtype), np.zeros((64, 12))
    source = every_op.inspect(x, out, backend="hip").source
    assert "return warpSize;" in source and "for (int s = warpSize / 2;" in source
    assert "unsigned long long pg_sg_ballot_int(int p) { return (unsigned long long)__ballot(p); }" in source
    assert "(int)__lane_id()" in source and "& 31" not in source.split("every_op(", 1)[0]
    code = hiprtc_compile(source, arch, list(build_options(None, "hip", False)) + options)
    assert_code_object(code, source)
    assert _wavefront_size(code) == lanes


def test_subgroup_helpers_in_the_debug_mode(on):
    """The debug mode's error buffer and OpenCL's scratch are both hidden helper parameters."""
    checked = kernel(debug=True)(via_helpers.__wrapped__)
    x = np.random.default_rng(8).integers(0, 8, 1000).astype(np.int32)
    out = np.zeros((1000, 2), np.int64)
    checked[on](x, out)
    np.testing.assert_array_equal(out, _via_helpers_model(x))


@kernel
def xor_masks(x, out):
    gpu.work_size(x)
    i = gpu.get_global_id(0)
    v = x[i] if i < x.shape[0] else -1
    a = gpu.shuffle_xor(v, 16)
    b = gpu.shuffle_xor(v, 33)          # lane ^ 33 is past the subgroup: the caller's own (CUDA, HIP)
    if i < x.shape[0]:
        out[i, 0] = a
        out[i, 1] = b


def test_a_xor_mask_past_the_subgroup_gives_the_callers_own_value(on):
    x = np.arange(200, dtype=np.int64) * 7
    out = np.zeros((200, 2), np.int64)
    xor_masks[on](x, out)
    lanes = np.arange(200)
    partner = np.where(lanes ^ 16 < 200, (lanes ^ 16) * 7, -1)
    np.testing.assert_array_equal(out, np.stack([partner, x], axis=1))


def test_opencl_helpers_with_the_scratch_are_always_inlined():
    # PoCL 3.1 ran them, left as calls, with wrong sums in about one launch of four
    x, out = np.zeros(64, np.int32), np.zeros((64, 2), np.int64)
    heads = [line for line in via_helpers.inspect(x, out, backend="opencl").source.splitlines()
             if line.lstrip().startswith(("__attribute__", "static inline")) and "pyg__" in line]
    assert all(("pg_sg_scratch" in h) == h.startswith("__attribute__((always_inline))") for h in heads), heads
    assert any("pg_sg_scratch" in h for h in heads) and any("pg_sg_scratch" not in h for h in heads)
