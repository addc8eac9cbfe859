"""gnp.linalg's cholesky, solve, inv and eigh through cuSOLVER on CUDA (NVIDIA's nvidia-cusolver pip
wheel, loaded on the first factorisation), against numpy.

Without a CUDA device (or without cuSOLVER) the CUDA tests skip through conftest's helpers; what
runs everywhere: the mapping of gnp's row-major work arrays onto cuSOLVER's column-major routines
(``array_ops._linalg_vendor``), driven on PoCL by a stand-in solver that does in numpy what
LAPACK's potrf/getrf/getrs/syevd/heevd do to column-major memory; PYGPGPU_CUSOLVER=0; a missing
library."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pygpgpu.numpy as gnp
import pytest

from conftest import first_device, skip_no_compiler

RNG = np.random.default_rng(33)


def _spd(n, dtype, batch=()):
    x = RNG.standard_normal(batch + (n, n))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(batch + (n, n))
    return (x @ np.swapaxes(x, -1, -2).conj() + n * np.eye(n)).astype(dtype)


def _general(n, dtype, batch=(), k=None):
    shape = batch + ((n, n) if k is None else (n, k))
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _tol(dtype):
    return 2e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def _check_all(device, dtype):
    """cholesky, solve (matrix and vector right-hand sides, a stack), inv and eigh against numpy;
    their errors as numpy's."""
    tol = _tol(dtype)
    a = _spd(5, dtype, (2,))
    ga = gnp.asarray(a, device=device)
    np.testing.assert_allclose(gnp.linalg.cholesky(ga).get(), np.linalg.cholesky(a), rtol=tol, atol=tol)
    b = _general(5, dtype, (2,), k=3)
    np.testing.assert_allclose(gnp.linalg.solve(ga, gnp.asarray(b, device=device)).get(), np.linalg.solve(a, b),
                               rtol=tol, atol=tol)
    g = _general(4, dtype)
    v = _general(4, dtype, k=1)[:, 0]
    gg = gnp.asarray(g, device=device)
    np.testing.assert_allclose(gnp.linalg.solve(gg, gnp.asarray(v, device=device)).get(), np.linalg.solve(g, v),
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(gnp.linalg.inv(gg).get(), np.linalg.inv(g), rtol=tol, atol=tol)
    w, vec = gnp.linalg.eigh(ga)
    w, vec = w.get(), vec.get()
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(a @ vec, vec * w[..., None, :], rtol=tol, atol=tol * 100)   # A v = v w
    np.testing.assert_allclose(np.swapaxes(vec, -1, -2).conj() @ vec, np.broadcast_to(np.eye(5), a.shape),
                               atol=tol * 10)
    w_upper = gnp.linalg.eigvalsh(gnp.asarray(np.triu(a), device=device), UPLO="U").get()
    np.testing.assert_allclose(w_upper, np.linalg.eigvalsh(a), rtol=tol, atol=tol * 10)
    singular = np.ones((3, 3), dtype)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        gnp.linalg.solve(gnp.asarray(singular, device=device), gnp.ones(3, dtype=dtype, device=device))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        gnp.linalg.cholesky(gnp.asarray(-np.eye(3, dtype=dtype), device=device))


# -- the real thing, on a CUDA device ------------------------------------------------------------

@pytest.fixture
def cuda_solver(monkeypatch):
    device = first_device("cuda")
    monkeypatch.setenv("PYGPGPU_CUSOLVER", "1")
    from pygpgpu_cuda import _cusolver
    if not _cusolver.available():
        skip_no_compiler("cuSOLVER (pip install nvidia-cusolver or nvidia-cusolver-cu12)", _cusolver.available.reason)
    return device, _cusolver


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_cusolver_matches_numpy(cuda_solver, dtype):
    device, cusolver = cuda_solver
    before = cusolver.calls_made
    _check_all(device, dtype)
    assert cusolver.calls_made > before


def test_cusolver_turned_off_runs_our_kernels(cuda_solver, monkeypatch):
    device, cusolver = cuda_solver
    monkeypatch.setenv("PYGPGPU_CUSOLVER", "0")
    before = cusolver.calls_made
    a = _spd(4, np.float64)
    got = gnp.linalg.cholesky(gnp.asarray(a, device=device)).get()
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-10, atol=1e-10)
    assert cusolver.calls_made == before


# -- everywhere: the row-major <-> column-major mapping, with a stand-in solver ------------------

