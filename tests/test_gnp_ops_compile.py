"""Every kernel family behind pygpgpu.numpy, translated for CUDA and HIP and compiled with NVRTC
and hiprtc (no GPU needed). The operations run first on an OpenCL device, which creates the
kernels and their argument signatures; each is then translated again for the other dialects."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from conftest import first_device, opencl_translations_made_by


def _exercise(device, monkeypatch):
    """Run one of everything (both variants of the rows reduction), so the generated kernels exist."""
    from pygpgpu_translate.array_ops import _reduction

    up = lambda x: gnp.asarray(x, device=device)   # noqa: E731
    f = up(np.linspace(-3, 3, 5000, dtype=np.float32).reshape(50, 100))
    i = up(np.arange(5000, dtype=np.int32).reshape(50, 100))
    u = up(np.arange(64, dtype=np.uint64))
    b = f > 0
    results = [f + 1, f * f - i, i // 7, i % 5, i ** 2, i << 3, i >> 2, ~i, -f, abs(f), f / 3, f ** 1.5,
               u == np.int64(3), np.sqrt(abs(f)), np.exp(f), np.floor(f), gnp.isnan(f), gnp.where(b, f, 0.0),
               gnp.clip(f, -1, 1), gnp.maximum(f, i), f[::2, 1::3] * 2, f.T + i.T, f.astype(np.float64),
               i.astype(np.int8), f.copy(), f.T.copy()]
    for layout in (True, False):
        monkeypatch.setattr(_reduction, "cpu_layout", lambda d, layout=layout: layout)
        for a in (f, i, b):
            results += [a.sum(), a.max(axis=0), a.argmin(axis=1), a.mean(axis=1), a.any(), a.prod(axis=0)]
        results.append(up(np.ones(300_000, np.float32)).sum())
        results.append(up(np.ones(300_000, np.float32)).argmax())
    results += [f.cumsum(), i.cumprod(axis=0), up(np.ones(5000, np.int64)).cumsum(), f @ f.T, gnp.dot(u, u),
                f[f > 1], i[[1, 2, 3]], gnp.nonzero(b)[0]]
    results += [f.reshape(5, 10, 100) @ f.T[:100, :7], gnp.i0(f), gnp.i0(i)]     # stacked matmul, i0's series
    g = up(np.arange(10, dtype=np.float32))
    g[g > 4] = 0
    g[[0, 1]] = up(np.array([5, 6], np.float32))
    long = up(np.linspace(1, -1, 20_000))                    # long 1-D sorts take the radix sort
    results += [gnp.sort(long), gnp.argsort(long.astype(np.int32)), gnp.sort(long.astype(np.float32)),
                gnp.sort(long.astype(np.uint64)), gnp.argsort(long), gnp.sort((long * 100).astype(np.int8))]
    results += [gnp.sort(f.ravel()), gnp.argsort(i.ravel()), gnp.arange(10, device=device),
                gnp.linspace(0, 1, 7, device=device), gnp.concatenate([f, i]), gnp.stack([f, f])]
    for r in results:
        (r[0] if isinstance(r, tuple) else r).synchronize()


@pytest.fixture(scope="module")
def translations():
    """(kernel, tokens, bits) of every generated kernel ``_exercise`` translated for OpenCL."""
    device = first_device("opencl")
    mp = pytest.MonkeyPatch()
    mp.setenv("PYGPGPU_CLBLAST", "0")          # the tiled matmul kernel is among those compiled, not CLBlast
    try:
        found = opencl_translations_made_by(lambda: _exercise(device, mp))
    finally:
        mp.undo()
    assert len({kf.__name__ for kf, _t, _b in found}) >= 25
    return found


def test_gnp_kernels_compile_with_nvrtc(translations, nvrtc_compile):
    for kf, tokens, bits in translations:
        t = kf._translation("cuda", tokens, bits, None)
        assert nvrtc_compile(t.source, "sm_90")[:4] == b"\x7fELF", kf.__name__


def test_gnp_kernels_compile_with_hiprtc(translations, hiprtc_compile):
    for kf, tokens, bits in translations:
        t = kf._translation("hip", tokens, bits, None)
        assert hiprtc_compile(t.source, "gfx90a"), kf.__name__
