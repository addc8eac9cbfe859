"""gnp.matmul / dot on OpenCL through CLBlast (``libclblast1``, loaded on the first product, on our
own buffers and queue), against numpy: float32/float64/complex64/complex128, views passed as
they are (a transpose, a slice) or made contiguous on the device first (every other row), a
counter showing the CLBlast path ran; PYGPGPU_CLBLAST=0 and a missing library fall back to our
tiled kernel; a failed CLBlast call raises a DriverError naming CLBlast's status."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pygpgpu.numpy as gnp
import pytest

from conftest import first_device, skip_no_compiler

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.fixture(scope="module")
def cl():
    return first_device("opencl")


@pytest.fixture
def clblast(monkeypatch):
    monkeypatch.setenv("PYGPGPU_CLBLAST", "1")
    from pygpgpu_opencl import _clblast
    if not _clblast.available():
        skip_no_compiler("CLBlast (apt-get install libclblast1)", _clblast._unavailable[0])
    return _clblast


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _tolerance(dtype, k):
    return (2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12) * max(k, 1)


def _check(got, want, k):
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = _tolerance(want.dtype, k)
    np.testing.assert_allclose(got.get(), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
def test_clblast_products_match_numpy(cl, clblast, dtype):
    rng = np.random.default_rng(7)
    a, b = _random(rng, (37, 23), dtype), _random(rng, (23, 41), dtype)
    v = _random(rng, 23, dtype)
    ga, gb, gv = (gnp.asarray(x, device=cl) for x in (a, b, v))
    before = clblast.products
    _check(ga @ gb, a @ b, 23)
    _check(gnp.dot(ga, gb), np.dot(a, b), 23)
    _check(gnp.matmul(ga, gv), a @ v, 23)                     # (37, 23) @ (23, 1)
    _check(gnp.matmul(gv, gb), v @ b, 23)                     # (1, 23) @ (23, 41)
    assert clblast.products - before == 4


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_clblast_takes_views_without_a_copy(cl, clblast, dtype):
    """A transpose and a slice of rows and columns go to CLBlast as they are (offset, leading
    dimension, transpose flag); no array is made for them."""
    rng = np.random.default_rng(8)
    a = _random(rng, (30, 40), dtype)
    ga = gnp.asarray(a, device=cl)
    x, y = ga[3:20, 2:].T, ga[1:18, 5:9]                       # (38, 17) @ (17, 4)
    assert not x.is_contiguous and not y.is_contiguous
    from pygpgpu_translate.array_ops import _linalg

    made = []
    real = _linalg.contiguous
    _linalg.contiguous = lambda arr: made.append(arr) or real(arr)
    try:
        before = clblast.products
        got = x @ y
    finally:
        _linalg.contiguous = real
    _check(got, a[3:20, 2:].T @ a[1:18, 5:9], 17)
    assert clblast.products - before == 1 and made == []


def test_clblast_after_a_device_copy_of_a_strided_view(cl, clblast):
    """Every other row and column is no layout CLBlast takes: the view is copied on the device,
    then CLBlast multiplies."""
    rng = np.random.default_rng(9)
    a = _random(rng, (40, 30), np.float32)
    ga = gnp.asarray(a, device=cl)
    before = clblast.products
    _check(ga[::2, ::2] @ ga[:15, :7], a[::2, ::2] @ a[:15, :7], 15)
    assert clblast.products - before == 1


def test_clblast_turned_off_runs_our_kernel(cl, clblast, monkeypatch):
    rng = np.random.default_rng(10)
    a, b = _random(rng, (19, 21), np.float32), _random(rng, (21, 5), np.float32)
    ga, gb = gnp.asarray(a, device=cl), gnp.asarray(b, device=cl)
    monkeypatch.setenv("PYGPGPU_CLBLAST", "0")
    before = clblast.products
    _check(ga @ gb, a @ b, 21)
    assert clblast.products == before


def test_clblast_unset_runs_on_gpus_only(cl, clblast, monkeypatch):
    """Unset, the switch keeps CLBlast off CPU devices (PoCL compiles its kernels for up to a minute
    on first use) and lets it run on GPUs."""
    rng = np.random.default_rng(11)
    a, b = _random(rng, (9, 6), np.float32), _random(rng, (6, 4), np.float32)
    ga, gb = gnp.asarray(a, device=cl), gnp.asarray(b, device=cl)
    monkeypatch.delenv("PYGPGPU_CLBLAST")
    before = clblast.products
    _check(ga @ gb, a @ b, 6)
    assert clblast.products - before == (0 if cl.is_cpu else 1)


def test_types_clblast_lacks_run_our_kernel(cl, clblast):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    ga = gnp.asarray(a, device=cl)
    before = clblast.products
    got = ga @ ga.T
    np.testing.assert_array_equal(got.get(), a @ a.T)
    assert clblast.products == before


def test_failed_clblast_call_raises_a_driver_error(cl, clblast):
    """A leading dimension smaller than a row is CLBlast's InvalidLeadDimA: the error names it
    and the switch that turns CLBlast off."""
    from pygpgpu_core.errors import DriverError

    ga = gnp.zeros((4, 4), dtype=np.float32, device=cl)
    ctx = ga.buffer.context
    good = clblast.operand(ga)
    bad = good._replace(ld=2)
    with pytest.raises(DriverError, match="CLBlastInvalidLeadDimA.*PYGPGPU_CLBLAST=0"):
        clblast.gemm(ctx, np.dtype(np.float32), 4, 4, 4, bad, good, good)


def test_missing_clblast_means_our_own_kernel(cl):
    """Where no libclblast loads, matmul runs our kernel (the right answer) and the reason is
    remembered, without an error. A fresh process, so the loaded CLBlast does not interfere."""
    code = textwrap.dedent("""
        import numpy as np
        import pygpgpu.numpy as gnp
        from pygpgpu_opencl import _clblast
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        g = gnp.asarray(a, device="opencl")
        print(np.array_equal((g @ g.T).get(), a @ a.T), _clblast.products, _clblast.clblast.loaded)
        print(_clblast._unavailable)
    """)
    env = dict(os.environ, PYGPGPU_CLBLAST_LIB="/nonexistent/libclblast.so.1", PYGPGPU_CLBLAST="1")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    first, second = res.stdout.splitlines()[:2]
    assert first == "True 0 False"
    assert "/nonexistent/libclblast.so.1" in second and "could not be loaded" in second, second
