"""gnp.fft through cuFFT on CUDA (NVIDIA's nvidia-cufft pip wheel, loaded on the first transform),
against numpy: complex and real transforms in single and double precision, every length (cuFFT
has its own Bluestein), the first, middle and last axis, the N-D forms and numpy's norms.

Without a CUDA device (or without cuFFT) those tests skip through conftest's helpers; what runs
everywhere: the plans and addresses ``pygpgpu_cuda._cufft`` gives cuFFT, checked by a stand-in
library that does what cufftPlanMany's advanced layout and the exec functions do, in numpy, on a
block of host memory; PYGPGPU_CUFFT=0; a missing library."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pygpgpu.numpy as gnp
import pytest

from conftest import first_device, skip_no_compiler

RNG = np.random.default_rng(34)


def _complex(shape, dtype):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def _close(got, want):
    got = got.get() if hasattr(got, "get") else got
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 2e-5 if want.dtype in (np.complex64, np.float32) else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


# -- the real thing, on a CUDA device ------------------------------------------------------------

@pytest.fixture
def cuda_fft(monkeypatch):
    device = first_device("cuda")
    monkeypatch.setenv("PYGPGPU_CUFFT", "1")
    from pygpgpu_cuda import _cufft
    if not _cufft.available():
        skip_no_compiler("cuFFT (pip install nvidia-cufft or nvidia-cufft-cu12)", _cufft.available.reason)
    return device, _cufft


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_cufft_complex_transforms_match_numpy(cuda_fft, dtype, norm):
    device, cufft = cuda_fft
    x = _complex((2, 12, 97), dtype)                  # 97: a prime, cuFFT's own Bluestein
    g = gnp.asarray(x, device=device)
    before = cufft.transforms
    for axis in (0, 1, 2):
        _close(gnp.fft.fft(g, axis=axis, norm=norm), np.fft.fft(x, axis=axis, norm=norm).astype(dtype))
        _close(gnp.fft.ifft(g, axis=axis, norm=norm), np.fft.ifft(x, axis=axis, norm=norm).astype(dtype))
    _close(gnp.fft.fftn(g, norm=norm), np.fft.fftn(x, norm=norm).astype(dtype))
    assert cufft.transforms - before == 9
    np.testing.assert_array_equal(g.get(), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cufft_real_transforms_match_numpy(cuda_fft, dtype):
    device, cufft = cuda_fft
    ct = np.result_type(dtype, np.complex64)
    x = RNG.standard_normal((3, 10, 7)).astype(dtype)
    g = gnp.asarray(x, device=device)
    spectrum = (np.fft.rfft(x) + 0.25j).astype(ct)      # imaginary zero terms numpy's irfft ignores
    gs = gnp.asarray(spectrum, device=device)
    before = cufft.transforms
    for axis in (0, 1, 2):
        _close(gnp.fft.rfft(g, axis=axis), np.fft.rfft(x, axis=axis).astype(ct))
    _close(gnp.fft.irfft(gs), np.fft.irfft(spectrum).astype(dtype))
    _close(gnp.fft.irfft(gs, n=7, axis=1), np.fft.irfft(spectrum, n=7, axis=1).astype(dtype))
    _close(gnp.fft.irfftn(gnp.fft.rfftn(g), s=x.shape, axes=(0, 1, 2)),
           np.fft.irfftn(np.fft.rfftn(x), s=x.shape, axes=(0, 1, 2)).astype(dtype))
    assert cufft.transforms - before >= 5
    np.testing.assert_array_equal(gs.get(), spectrum)   # c2r overwrote a copy, not the caller's array


def test_cufft_turned_off_runs_our_kernels(cuda_fft, monkeypatch):
    device, cufft = cuda_fft
    x = _complex((4, 16), np.complex64)
    monkeypatch.setenv("PYGPGPU_CUFFT", "0")
    before = cufft.transforms
    _close(gnp.fft.fft(gnp.asarray(x, device=device)), np.fft.fft(x).astype(np.complex64))
    assert cufft.transforms == before


# -- everywhere: the plans and addresses, against a stand-in cuFFT --------------------------------

class _Memory:
    """Host bytes standing in for device memory: arrays at byte addresses."""

    def __init__(self, nbytes):
        self.bytes = np.zeros(nbytes, np.uint8)
        self.top = 64

    def array(self, values):
        values = np.ascontiguousarray(values)
        address = self.top
        self.top += -(-values.nbytes // 64) * 64 + 64
        self.bytes[address:address + values.nbytes] = values.view(np.uint8).reshape(-1)
        return _Array(self, address, values.shape, values.dtype)

    def view(self, address, count, dtype):
        size = np.dtype(dtype).itemsize
        return self.bytes[address:address + count * size].view(dtype)


class _Array:
    def __init__(self, memory, address, shape, dtype):
        self.memory, self.shape, self.dtype, self.offset = memory, shape, np.dtype(dtype), 0
        self.buffer = type("Buffer", (), {"ptr": address})()

    def get(self):
        return self.memory.view(self.buffer.ptr, int(np.prod(self.shape)), self.dtype).reshape(self.shape).copy()


class _StandInCufft:
    """cufftPlanMany's rank-1 advanced layout (element j of signal b at b * dist + j * stride) and
    the exec functions, unnormalised as cuFFT's, in numpy on a _Memory."""

    _REAL = {0x2A: np.float32, 0x6A: np.float64, 0x2C: np.float32, 0x6C: np.float64}
    _COMPLEX = {0x29: np.complex64, 0x69: np.complex128, 0x2A: np.complex64, 0x6A: np.complex128,
                0x2C: np.complex64, 0x6C: np.complex128}

    def __init__(self, memory):
        self.memory, self.plans, self.execs = memory, {}, 0
        for role, kind in (("exec_c2c", "c2c"), ("exec_z2z", "c2c"), ("exec_r2c", "r2c"), ("exec_d2z", "r2c"),
                           ("exec_c2r", "c2r"), ("exec_z2d", "c2r")):
            setattr(self, role, self._exec(kind, role))

    def plan_many(self, handle, rank, n, inembed, istride, idist, onembed, ostride, odist, ctype, batch):
        assert rank == 1 and inembed and onembed      # the advanced layout: strides and distances count
        key = len(self.plans) + 1
        self.plans[key] = (n[0], istride, idist, ostride, odist, ctype, batch)
        handle._obj.value = key                       # (a byref() of the c_int plan handle)
        return 0

    def set_stream(self, handle, stream):
        return 0

    def _gather(self, address, dtype, count, stride, dist, batch):
        flat = self.memory.view(address, (batch - 1) * dist + (count - 1) * stride + 1, dtype)
        return np.stack([flat[b * dist + np.arange(count) * stride] for b in range(batch)])

    def _scatter(self, address, values, stride, dist):
        batch, count = values.shape
        flat = self.memory.view(address, (batch - 1) * dist + (count - 1) * stride + 1, values.dtype)
        for b in range(batch):
            flat[b * dist + np.arange(count) * stride] = values[b]

    def _exec(self, kind, role):
        def run(handle, src, dst, *direction):
            self.execs += 1
            n, istride, idist, ostride, odist, ctype, batch = self.plans[handle]
            if kind == "c2c":
                x = self._gather(src, self._COMPLEX[ctype], n, istride, idist, batch)
                y = np.fft.fft(x, axis=1) if direction[0] == -1 else np.fft.ifft(x, axis=1) * n
                self._scatter(dst, y.astype(self._COMPLEX[ctype]), ostride, odist)
            elif kind == "r2c":
                x = self._gather(src, self._REAL[ctype], n, istride, idist, batch)
                self._scatter(dst, np.fft.rfft(x, axis=1).astype(self._COMPLEX[ctype]), ostride, odist)
            else:
                x = self._gather(src, self._COMPLEX[ctype], n // 2 + 1, istride, idist, batch)
                self._scatter(dst, (np.fft.irfft(x, n, axis=1) * n).astype(self._REAL[ctype]), ostride, odist)
            return 0
        run.__name__ = role
        return run


@pytest.mark.parametrize("shape,axis", [((16,), 0), ((3, 10), 1), ((10, 3), 0), ((2, 9, 4), 1), ((2, 3, 8), 0)],
                         ids=lambda v: str(v))
@pytest.mark.parametrize("kind", ["forward", "inverse", "r2c", "c2r"])
def test_plans_and_addresses_against_a_stand_in_cufft(shape, axis, kind, monkeypatch):
    from pygpgpu_cuda import _cufft

    memory = _Memory(1 << 20)
    library = _StandInCufft(memory)
    monkeypatch.setattr(_cufft, "cufft", lambda: library)
    monkeypatch.setattr(_cufft, "available", lambda: True)
    monkeypatch.setattr(_cufft, "_plans", {})
    context = type("Context", (), {"make_current": lambda self: None,
                                   "queue": type("Queue", (), {"handle": ctypes.c_void_p(0)})()})()
    n = shape[axis]
    if kind == "c2r":
        want = np.fft.rfft(RNG.standard_normal(shape), axis=axis)
        x = memory.array(want)
        expected = np.fft.irfft(want, n, axis=axis) * n
        out_shape, out_dtype = shape, np.float64
    elif kind == "r2c":
        data = RNG.standard_normal(shape)
        x = memory.array(data)
        expected = np.fft.rfft(data, axis=axis)
        out_shape, out_dtype = expected.shape, np.complex128
    else:
        data = _complex(shape, np.complex128)
        x = memory.array(data)
        expected = np.fft.fft(data, axis=axis) if kind == "forward" else np.fft.ifft(data, axis=axis) * n
        out_shape, out_dtype = shape, np.complex128
    out = memory.array(np.zeros(out_shape, out_dtype))
    run = _cufft.plan(context, kind, x.shape, x.dtype, axis, n)
    assert run is not None
    run(x, out)
    _close(out.get(), expected.astype(out_dtype))
    outer = int(np.prod(shape[:axis]))
    assert library.execs == (outer if outer > 1 and axis < len(shape) - 1 else 1)
    assert _cufft.plan(context, kind, x.shape, x.dtype, axis, n) is not None and len(library.plans) == 1


def test_cufft_turned_off_is_not_loaded(monkeypatch):
    from pygpgpu_cuda import _cufft

    monkeypatch.setenv("PYGPGPU_CUFFT", "0")
    loaded = _cufft.cufft.loaded
    assert _cufft.plan(None, "forward", (8,), np.dtype(np.complex64), 0, 8) is None
    assert _cufft.cufft.loaded == loaded


def test_missing_cufft_means_our_own_kernels():
    """Where no libcufft loads, there is no plan and the reason is kept, without an error. A fresh
    process, so a loaded cuFFT does not interfere."""
    code = textwrap.dedent("""
        import numpy as np
        from pygpgpu_cuda import _cufft
        print(_cufft.plan(None, "forward", (8,), np.dtype(np.complex64), 0, 8), _cufft.transforms)
        print(_cufft.available.reason)
    """)
    env = dict(os.environ, PYGPGPU_CUFFT_LIB="/nonexistent/libcufft.so.12", PYGPGPU_CUFFT="1")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    first, second = res.stdout.splitlines()[:2]
    assert first == "None 0"
    assert "/nonexistent/libcufft.so.12" in second and "could not be loaded" in second, second
