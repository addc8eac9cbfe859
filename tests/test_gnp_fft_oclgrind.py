"""The kernels of ``gnp.fft`` under oclgrind: every pass (unrolled radix 2/3/4/5/7/8, the looped
radix for 11, Bluestein's steps and filter, the even-length real transforms' pack/post/pre/unpack,
the odd-length Hermitian extension and the twiddle/chirp tables) reads and writes only inside its buffers (exact-size
buffers, so one element past the end is an invalid access), with batches before and after the
axis. A run that plants a pack kernel reading one pair past its row is the control."""
from __future__ import annotations

import textwrap

import pytest

from conftest import run_under_oclgrind

SCRIPT = textwrap.dedent('''
    import os
    import sys
    os.environ["PYGPGPU_CLFFT"] = "0"                  # our kernels are under test, not clFFT's
    import numpy as np
    from pygpgpu_core import mempool
    mempool.size_class = lambda n: max(int(n), 4)      # exact-size buffers
    from pygpgpu_translate.array_ops import _fft_kernels
    if sys.argv[1] == "planted":                        # the control: the odd sample of the pair after
        _fft_kernels._SOURCES["pack"] = _fft_kernels._PACK.replace("src[s + inner]", "src[s + 3 * inner]")
    import pygpgpu.numpy as gnp

    rng = np.random.default_rng(0)

    def same(got, want):
        got = got.get()
        if sys.argv[1] == "planted":                    # (its values are wrong: only the accesses matter)
            return
        assert got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-4), (got, want)

    x = rng.standard_normal((2, 6, 3)).astype(np.float32)
    g = gnp.asarray(x)
    same(gnp.fft.rfft(g, axis=1), np.fft.rfft(x, axis=1))                 # pack + post (inner batch 3)
    if sys.argv[1] == "clean":
        for n in (1, 2, 3, 5, 7, 8, 11, 12, 32, 40, 67):               # 67: Bluestein
            y = (rng.standard_normal((2, n, 3)) + 1j * rng.standard_normal((2, n, 3))).astype(np.complex64)
            h = gnp.asarray(y)
            same(gnp.fft.fft(h, axis=1), np.fft.fft(y, axis=1))
            same(gnp.fft.ifft(h, axis=-1), np.fft.ifft(y, axis=-1))
        s = np.fft.rfft(x, axis=1)
        same(gnp.fft.irfft(gnp.asarray(s), n=6, axis=1), np.fft.irfft(s, n=6, axis=1))   # pre + unpack
        same(gnp.fft.irfft(gnp.asarray(s), n=5, axis=1), np.fft.irfft(s, n=5, axis=1))   # Hermitian
        same(gnp.fft.rfft(g[:, :5].copy(), axis=1), np.fft.rfft(x[:, :5], axis=1))      # odd rfft
    print("DONE")
''')


@pytest.mark.usefixtures("oclgrind_icd")
def test_fft_kernels_are_clean_under_oclgrind(tmp_path):
    out, text, bad = run_under_oclgrind(tmp_path, SCRIPT, "clean")
    assert "DONE" in out and not bad, text[:4000]


@pytest.mark.usefixtures("oclgrind_icd")
def test_oclgrind_sees_a_planted_read_past_the_row(tmp_path):
    out, text, bad = run_under_oclgrind(tmp_path, SCRIPT, "planted")
    assert "DONE" in out
    assert any("Invalid" in ln for ln in bad), "the planted read past the end was not reported: the check sees nothing"
