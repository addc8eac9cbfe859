"""The kernels of ``gnp.fft`` (every unrolled radix in both directions, the looped radix,
Bluestein's steps, the real transforms' steps, the Hermitian extension and the tables, in float32 and
float64), translated for CUDA and HIP and compiled with NVRTC and hiprtc (no GPU needed). They
run first on an OpenCL device, which creates them and their argument signatures."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from conftest import first_device


# Gathered from the whole kernel registry, not conftest.opencl_translations_made_by: some of these
# kernels are held by caches of their own (fft plans, fast paths) once an earlier test made them.
@pytest.fixture(scope="module")
def translations():
    device = first_device("opencl")
    mp = pytest.MonkeyPatch()
    mp.setenv("PYGPGPU_CLFFT", "0")          # our kernels are under test, not clFFT's
    try:
        yield _make_translations(device)
    finally:
        mp.undo()


def _make_translations(device):
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        for n in (2 * 3 * 5 * 7 * 8 * 11, 4, 67):               # every unrolled radix, 11 looped; 4; Bluestein
            x = gnp.asarray(rng.standard_normal((2, n)).astype(dtype), device=device)
            gnp.fft.ifft(gnp.fft.fft(x)).synchronize()
        x = gnp.asarray(rng.standard_normal((6, 3)).astype(dtype), device=device)
        spectrum = gnp.fft.rfft(x, axis=0)                        # pack + post
        gnp.fft.irfft(spectrum, n=6, axis=0).synchronize()        # pre + unpack
        gnp.fft.irfft(spectrum, n=5, axis=0).synchronize()        # Hermitian
    from pygpgpu_translate.array_ops import _codegen

    found = []
    for kf in _codegen._kernels.values():
        if kf.__name__.startswith("gnp_fft_"):
            found += [(kf, *key[1:3]) for key in list(kf._translations) if key[0] == "opencl"]
    names = {kf.__name__ for kf, _t, _b in found}
    for real in ("float32", "float64"):
        for radix in (2, 3, 4, 5, 7, 8):
            assert {f"gnp_fft_r{radix}_fwd_{real}_uint32", f"gnp_fft_r{radix}_inv_{real}_uint32"} <= names
        for step in ("looped", "chirp_in", "filter", "chirp_out", "pack", "rfft_post", "irfft_pre", "unpack",
                     "hermitian", "filter_fill"):
            assert f"gnp_fft_{step}_{real}_uint32" in names
        assert f"gnp_fft_roots_{real}_float64" in names
    return found


def test_fft_kernels_compile_with_nvrtc(translations, nvrtc_compile):
    for kf, tokens, bits in translations:
        t = kf._translation("cuda", tokens, bits, None)
        assert nvrtc_compile(t.source, "sm_90")[:4] == b"\x7fELF", kf.__name__


def test_fft_kernels_compile_with_hiprtc(translations, hiprtc_compile):
    for kf, tokens, bits in translations:
        t = kf._translation("hip", tokens, bits, None)
        assert hiprtc_compile(t.source, "gfx90a"), kf.__name__
