"""float16 device arrays on a device that stores half but does not compute with it (PoCL: no
cl_khr_fp16): operands widen to float32 (vload_half), the float32 kernel runs, results round
to half once (vstore_half_rte) — numpy's float16 loops, so + - * / sqrt and comparisons match
numpy bit for bit; math functions within one half ulp (numpy's float32 libm against the
device's). Reductions accumulate in float32 as numpy's do."""
from __future__ import annotations

import operator

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def half_sample(n, seed, scale=30.0):
    return (np.random.default_rng(seed).standard_normal(n) * scale).astype(np.float16)


def up(x, backend):
    return gnp.asarray(x, device=backend)


def exact(got, want):
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt,
                                operator.eq, operator.pow], ids=lambda f: f.__name__)
def test_binary_operators_bit_for_bit(backend, op):
    a, b = half_sample(700, 1), half_sample(700, 2)
    if op is operator.pow:
        a, b = np.abs(a) / 8, (b / 30).astype(np.float16)
    b[:4] = [0, -0.0, np.inf, np.nan]
    with np.errstate(all="ignore"):
        want = op(a, b)
    got = op(up(a, backend), up(b, backend))
    if op is operator.pow:
        np.testing.assert_allclose(got.get().astype(np.float32), want.astype(np.float32), rtol=1e-3)
        assert got.dtype == want.dtype
    else:
        exact(got, want)


@pytest.mark.parametrize("scalar", [1.5, 3, np.float16(0.25), np.float32(2.5), True])
def test_scalars_and_small_integer_arrays_promote_like_numpy(backend, scalar):
    a = half_sample(50, 3)
    exact(up(a, backend) * scalar, a * scalar)
    i8 = np.arange(-20, 30, dtype=np.int8)
    exact(up(i8, backend) + up(a, backend), i8 + a)


@pytest.mark.parametrize("name", ["sqrt", "negative", "absolute", "floor", "rint", "isnan", "square"])
def test_exact_unary(backend, name):
    a = np.abs(half_sample(300, 4)) if name == "sqrt" else half_sample(300, 4)
    exact(getattr(gnp, name)(up(a, backend)), getattr(np, name)(a))


@pytest.mark.parametrize("name", ["exp", "log", "sin", "tanh"])
def test_math_within_one_half_ulp(backend, name):
    a = half_sample(300, 5, scale=2.0)
    a = np.abs(a) + np.float16(0.01) if name == "log" else a
    want = getattr(np, name)(a)
    got = getattr(gnp, name)(up(a, backend))
    assert got.dtype == np.float16
    diff = np.abs(got.get().view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32))
    assert diff.max() <= 1


def test_conversions_and_assignment(backend):
    a = half_sample(100, 6)
    g = up(a, backend)
    exact(g.astype(np.float64), a.astype(np.float64))
    exact(g.astype(np.int32), a.astype(np.int32))
    f = np.random.default_rng(7).standard_normal(100).astype(np.float32) * 5000
    exact(up(f, backend).astype(np.float16), f.astype(np.float16))     # rounding to nearest even, overflow to inf
    h = g.copy()
    h[...] = 2.5
    h[3] = g[4]
    h[10:20] = up(f[:10], backend)
    want = np.full(100, 2.5, np.float16)
    want[3] = a[4]
    want[10:20] = f[:10]
    exact(h, want)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "argmax", "argmin", "prod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(backend, name, axis):
    a = half_sample(240, 8, scale=1.0).reshape(12, 20)
    want = getattr(a, name)(axis=axis)
    got = getattr(up(a, backend), name)(axis=axis)
    assert got.dtype == want.dtype
    if name in ("sum", "mean", "prod"):
        # float32 accumulation here; numpy's adds rounds to half after each step along outer axes, so
        # the two differ by up to (count) half ulps of the partial results
        count = a.size if axis is None else a.shape[axis]
        scale = getattr(np.abs(a.astype(np.float32)), "sum" if name != "prod" else "max")(axis=axis)
        tol = count * float(np.finfo(np.float16).eps) * (scale if name == "sum" else
                                                         (scale / count if name == "mean" else np.abs(want)))
        err = np.abs(got.get().astype(np.float32) - np.asarray(want).astype(np.float32))
        assert (err <= tol).all(), (err, tol)
    else:
        exact(got, want)


