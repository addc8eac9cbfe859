"""gnp.linalg against numpy.linalg on real kernels (PoCL here): values, dtypes, shapes, stacks and
numpy's errors. Decompositions whose vectors are only defined up to sign (eigh, svd) are checked
through their defining identities and orthonormality, and their values against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import pygpgpu.numpy as gnp

RNG = np.random.default_rng(32)
TOL = {np.float32: 2e-4, np.float64: 1e-10}


@pytest.fixture(autouse=True)
def own_kernels(monkeypatch):
    """These tests are of our own kernels: cuSOLVER has tests/test_vendor_cusolver.py."""
    monkeypatch.setenv("PYGPGPU_CUSOLVER", "0")


def _close(got, want, dt=np.float64, scale=1.0):
    got = got.get() if isinstance(got, gnp.DeviceArray) else np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=TOL[dt], atol=TOL[dt] * scale)


def _mat(shape, dt=np.float64):
    return RNG.standard_normal(shape).astype(dt)


def _spd(shape, dt=np.float64):
    x = _mat(shape)
    return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dt)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (17, 17), (4, 5, 5), (2, 3, 6, 6)])
def test_det_slogdet_inv_match_numpy(dt, shape):
    a = _mat(shape, dt)
    g = gnp.asarray(a)
    d = gnp.linalg.det(g)
    assert d.dtype == np.linalg.det(a).dtype and d.shape == np.shape(np.linalg.det(a))
    _close(d, np.linalg.det(a), dt, scale=float(np.abs(np.linalg.det(a)).max()))
    sign, logdet = gnp.linalg.slogdet(g)
    want = np.linalg.slogdet(a)
    _close(sign, want.sign, dt)
    _close(logdet, want.logabsdet, dt, scale=10)
    i = gnp.linalg.inv(g)
    assert i.dtype == dt
    _close(i, np.linalg.inv(a), dt, scale=float(np.abs(np.linalg.inv(a)).max()) * 10)


def test_det_of_singular_and_integer_matrices():
    a = np.array([[[1, 2], [2, 4]], [[2, 0], [0, 3]]])
    d = gnp.linalg.det(gnp.asarray(a))
    assert d.dtype == np.float64
    _close(d, np.linalg.det(a))
    s = gnp.linalg.slogdet(gnp.asarray(a))
    np.testing.assert_array_equal(s.sign.get(), [0.0, 1.0])
    assert s.logabsdet.get()[0] == -np.inf
    _close(gnp.linalg.det(gnp.zeros((0, 0))), np.linalg.det(np.zeros((0, 0))))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_solve_matrix_vector_and_broadcast_batches(dt):
    a = _mat((3, 8, 8), dt) + 4 * np.eye(8, dtype=dt)
    b = _mat((8, 3), dt)
    _close(gnp.linalg.solve(gnp.asarray(a), gnp.asarray(b)), np.linalg.solve(a, b), dt, scale=10)
    v = _mat((8,), dt)
    x = gnp.linalg.solve(gnp.asarray(a), gnp.asarray(v))
    assert x.shape == (3, 8)
    _close(x, np.linalg.solve(a, v), dt, scale=10)
    bb = _mat((2, 1, 8, 5), dt)
    _close(gnp.linalg.solve(gnp.asarray(a), gnp.asarray(bb)), np.linalg.solve(a, bb), dt, scale=10)
    mixed = gnp.linalg.solve(gnp.asarray(a.astype(np.float32)), gnp.asarray(b.astype(np.float64)))
    assert mixed.dtype == np.linalg.solve(a.astype(np.float32), b.astype(np.float64)).dtype


def test_singular_matrices_raise_linalgerror():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        gnp.linalg.inv(gnp.asarray(np.stack([np.eye(2), s])))
    with pytest.raises(gnp.linalg.LinAlgError, match="Singular matrix"):
        gnp.linalg.solve(gnp.asarray(s), gnp.asarray(np.ones(2)))


def test_shape_and_dtype_errors_are_numpys():
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        gnp.linalg.inv(gnp.ones(3))
    with pytest.raises(np.linalg.LinAlgError, match="must be square"):
        gnp.linalg.det(gnp.ones((2, 3)))
    with pytest.raises(TypeError, match="float16 is unsupported"):
        gnp.linalg.inv(gnp.ones((2, 2), np.float32).astype(np.float16))
    with pytest.raises(ValueError, match="Unrecognized mode"):
        gnp.linalg.qr(gnp.ones((2, 2)), mode="economic")
    with pytest.raises(ValueError, match="UPLO"):
        gnp.linalg.eigh(gnp.ones((2, 2)), UPLO="X")


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (3, 20, 20)])
def test_cholesky_lower_and_upper(dt, shape):
    a = _spd(shape, dt)
    low = gnp.linalg.cholesky(gnp.asarray(a))
    assert low.dtype == dt
    _close(low, np.linalg.cholesky(a), dt, scale=10)
    _close(gnp.linalg.cholesky(gnp.asarray(a), upper=True), np.linalg.cholesky(a, upper=True), dt, scale=10)


def test_cholesky_reads_only_the_lower_triangle_and_refuses_non_pd():
    a = _spd((6, 6))
    junk = a + np.triu(np.full((6, 6), 7.0), 1)
    _close(gnp.linalg.cholesky(gnp.asarray(junk)), np.linalg.cholesky(junk))
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        gnp.linalg.cholesky(gnp.asarray(np.stack([a, -a])))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (2, 9, 3), (1, 1)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_matches_numpy_including_signs(dt, shape, mode):
    a = _mat(shape, dt)
    got, want = gnp.linalg.qr(gnp.asarray(a), mode=mode), np.linalg.qr(a, mode=mode)
    if mode == "r":
        _close(got, want, dt, scale=10)
        return
    _close(got.Q, want.Q, dt, scale=10)
    _close(got.R, want.R, dt, scale=10)


def test_qr_raw_and_integer_input():
    a = RNG.integers(-5, 5, (7, 4))
    h, tau = gnp.linalg.qr(gnp.asarray(a), mode="raw")
    wh, wtau = np.linalg.qr(a, mode="raw")
    _close(h, wh)
    _close(tau, wtau)
    q, r = gnp.linalg.qr(gnp.asarray(a))
    assert q.dtype == r.dtype == np.float64


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (7, 7), (3, 16, 16)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_values_and_vectors(dt, shape, uplo):
    x = _mat(shape, dt)
    sym = x + np.swapaxes(x, -1, -2)
    a = np.tril(x) + np.triu(_mat(shape, dt), 1) if uplo == "L" else np.triu(x) + np.tril(_mat(shape, dt), -1)
    a = a.astype(dt)
    want_w = np.linalg.eigvalsh(a, UPLO=uplo)
    w, v = gnp.linalg.eigh(gnp.asarray(a), UPLO=uplo)
    assert w.dtype == v.dtype == dt and w.shape == want_w.shape and v.shape == a.shape
    _close(w, want_w, dt, scale=10)
    _close(gnp.linalg.eigvalsh(gnp.asarray(a), UPLO=uplo), want_w, dt, scale=10)
    full = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2) if uplo == "L" else np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2)
    V, W = v.get(), w.get()
    _close(full @ V, V * W[..., None, :], dt, scale=10)
    _close(np.swapaxes(V, -1, -2) @ V, np.broadcast_to(np.eye(shape[-1]), a.shape), dt, scale=10)
    del sym


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (2, 9, 3), (3, 2, 7), (1, 1)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_reconstructs_with_orthonormal_factors(dt, shape, full):
    a = _mat(shape, dt)
    u, s, vh = gnp.linalg.svd(gnp.asarray(a), full_matrices=full)
    wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
    assert u.dtype == s.dtype == vh.dtype == dt
    _close(s, ws, dt, scale=10)
    k = min(shape[-2:])
    U, S, VH = u.get(), s.get(), vh.get()
    _close((U[..., :k] * S[..., None, :]) @ VH[..., :k, :], a, dt, scale=10)
    _close(np.swapaxes(U, -1, -2) @ U, np.broadcast_to(np.eye(U.shape[-1]), U.shape[:-2] + (U.shape[-1],) * 2), dt, 10)
    _close(VH @ np.swapaxes(VH, -1, -2), np.broadcast_to(np.eye(VH.shape[-2]), VH.shape[:-2] + (VH.shape[-2],) * 2),
           dt, 10)
    _close(gnp.linalg.svd(gnp.asarray(a), compute_uv=False), ws, dt, scale=10)


def test_svd_of_rank_deficient_matrix_keeps_u_orthonormal():
    a = np.outer(np.arange(1.0, 6.0), np.arange(1.0, 4.0))
    u, s, vh = gnp.linalg.svd(gnp.asarray(a), full_matrices=False)
    _close(s, np.linalg.svd(a, compute_uv=False), scale=10)
    U = u.get()
    _close(U.T @ U, np.eye(3))
    _close((U * s.get()) @ vh.get(), a)


VECTOR_ORDS = [None, 2, 1, -1, 0, np.inf, -np.inf, 3, 0.5]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norms(ord):
    x = _mat((4, 5))
    g = gnp.asarray(x)
    for axis in (0, 1, -1):
        _close(gnp.linalg.norm(g, ord, axis), np.linalg.norm(x, ord, axis))
        _close(gnp.linalg.norm(g, ord, axis, keepdims=True), np.linalg.norm(x, ord, axis, keepdims=True))
    if ord is not None:
        _close(gnp.linalg.norm(gnp.asarray(x[0]), ord), np.linalg.norm(x[0], ord))


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norms(ord):
    x = _mat((3, 4, 5))
    g = gnp.asarray(x)
    for axis in ((1, 2), (2, 1), (0, 2), (-1, -3)):
        _close(gnp.linalg.norm(g, ord, axis), np.linalg.norm(x, ord, axis))
    _close(gnp.linalg.norm(g, ord, (1, 2), keepdims=True), np.linalg.norm(x, ord, (1, 2), keepdims=True))
    _close(gnp.linalg.norm(gnp.asarray(x[0]), ord), np.linalg.norm(x[0], ord))


def test_norm_defaults_dtypes_and_errors():
    x = RNG.integers(-9, 9, (3, 4, 2))
    got = gnp.linalg.norm(gnp.asarray(x))
    assert got.dtype == np.float64
    _close(got, np.linalg.norm(x))
    _close(gnp.linalg.norm(gnp.asarray(x), keepdims=True), np.linalg.norm(x, keepdims=True))
    f = _mat((5,), np.float32)
    assert gnp.linalg.norm(gnp.asarray(f)).dtype == np.float32
    with pytest.raises(ValueError, match="Invalid norm order 'fro' for vectors"):
        gnp.linalg.norm(gnp.asarray(f), "fro", 0)
    with pytest.raises(ValueError, match="Invalid norm order for matrices"):
        gnp.linalg.norm(gnp.ones((2, 2)), 3)
    with pytest.raises(ValueError, match="Improper number of dimensions"):
        gnp.linalg.norm(gnp.ones((2, 2, 2)), 2)
    with pytest.raises(ValueError, match="Duplicate axes"):
        gnp.linalg.norm(gnp.ones((2, 2)), None, (0, 0))
    _close(gnp.linalg.vector_norm(gnp.asarray(x), axis=(0, 2), ord=3), np.linalg.vector_norm(x, axis=(0, 2), ord=3))
    _close(gnp.linalg.matrix_norm(gnp.asarray(x), ord="nuc"), np.linalg.matrix_norm(x, ord="nuc"))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, -1, -3])
def test_matrix_power(n):
    a = _mat((2, 4, 4)) / 2 + np.eye(4)
    got = gnp.linalg.matrix_power(gnp.asarray(a), n)
    _close(got, np.linalg.matrix_power(a, n), scale=10)
    ints = RNG.integers(-3, 3, (3, 3))
    if n >= 0:
        gi = gnp.linalg.matrix_power(gnp.asarray(ints), n)
        assert gi.dtype == ints.dtype
        np.testing.assert_array_equal(gi.get(), np.linalg.matrix_power(ints, n))
    with pytest.raises(TypeError, match="exponent must be an integer"):
        gnp.linalg.matrix_power(gnp.asarray(a), 1.5)


def test_multi_dot_chains_and_vector_ends():
    shapes = [(10, 30), (30, 5), (5, 60), (60, 3)]
    ms = [_mat(s) for s in shapes]
    _close(gnp.linalg.multi_dot([gnp.asarray(m) for m in ms]), np.linalg.multi_dot(ms), scale=100)
    v0, v1 = _mat((10,)), _mat((3,))
    args = [v0] + ms + [v1]
    _close(gnp.linalg.multi_dot([gnp.asarray(m) for m in args]), np.linalg.multi_dot(args), scale=1000)
    _close(gnp.linalg.multi_dot([gnp.asarray(m) for m in [v0] + ms[:2]]), np.linalg.multi_dot([v0] + ms[:2]), scale=100)
    with pytest.raises(ValueError, match="at least two"):
        gnp.linalg.multi_dot([gnp.asarray(v0)])


def test_lstsq_pinv_matrix_rank_cond():
    a = _mat((9, 4))
    b = _mat((9, 2))
    x, res, rank, s = gnp.linalg.lstsq(gnp.asarray(a), gnp.asarray(b))
    wx, wres, wrank, ws = np.linalg.lstsq(a, b)
    _close(x, wx)
    _close(res, wres)
    assert rank == wrank
    _close(s, ws)
    deficient = np.outer(np.arange(1.0, 7.0), np.arange(1.0, 4.0))
    y = _mat((6,))
    x, res, rank, s = gnp.linalg.lstsq(gnp.asarray(deficient), gnp.asarray(y))
    wx, wres, wrank, ws = np.linalg.lstsq(deficient, y)
    _close(x, wx)
    assert rank == wrank == 1 and res.shape == wres.shape == (0,)
    stack = _mat((2, 5, 3))
    _close(gnp.linalg.pinv(gnp.asarray(stack)), np.linalg.pinv(stack))
    _close(gnp.linalg.matrix_rank(gnp.asarray(deficient)), np.linalg.matrix_rank(deficient))
    _close(gnp.linalg.matrix_rank(gnp.asarray(stack)), np.linalg.matrix_rank(stack))
    sq = _mat((3, 4, 4))
    for p in (None, 2, -2, 1, np.inf, "fro"):
        _close(gnp.linalg.cond(gnp.asarray(sq), p), np.linalg.cond(sq, p), scale=100)


def test_results_stay_on_the_device():
    a = gnp.asarray(_spd((4, 4)))
    gnp.reset_transfer_stats()
    results = (gnp.linalg.det(a), gnp.linalg.qr(a).Q, gnp.linalg.eigh(a).eigenvectors, gnp.linalg.svd(a).U,
               gnp.linalg.norm(a, 2), gnp.linalg.matrix_power(a, 3))
    assert all(isinstance(r, gnp.DeviceArray) for r in results)
    assert gnp.transfer_stats()["d2h"] == 0 and gnp.transfer_stats()["h2d"] == 0


def test_empty_stacks_and_empty_matrices_have_numpys_shapes():
    for shape in ((0, 3, 2), (0, 3), (2, 0, 4)):
        got, want = gnp.linalg.qr(gnp.zeros(shape)), np.linalg.qr(np.zeros(shape))
        assert (got.Q.shape, got.R.shape) == (want.Q.shape, want.R.shape)
    assert gnp.linalg.inv(gnp.zeros((0, 3, 3))).shape == (0, 3, 3)
    assert gnp.linalg.solve(gnp.zeros((0, 3, 3)), gnp.zeros((0, 3, 2))).shape == (0, 3, 2)
    np.testing.assert_array_equal(gnp.linalg.det(gnp.zeros((2, 0, 0))).get(), np.linalg.det(np.zeros((2, 0, 0))))
    w, v = gnp.linalg.eigh(gnp.zeros((2, 0, 0)))
    assert (w.shape, v.shape) == ((2, 0), (2, 0, 0))


def test_degenerate_spectra():
    w, v = gnp.linalg.eigh(gnp.asarray(np.eye(5)))
    _close(w, np.ones(5))
    V = v.get()
    _close(V.T @ V, np.eye(5))
    u, s, vh = gnp.linalg.svd(gnp.zeros((4, 3)))
    _close(s, np.zeros(3))
    _close(u.get().T @ u.get(), np.eye(4))
    _close(vh.get() @ vh.get().T, np.eye(3))


def test_tensorsolve_and_tensorinv():
    a = _mat((6, 2, 3)) + np.eye(6).reshape(6, 2, 3) * 3
    b = _mat((6,))
    _close(gnp.linalg.tensorsolve(gnp.asarray(a), gnp.asarray(b)), np.linalg.tensorsolve(a, b), scale=10)
    a4 = _mat((4, 6, 2, 12))
    b4 = _mat((2, 12))
    _close(gnp.linalg.tensorsolve(gnp.asarray(a4), gnp.asarray(b4), axes=(0, 1)),
           np.linalg.tensorsolve(a4, b4, axes=(0, 1)), scale=1e4)
    t = _mat((4, 6, 8, 3)) + 0
    _close(gnp.linalg.tensorinv(gnp.asarray(t), ind=2), np.linalg.tensorinv(t, ind=2), scale=1e3)
    with pytest.raises(np.linalg.LinAlgError, match="prod"):
        gnp.linalg.tensorsolve(gnp.ones((2, 3)), gnp.ones(2))
    with pytest.raises(ValueError, match="Invalid ind"):
        gnp.linalg.tensorinv(gnp.ones((2, 2)), ind=0)


def test_array_api_names():
    x, y = _mat((2, 3, 3)), _mat((2, 3, 3))
    gx, gy = gnp.asarray(x), gnp.asarray(y)
    _close(gnp.linalg.matmul(gx, gy), np.linalg.matmul(x, y))
    _close(gnp.linalg.trace(gx, offset=1), np.linalg.trace(x, offset=1))
    _close(gnp.linalg.diagonal(gx, offset=-1), np.linalg.diagonal(x, offset=-1))
    _close(gnp.linalg.matrix_transpose(gx), np.linalg.matrix_transpose(x))
    _close(gnp.linalg.vecdot(gx, gy, axis=1), np.linalg.vecdot(x, y, axis=1))
    _close(gnp.linalg.cross(gx, gy), np.linalg.cross(x, y))
    _close(gnp.linalg.outer(gx[0, 0], gy[0, 1]), np.linalg.outer(x[0, 0], y[0, 1]))
    z = _mat((3, 4))
    _close(gnp.linalg.tensordot(gx, gnp.asarray(z), axes=1), np.linalg.tensordot(x, z, axes=1))
    with pytest.raises(ValueError, match="one-dimensional"):
        gnp.linalg.outer(gx, gy)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_norms_of_complex_arrays(dt):
    z = (_mat((3, 4)) + 1j * _mat((3, 4))).astype(dt)
    g = gnp.asarray(z)
    real = np.float32 if dt == np.complex64 else np.float64
    for ord in (None, 1, -1, 2, 3, 0, np.inf, -np.inf):
        got = gnp.linalg.norm(g, ord, 1)
        assert got.dtype == np.dtype(real)
        _close(got, np.linalg.norm(z, ord, 1), real)
    for ord in (None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"):
        _close(gnp.linalg.norm(g, ord), np.linalg.norm(z, ord), real, scale=10)


def test_cond_of_singular_matrices_is_inf_unless_nan():
    s = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 0.0], [0.0, 2.0]], [[np.nan, 0.0], [0.0, 1.0]]])
    for p in (1, -1, np.inf, "fro"):
        got = gnp.linalg.cond(gnp.asarray(s), p).get()
        want = np.linalg.cond(s, p)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got[1], want[1])
    assert np.isinf(gnp.linalg.cond(gnp.asarray(s[0])).get()) or gnp.linalg.cond(gnp.asarray(s[0])).get() > 1e15
    with pytest.raises(np.linalg.LinAlgError, match="empty"):
        gnp.linalg.cond(gnp.zeros((0, 0)))


def _cmat(shape, dt):
    return (_mat(shape) + 1j * _mat(shape)).astype(dt)


CTOL = {np.complex64: np.float32, np.complex128: np.float64}


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_det_slogdet_solve_inv(dt):
    a = _cmat((3, 6, 6), dt)
    g = gnp.asarray(a)
    tol = CTOL[dt]
    d = gnp.linalg.det(g)
    assert d.dtype == dt
    _close(d, np.linalg.det(a), tol, scale=float(np.abs(np.linalg.det(a)).max()))
    sign, logdet = gnp.linalg.slogdet(g)
    want = np.linalg.slogdet(a)
    assert sign.dtype == want.sign.dtype and logdet.dtype == want.logabsdet.dtype
    _close(sign, want.sign, tol)
    _close(logdet, want.logabsdet, tol, scale=10)
    _close(gnp.linalg.inv(g), np.linalg.inv(a), tol, scale=100)
    b = _cmat((6, 2), dt)
    _close(gnp.linalg.solve(g, gnp.asarray(b)), np.linalg.solve(a, b), tol, scale=100)
    mixed = gnp.linalg.solve(gnp.asarray(np.eye(2, dtype=np.float32)), gnp.asarray(np.ones(2, np.complex64)))
    assert mixed.dtype == np.complex64


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_cholesky_lower_and_upper(dt):
    x = _cmat((2, 5, 5), np.complex128)
    a = (x @ np.conj(np.swapaxes(x, -1, -2)) + 5 * np.eye(5)).astype(dt)
    for upper in (False, True):
        got = gnp.linalg.cholesky(gnp.asarray(a), upper=upper)
        assert got.dtype == dt
        _close(got, np.linalg.cholesky(a, upper=upper), CTOL[dt], scale=10)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (5, 5), (2, 9, 3), (1, 1)])
def test_complex_qr_matches_numpy_including_phases(dt, shape):
    a = _cmat(shape, dt)
    tol = CTOL[dt]
    for mode in ("reduced", "complete"):
        got, want = gnp.linalg.qr(gnp.asarray(a), mode=mode), np.linalg.qr(a, mode=mode)
        assert got.Q.dtype == got.R.dtype == dt
        _close(got.Q, want.Q, tol, scale=10)
        _close(got.R, want.R, tol, scale=10)
    _close(gnp.linalg.qr(gnp.asarray(a), mode="r"), np.linalg.qr(a, mode="r"), tol, scale=10)
    if len(shape) == 2:
        h, tau = gnp.linalg.qr(gnp.asarray(a), mode="raw")
        wh, wtau = np.linalg.qr(a, mode="raw")
        _close(h, wh, tol, scale=10)
        _close(tau, wtau, tol, scale=10)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_complex_eigh_of_hermitian_matrices(dt, uplo):
    x = _cmat((3, 7, 7), dt)
    tol = CTOL[dt]
    w, v = gnp.linalg.eigh(gnp.asarray(x), UPLO=uplo)
    want = np.linalg.eigvalsh(x, UPLO=uplo)
    assert w.dtype == want.dtype and v.dtype == dt
    _close(w, want, tol, scale=10)
    tri = np.tril(x) if uplo == "L" else np.triu(x)
    h = tri + np.conj(np.swapaxes(tri, -1, -2))
    h[:, range(7), range(7)] = x[:, range(7), range(7)].real
    V, W = v.get(), w.get()
    _close(h @ V, V * W[..., None, :], tol, scale=10)
    _close(np.conj(np.swapaxes(V, -1, -2)) @ V, np.broadcast_to(np.eye(7), (3, 7, 7)), tol, scale=10)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (2, 5, 5)])
def test_complex_svd_lstsq_pinv(dt, shape):
    a = _cmat(shape, dt)
    tol = CTOL[dt]
    for full in (True, False):
        u, s, vh = gnp.linalg.svd(gnp.asarray(a), full_matrices=full)
        wu, ws, wvh = np.linalg.svd(a, full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (wu.shape, ws.shape, wvh.shape)
        assert u.dtype == vh.dtype == dt and s.dtype == ws.dtype
        _close(s, ws, tol, scale=10)
        k = min(shape[-2:])
        U, S, VH = u.get(), s.get(), vh.get()
        _close((U[..., :k] * S[..., None, :]) @ VH[..., :k, :], a, tol, scale=10)
        _close(np.conj(np.swapaxes(U, -1, -2)) @ U, np.broadcast_to(np.eye(U.shape[-1]), U.shape[:-2] + (U.shape[-1],) * 2),
               tol, 10)
    _close(gnp.linalg.pinv(gnp.asarray(a)), np.linalg.pinv(a), tol, scale=100)
    if len(shape) == 2:
        b = _cmat((shape[0], 2), dt)
        x, res, rank, sv = gnp.linalg.lstsq(gnp.asarray(a), gnp.asarray(b))
        wx, wres, wrank, wsv = np.linalg.lstsq(a, b)
        _close(x, wx, tol, scale=100)
        assert res.dtype == wres.dtype and res.shape == wres.shape and rank == wrank
        _close(res, wres, tol, scale=100)
    _close(gnp.linalg.matrix_rank(gnp.asarray(a)), np.linalg.matrix_rank(a))


def test_complex_vecdot_conjugates_the_first_operand():
    x, y = _cmat((3, 4), np.complex128), _cmat((3, 4), np.complex128)
    _close(gnp.linalg.vecdot(gnp.asarray(x), gnp.asarray(y)), np.linalg.vecdot(x, y))


def test_pinv_and_matrix_rank_cutoffs_follow_numpy():
    a = np.diag([1.0, 1e-9, 8e-16])      # 8e-16: below the default 1e-15, above 3 * eps
    g = gnp.asarray(a)
    _close(gnp.linalg.pinv(g), np.linalg.pinv(a), scale=1e16)                    # rcond 1e-15 by default
    _close(gnp.linalg.pinv(g, rtol=None), np.linalg.pinv(a, rtol=None), scale=1e9)
    _close(gnp.linalg.pinv(g, rcond=1e-6), np.linalg.pinv(a, rcond=1e-6))
    stack = np.stack([a, a])
    per = np.array([1e-12, 1e-6])
    _close(gnp.linalg.pinv(gnp.asarray(stack), rcond=per), np.linalg.pinv(stack, rcond=per), scale=1e9)
    with pytest.raises(ValueError, match="both set"):
        gnp.linalg.pinv(g, rcond=1e-3, rtol=1e-3)
    _close(gnp.linalg.matrix_rank(gnp.asarray(stack), rtol=per), np.linalg.matrix_rank(stack, rtol=per))
    _close(gnp.linalg.matrix_rank(gnp.asarray(stack), tol=np.array([0.5, 1e-12])),
           np.linalg.matrix_rank(stack, tol=np.array([0.5, 1e-12])))
    assert gnp.linalg.pinv(gnp.zeros((2, 0, 3), np.int64)).dtype == np.linalg.pinv(np.zeros((2, 0, 3), np.int64)).dtype


def test_float32_jacobi_kernels_hold_no_float64():
    """Devices without fp64 must compile the float32 kernels: their tolerances are float32 too."""
    from pygpgpu_translate.array_ops import _linalg_jacobi as jacobi
    from pygpgpu_translate.array_ops._codegen import kernel_from_source
    from pygpgpu_translate.array_ops._linalg_parts import parts

    dt = np.dtype(np.float32)
    f = gnp.zeros(16, np.float32)
    tol = np.float32(np.finfo(np.float32).eps)
    for template, args in ((jacobi._EIGH, (f, f, f, f, f, 4, 0, tol)), (jacobi._SVD, (f, f, f, f, f, 4, 4, tol))):
        kern = kernel_from_source("probe32", jacobi._source(template, "probe32", dt), helpers=parts(dt), contract=False)
        assert "double" not in str(kern.inspect(*args))


def test_nan_input_gives_nan_not_unwritten_memory():
    a = np.array([[np.nan, 0.0], [0.0, 1.0]])
    w, v = gnp.linalg.eigh(gnp.asarray(a))
    np.testing.assert_array_equal(w.get(), [1.0, np.nan])           # NaN sorts last, as np.sort does
    s = gnp.linalg.svd(gnp.asarray(a), compute_uv=False).get()
    np.testing.assert_array_equal(s, [1.0, np.nan])


def _same_eigenvalues(got, want, tol):
    """Each eigenvalue of one set is within tol of one of the other (order is the algorithm's own)."""
    distance = np.abs(got[..., :, None] - want[..., None, :])
    assert distance.min(axis=-1).max() <= tol and distance.min(axis=-2).max() <= tol


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 7, 7), (16, 16)])
def test_eig_and_eigvals_of_general_matrices(dt, shape):
    a = (_cmat(shape, dt) if np.dtype(dt).kind == "c" else _mat(shape, dt))
    w, v = gnp.linalg.eig(gnp.asarray(a))
    complex_type = np.complex64 if dt in (np.float32, np.complex64) else np.complex128
    assert w.dtype == v.dtype == complex_type and w.shape == shape[:-1] and v.shape == shape
    tol = TOL[np.float32 if complex_type == np.complex64 else np.float64] * 100
    W, V = w.get(), v.get()
    _same_eigenvalues(W, np.linalg.eigvals(a), tol)
    _same_eigenvalues(gnp.linalg.eigvals(gnp.asarray(a)).get(), np.linalg.eigvals(a), tol)
    np.testing.assert_allclose(a @ V, V * W[..., None, :], atol=tol)
    np.testing.assert_allclose(np.linalg.norm(V, axis=-2), 1.0, atol=tol)
    lead = np.take_along_axis(V, np.abs(V).argmax(axis=-2)[..., None, :], axis=-2)
    np.testing.assert_allclose(lead.imag, 0.0, atol=tol)              # geev's scaling: largest component real


def test_eig_special_matrices_and_empty_shapes():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    _same_eigenvalues(gnp.linalg.eigvals(gnp.asarray(rotation)).get(), np.array([1j, -1j]), 1e-12)
    jordan = np.array([[2.0, 1.0], [0.0, 2.0]])
    _same_eigenvalues(gnp.linalg.eigvals(gnp.asarray(jordan)).get(), np.array([2.0, 2.0]), 1e-7)
    w, v = gnp.linalg.eig(gnp.zeros((3, 3)))
    np.testing.assert_array_equal(w.get(), np.zeros(3))
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):
        w, v = gnp.linalg.eig(gnp.zeros(shape))
        assert (w.shape, v.shape) == (shape[:-1], shape)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        gnp.linalg.eigvals(gnp.zeros((2, 3)))
