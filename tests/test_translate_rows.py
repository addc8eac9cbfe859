"""Arrays of 4-wide rows (n-body positions): a constant row stride, and on CUDA/HIP an alignment
promise that lets a row load as one 128-bit access, as a handwritten float4 kernel does."""
from __future__ import annotations

import math

import numpy as np

from _nbody_kernel import nbody


def _reference(pos):
    d = pos[None, :, :3] - pos[:, None, :3]
    r2 = (d * d).sum(-1) + 1e-3
    sc = pos[None, :, 3] / (r2 * np.sqrt(r2))
    out = np.zeros_like(pos)
    out[:, :3] = (d * sc[..., None]).sum(1)
    return out


def test_rows_of_four_index_with_a_constant_stride_and_load_aligned(nvrtc_compile):
    pos = np.zeros((64, 4), np.float32)
    src = nbody.inspect(pos, np.zeros_like(pos), backend="cuda").source
    assert "((const float4*)(pos))[j]" in src and "pos_shape1)" not in src     # one row load (_row_loads)
    assert "__builtin_assume_aligned(pos, 16)" in src and "__builtin_assume_aligned(acc, 16)" in src
    assert nvrtc_compile(src)[:4] == b"\x7fELF"
    # OpenCL C has no portable alignment builtin: only the constant stride there
    cl = nbody.inspect(pos, np.zeros_like(pos), backend="opencl").source
    assert "((__global const float4*)(pos))[j]" in cl and "assume_aligned" not in cl
    # a 3-wide row is 12 bytes: no vector alignment to promise
    p3 = np.zeros((64, 3), np.float32)
    assert "assume_aligned" not in nbody.inspect(p3, p3, backend="cuda").source


def test_nbody_rows_match_numpy(backend):
    pos = np.random.default_rng(3).random((96, 4), dtype=np.float32)
    acc = np.full_like(pos, np.nan)
    nbody[backend](pos, acc)
    np.testing.assert_allclose(acc, _reference(pos.astype(np.float64)), rtol=2e-3, atol=1e-3)
    # an unaligned row view (starts one float in) is staged, still correct
    flat = np.zeros(96 * 4 + 1, np.float32)
    view = flat[1:].reshape(96, 4)
    view[...] = pos
    acc2 = np.full_like(pos, np.nan)
    nbody[backend](view, acc2)
    np.testing.assert_allclose(acc2, acc, rtol=1e-6)
    assert math.isfinite(float(acc2.sum()))


def test_aligned_rows_compile_for_hip(hiprtc_compile):
    pos = np.zeros((64, 4), np.float32)
    src = nbody.inspect(pos, np.zeros_like(pos), backend="hip").source
    assert "__builtin_assume_aligned(pos, 16)" in src
    assert len(hiprtc_compile(src)) > 0
