"""pygpgpu.numpy reductions (sum, prod, min, max, mean, argmin, argmax, any, all, var, std) and
dot/matmul against numpy: dtypes and numpy's result-dtype rules, axes and keepdims, empty
arrays, NaN, the one- and two-pass kernel paths, and float accuracy."""
from __future__ import annotations

import warnings

import numpy as np
import pygpgpu.numpy as gnp
import pytest

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float32, np.float64]
OPS = ["sum", "prod", "min", "max", "mean", "argmin", "argmax", "any", "all"]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -9
        return rng.integers(lo, 10, shape).astype(dt)        # small values: products stay exact
    return (rng.standard_normal(shape) * 3).astype(dt)


def check(got, want, dtype=None, rtol=None):
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    host = got.get()
    if want.dtype.kind == "f":
        tol = rtol or (2e-5 if want.dtype == np.float32 else 1e-12)
        np.testing.assert_allclose(host, want, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(host, want)


def up(x, backend):
    return gnp.asarray(x, device=backend)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_full_reduction_dtypes(backend, op, dtype):
    a = sample(101, dtype, 1)
    if op == "prod" and np.dtype(dtype).kind in "iu":
        a = np.clip(a, 0, 2).astype(dtype)        # 2**100 wraps identically in numpy and on the device
    if op == "prod" and np.dtype(dtype).kind == "f":
        a = (1 + a / 100).astype(dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a)
    check(getattr(up(a, backend), op)(), want)      # method
    check(getattr(gnp, op)(up(a, backend)), want)   # function


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, (0, 2), (1, 2)])
def test_axes_and_keepdims(backend, op, axis):
    a = sample((5, 7, 9), np.float32, 2)
    if op.startswith("arg") and isinstance(axis, tuple):
        return        # numpy's argmin/argmax take one axis
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, axis=axis)
        want_k = getattr(np, op)(a, axis=axis, keepdims=True)
    ga = up(a, backend)
    check(getattr(ga, op)(axis=axis), want)
    check(getattr(ga, op)(axis=axis, keepdims=True), want_k)


@pytest.mark.parametrize("layout", ["device", "gpu", "cpu"])
@pytest.mark.parametrize("op", ["sum", "max", "argmin", "mean", "any"])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_kernel_paths(backend, op, dtype, layout, monkeypatch):
    """Long rows split over groups (two passes), many short rows (one work item per row), columns
    with and without chunking, a middle axis, a strided view (copied first); the GPU (strided)
    and CPU (chunked) variants of the rows kernel on whatever device runs the test."""
    from pygpgpu_translate.array_ops import _reduction

    if layout != "device":
        monkeypatch.setattr(_reduction, "cpu_layout", lambda device: layout == "cpu")
    shapes_axes = [((300_001,), None), ((3, 70_000), 1), ((2000, 5), 1), ((40, 3000), 0), ((3000, 7), 0),
                   ((6, 50, 70), 1), ((2, 3, 40_000), 2)]
    for k, (shape, axis) in enumerate(shapes_axes):
        a = sample(shape, dtype, 10 + k)
        check(getattr(up(a, backend), op)(axis=axis), getattr(np, op)(a, axis=axis), rtol=1e-4)
    a = sample((60, 80), dtype, 30)
    check(getattr(up(a, backend)[::3, 5:], op)(axis=0), getattr(np, op)(a[::3, 5:], axis=0), rtol=1e-4)
    check(getattr(up(a, backend).T, op)(axis=1), getattr(np, op)(a.T, axis=1), rtol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32, np.int64])
