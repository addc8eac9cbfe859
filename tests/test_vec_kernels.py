"""@kernel code using vectors, funcs.* and gpu.*: executed on each backend with a device and
compared with the same Python function run on the host (or numpy); every kernel is also
compiled for CUDA (NVRTC) and HIP (hiprtc)."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import funcs, gpu
from pygpgpu_core.vec_types import double3, float2, float3, float4, float8, int4
from pygpgpu_translate import kernel
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture


@kernel
def normalize_all(vecs, out):
    for i, v in enumerate(vecs):          # 1D: index + float4 value snapshot
        out[i] = funcs.normalize(v)


@kernel
def histogram(data, counts):
    gpu.work_size(data)
    i = gpu.get_global_id(0)
    gpu.atomic_add(counts, data[i], 1)


@kernel
def block_sum(x, partial):
    gpu.work_size(x)
    tile = gpu.local_array(64, np.int32)
    lid = gpu.get_local_id(0)
    tile[lid] = x[gpu.get_global_id(0)]
    gpu.barrier(gpu.LOCAL)
    s = 32
    while s > 0:
        if lid < s:
            tile[lid] += tile[lid + s]
        gpu.barrier(gpu.LOCAL)
        s //= 2
    if lid == 0:
        partial[gpu.get_group_id(0)] = tile[0]


@kernel
def vector_mix(vecs, out):
    for i, v in enumerate(vecs):
        w = float4(v.xy, 1.0, 2.0) * 2.0 + v.wzyx
        c = funcs.cross(v.xyz, float3(0.0, 0.0, 1.0))
        d = funcs.dot(w, v) + funcs.length(c)
        out[i] = funcs.clamp(funcs.mix(w, float4(d), 0.25), -4.0, 40.0) + float4(c, funcs.distance(v.xy, float2(1.0)))


@kernel
def atomics_old_values(counters, olds, mins, maxs, fsum, values):
    gpu.work_size(values)
    i = gpu.get_global_id(0)
    olds[i] = gpu.atomic_inc(counters, i % 4)
    gpu.atomic_min(mins, i % 2, values[i])
    gpu.atomic_max(maxs, i % 2, values[i])
    gpu.atomic_add(fsum, 0, 0.5)


@kernel
def packed_float3_rows(pts, out):
    for i, p in enumerate(pts):           # (N, 3) float32: packed rows
        out[i] = funcs.normalize(p) * 2.0 + p.zxy


@kernel
def scale_structured(v, out):
    for i in range(v.shape[0]):           # arrays of a vector dtype
        out[i] = v[i] * 2.0 + 1.0


@kernel
def int_vector_ops(v, out):
    for i in range(v.shape[0]):
        w = int4(v[i, 0], v[i, 1], v[i, 2], v[i, 3])
        r = (w // 3) + (w % 3) * 10 + (w << 2) + (w & 6) - (w ^ 5)
        out[i, 0] = r.x
        out[i, 1] = r.y
        out[i, 2] = r.z
        out[i, 3] = r.w


@kernel
def wide_vectors(v, out):
    for i, x in enumerate(v):
        out[i] = funcs.clamp(x * 3.0 - 1.0, 0.0, 1.0) + funcs.mix(x, x.s76543210, 0.5)


@kernel
def double_geometry(v, out):
    for i, x in enumerate(v):
        out[i] = funcs.cross(x, double3(0.0, 1.0, 0.0)) + funcs.reflect(x, double3(1.0, 0.0, 0.0))


def _rows(arr, cls):
    return [cls(r) for r in arr]


def test_normalize_all_matches_host(backend):
    vecs = np.random.default_rng(1).standard_normal((1000, 4)).astype(np.float32)
    out = np.zeros_like(vecs)
    normalize_all[backend](vecs, out)
    want = np.zeros_like(vecs)
    normalize_all.py_func(_rows(vecs, float4), want)  # the same function as plain Python
    np.testing.assert_allclose(out, want, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(want, funcs.normalize(vecs), rtol=1e-6)


def test_normalize_all_zero_vector_unchanged(backend):
    vecs = np.zeros((4, 4), np.float32)
    vecs[1] = (1, 2, 2, 4)
    out = np.full_like(vecs, 7)
    normalize_all[backend](vecs, out)
    np.testing.assert_array_equal(out[0], [0, 0, 0, 0])


def test_histogram_exact_counts_under_contention(backend):
    data = np.random.default_rng(2).integers(0, 16, 100_000).astype(np.int32)
    counts = np.zeros(16, np.int32)
    histogram[backend](data, counts)
    host = np.zeros(16, np.int32)
    for x in data[:2000]:
        gpu.atomic_add(host, x, 1)  # host semantics agree with bincount
    np.testing.assert_array_equal(host, np.bincount(data[:2000], minlength=16))
    np.testing.assert_array_equal(counts, np.bincount(data, minlength=16))


def test_tiled_block_sum_with_local_memory_and_barriers(backend):
    x = np.random.default_rng(3).integers(-1000, 1000, 64 * 40).astype(np.int32)
    partial = np.zeros(40, np.int32)
    block_sum[backend, (x.size, 64)](x, partial)
    np.testing.assert_array_equal(partial, x.reshape(40, 64).sum(axis=1))


def test_vector_construction_swizzles_and_funcs_match_host(backend):
    vecs = np.random.default_rng(4).uniform(-2, 2, (256, 4)).astype(np.float32)
    out = np.zeros_like(vecs)
    vector_mix[backend](vecs, out)
    want = np.zeros_like(vecs)
    vector_mix.py_func(_rows(vecs, float4), want)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_atomics_return_old_values_in_kernels(backend):
    n = 4096
    values = np.random.default_rng(5).integers(-10**6, 10**6, n).astype(np.int32)
    counters = np.zeros(4, np.uint32)
    olds = np.zeros(n, np.uint32)
    mins = np.full(2, 2**31 - 1, np.int32)
    maxs = np.full(2, -(2**31), np.int32)
    fsum = np.zeros(1, np.float32)
    atomics_old_values[backend](counters, olds, mins, maxs, fsum, values)
    np.testing.assert_array_equal(counters, [n // 4] * 4)
    for s in range(4):
        np.testing.assert_array_equal(np.sort(olds[s::4]), np.arange(n // 4))
    np.testing.assert_array_equal(mins, [values[0::2].min(), values[1::2].min()])
    np.testing.assert_array_equal(maxs, [values[0::2].max(), values[1::2].max()])
    assert fsum[0] == n * 0.5


def test_packed_float3_rows(backend):
    pts = np.random.default_rng(6).uniform(0.1, 2, (100, 3)).astype(np.float32)
    out = np.zeros_like(pts)
    packed_float3_rows[backend](pts, out)
    want = np.zeros_like(pts)
    packed_float3_rows.py_func(_rows(pts, float3), want)
    np.testing.assert_allclose(out, want, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("cls", [float4, float3], ids=["float4", "float3-16-bytes"])
def test_arrays_of_vector_dtype(backend, cls):
    v = np.zeros(37, cls.dtype)
    for f in cls.fields:
        v[f] = np.random.default_rng(7).uniform(-5, 5, 37)
    out = np.zeros_like(v)
    scale_structured[backend](v, out)
    for f in cls.fields:
        np.testing.assert_allclose(out[f], v[f] * np.float32(2) + np.float32(1), rtol=1e-6)


def test_int_vector_python_floor_semantics(backend):
    v = np.random.default_rng(8).integers(-50, 50, (64, 4)).astype(np.int32)
    out = np.zeros_like(v)
    int_vector_ops[backend](v, out)
    np.testing.assert_array_equal(out, (v // 3) + (v % 3) * 10 + (v << 2) + (v & 6) - (v ^ 5))
    host = int4(*v[0].tolist())  # the host vector class agrees
    r = (host // 3) + (host % 3) * 10 + (host << 2) + (host & 6) - (host ^ 5)
    assert r.tolist() == out[0].tolist()


def test_wide_vectors_and_swizzle(backend):
    v = np.random.default_rng(9).uniform(0, 1, (40, 8)).astype(np.float32)
    out = np.zeros_like(v)
    wide_vectors[backend](v, out)
    want = np.zeros_like(v)
    wide_vectors.py_func(_rows(v, float8), want)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def test_double_vectors_cross_reflect(backend):
    v = np.random.default_rng(10).uniform(-1, 1, (40, 3))
    out = np.zeros_like(v)
    double_geometry[backend](v, out)
    want = np.zeros_like(v)
    double_geometry.py_func(_rows(v, double3), want)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-14)


_CASES = {
    "normalize_all": (normalize_all, lambda: (np.zeros((8, 4), np.float32), np.zeros((8, 4), np.float32))),
    "histogram": (histogram, lambda: (np.zeros(8, np.int32), np.zeros(4, np.int32))),
    "block_sum": (block_sum, lambda: (np.zeros(128, np.int32), np.zeros(2, np.int32))),
    "vector_mix": (vector_mix, lambda: (np.zeros((8, 4), np.float32), np.zeros((8, 4), np.float32))),
    "atomics_old_values": (atomics_old_values, lambda: (
        np.zeros(4, np.uint32), np.zeros(8, np.uint32), np.zeros(2, np.int32), np.zeros(2, np.int32),
        np.zeros(1, np.float32), np.zeros(8, np.int32))),
    "packed_float3_rows": (packed_float3_rows, lambda: (np.zeros((8, 3), np.float32), np.zeros((8, 3), np.float32))),
    "scale_structured": (scale_structured, lambda: (np.zeros(8, float4.dtype), np.zeros(8, float4.dtype))),
    "int_vector_ops": (int_vector_ops, lambda: (np.zeros((8, 4), np.int32), np.zeros((8, 4), np.int32))),
    "wide_vectors": (wide_vectors, lambda: (np.zeros((8, 8), np.float32), np.zeros((8, 8), np.float32))),
    "double_geometry": (double_geometry, lambda: (np.zeros((8, 3)), np.zeros((8, 3)))),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_kernels_compile_for_cuda_and_hip(name, rtc_compile):
    dialect, compile_ = rtc_compile
    k, args = _CASES[name]
    src = k.inspect(*args(), backend=dialect).source
    assert compile_(src)
