"""float16 on a device that stores half only, in the paths that refused it: concatenate of
float16 with other types, linspace(dtype=float16) (numpy's float64 values rounded once),
sum(dtype=float16) of integers, diff with scalar prepend/append, and sinc at 0 (numpy's 1e-20
stand-in underflows in half; the result is 1 as numpy's)."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def same(got, want):
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.get(), want)


def test_concatenate_float16_with_other_types(backend):
    h = np.array([1.5, -2.25], np.float16)
    i = np.arange(3)
    same(gnp.concatenate([gnp.asarray(h, device=backend), gnp.asarray(i, device=backend)]), np.concatenate([h, i]))
    same(gnp.concatenate([gnp.asarray(i.astype(np.int8), device=backend), gnp.asarray(h, device=backend)]),
         np.concatenate([i.astype(np.int8), h]))


@pytest.mark.parametrize("num", [0, 1, 5, 33])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_float16(backend, num, endpoint):
    got = gnp.linspace(-3, 10.3, num, endpoint=endpoint, dtype=np.float16, device=backend)
    same(got, np.linspace(-3, 10.3, num, endpoint=endpoint, dtype=np.float16))
    got, step = gnp.linspace(0, 7, num, endpoint=endpoint, retstep=True, dtype=np.float16, device=backend)
    want, want_step = np.linspace(0, 7, num, endpoint=endpoint, retstep=True, dtype=np.float16)
    same(got, want)
    np.testing.assert_equal(step, want_step)


def test_sum_of_integers_in_float16(backend):
    a = np.arange(12).reshape(3, 4)
    g = gnp.asarray(a, device=backend)
    same(gnp.sum(g, dtype=np.float16), np.sum(a, dtype=np.float16))
    same(g.sum(axis=1, keepdims=True, dtype=np.float16), a.sum(axis=1, keepdims=True, dtype=np.float16))


def test_diff_of_float16_with_scalar_ends(backend):
    a = np.arange(6).reshape(2, 3).astype(np.float16)
    same(gnp.diff(gnp.asarray(a, device=backend), prepend=1, append=0), np.diff(a, prepend=1, append=0))


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.int8], ids=lambda t: np.dtype(t).name)
def test_sinc_is_one_at_zero(backend, dt):
    x = np.array([0, 0.5, 1, -2, 3.25, 0]).astype(dt)
    got = gnp.sinc(gnp.asarray(x, device=backend))
    want = np.sinc(x)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get().astype(np.float64), want.astype(np.float64), rtol=1e-3, atol=1e-6)
    assert got.get()[0] == 1 and got.get()[-1] == 1


@pytest.mark.parametrize("copy", [True, False])
@pytest.mark.parametrize("sparse", [True, False])
def test_meshgrid_returns_numpys_container(backend, copy, sparse):
    x, y = gnp.arange(2, device=backend), gnp.arange(3, device=backend)
    assert type(gnp.meshgrid(x, y, copy=copy, sparse=sparse)) is type(
        np.meshgrid(np.arange(2), np.arange(3), copy=copy, sparse=sparse))
    assert gnp.meshgrid(copy=copy, sparse=sparse) == np.meshgrid(copy=copy, sparse=sparse)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_of_float16(backend, mode):
    rng = np.random.default_rng(0)
    a = (rng.random(20) * 4).astype(np.float16)
    v = (rng.random(5) * 4).astype(np.float16)
    b = np.arange(7).astype(np.int8)
    for x, y in [(a, v), (v, a), (a, b)]:
        for name in ("convolve", "correlate"):
            got = getattr(gnp, name)(gnp.asarray(x, device=backend), gnp.asarray(y, device=backend), mode)
            want = getattr(np, name)(x, y, mode)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got.get().astype(np.float64), want.astype(np.float64), rtol=1e-2)
