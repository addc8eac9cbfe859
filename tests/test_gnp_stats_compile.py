"""The kernels of gnp's sort-based statistics (binary searches, interp, atomic bin counts,
per-bin sums), translated for CUDA and HIP and compiled with NVRTC and hiprtc (no GPU needed).
They run first on an OpenCL device, which creates them and their argument signatures."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from conftest import first_device, opencl_translations_made_by

STATS_KERNELS = ("gnp_searchsorted_left_f", "gnp_searchsorted_right_f", "gnp_searchsorted_left_i",
                 "gnp_searchsorted_right_i", "gnp_interp", "gnp_segment_sums", "gnp_bin_counts")


@pytest.fixture(scope="module")
def translations():
    device = first_device("opencl")
    up = lambda x: gnp.asarray(x, device=device)   # noqa: E731

    def run():
        x = up(np.linspace(-2, 2, 300))
        k = up(np.arange(300) % 13)
        w = up(np.ones(300, np.float32))
        results = [gnp.searchsorted(gnp.sort(x), x), gnp.searchsorted(gnp.sort(x), x, side="right"),
                   gnp.searchsorted(gnp.sort(k), k), gnp.searchsorted(gnp.sort(k), k, side="right"),
                   gnp.interp(x, x[::7], x[::7] ** 2), gnp.bincount(k), gnp.bincount(k, weights=w),
                   gnp.histogram(x, 9)[0], gnp.histogram(x, 9, weights=w)[0]]
        for r in results:
            r.synchronize()

    found = [t for t in opencl_translations_made_by(run) if t[0].__name__ in STATS_KERNELS]
    assert {kf.__name__ for kf, _t, _b in found} == set(STATS_KERNELS)
    return found


def test_stats_kernels_compile_with_nvrtc(translations, nvrtc_compile):
    for kf, tokens, bits in translations:
        t = kf._translation("cuda", tokens, bits, None)
        assert nvrtc_compile(t.source, "sm_90")[:4] == b"\x7fELF", kf.__name__


def test_stats_kernels_compile_with_hiprtc(translations, hiprtc_compile):
    for kf, tokens, bits in translations:
        t = kf._translation("hip", tokens, bits, None)
        assert hiprtc_compile(t.source, "gfx90a"), kf.__name__
