"""The complex kernels behind pygpgpu.numpy (every complex ufunc rule, reductions, scans, the
complex sort order, matmul), translated for CUDA and HIP and compiled with NVRTC and hiprtc (no
GPU needed). The operations run first on an OpenCL device, which creates the kernels and their
argument signatures; each is then translated again for the other dialects."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from conftest import first_device


def _exercise(device):
    from pygpgpu_translate.array_ops._complex_ufuncs import COMPLEX_RULES

    for dt in (np.complex64, np.complex128):
        z = gnp.asarray((np.arange(12) + 1j * np.arange(12, 0, -1)).astype(dt).reshape(3, 4), device=device)
        results = []
        with np.errstate(all="ignore"):
            for name in COMPLEX_RULES:
                if name.startswith("__"):      # gnp's internal operations (__clip__: gnp.clip, below)
                    continue
                uf = getattr(np, name)
                results.append(uf(*([z] * uf.nin)))
        results += [z.sum(), z.prod(axis=0), z.mean(axis=1), z.max(), z.argmin(axis=0), z.any(), z.cumsum(),
                    z.cumprod(axis=0), gnp.sort(z, axis=0), gnp.argsort(z), z @ z.T, gnp.where(z.real > 2, z, 1j),
                    z[z.real > 1], z.astype(np.float32), z.astype(bool), z * 2j, z.var(),
                    gnp.clip(z, 2 + 1j, 8 + 0j)]
        for r in results:
            r.synchronize()


# Gathered from the whole kernel registry, not conftest.opencl_translations_made_by: some of these
# kernels are held by caches of their own (fft plans, fast paths) once an earlier test made them.
@pytest.fixture(scope="module")
def translations():
    """(kernel, tokens, bits) of every generated complex kernel translated for OpenCL in this run."""
    mp = pytest.MonkeyPatch()
    mp.setenv("PYGPGPU_CLBLAST", "0")          # the tiled complex matmul is among those compiled, not CLBlast
    try:
        _exercise(first_device("opencl"))
    finally:
        mp.undo()
    from pygpgpu_translate.array_ops import _codegen

    found = []
    for kf in _codegen._kernels.values():
        for key in list(kf._translations):        # (dialect, tokens, bits, then options)
            dialect, tokens, bits = key[:3]
            if dialect == "opencl" and "complex" in kf._translation("opencl", tokens, bits, None).source:
                found.append((kf, tokens, bits))
    assert len({kf.__name__ for kf, _t, _b in found}) >= 40
    return found


def test_complex_kernels_compile_with_nvrtc(translations, nvrtc_compile):
    for kf, tokens, bits in translations:
        t = kf._translation("cuda", tokens, bits, None)
        assert nvrtc_compile(t.source, "sm_90")[:4] == b"\x7fELF", kf.__name__


def test_complex_kernels_compile_with_hiprtc(translations, hiprtc_compile):
    for kf, tokens, bits in translations:
        t = kf._translation("hip", tokens, bits, None)
        assert hiprtc_compile(t.source, "gfx90a"), kf.__name__
