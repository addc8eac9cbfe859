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
