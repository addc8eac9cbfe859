"""@kernel functions on the webgpu backend: translated to WGSL by the plug-in's target
(pygpgpu_webgpu._target, registered through the pygpgpu.targets entry point and written with the
public pygpgpu_translate.target API only) and run on lavapipe; each compared with the same Python
function run on the host. What WGSL cannot express is refused while the kernel is written, naming
the construct and the backends that have it."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pygpgpu import funcs, gpu, kernel
from pygpgpu_core.vec_types import float2, float3, float4, float8, int4

from webgpu_support import webgpu_device


@pytest.fixture(scope="module")
def dev():
    return webgpu_device()


def _run_both(k, *args, config=None):
    """The kernel on the webgpu device and its Python function on copies; returns both arg lists."""
    host = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    k.py_func(*host)
    (k["webgpu"] if config is None else k["webgpu"][config])(*args)
    return list(args), host


def _assert_same(got, want):
    for g, w in zip(got, want):
        if isinstance(g, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


@kernel
def saxpy(x, y, out, alpha):
    for i in range(out.shape[0]):
        out[i] = alpha * x[i] + y[i]


def test_saxpy_matches_the_host(dev):
    rng = np.random.default_rng(0)
    n = 1001
    got, want = _run_both(saxpy, rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
                          np.zeros(n, np.float32), 2.5)
    _assert_same(got, want)


def test_the_source_binds_arrays_and_packs_values_into_one_uniform(dev):
    x = np.ones(8, np.float32)
    src = saxpy.inspect(x, x, x, np.float32(1), backend="webgpu").source
    assert "@group(0) @binding(0) var<storage, read> x: array<f32>;" in src
    assert "var<storage, read_write> out: array<f32>;" in src
    assert "var<uniform> pg_values: pg_Values;" in src and "var alpha = pg_values.alpha;" in src
    assert "@compute @workgroup_size(64, 1, 1)" in src and "#line" not in src


def _scale(a, b):
    return a * b + 1.0


@kernel
def two_d(m, out, s):
    for i, j in np.ndindex(out.shape):
        out[i, j] = _scale(m[i, j], s) + i - j


def test_a_two_dimensional_domain_and_a_helper(dev):
    m = np.arange(5 * 7, dtype=np.float32).reshape(5, 7)
    got, want = _run_both(two_d, m, np.zeros((5, 7), np.float32), np.float32(0.5))
    _assert_same(got, want)


@kernel
def bits(a, out, flag):
    for i in range(out.shape[0]):
        v = a[i] * np.uint32(3)
        if flag:
            v = v ^ np.uint32(0xFF)
        out[i] = v >> np.uint32(1)


@pytest.mark.parametrize("flag", [True, False])
def test_uint32_arithmetic_and_a_bool_value(dev, flag):
    a = np.arange(100, dtype=np.uint32) * 977
    got, want = _run_both(bits, a, np.zeros_like(a), flag)
    np.testing.assert_array_equal(got[1], want[1])


@kernel
def loops(x, out):
    for i in range(out.shape[0]):
        s = 0.0
        for k in range(4):
            s += x[i] * k
        n = 0
        while s > 10.0 and n < 5:
            s = s - 10.0
            n += 1
        out[i] = s + n + math.sqrt(x[i])


def test_inner_loops_while_and_math(dev):
    got, want = _run_both(loops, np.linspace(0, 9, 50).astype(np.float32), np.zeros(50, np.float32))
    _assert_same(got, want)


@kernel
def group_sum(x, out):
    gpu.work_size(x)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    tile = gpu.local_array(64, np.float32)
    tile[lid] = 0.0
    if i < x.shape[0]:
        tile[lid] = x[i]
    gpu.barrier()
    if lid == 0:
        s = 0.0
        for k in range(64):
            s += tile[k]
        out[gpu.get_group_id(0)] = s + gpu.get_local_size(0) * 0


def test_workgroup_memory_and_a_barrier(dev):
    x = np.arange(200, dtype=np.float32)
    out = np.zeros(4, np.float32)
    group_sum["webgpu"](x, out)
    np.testing.assert_allclose(out, [x[k * 64:(k + 1) * 64].sum() for k in range(4)])


def test_device_arrays_run_without_copies(dev):
    import pygpgpu.numpy as gnp
    x = gnp.asarray(np.arange(300, dtype=np.float32), device="webgpu")
    out = gnp.empty_like(x)
    before = gnp.transfer_stats()
    saxpy["webgpu"](x, x, out, 3.0)
    assert gnp.transfer_stats() == before                  # no host-device copy at all
    np.testing.assert_allclose(np.asarray(out), np.arange(300, dtype=np.float32) * 4)


def test_a_local_size_past_the_adapters_limit_is_a_clear_error(dev):
    from pygpgpu_webgpu._limits import LimitExceeded
    x = np.ones(4096, np.float32)
    with pytest.raises(LimitExceeded, match="maxComputeInvocationsPerWorkgroup"):
        saxpy["webgpu"][(4096, 2048)](x, x, x.copy(), 1.0)


# ---- refused while the kernel is written --------------------------------------------------------

@kernel
def doubled(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 2


@kernel
def printing(x):
    for i in range(x.shape[0]):
        print(x[i])


def _first(a, i):
    return a[i]


@kernel
def array_helper(x, out):
    for i in range(out.shape[0]):
        out[i] = _first(x, i)


@kernel
def masked(m, out):
    for i in range(out.shape[0]):
        if m[i]:
            out[i] = 1.0


@kernel
def counting(a, total):
    for i in range(a.shape[0]):
        gpu.atomic_add(total, 0, a[i])


@pytest.mark.parametrize("k, args, construct", [
    (doubled, (np.ones(4), np.zeros(4)), "float64 type"),
    (doubled, (np.ones(4, np.int64), np.zeros(4, np.int64)), "int64 type"),
    (printing, (np.ones(4, np.float32),), "print()"),
    (array_helper, (np.ones(4, np.float32), np.zeros(4, np.float32)), "helpers cannot take arrays"),
    (counting, (np.ones(4, np.float32), np.zeros(1, np.float32)), "atomics on float"),
], ids=["float64", "int64", "print", "array-helper", "float-atomics"])
def test_what_wgsl_lacks_is_refused_naming_it_and_the_backends_that_have_it(k, args, construct):
    pytest.importorskip("pygpgpu_webgpu")
    from pygpgpu_webgpu._target import WGSLUnsupported
    with pytest.raises(WGSLUnsupported) as err:
        k.inspect(*args, backend="wgsl")
    message = str(err.value)
    assert construct in message and "cuda, hip and opencl have it" in message


@kernel
def narrow_mix(m, b, c, s, out_m, out_b, out_c, out_s):
    for i in range(out_b.shape[0]):
        out_b[i] = b[i] * np.uint8(3) + np.uint8(7)       # wraps at 256, as numpy's uint8
        out_c[i] = c[i] * np.int8(5)                      # wraps to negative
        out_s[i] = s[i] - np.int16(30000)
        out_m[i] = m[i] and b[i] > 100
        if m[i]:
            out_b[i] = max(out_b[i], b[i])


def test_bool_and_8_and_16_bit_arrays_are_packed_in_words_and_match_the_host(dev):
    """numpy keeps these at their own size and WGSL's storage holds 32-bit words: each element is
    read from its word and written with atomics that keep its neighbours (written by other work
    items), at lengths that end inside a word."""
    rng = np.random.default_rng(7)
    for n in (1, 3, 6, 1001):
        m = rng.random(n) < 0.5
        b = rng.integers(0, 256, n).astype(np.uint8)
        c = rng.integers(-128, 128, n).astype(np.int8)
        s = rng.integers(-32768, 32768, n).astype(np.int16)
        args = (m, b, c, s, np.zeros(n, bool), np.zeros(n, np.uint8), np.zeros(n, np.int8), np.zeros(n, np.int16))
        with np.errstate(over="ignore"):
            got, want = _run_both(narrow_mix, *args)
        for g, w in zip(got[4:], want[4:]):
            np.testing.assert_array_equal(g, w)
    got, want = _run_both(masked, np.array([True, False, True, True, False]), np.zeros(5, np.float32))
    np.testing.assert_array_equal(got[1], want[1])


@kernel
def choose(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] if x[i] > 0 else -2.0 * x[i]


@kernel
def stencil(x, out):
    for i in range(1, out.shape[0] - 1):
        out[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1]


@kernel
def stepped(x, out, step):
    for i in range(out.shape[0]):
        s = 0.0
        for k in range(0, 10, step):
            s += x[i] + k
        out[i] = s


def test_conditional_expressions_unproven_index_signs_and_runtime_steps(dev):
    x = np.linspace(-3, 3, 61).astype(np.float32)
    _assert_same(*_run_both(choose, x, np.zeros_like(x)))
    _assert_same(*_run_both(stencil, x, np.zeros_like(x)))
    for step in (3, -2):
        _assert_same(*_run_both(stepped, x, np.zeros_like(x), step))


@kernel
def python_division(a, b, q, r, x, y, fq, fr):
    for i in range(q.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        fq[i] = x[i] // y[i]
        fr[i] = x[i] % y[i]


def test_floor_division_and_modulo_follow_python(dev):
    """Python's // and % (floored, the sign of the divisor), on int32, uint32 and float32; an
    integer division by zero gives 0 as on the other backends (numpy's result)."""
    rng = np.random.default_rng(3)
    n = 300
    for itype in (np.int32, np.uint32):
        low = 0 if itype is np.uint32 else -60
        a = rng.integers(low, 60, n).astype(itype)
        b = rng.integers(low // 8, 8, n).astype(itype)
        a[:3] = [np.iinfo(itype).min, np.iinfo(itype).max, 7]
        b[:3] = [itype(1) if itype is np.uint32 else -1, 0, 0]
        x = (rng.standard_normal(n) * 20).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        outs = [np.zeros(n, itype), np.zeros(n, itype), np.zeros(n, np.float32), np.zeros(n, np.float32)]
        python_division["webgpu"](a, b, outs[0], outs[1], x, y, outs[2], outs[3])
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(outs[0], a // b)
            np.testing.assert_array_equal(outs[1], a % b)
            np.testing.assert_allclose(outs[2], x // y, rtol=1e-6)
            np.testing.assert_allclose(outs[3], x % y, rtol=1e-5, atol=1e-5)


@kernel
def histogram(v, counts, extremes, bits, claimed):
    for i in range(v.shape[0]):
        gpu.atomic_add(counts, v[i] % 8, 1)
        gpu.atomic_max(extremes, 0, v[i])
        gpu.atomic_min(extremes, 1, v[i])
        gpu.atomic_or(bits, 0, np.uint32(1) << np.uint32(v[i] % 32))
        gpu.atomic_inc(bits, 1)
        gpu.atomic_cmpxchg(claimed, v[i], 0, i + 1)


def test_atomics_on_int32_and_uint32_arrays(dev):
    rng = np.random.default_rng(4)
    v = rng.integers(-1000, 1000, 5000).astype(np.int32)
    counts = np.zeros(8, np.int32)
    extremes = np.array([-2**31, 2**31 - 1], np.int32)
    bits = np.zeros(2, np.uint32)
    claimed = np.zeros(2000, np.int32)
    histogram["webgpu"](v, counts, extremes, bits, claimed)
    np.testing.assert_array_equal(counts, np.bincount(v % 8, minlength=8))
    assert extremes.tolist() == [v.max(), v.min()]
    assert bits[0] == np.bitwise_or.reduce(np.uint32(1) << (v % 32).astype(np.uint32)) and bits[1] == v.size
    # each value's slot holds exactly one claimant, and one with that value
    hit = np.flatnonzero(claimed)
    assert sorted(hit.tolist()) == sorted(set((v % 2000).tolist()))
    assert all(v[claimed[h] - 1] % 2000 == h for h in hit)


@kernel
def atomic_reads(total, out):
    for i in range(out.shape[0]):
        gpu.atomic_add(total, 0, np.uint32(1))
        out[i] = total[1] + np.uint32(i)
        if i == 3:
            total[2] = np.uint32(9)


def test_plain_reads_and_writes_of_an_atomic_array(dev):
    """An array some atomic updates is atomic<T> in WGSL: its plain reads and writes become
    atomicLoad/atomicStore."""
    total = np.array([0, 5, 0], np.uint32)
    out = np.zeros(100, np.uint32)
    got, want = _run_both(atomic_reads, total, out)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    src = atomic_reads.inspect(total, out, backend="webgpu").source
    assert "array<atomic<u32>>" in src and "atomicLoad(&total[" in src and "atomicStore(&total[" in src


@kernel
def local_histogram(v, counts):
    gpu.work_size(v)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    h = gpu.local_array(8, np.int32)
    if lid < 8:
        h[lid] = 0
    gpu.barrier()
    if i < v.shape[0]:
        gpu.atomic_add(h, v[i] % 8, 1)
    gpu.barrier()
    if lid < 8:
        gpu.atomic_add(counts, lid, h[lid])


def test_atomics_on_a_workgroup_array(dev):
    v = np.random.default_rng(5).integers(0, 100, 64 * 20 + 7).astype(np.int32)
    counts = np.zeros(8, np.int32)
    local_histogram["webgpu"](v, counts)
    np.testing.assert_array_equal(counts, np.bincount(v % 8, minlength=8))


@kernel
def half_values(x, out, a, b, n, s):
    for i in range(out.shape[0]):
        out[i] = x[i] * a + b + np.float16(1.5) + np.float16(n) + np.float16(s)


def test_float16_where_the_adapter_has_shader_f16_and_mixed_width_values(dev):
    if not dev.fp16:
        pytest.skip(f"{dev.selector} ({dev.name}) has no shader-f16")
    x = np.arange(16, dtype=np.float16)
    # two f16 values side by side: WGSL packs them at offsets 8 and 10 of the uniform struct
    got, want = _run_both(half_values, x, np.zeros_like(x), np.float16(2), np.float16(-0.5), np.int32(3),
                          np.float32(0.25))
    np.testing.assert_array_equal(got[1], want[1])


def test_pygpgpu_backend_webgpu_makes_it_the_default(dev, monkeypatch):
    from pygpgpu_core import registry
    from pygpgpu_webgpu import _program
    monkeypatch.setenv("PYGPGPU_BACKEND", "webgpu")
    launched = []
    real = _program.WebGPUKernel.launcher
    monkeypatch.setattr(_program.WebGPUKernel, "launcher",
                        lambda self, kinds: launched.append(self.name) or real(self, kinds))
    assert registry.select_device(None) is dev
    x = np.arange(70, dtype=np.float32)
    out = np.zeros_like(x)

    @kernel
    def triple(x, out):
        for i in range(out.shape[0]):
            out[i] = 3 * x[i]

    triple(x, out)                                         # no bracket: the variable's device
    np.testing.assert_array_equal(out, 3 * x)
    assert launched and set(launched) == {"triple"}          # built on the webgpu device


@kernel
def scale_into(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 2


def test_one_array_read_and_written_through_two_parameters(dev):
    """WebGPU refuses one buffer bound read-only and writable in a dispatch; k(x, x) must still
    read and write one array, as on the other backends."""
    import pygpgpu.numpy as gnp
    x = np.arange(10, dtype=np.float32)
    scale_into["webgpu"](x, x)
    np.testing.assert_array_equal(x, np.arange(10, dtype=np.float32) * 2)
    g = gnp.asarray(np.arange(5, dtype=np.float32), device="webgpu")
    for _ in range(2):                                     # the second call reuses the read_write variant
        scale_into["webgpu"](g, g)
    np.testing.assert_array_equal(np.asarray(g), np.arange(5, dtype=np.float32) * 4)


@kernel
def group_of(out):
    gpu.work_size(out)
    i = gpu.get_global_id(0)
    if i < out.shape[0]:
        out[i] = gpu.get_group_id(0) * 1000 + gpu.get_local_id(0)


def test_a_launch_past_the_workgroup_limit_in_x_is_folded_into_z(dev):
    """More workgroups in x than the adapter dispatches (65535): the runtime folds x into z and the
    kernel unfolds its ids; a 1-D array of 4.2M elements runs like a small one."""
    n = dev.limits.max_compute_workgroups_per_dimension * 64 + 100
    out = np.zeros(n, np.int32)
    group_of["webgpu"](out)
    i = np.arange(n)
    np.testing.assert_array_equal(out, (i // 64) * 1000 + i % 64)
    x = np.ones(n, np.float32)
    got = np.zeros(n, np.float32)
    scale_into["webgpu"](x, got)
    assert np.all(got == 2)


def test_the_dialect_fingerprint_changes_with_its_module_text():
    pytest.importorskip("pygpgpu_webgpu")
    from pygpgpu_translate.target import OpenCL
    from pygpgpu_webgpu._target import WGSL
    assert WGSL().fingerprint() != OpenCL.fingerprint(WGSL())      # the module's text is in it


@kernel
def remainders(x, y, out, flags):
    for i in range(out.shape[0]):
        out[i] = math.fmod(x[i], y[i])
        flags[i] = int(math.isnan(x[i])) + 2 * int(math.isinf(x[i])) + 4 * int(math.isfinite(x[i]))


def test_fmod_and_the_float_classifications(dev):
    x = np.array([5.5, -5.5, 7.0, np.nan, np.inf, -np.inf, 0.0, 1e-40], np.float32)
    y = np.array([2.0, 2.0, -3.0, 1.0, 1.0, 1.0, 3.0, 1.0], np.float32)
    out, flags = np.zeros(8, np.float32), np.zeros(8, np.int32)
    remainders["webgpu"](x, y, out, flags)
    finite = [0, 1, 2, 6]
    np.testing.assert_array_equal(out[finite], np.fmod(x[finite], y[finite]))
    np.testing.assert_array_equal(flags, np.isnan(x) + 2 * np.isinf(x) + 4 * np.isfinite(x))


@kernel
def local_ids(out):
    for i in range(out.shape[0]):
        out[i] = gpu.get_local_id(0) + 100 * gpu.get_local_size(0)


@pytest.mark.parametrize("local", [16, 128])
def test_a_bracket_local_size_builds_the_kernel_for_it(dev, local):
    out = np.zeros(300, np.int32)
    local_ids["webgpu"][(300, local)](out)
    np.testing.assert_array_equal(out, np.arange(300) % local + 100 * local)


@kernel
def back_to_front(x, out):
    for i in range(out.shape[0]):
        out[-1 - i] = x[i]


def test_negative_indices_wrap_as_in_python(dev):
    x = np.arange(37, dtype=np.float32)
    got, want = _run_both(back_to_front, x, np.zeros_like(x))
    np.testing.assert_array_equal(got[1], want[1])


@kernel
def error_function(x, out):
    for i in range(out.shape[0]):
        out[i] = math.erf(x[i])


def test_a_math_function_wgsl_lacks_is_refused_by_name():
    pytest.importorskip("pygpgpu_webgpu")
    from pygpgpu_webgpu._target import WGSLUnsupported
    x = np.ones(4, np.float32)
    with pytest.raises(WGSLUnsupported, match=r"math function erf\(\); cuda, hip and opencl have it"):
        error_function.inspect(x, x, backend="wgsl")


# ---- min/max/abs, math, helpers, vectors ----------------------------------------------------------

def _clamped(v, lo, hi):
    return min(max(v, lo), hi)


@kernel
def builtins_and_helpers(a, b, x, y, oi, of):
    for i in range(oi.shape[0]):
        oi[i] = (_clamped(a[i], -5, 5) + abs(b[i]) + max(a[i], b[i]) * 2 + funcs.min(a[i], b[i]) + a[i] ** 2
                 + (a[i] << 2) + (b[i] >> 1))
        of[i] = (min(x[i], y[i]) + max(x[i], 0.5) + abs(y[i]) + math.sqrt(abs(x[i])) + math.exp(-x[i] * x[i])
                 + math.atan2(x[i], y[i]) + funcs.clamp(x[i], -1.0, 1.0) + math.floor(y[i])
                 + funcs.mix(x[i], y[i], 0.25) + _clamped(x[i], -0.5, 0.5))


def test_min_max_abs_powers_shifts_math_and_helpers(dev):
    rng = np.random.default_rng(6)
    n = 300
    a = rng.integers(-50, 50, n).astype(np.int32)
    b = rng.integers(-7, 7, n).astype(np.int32)
    x, y = rng.standard_normal((2, n)).astype(np.float32)
    got, want = _run_both(builtins_and_helpers, a, b, x, y, np.zeros(n, np.int32), np.zeros(n, np.float32))
    np.testing.assert_array_equal(got[4], want[4])
    np.testing.assert_allclose(got[5], want[5], rtol=1e-5, atol=1e-5)


@kernel
def vector_rows(v, out, iv, iout):
    for i in range(v.shape[0]):
        p = float4(v[i, 0], v[i, 1], v[i, 2], v[i, 3])
        w = float4(p.xy, 1.0, 2.0) * 2.0 + p.wzyx
        c = funcs.cross(p.xyz, float3(0.0, 0.0, 1.0))
        d = funcs.dot(w, p) + funcs.length(c)
        r = funcs.clamp(funcs.mix(w, float4(d), 0.25), -4.0, 40.0) + float4(c, funcs.distance(p.xy, float2(1.0)))
        out[i, 0] = r.x
        out[i, 1] = r.y
        out[i, 2] = r.z
        out[i, 3] = r.w
        k = int4(iv[i, 0], iv[i, 1], iv[i, 2], iv[i, 3])
        s = (k // 3) + (k % 3) * 10 + (k << 2) + (k & 6) - (k ^ 5)
        iout[i, 0] = s.x
        iout[i, 1] = s.y
        iout[i, 2] = s.z
        iout[i, 3] = s.w


def test_vectors_swizzles_funcs_and_python_division(dev):
    rng = np.random.default_rng(7)
    v = rng.standard_normal((64, 4)).astype(np.float32)
    iv = rng.integers(-50, 50, (64, 4)).astype(np.int32)
    out, iout = np.zeros_like(v), np.zeros_like(iv)
    vector_rows["webgpu"](v, out, iv, iout)
    want = np.zeros_like(v)
    for i in range(v.shape[0]):          # the host vector classes, row by row
        p = float4(*v[i].tolist())
        w = float4(p.xy, 1.0, 2.0) * 2.0 + p.wzyx
        c = funcs.cross(p.xyz, float3(0.0, 0.0, 1.0))
        d = funcs.dot(w, p) + funcs.length(c)
        want[i] = (funcs.clamp(funcs.mix(w, float4(d), 0.25), -4.0, 40.0) + float4(c, funcs.distance(p.xy, float2(1.0)))).tolist()
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(iout, (iv // 3) + (iv % 3) * 10 + (iv << 2) + (iv & 6) - (iv ^ 5))


@kernel
def wide_vector(v, out):
    for i in range(v.shape[0]):
        w = float8(v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5], v[i, 6], v[i, 7])
        out[i] = funcs.dot(w, w)


def test_vectors_wider_than_four_are_refused_by_name():
    pytest.importorskip("pygpgpu_webgpu")
    from pygpgpu_webgpu._target import WGSLUnsupported
    with pytest.raises(WGSLUnsupported, match=r"8-wide vectors \(float8\); cuda, hip and opencl have it"):
        wide_vector.inspect(np.ones((4, 8), np.float32), np.zeros(4, np.float32), backend="wgsl")


@kernel
def float_remainders(x, y, fm, pm, fd):
    for i in range(fm.shape[0]):
        fm[i] = math.fmod(x[i], y[i])
        pm[i] = x[i] % y[i]
        fd[i] = x[i] // y[i]


def test_float_remainders_are_exact_where_wgsls_percent_is_not(dev):
    """WGSL's float % is x - y * trunc(x / y), off by the quotient's rounding (520.1797 % -5.3527455
    gave -4.3893666, numpy -4.3893747): math.fmod, % and // use the exact fmod instead. Also
    NaN/infinity operands and signed zeros, as numpy."""
    rng = np.random.default_rng(8)
    x = np.concatenate([[520.1797, 84.68, np.inf, -0.0, 6.0, -6.0, 1.0],
                        rng.uniform(-3e4, 3e4, 500)]).astype(np.float32)
    y = np.concatenate([[-5.3527455, 0.027628, 1.0, 3.0, -3.0, 3.0, np.nan],
                        rng.uniform(-10, 10, 500)]).astype(np.float32)
    outs = [np.zeros_like(x) for _ in range(3)]
    float_remainders["webgpu"](x, y, *outs)
    with np.errstate(all="ignore"):
        for got, want in zip(outs, (np.fmod(x, y), x % y, x // y)):
            np.testing.assert_array_equal(got, want)
            real = ~np.isnan(want)          # (a NaN's sign is the hardware's)
            np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]))


def test_device_array_elementwise_operations(dev):
    """gnp's generated elementwise kernels run on webgpu now that // and % and min/max are WGSL
    (reductions: test_webgpu_reductions.py)."""
    import pygpgpu.numpy as gnp
    x = np.linspace(-7, 7, 301).astype(np.float32)
    y = np.linspace(1, 4, 301).astype(np.float32)
    g, h = gnp.asarray(x, device="webgpu"), gnp.asarray(y, device="webgpu")
    np.testing.assert_allclose(np.asarray(g + h * 2), x + y * 2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gnp.sqrt(h) - gnp.abs(g)), np.sqrt(y) - np.abs(x), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(g // h), x // y)
    np.testing.assert_array_equal(np.asarray(g % h), x % y)
    np.testing.assert_array_equal(np.asarray(gnp.maximum(g, h)), np.maximum(x, y))


@kernel
def composed_and_native_math(x, y, out, fast):
    for i in range(out.shape[0]):
        out[i] = (math.log10(x[i]) + 10.0 ** (y[i] * 0.1) + math.hypot(x[i], y[i]) + math.copysign(x[i], y[i])
                  + gpu.rsqrt(x[i]) + gpu.native_exp(y[i]) + gpu.native_divide(y[i], x[i]) + gpu.native_log10(x[i])
                  + gpu.native_recip(x[i]) + gpu.native_powr(x[i], 0.5))
        fast[i] = math.copysign(0.0, y[i])


def test_math_functions_wgsl_composes_and_the_native_ones(dev):
    """log10, exp10, hypot and copysign are composed of WGSL's own functions; gpu.rsqrt and
    gpu.native_* are WGSL's functions (it has one precision)."""
    rng = np.random.default_rng(9)
    x = rng.uniform(0.1, 50, 200).astype(np.float32)
    y = rng.uniform(-5, 5, 200).astype(np.float32)
    y[:2] = [-0.0, 0.0]
    got, want = _run_both(composed_and_native_math, x, y, np.zeros_like(x), np.zeros_like(x))
    np.testing.assert_allclose(got[2], want[2], rtol=2e-5)
    np.testing.assert_array_equal(np.signbit(got[3]), np.signbit(want[3]))


def _count_down(n, step):
    total = 0
    while n > 0:            # assigns to its own parameter, as Python allows (WGSL's parameters are immutable)
        total += n
        n -= step
    return total


@kernel
def counted(x, out):
    for i in range(out.shape[0]):
        out[i] = _count_down(x[i], 3)


def test_a_helper_may_assign_to_its_parameters(dev):
    x = np.arange(-3, 40, dtype=np.int32)
    got, want = _run_both(counted, x, np.zeros_like(x))
    np.testing.assert_array_equal(got[1], want[1])


@kernel
def xor_negate_round(p, q, u, f, flags, negated, rounded):
    for i in range(u.shape[0]):
        flags[i] = p[i] ^ q[i]
        negated[i] = -u[i]
        rounded[i] = np.rint(f[i])


def test_bool_xor_unsigned_negation_and_rint(dev):
    """Three spellings WGSL lacks (^ of bools, - of a u32, rint) lowered to ones it has; the
    results are numpy's: halves round to the even neighbour, -u wraps."""
    n = 64
    rng = np.random.default_rng(4)
    p, q = rng.random(n) < 0.5, rng.random(n) < 0.5
    u = rng.integers(0, 2**32, n, dtype=np.uint32)
    f = (np.arange(n, dtype=np.float32) - 32) / 2          # every half from -16 to 15.5
    got, want = _run_both(xor_negate_round, p, q, u, f, np.zeros(n, bool), np.zeros(n, np.uint32),
                          np.zeros(n, np.float32))
    for g, w in zip(got[4:], want[4:]):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[6], np.rint(f))