def test_vector_loads_of_the_gpu_rows_kernel(backend, dtype, monkeypatch):
    """The GPU rows kernel reads 16-byte vectors (4 or 2 lanes): one long row with every tail
    length 0..3, rows of a multiple of the lanes, rows that are not (scalar loads), and a view
    that starts at an odd element."""
    from pygpgpu_translate.array_ops import _reduction

    monkeypatch.setattr(_reduction, "cpu_layout", lambda device: False)
    lanes = []
    real = _reduction._vector_lanes
    monkeypatch.setattr(_reduction, "_vector_lanes", lambda *a: lanes.append(real(*a)) or lanes[-1])
    for k, n in enumerate((4096, 4097, 4098, 4099, 100_003)):
        a = sample(n, dtype, 40 + k)
        for op in ("sum", "max", "mean", "argmax", "argmin"):
            check(getattr(up(a, backend), op)(), getattr(np, op)(a), rtol=1e-4)
    m = sample((5, 4096), dtype, 50)
    check(up(m, backend).sum(axis=1), m.sum(axis=1), rtol=1e-4)
    check(up(m, backend).min(axis=(0, 1)), m.min())
    odd = sample((3, 4099), dtype, 51)
    check(up(odd, backend).sum(axis=1), odd.sum(axis=1), rtol=1e-4)
    full = sample(9000, dtype, 52)
    check(up(full, backend)[1:].sum(), full[1:].sum(), rtol=1e-4)
    assert 16 // np.dtype(dtype).itemsize in lanes and 1 in lanes, lanes   # both kinds of loads ran


def test_result_dtypes_follow_numpy(backend):
    for dt in (np.int8, np.int16, np.int32, np.uint8, np.uint32, np.bool_):
        a = sample(50, dt, 3)
        check(up(a, backend).sum(), a.sum())        # int32 -> int64, uint8 -> uint64, bool -> int64
        check(up(a, backend).mean(), a.mean())      # float64
    a = sample(50, np.int32, 4)
    check(up(a, backend).sum(dtype=np.float64), a.sum(dtype=np.float64))
    check(up(a, backend).sum(dtype=np.int8), a.sum(dtype=np.int8))
    big = np.full(1000, 2**30, np.int32)
    check(up(big, backend).sum(), big.sum())       # would overflow int32: accumulates in int64


def test_nan_and_ties(backend):
    a = np.array([3.0, 1.0, np.nan, 1.0, np.nan, -2.0, -2.0], np.float32)
    ga = up(a, backend)
    for op in ("min", "max", "argmin", "argmax", "sum", "mean", "any", "all"):
        check(getattr(ga, op)(), getattr(np, op)(a))
    b = np.array([5, 1, 1, 7, 7, 0, 0], np.int64)          # the first of equal extremes
    check(up(b, backend).argmin(), b.argmin())
    check(up(b, backend).argmax(), b.argmax())
    m = np.tile(np.array([2.0, -1.0, 2.0, -1.0]), (3, 1)).astype(np.float64)
    check(up(m, backend).argmax(axis=1), m.argmax(axis=1))
    check(up(m, backend).argmin(axis=0), m.argmin(axis=0))
    big = np.zeros(200_000, np.float32)
    big[150_000] = np.nan
    big[170_000] = np.nan
    check(up(big, backend).argmax(), big.argmax())
    check(up(big, backend).max(), big.max())


