"""gnp.matmul of float32/float64 through the backend's BLAS (cuBLAS on CUDA, CLBlast on OpenCL,
loaded on the first product) and through pygpgpu's own tiled kernel (every other backend, every
other type, and PYGPGPU_CUBLAS=0 / PYGPGPU_CLBLAST=0), against numpy: shapes that are not multiples of a tile, 1-D operands,
transposed views, and what happens where cuBLAS is not installed."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pygpgpu.numpy as gnp
import pytest

from conftest import first_device

SHAPES = [((1, 1), (1, 1)), ((3, 5), (5, 7)), ((64, 33), (33, 17)), ((130, 257), (257, 65))]


def _reference(a, b):
    return (a.astype(np.float64) @ b.astype(np.float64))


def _tolerance(dtype, k):
    return (1e-5 if dtype == np.float32 else 1e-12) * max(k, 1)


@pytest.mark.parametrize("vendor", ["1", "0"], ids=["vendor-blas", "own-kernel"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0][0]}x{s[0][1]}@{s[1][0]}x{s[1][1]}")
def test_float_matmul_matches_numpy(device, dtype, shapes, vendor, monkeypatch):
    monkeypatch.setenv("PYGPGPU_CUBLAS", vendor)
    monkeypatch.setenv("PYGPGPU_CLBLAST", vendor)
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shapes[0]).astype(dtype)
    b = rng.standard_normal(shapes[1]).astype(dtype)
    got = gnp.matmul(gnp.asarray(a, device=device), gnp.asarray(b, device=device))
    assert got.dtype == dtype and got.shape == (a.shape[0], b.shape[1])
    np.testing.assert_allclose(got.get(), _reference(a, b), rtol=_tolerance(dtype, a.shape[1]),
                               atol=_tolerance(dtype, a.shape[1]))


@pytest.mark.parametrize("vendor", ["1", "0"], ids=["vendor-blas", "own-kernel"])
def test_matmul_of_views_and_vectors(device, vendor, monkeypatch):
    """A transposed view and a slice are made contiguous first; 1-D operands are (1, k) and (k, 1)."""
    monkeypatch.setenv("PYGPGPU_CUBLAS", vendor)
    monkeypatch.setenv("PYGPGPU_CLBLAST", vendor)
    rng = np.random.default_rng(4)
    a = rng.standard_normal((40, 24)).astype(np.float32)
    b = rng.standard_normal((40, 31)).astype(np.float32)
    v = rng.standard_normal(40).astype(np.float32)
    ga, gb, gv = (gnp.asarray(x, device=device) for x in (a, b, v))
    tol = _tolerance(np.float32, 40)
    np.testing.assert_allclose((ga.T @ gb).get(), _reference(a.T, b), rtol=tol, atol=tol)
    np.testing.assert_allclose((ga[5:, 3:20].T @ gb[5:, :]).get(), _reference(a[5:, 3:20].T, b[5:]), rtol=tol,
                               atol=tol)
    np.testing.assert_allclose((gv @ gb).get(), _reference(v[None, :], b)[0], rtol=tol, atol=tol)
    np.testing.assert_allclose((ga.T @ gv).get(), _reference(a.T, v[:, None])[:, 0], rtol=tol, atol=tol)


def test_cuda_float_matmul_goes_through_cublas(monkeypatch):
    """On CUDA with cuBLAS installed, a float32 product uses it (the context gets a cuBLAS handle),
    and the answer matches numpy; with PYGPGPU_CUBLAS=0 the same product runs our own kernel."""
    dev = first_device("cuda")
    from pygpgpu_cuda import _cublas
    monkeypatch.setenv("PYGPGPU_CUBLAS", "1")
    if not _cublas.available():
        pytest.skip(f"cuBLAS is not installed here: {_cublas._unavailable[0]}")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    b = rng.standard_normal((200, 100)).astype(np.float32)
    ga, gb = gnp.asarray(a, device=dev), gnp.asarray(b, device=dev)
    ctx = ga.buffer.context
    _cublas._handles.pop(ctx, None)
    got = (ga @ gb).get()
    assert ctx in _cublas._handles
    np.testing.assert_allclose(got, _reference(a, b), rtol=1e-3, atol=1e-3)
    _cublas._handles.pop(ctx)            # (a handle leaks here: tests only)
    monkeypatch.setenv("PYGPGPU_CUBLAS", "0")
    got = (ga @ gb).get()
    assert ctx not in _cublas._handles
    np.testing.assert_allclose(got, _reference(a, b), rtol=1e-3, atol=1e-3)


def test_missing_cublas_means_our_own_kernel():
    """Where no libcublas loads, gemm says so (False, nothing done) and remembers why, without
    raising: matmul then runs the tiled kernel. A fresh process, so no loaded cuBLAS interferes."""
    code = textwrap.dedent("""
        import numpy as np
        from pygpgpu_cuda import _cublas
        print(_cublas.gemm(None, np.dtype(np.float32), 2, 2, 2, 0, 0, 0))
        print(_cublas._unavailable)
    """)
    env = dict(os.environ, PYGPGPU_CUBLAS_LIB="/nonexistent/libcublas.so.13", PYGPGPU_CUBLAS="1")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    first, second = res.stdout.splitlines()[:2]
    assert first == "False"
    assert "/nonexistent/libcublas.so.13" in second and "could not be loaded" in second, second
