"""Complex data in numpy's NaN-ignoring reductions (a complex number is NaN where either part is;
nanvar is the mean squared magnitude, real), complex correlate (the second operand conjugated, and
numpy's swap of a longer one), and quantile/median with overwrite_input=True (the input may change,
as numpy's partitions it in place)."""
from __future__ import annotations

import warnings

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def complex_sample(dt, shape=(4, 3, 5)):
    rng = np.random.default_rng(0)
    a = (rng.random(shape) + 1j * rng.random(shape)).astype(dt)
    a[0, :] = np.nan
    a[:, 1] = complex(np.nan, 0)
    a[2, 2, 2] = complex(0, np.nan)
    return a


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 0, 2])
def test_nan_reductions_of_complex_as_numpy(backend, dt, name, axis):
    a = complex_sample(dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = getattr(gnp, name)(gnp.asarray(a, device=backend), axis=axis).get()
        want = getattr(np, name)(a, axis=axis)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=2e-5 if dt == np.complex64 else 1e-12)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128, np.float64], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("m, n", [(5, 21), (21, 5), (20, 21), (7, 7)])
@pytest.mark.parametrize("mode", ["valid", "same", "full"])
def test_correlate_conjugates_the_second_operand(backend, dt, m, n, mode):
    rng = np.random.default_rng(m * 100 + n)
    x = rng.random(m) + (1j * rng.random(m) if dt != np.float64 else 0)
    y = rng.random(n) + (1j * rng.random(n) if dt != np.float64 else 0)
    x, y = x.astype(dt), y.astype(dt)
    got = gnp.correlate(gnp.asarray(x, device=backend), gnp.asarray(y, device=backend), mode)
    want = np.correlate(x, y, mode)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want, rtol=1e-4)


def test_correlate_of_real_and_complex(backend):
    rng = np.random.default_rng(9)
    x, y = rng.random(30), rng.random(7) + 1j * rng.random(7)
    for a, b in ((x, y), (y, x)):
        got = gnp.correlate(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend), "full")
        np.testing.assert_allclose(got.get(), np.correlate(a, b, "full"))


@pytest.mark.parametrize("axis", [-1, None, (0, 2)])
def test_overwrite_input_may_change_the_input_and_gives_numpys_result(backend, axis):
    a = np.random.default_rng(1).random((10, 2, 3, 2))
    g = gnp.asarray(a, device=backend)
    got = gnp.quantile(g, [0.2, 0.7], axis=axis, overwrite_input=True, method="weibull")
    np.testing.assert_allclose(got.get(), np.quantile(a, [0.2, 0.7], axis=axis, method="weibull"))
    changed = g.get()
    assert not np.array_equal(changed, a)
    np.testing.assert_array_equal(np.sort(changed, axis=None), np.sort(a, axis=None))   # a's own values
    g = gnp.asarray(a, device=backend)
    np.testing.assert_allclose(gnp.median(g, axis=axis, overwrite_input=True).get(), np.median(a, axis=axis))
    g = gnp.asarray(a, device=backend)
    gnp.percentile(g, 50, axis=axis)
    np.testing.assert_array_equal(g.get(), a)          # without overwrite_input the input stays as it was


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_nanmedian_of_complex_as_numpy(backend, dt, axis):
    rng = np.random.default_rng(6)
    a = (rng.random((3, 4, 5)) + 1j * rng.random((3, 4, 5))).astype(dt)
    a[0, 1, :] = np.nan
    a[1, :, 2] = complex(1, np.nan)
    a[2, 2, 2] = complex(np.nan, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = gnp.nanmedian(gnp.asarray(a, device=backend), axis=axis, keepdims=True).get()
        want = np.nanmedian(a, axis=axis, keepdims=True)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("left, right", [(None, None), (1 + 2j, 3 - 1j), (2.0, -1)])
def test_interp_of_complex_fp_interpolates_each_part(backend, left, right):
    rng = np.random.default_rng(7)
    xp = np.sort(rng.random(10))
    fp = (rng.random(10) + 1j * rng.random(10)).astype(np.complex64)
    fp[3] = complex(np.inf, 1)
    x = rng.random(25) * 1.4 - 0.2
    up = lambda v: gnp.asarray(v, device=backend)   # noqa: E731
    got = gnp.interp(up(x), up(xp), up(fp), left, right)
    want = np.interp(x, xp, fp, left, right)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want)
    np.testing.assert_allclose(gnp.interp(up(x), up(xp), up(fp), period=1.0).get(), np.interp(x, xp, fp, period=1.0))


@pytest.mark.parametrize("dt", [np.complex64, np.complex128], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("bins", [[0, 2, 3], 4])
def test_histogram_sums_complex_weights(backend, dt, bins):
    values = np.asarray([1.3, 2.5, 2.3, 0.5, 7])
    weights = (np.asarray([1, -1, 2, 4, 1]) + 1j * np.asarray([2, 1, 2, 3, 9])).astype(dt)
    want, edges = np.histogram(values, bins=np.asarray(bins) if isinstance(bins, list) else bins, weights=weights)
    got, got_edges = gnp.histogram(gnp.asarray(values, device=backend),
                                   bins=gnp.asarray(bins, device=backend) if isinstance(bins, list) else bins,
                                   weights=gnp.asarray(weights, device=backend))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want)
    np.testing.assert_allclose(got_edges.get(), edges)


def test_bincount_refuses_complex_weights_as_numpy(backend):
    with pytest.raises(TypeError, match="safe"):
        gnp.bincount(gnp.asarray([0, 1], device=backend), weights=gnp.asarray(np.array([1j, 2]), device=backend))