def test_sort_and_argsort(backend):
    a = half_sample(1000, 9)
    a[::17] = np.nan
    g = up(a, backend)
    exact(gnp.sort(g), np.sort(a))
    exact(gnp.argsort(g), np.argsort(a, kind="stable"))


def test_where_selects_halves_exactly(backend):
    a, b = half_sample(64, 10), half_sample(64, 11)
    cond = a > b
    ga, gb = up(a, backend), up(b, backend)
    exact(gnp.where(up(cond, backend), ga, gb), np.where(cond, a, b))
    exact(gnp.where(up(cond, backend), ga, 1.5), np.where(cond, a, 1.5))
    i8 = np.arange(64, dtype=np.int8)
    exact(gnp.where(up(cond, backend), ga, up(i8, backend)), np.where(cond, a, i8))      # int8 -> float16
    f32 = b.astype(np.float32) / 3
    exact(gnp.where(up(cond, backend), ga, up(f32, backend)), np.where(cond, a, f32))    # float32 result
    exact(gnp.where(ga, 1, 0), np.where(a, 1, 0))                                          # half condition
    exact(gnp.triu(ga.reshape(8, 8)), np.triu(a.reshape(8, 8)))


def test_gathers_scatters_and_masks(backend):
    a = half_sample(40, 12)
    g = up(a, backend)
    idx = np.array([3, 0, 39, 3])
    exact(g[up(idx, backend)], a[idx])
    exact(g[g > 0], a[a > 0])
    exact(gnp.nonzero(g)[0], np.nonzero(a)[0])
    b, h = a.copy(), g.copy()
    b[idx[:2]] = [1.25, -7]
    h[up(idx[:2], backend)] = up(np.array([1.25, -7], np.float16), backend)
    b[b < -10] = 0.1
    h[h < -10] = 0.1
    exact(h, b)
    exact(gnp.unique(g), np.unique(a))


def test_scans_and_matmul_through_float32(backend):
    a = half_sample(60, 13, scale=1.0).reshape(6, 10)
    g = up(a, backend)
    # a float32 running total rounded once: within a half ulp of the exact sums (numpy rounds each step)
    exact_sums = np.cumsum(a.astype(np.float64), axis=1)
    got = g.cumsum(axis=1)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.get(), exact_sums.astype(np.float32).astype(np.float16))
    prods = a.astype(np.float64) @ a.T.astype(np.float64)
    got = g @ g.T
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.get().astype(np.float64), prods, rtol=1e-3, atol=1e-3)
    d = gnp.dot(g[0], g[1])
    assert d.dtype == np.dot(a[0], a[1]).dtype
    np.testing.assert_allclose(float(d), float(a[0].astype(np.float64) @ a[1].astype(np.float64)), rtol=2e-3,
                               atol=2e-3)


def test_creation_clip_and_searchsorted(backend):
    for args in [(10,), (0, 1, 0.1), (-3, 7, 0.37), (5, -2, -0.3)]:      # numpy's HALF_fill
        exact(gnp.arange(*args, dtype=np.float16, device=backend), np.arange(*args, dtype=np.float16))
    exact(gnp.eye(3, dtype=np.float16, device=backend), np.eye(3, dtype=np.float16))
    exact(gnp.full(4, 0.1, dtype=np.float16, device=backend), np.full(4, 0.1, dtype=np.float16))
    a = half_sample(50, 14)
    g = up(a, backend)
    exact(gnp.clip(g, -3, 2.5), np.clip(a, -3, 2.5))
    exact(gnp.clip(g, np.float16(-1), up(a[::-1].copy(), backend)), np.clip(a, np.float16(-1), a[::-1]))
    s = np.sort(a)
    exact(gnp.searchsorted(up(s, backend), g), np.searchsorted(s, a))


def test_float64_rounds_to_half_in_one_step(backend):
    # 1 + 2**-11 + 2**-40 lies just above the midpoint of two halves: numpy rounds it up; through
    # float32 it would first become the midpoint itself and round down to even
    x = np.array([1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 65519.99, 1e-8, 2**-25 + 2**-60])
    exact(up(x, backend).astype(np.float16), x.astype(np.float16))
    h = gnp.zeros(5, np.float16, device=backend)
    h[...] = up(x, backend)
    exact(h, x.astype(np.float16))
