"""gnp.fft on OpenCL through clFFT (``libclfft2``, loaded on the first transform, on our own buffers
and queue), against numpy: complex and real transforms in single and double precision along the
last and the first axis, numpy's norms, the imaginary parts numpy's irfft ignores, inputs left
as they were; a counter showing the clFFT path ran, plans made once; lengths and axes clFFT lacks,
PYGPGPU_CLFFT=0 and a missing library running our own kernels."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pygpgpu.numpy as gnp
import pytest

from conftest import first_device, skip_no_compiler


@pytest.fixture(scope="module")
def cl():
    return first_device("opencl")


@pytest.fixture
def clfft(monkeypatch):
    monkeypatch.setenv("PYGPGPU_CLFFT", "1")
    from pygpgpu_opencl import _clfft
    if not _clfft.available():
        skip_no_compiler("clFFT (apt-get install libclfft2)", _clfft._unavailable[0])
    return _clfft


def _complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _close(got, want):
    got = got.get()
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 2e-6 if want.dtype in (np.complex64, np.float32) else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_clfft_complex_transforms_match_numpy(cl, clfft, dtype, norm):
    rng = np.random.default_rng(1)
    x = _complex(rng, (3, 12), dtype)
    g = gnp.asarray(x, device=cl)
    before = clfft.transforms
    _close(gnp.fft.fft(g, norm=norm), np.fft.fft(x, norm=norm).astype(dtype))
    _close(gnp.fft.ifft(g, norm=norm), np.fft.ifft(x, norm=norm).astype(dtype))
    _close(gnp.fft.fft(g, axis=0, norm=norm), np.fft.fft(x, axis=0, norm=norm).astype(dtype))
    _close(gnp.fft.ifft2(g, norm=norm), np.fft.ifft2(x, norm=norm).astype(dtype))
    assert clfft.transforms - before == 5
    np.testing.assert_array_equal(g.get(), x)              # out of place: the input is as it was


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clfft_real_transforms_match_numpy(cl, clfft, dtype):
    """rfft, and irfft of a spectrum whose zero and Nyquist terms have imaginary parts (numpy
    ignores them; clFFT's batched c2r would not): the caller's spectrum stays as it was."""
    rng = np.random.default_rng(2)
    ct = np.result_type(dtype, np.complex64)
    x = rng.standard_normal((4, 10)).astype(dtype)
    g = gnp.asarray(x, device=cl)
    spectrum = (np.fft.rfft(x) + 0.5j).astype(ct)
    gs = gnp.asarray(spectrum, device=cl)
    before = clfft.transforms
    _close(gnp.fft.rfft(g), np.fft.rfft(x).astype(ct))
    _close(gnp.fft.rfft(g, axis=0, norm="ortho"), np.fft.rfft(x, axis=0, norm="ortho").astype(ct))
    _close(gnp.fft.irfft(gs), np.fft.irfft(spectrum).astype(dtype))
    _close(gnp.fft.irfft(gs, n=9), np.fft.irfft(spectrum, n=9).astype(dtype))     # odd length
    _close(gnp.fft.irfft(gs[:, :4], n=4, axis=0), np.fft.irfft(spectrum[:, :4], n=4, axis=0).astype(dtype))
    assert clfft.transforms - before == 5
    np.testing.assert_array_equal(gs.get(), spectrum)


def test_clfft_n_dimensional_transforms(cl, clfft):
    """fftn of a 3-D array: clFFT along the first and last axes, our kernels along the middle one
    (clFFT has one batch dimension); rfftn / irfftn as numpy's."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6, 10))
    g = gnp.asarray(x, device=cl)
    before = clfft.transforms
    _close(gnp.fft.fftn(g), np.fft.fftn(x))
    assert clfft.transforms - before == 2
    _close(gnp.fft.irfftn(gnp.fft.rfftn(g), s=x.shape, axes=(0, 1, 2)),
           np.fft.irfftn(np.fft.rfftn(x), s=x.shape, axes=(0, 1, 2)))


def test_clfft_input_at_an_offset(cl, clfft):
    """Rows 1-2 of an array start inside its buffer: copied on the device, then transformed."""
    rng = np.random.default_rng(4)
    x = _complex(rng, (4, 8), np.complex64)
    rows = gnp.asarray(x, device=cl)[1:3]
    assert rows.offset
    before = clfft.transforms
    _close(gnp.fft.fft(rows), np.fft.fft(x[1:3]).astype(np.complex64))
    assert clfft.transforms - before == 1


def test_clfft_plans_are_made_once(cl, clfft):
    rng = np.random.default_rng(5)
    g = gnp.asarray(_complex(rng, (2, 20), np.complex64), device=cl)
    gnp.fft.fft(g)
    plans = dict(clfft._plans[g.context])
    before = clfft.transforms
    gnp.fft.fft(g * 2)
    assert clfft._plans[g.context] == plans and clfft.transforms - before == 1


def test_lengths_and_types_clfft_lacks_run_our_kernels(cl, clfft):
    """Length 22 (a factor 11) and the middle axis of a 3-D array: our kernels; the answers are
    numpy's all the same."""
    rng = np.random.default_rng(6)
    x = _complex(rng, (3, 22), np.complex64)
    before = clfft.transforms
    _close(gnp.fft.fft(gnp.asarray(x, device=cl)), np.fft.fft(x).astype(np.complex64))
    y = _complex(rng, (2, 6, 4), np.complex128)
    _close(gnp.fft.fft(gnp.asarray(y, device=cl), axis=1), np.fft.fft(y, axis=1))
    assert clfft.transforms == before


def test_clfft_turned_off_runs_our_kernels(cl, clfft, monkeypatch):
    rng = np.random.default_rng(7)
    x = _complex(rng, (3, 12), np.complex64)
    g = gnp.asarray(x, device=cl)
    monkeypatch.setenv("PYGPGPU_CLFFT", "0")
    before = clfft.transforms
    _close(gnp.fft.fft(g), np.fft.fft(x).astype(np.complex64))
    assert clfft.transforms == before


def test_clfft_unset_runs_on_gpus_only(cl, clfft, monkeypatch):
    """Unset, the switch keeps clFFT off CPU devices (PoCL compiles each plan for seconds on first
    use) and lets it run on GPUs."""
    rng = np.random.default_rng(8)
    x = _complex(rng, (2, 12), np.complex64)
    g = gnp.asarray(x, device=cl)
    monkeypatch.delenv("PYGPGPU_CLFFT")
    before = clfft.transforms
    _close(gnp.fft.fft(g), np.fft.fft(x).astype(np.complex64))
    assert (clfft.transforms > before) == (not cl.is_cpu)


def test_missing_clfft_means_our_own_kernels(cl):
    """Where no libclFFT loads, fft runs our kernels (numpy's answer) and the reason is kept,
    without an error. A fresh process, so the loaded clFFT does not interfere."""
    code = textwrap.dedent("""
        import numpy as np
        import pygpgpu.numpy as gnp
        from pygpgpu_opencl import _clfft
        x = np.arange(8.0) + 1j
        got = gnp.fft.fft(gnp.asarray(x, device="opencl")).get()
        print(np.allclose(got, np.fft.fft(x)), _clfft.transforms, _clfft.clfft.loaded)
        print(_clfft._unavailable)
    """)
    env = dict(os.environ, PYGPGPU_CLFFT_LIB="/nonexistent/libclFFT.so.2", PYGPGPU_CLFFT="1")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    first, second = res.stdout.splitlines()[:2]
    assert first == "True 0 False"
    assert "/nonexistent/libclFFT.so.2" in second and "could not be loaded" in second, second


def test_a_plan_clfft_declines_runs_our_kernels(cl, clfft, monkeypatch):
    """A plan clFFT cannot make (here: CLFFT_NOTIMPLEMENTED from the planner) is remembered with
    its status and not tried again; our kernels run the transform."""
    tried = []

    def decline(*args):
        tried.append(args[1:3])
        raise clfft._Declined(4097)

    monkeypatch.setattr(clfft, "_make_plan", decline)
    monkeypatch.setattr(clfft, "_plans", weakref.WeakKeyDictionary())     # (the real plans stay out of it)
    monkeypatch.setattr(clfft, "declined", {})
    rng = np.random.default_rng(8)
    x = _complex(rng, (5, 14), np.complex128)
    g = gnp.asarray(x, device=cl)
    before = clfft.transforms
    for _ in range(2):
        _close(gnp.fft.fft(g), np.fft.fft(x))
    assert clfft.transforms == before and tried == [("forward", 14)]
    assert clfft.declined[("forward", 14, "complex128")] == "CLFFT_NOTIMPLEMENTED (4097)"
