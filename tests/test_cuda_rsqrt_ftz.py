"""``gpu.rsqrt`` / ``gpu.native_rsqrt`` at float32 on CUDA: the PTX ``rsqrt.approx.ftz.f32`` (one
MUFU.RSQ, what a handwritten kernel built with ``-ftz=true`` gets), not ``rsqrtf``, which NVRTC
without ``-ftz`` wraps in a subnormal rescale (a compare and two multiplies per call). A subnormal
argument is flushed to zero there (result +inf). HIP keeps ``rsqrtf``, OpenCL ``rsqrt`` and
``native_rsqrt``, float64 the precise ``rsqrt``; normal arguments agree with numpy everywhere."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_cubin
from pygpgpu_core import gpu, registry
from pygpgpu_translate import kernel
from pygpgpu_translate._kernel import build_options

HELPER = "pg_native_rsqrt_float("
FTZ_ASM = 'asm("rsqrt.approx.ftz.f32 %0, %1;"'


@kernel
def gravity(pos, acc, eps):
    """The inner loop of n-body, plus gpu.native_rsqrt on the same value."""
    for i in range(acc.shape[0]):
        ax = 0.0
        for j in range(pos.shape[0]):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            r2 = dx * dx + dy * dy + dz * dz + eps
            inv = gpu.rsqrt(r2)
            ax += dx * pos[j, 3] * inv * inv * inv
        acc[i, 0] = ax
        acc[i, 1] = gpu.native_rsqrt(pos[i, 3] + eps)


@kernel
def rsqrts(x, out):
    for i in range(x.shape[0]):
        out[i, 0] = gpu.rsqrt(x[i])
        out[i, 1] = gpu.native_rsqrt(x[i])


@kernel
def exp_only(x, out):
    for i in range(x.shape[0]):
        out[i] = gpu.native_exp(x[i])


def _args(dtype=np.float32, n=64):
    pos = np.random.default_rng(5).random((n, 4)).astype(dtype)
    return pos, np.zeros((n, 2), dtype), dtype(1e-3)


def _reference(pos, eps):
    p = pos.astype(np.float64)
    d = p[None, :, :3] - p[:, None, :3]
    r2 = (d * d).sum(-1) + eps
    return np.stack([(d[..., 0] * p[None, :, 3] / (r2 * np.sqrt(r2))).sum(1), 1 / np.sqrt(p[:, 3] + eps)], 1)


def test_cuda_float32_rsqrt_is_the_ftz_approximation(nvrtc_compile):
    src = gravity.inspect(*_args(), backend="cuda").source
    assert src.count(FTZ_ASM) == 1                       # the helper, defined once, called twice
    assert src.count(HELPER) == 3 and "rsqrtf" not in src
    ptx = nvrtc_compile(src, "compute_90", build_options(None, "cuda", False)).decode(errors="replace")
    # without -ftz, rsqrtf is rsqrt.approx.f32 in PTX, which ptxas surrounds with the subnormal rescale
    assert "rsqrt.approx.ftz.f32" in ptx and "rsqrt.approx.f32" not in ptx
    assert_cubin(nvrtc_compile(src, "sm_90", build_options(None, "cuda", False)), src)
    # and in a fast-math build (--use_fast_math flushes everything anyway)
    assert_cubin(nvrtc_compile(src, "sm_90", build_options(None, "cuda", True)), src)


def test_other_spellings_keep_their_functions():
    hip = gravity.inspect(*_args(), backend="hip").source
    assert hip.count("rsqrtf(") == 2 and HELPER not in hip and "asm" not in hip
    cl = gravity.inspect(*_args(), backend="opencl").source
    assert "rsqrt(" in cl and "native_rsqrt(" in cl and HELPER not in cl
    # float64: the precise rsqrt on CUDA, no helper
    wide = gravity.inspect(*_args(np.float64), backend="cuda").source
    assert "rsqrt(" in wide and HELPER not in wide and "rsqrtf" not in wide
    # a kernel that uses no rsqrt gets no helper
    assert HELPER not in exp_only.inspect(np.ones(4, np.float32), np.ones(4, np.float32), backend="cuda").source


def test_rsqrt_of_normal_values_matches_numpy(backend):
    pos, acc, eps = _args()
    gravity[backend](pos, acc, eps)
    np.testing.assert_allclose(acc, _reference(pos, float(eps)), rtol=2e-3, atol=1e-3)
    # the whole normal float32 range, smallest normal included
    x = np.geomspace(np.finfo(np.float32).tiny, 1e37, 200).astype(np.float32)
    out = np.zeros((x.size, 2), np.float32)
    rsqrts[backend](x, out)
    ref = 1 / np.sqrt(x.astype(np.float64))
    np.testing.assert_allclose(out[:, 0], ref, rtol=1e-5)
    np.testing.assert_allclose(out[:, 1], ref, rtol=2e-3)


def test_cuda_rsqrt_flushes_a_subnormal_argument(backend):
    dev = registry.get_device(backend)
    if (getattr(dev.backend, "dialect", None) or dev.backend.name) != "cuda":
        pytest.skip("the flush of a subnormal argument is CUDA's spelling (docs/vectors.md, Fast math)")
    x = np.array([1e-40, 1.0, 4.0], np.float32)
    assert x[0] != 0 and x[0] < np.finfo(np.float32).tiny
    out = np.zeros((3, 2), np.float32)
    rsqrts[backend](x, out)
    np.testing.assert_array_equal(out[0], [np.inf, np.inf])
    np.testing.assert_allclose(out[1:], [[1.0, 1.0], [0.5, 0.5]], rtol=1e-6)