def test_empty_reductions(backend):
    e = up(np.zeros((0,), np.float32), backend)
    check(e.sum(), np.float32(0))
    check(e.prod(), np.float32(1))
    check(e.any(), np.False_)
    check(e.all(), np.True_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.zeros(0, np.float32).mean()
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        check(e.mean(), want)
    with pytest.raises(ValueError, match="zero-size array to reduction operation minimum which has no identity"):
        e.min()
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        e.argmax()
    check(e.max(initial=-5.0), np.zeros(0, np.float32).max(initial=-5.0))
    e2 = up(np.zeros((3, 0), np.int32), backend)
    check(e2.sum(axis=1), np.zeros((3, 0), np.int32).sum(axis=1))
    check(e2.sum(axis=0), np.zeros((3, 0), np.int32).sum(axis=0))


def test_float32_sum_is_accurate(backend):
    x = np.random.default_rng(5).random(4_000_003).astype(np.float32)
    exact = x.astype(np.float64).sum()
    got = float(up(x, backend).sum())
    assert abs(got - exact) / exact < 2e-6          # numpy's pairwise float32 sum is in the same range
    m = np.random.default_rng(6).random((1000, 4000)).astype(np.float32)
    exact = m.astype(np.float64).sum(axis=0)
    got = up(m, backend).sum(axis=0).get()
    assert np.max(np.abs(got - exact) / exact) < 2e-6


def test_numpy_functions_and_ufunc_reduce(backend):
    a = sample((6, 8), np.float64, 7)
    ga = up(a, backend)
    gnp.reset_transfer_stats()
    r = [np.sum(ga), np.max(ga, axis=0), np.mean(ga, axis=1, keepdims=True), np.add.reduce(ga),
         np.maximum.reduce(ga, axis=1), np.argmax(ga), np.any(ga > 2)]
    assert gnp.transfer_stats()["d2h"] == 0
    for got, want in zip(r, [np.sum(a), np.max(a, axis=0), np.mean(a, axis=1, keepdims=True), np.add.reduce(a),
                             np.maximum.reduce(a, axis=1), np.argmax(a), np.any(a > 2)], strict=True):
        check(got, want)


def test_out_initial_var_std(backend):
    a = sample((4, 10), np.float32, 8)
    ga = up(a, backend)
    out = gnp.empty((10,), np.float32, device=backend)
    assert ga.sum(axis=0, out=out) is out
    check(out, a.sum(axis=0))
    check(ga.sum(initial=10.0), a.sum(initial=10.0))
    check(ga.min(axis=1, initial=-1.0), a.min(axis=1, initial=-1.0))
    check(ga.var(), a.var(), rtol=1e-4)
    check(ga.std(axis=0, ddof=1), a.std(axis=0, ddof=1), rtol=1e-4)
    check(gnp.var(up(sample(30, np.int32, 9), backend)), np.var(sample(30, np.int32, 9)))
    with pytest.raises(TypeError, match="where="):
        ga.sum(where=ga > 0)
    with pytest.raises(np.exceptions.AxisError):
        ga.sum(axis=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_dot_and_matmul(backend, dtype):
    rng = np.random.default_rng(11)
    a = (rng.random((37, 29)) * 4).astype(dtype)
    b = (rng.random((29, 45)) * 4).astype(dtype)
    v = (rng.random(29) * 4).astype(dtype)
    ga, gb, gv = up(a, backend), up(b, backend), up(v, backend)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    check(ga @ gb, a @ b, rtol=rtol)
    check(gnp.matmul(ga, gv), a @ v, rtol=rtol)
    check(gv @ gb, v @ b, rtol=rtol)
    check(gnp.dot(gv, gv), np.dot(v, v), rtol=rtol)
    check(gv.dot(gv), np.dot(v, v), rtol=rtol)
    check(gnp.dot(ga, gb), np.dot(a, b), rtol=rtol)
    check(ga.T[:5] @ ga[:, :7], a.T[:5] @ a[:, :7], rtol=rtol)     # views are copied first
    check(ga @ up(np.zeros((29, 0), dtype), backend), a @ np.zeros((29, 0), dtype))


def test_matmul_errors(backend):
    a, b = up(np.ones((3, 4), np.float32), backend), up(np.ones((5, 2), np.float32), backend)
    with pytest.raises(ValueError) as ours:
        a @ b
    with pytest.raises(ValueError) as numpy_error:
        np.ones((3, 4), np.float32) @ np.ones((5, 2), np.float32)
    assert str(ours.value) == str(numpy_error.value)
    with pytest.raises(ValueError, match="not aligned"):
        gnp.dot(up(np.ones(3), backend), up(np.ones(4), backend))
    # stacks of matrices multiply as numpy's (tests/test_gnp_matmul_stacked.py)
    got = up(np.ones((2, 2, 2)), backend) @ up(np.ones((2, 2)), backend)
    np.testing.assert_array_equal(got.get(), np.ones((2, 2, 2)) @ np.ones((2, 2)))