class _StandInSolver:
    """What LAPACK's routines do to column-major n x n matrices, in numpy, on device memory named
    by (array, element offset) tokens (the stand-in of ``_linalg_vendor._address``)."""

    def __init__(self):
        self.calls = 0
        self.factors = {}

    @staticmethod
    def _read(token, count):
        array, start = token
        return array.reshape(-1)[start:start + count].get()

    @staticmethod
    def _write(token, values):
        array, start = token
        flat = np.asarray(values).reshape(-1)
        array.reshape(-1)[start:start + flat.size] = flat.astype(array.dtype)

    def _matrix(self, token, n):
        return self._read(token, n * n).reshape(n, n, order="F")

    @staticmethod
    def _hermitian(m, uplo):
        tri = np.triu(m) if uplo == 1 else np.tril(m)
        off = np.triu(m, 1) if uplo == 1 else np.tril(m, -1)
        return tri + off.conj().T

    def potrf_workspace(self, uplo, n, a):
        return 3

    def potrf(self, uplo, n, a, work, lwork, info):
        self.calls += 1
        assert uplo == 1                       # numpy's lower triangle is the column-major upper one
        m = self._matrix(a, n)
        try:
            u = np.linalg.cholesky(self._hermitian(m, uplo)).conj().T
        except np.linalg.LinAlgError:
            self._write(info, np.array([2], np.int32))
            return
        self._write(a, (np.tril(m, -1) + np.triu(u)).reshape(-1, order="F"))
        self._write(info, np.array([0], np.int32))

    def getrf_workspace(self, n, a):
        return 2

    def getrf(self, n, a, work, ipiv, info):
        self.calls += 1
        m = self._matrix(a, n)
        self.factors[(id(a[0]), a[1])] = m
        self._write(ipiv, np.arange(1, n + 1, dtype=np.int32))
        self._write(info, np.array([int(np.linalg.matrix_rank(m) < n)], np.int32))

    def getrs(self, transposed, n, nrhs, a, ipiv, b, info):
        self.calls += 1
        m = self.factors[(id(a[0]), a[1])]
        rhs = self._read(b, n * nrhs).reshape(n, nrhs, order="F")
        try:
            x = np.linalg.solve(m.T if transposed else m, rhs)
        except np.linalg.LinAlgError:
            x = np.full_like(rhs, np.nan)
        self._write(b, x.reshape(-1, order="F"))
        self._write(info, np.array([0], np.int32))

    def eigh_workspace(self, uplo, n, a, w):
        return 4

    def eigh(self, uplo, n, a, w, work, lwork, info):
        self.calls += 1
        values, vectors = np.linalg.eigh(self._hermitian(self._matrix(a, n), uplo))
        self._write(w, values)
        self._write(a, vectors.reshape(-1, order="F"))
        self._write(info, np.array([0], np.int32))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_row_major_mapping_onto_column_major_routines(dtype, monkeypatch):
    """cholesky/solve/inv/eigh through ``_linalg_vendor`` with the stand-in solver on PoCL give
    numpy's answers: the triangles, transposes and conjugations the CUDA path relies on."""
    device = first_device("opencl")
    from pygpgpu_translate.array_ops import _linalg_vendor

    solver = _StandInSolver()
    monkeypatch.setattr(_linalg_vendor, "_solver", lambda a: solver if a.ndim == 3 and a.shape[1] else None)
    monkeypatch.setattr(_linalg_vendor, "_address",
                        lambda x, index=0, per=0: (x, x.offset // x.dtype.itemsize + index * per))
    _check_all(device, dtype)
    assert solver.calls >= 10


def test_cusolver_turned_off_is_not_loaded(monkeypatch):
    """PYGPGPU_CUSOLVER=0: no solver, and the library is not even looked for."""
    from pygpgpu_cuda import _cusolver

    monkeypatch.setenv("PYGPGPU_CUSOLVER", "0")
    loaded = _cusolver.cusolver.loaded
    assert _cusolver.solver(None, np.dtype(np.float64)) is None
    assert _cusolver.cusolver.loaded == loaded


def test_missing_cusolver_means_our_own_kernels():
    """Where no libcusolver loads, there is no solver and the reason is kept, without an error. A
    fresh process, so a loaded cuSOLVER does not interfere."""
    code = textwrap.dedent("""
        import numpy as np
        from pygpgpu_cuda import _cusolver
        print(_cusolver.solver(None, np.dtype(np.float64)), _cusolver.calls_made)
        print(_cusolver.available.reason)
    """)
    env = dict(os.environ, PYGPGPU_CUSOLVER_LIB="/nonexistent/libcusolver.so.12", PYGPGPU_CUSOLVER="1")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    first, second = res.stdout.splitlines()[:2]
    assert first == "None 0"
    assert "/nonexistent/libcusolver.so.12" in second and "could not be loaded" in second, second
