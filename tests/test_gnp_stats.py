"""gnp's sort-based and counting functions (``quantile``/``percentile``/``median`` and their
nan- forms, ``partition``/``argpartition``, ``unique``, ``bincount``, ``histogram``,
``searchsorted``, ``isin``, ``interp``) against numpy on the same host data: dtype, shape and
values (exact, except where noted), over dtypes, shapes (empty ones and NaNs where numpy
defines the result), axes and methods; numpy's exceptions for bad input; ``np.<fn>(g)``
dispatches to gnp."""
from __future__ import annotations

import warnings

import numpy as np
import pygpgpu.numpy as gnp
import pytest

RNG = np.random.default_rng(1234)


def up(x, backend):
    return gnp.asarray(x, device=backend)


def same(got, want, exact=True):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w, exact)
        return
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    host = got.get()
    assert (host.dtype, host.shape) == (want.dtype, want.shape), ((host.dtype, host.shape), (want.dtype, want.shape))
    if exact:
        np.testing.assert_array_equal(host, want)
    else:
        np.testing.assert_allclose(host, want, rtol=1e-5 if want.dtype == np.float32 else 1e-12)


def data(shape, dtype, nans=False):
    if np.dtype(dtype).kind == "f":
        x = RNG.normal(size=shape).astype(dtype)
        x[RNG.random(shape) < 0.2] = 1.0         # ties
        if nans and x.size:
            x.reshape(-1)[RNG.integers(0, x.size, max(1, x.size // 5))] = np.nan
        return x
    if np.dtype(dtype).kind == "b":
        return RNG.random(shape) < 0.5
    return RNG.integers(0, 9, size=shape).astype(dtype)


QUANTILE_CASES = [((17,), None), ((4, 6), 0), ((4, 6), 1), ((3, 4, 5), (0, 2)), ((3, 4, 5), -1), ((1,), None),
                  ((6, 1), 1)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("shape,axis", QUANTILE_CASES)
def test_quantile_percentile_median(backend, dtype, shape, axis):
    x = data(shape, dtype)
    g = up(x, backend)
    for q in (0.5, 0.0, 1.0, 0.37, np.float64(0.4), [0.1, 0.75], np.array([[0.2], [0.99]])):
        same(gnp.quantile(g, q, axis=axis), np.quantile(x, q, axis=axis))
    same(gnp.percentile(g, 30, axis=axis), np.percentile(x, 30, axis=axis))
    same(gnp.percentile(g, [5, 50, 95], axis=axis, keepdims=True),
         np.percentile(x, [5, 50, 95], axis=axis, keepdims=True))
    same(gnp.median(g, axis=axis), np.median(x, axis=axis))
    same(gnp.median(g, axis=axis, keepdims=True), np.median(x, axis=axis, keepdims=True))


@pytest.mark.parametrize("method", ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                                    "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
                                    "normal_unbiased", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_quantile_methods(backend, method, dtype):
    x = data((5, 8), dtype)
    g = up(x, backend)
    q = [0.0, 0.13, 0.5, 0.62, 1.0]
    same(gnp.quantile(g, q, axis=1, method=method), np.quantile(x, q, axis=1, method=method))
    same(gnp.quantile(g, 0.4, method=method), np.quantile(x, 0.4, method=method))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_rows_and_nan_forms(backend, dtype):
    x = data((6, 7), dtype, nans=True)
    x[2] = np.nan                      # an all-NaN row
    x[4, :] = np.arange(7)             # a row without NaN
    g = up(x, backend)
    same(gnp.quantile(g, [0.25, 0.5], axis=1), np.quantile(x, [0.25, 0.5], axis=1))
    same(gnp.median(g, axis=1), np.median(x, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # numpy warns of all-NaN and empty slices
        same(gnp.nanmedian(g, axis=1), np.nanmedian(x, axis=1))
        same(gnp.nanmedian(g, axis=0, keepdims=True), np.nanmedian(x, axis=0, keepdims=True))
        same(gnp.nanmedian(g), np.nanmedian(x))
        for q in (0.3, [0.0, 0.5, 1.0]):
            same(gnp.nanquantile(g, q, axis=1), np.nanquantile(x, q, axis=1))
            same(gnp.nanquantile(g, q, axis=0), np.nanquantile(x, q, axis=0))
        same(gnp.nanpercentile(g, 40, axis=1, keepdims=True), np.nanpercentile(x, 40, axis=1, keepdims=True))
    even = x[4:5, :6]
    same(gnp.nanmedian(up(even, backend), axis=1), np.nanmedian(even, axis=1))


@pytest.mark.parametrize("method", ["linear", "midpoint", "interpolated_inverted_cdf", "hazen", "weibull",
                                    "median_unbiased", "normal_unbiased", "lower", "higher", "nearest"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_nanquantile_methods(backend, method, dtype):
    x = data((7, 9), dtype, nans=True)
    if x.dtype.kind == "f":
        x[3] = np.nan
        x[5, 1:] = np.nan                  # one number in the row
    g = up(x, backend)
    q = [0.0, 0.05, 0.3, 0.5, 0.77, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(gnp.nanquantile(g, q, axis=1, method=method), np.nanquantile(x, q, axis=1, method=method))
        same(gnp.nanquantile(g, 0.45, axis=0, method=method), np.nanquantile(x, 0.45, axis=0, method=method))
        same(gnp.nanpercentile(g, 12.5, method=method), np.nanpercentile(x, 12.5, method=method))


def test_quantile_errors_and_empty(backend):
    g = up(np.arange(6.0), backend)
    with pytest.raises(ValueError, match="range"):
        gnp.quantile(g, 1.5)
    with pytest.raises(ValueError, match="range"):
        gnp.percentile(g, -1)
    with pytest.raises(ValueError, match="not a valid method"):
        gnp.quantile(g, 0.5, method="bogus")
    with pytest.raises(np.exceptions.AxisError):
        gnp.median(g, axis=1)
    with pytest.raises(IndexError):
        gnp.quantile(up(np.zeros(0), backend), 0.5)
    with pytest.raises(NotImplementedError, match="remove the NaNs"):
        gnp.nanquantile(g, 0.5, method="inverted_cdf")
    with pytest.raises(ValueError, match="not a valid method"):
        gnp.nanpercentile(g, 5, method="bogus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # numpy warns of all-NaN and empty slices
        same(gnp.median(up(np.zeros(0), backend)), np.median(np.zeros(0)))
        same(gnp.median(up(np.zeros((0, 3)), backend), axis=0), np.median(np.zeros((0, 3)), axis=0))
    out = gnp.empty((), np.float64, device=backend)
    assert gnp.median(g, out=out) is out and out.get() == np.median(np.arange(6.0))


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint32])
@pytest.mark.parametrize("shape,axis", [((20,), -1), ((4, 9), 1), ((4, 9), 0), ((3, 4, 5), None)])
def test_partition_argpartition(backend, dtype, shape, axis):
    x = data(shape, dtype, nans=True)
    g = up(x, backend)
    n = x.size if axis is None else x.shape[axis]
    for kth in (0, n // 2, -1, [1, n - 2]):
        p = gnp.partition(g, kth, axis=axis).get()
        want = np.partition(x, kth, axis=axis)
        assert (p.dtype, p.shape) == (want.dtype, want.shape)
        ax = -1 if axis is None else axis
        for k in np.atleast_1d(kth):           # numpy's contract: the kth elements are where a sort puts them
            np.testing.assert_array_equal(np.take(p, k, axis=ax), np.take(want, k, axis=ax))
        np.testing.assert_array_equal(np.sort(p, axis=ax), np.sort(want, axis=ax))
        ip = gnp.argpartition(g, kth, axis=axis).get()
        assert ip.dtype == np.int64
        flat = x.reshape(-1) if axis is None else x
        np.testing.assert_array_equal(np.take_along_axis(flat, ip, axis=ax), p)
    h = g.copy() if g.ndim else g
    if axis is not None:
        assert h.partition(n // 2, axis=axis) is None            # in place, as numpy's method
        y = x.copy()
        y.partition(n // 2, axis=axis)
        np.testing.assert_array_equal(np.take(h.get(), n // 2, axis=axis), np.take(y, n // 2, axis=axis))
        idx = g.argpartition(0, axis=axis).get()
        np.testing.assert_array_equal(np.take(np.take_along_axis(x, idx, axis=axis), 0, axis=axis),
                                      np.take(np.partition(x, 0, axis=axis), 0, axis=axis))


def test_partition_errors(backend):
    g = up(np.arange(5), backend)
    with pytest.raises(ValueError, match="out of bounds"):
        gnp.partition(g, 5)
    with pytest.raises(ValueError, match="out of bounds"):
        gnp.argpartition(g, -6)
    with pytest.raises(TypeError, match="integer"):
        gnp.partition(g, 1.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int64, np.bool_])
@pytest.mark.parametrize("shape", [(0,), (1,), (37,), (5, 6)])
def test_unique(backend, dtype, shape):
    x = data(shape, dtype, nans=True)
    g = up(x, backend)
    same(gnp.unique(g), np.unique(x))
    same(gnp.unique(g, return_index=True, return_inverse=True, return_counts=True),
         np.unique(x, return_index=True, return_inverse=True, return_counts=True))
    same(gnp.unique(g, return_counts=True, equal_nan=False), np.unique(x, return_counts=True, equal_nan=False))


@pytest.mark.parametrize("shape", [(0,), (23,), (4, 5)])
def test_unique_array_api_forms(backend, shape):
    x = data(shape, np.float64, nans=True)
    g = up(x, backend)
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        got, want = getattr(gnp, name)(g), getattr(np, name)(x)
        assert type(got).__name__ == type(want).__name__ and got._fields == want._fields
        if name == "unique_inverse":       # numpy's unstable sort maps its distinct NaNs in any order
            same(got.values, want.values)
            inv = got.inverse_indices.get()
            assert (inv.dtype, inv.shape) == (want.inverse_indices.dtype, want.inverse_indices.shape)
            np.testing.assert_array_equal(want.values[inv], x)
            continue
        same(tuple(got), tuple(want))
        same(tuple(getattr(np, name)(g)), tuple(want))                 # dispatched
    same(gnp.unique_values(g), np.sort(np.unique_values(x)))           # numpy leaves its order open


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_])
@pytest.mark.parametrize("shape,axis", [((9, 3), 0), ((4, 10), 1), ((5, 2, 3), 1), ((3, 4, 2), -1), ((0, 3), 0),
                                        ((6,), 0)])
def test_unique_along_an_axis(backend, dtype, shape, axis):
    x = RNG.integers(0, 2, size=shape).astype(dtype)       # few values: repeated slices
    g = up(x, backend)
    same(gnp.unique(g, axis=axis), np.unique(x, axis=axis))
    same(gnp.unique(g, return_index=True, return_inverse=True, return_counts=True, axis=axis),
         np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("size", [0, 1, 50])
def test_bincount(backend, dtype, size):
    x = data((size,), dtype)
    g = up(x, backend)
    same(gnp.bincount(g), np.bincount(x))
    same(gnp.bincount(g, minlength=12), np.bincount(x, minlength=12))
    w = RNG.normal(size=size) * 1e3
    same(gnp.bincount(g, weights=up(w, backend)), np.bincount(x, weights=w))          # numpy's order: exact
    w32 = w.astype(np.float32)
    same(gnp.bincount(g, weights=up(w32, backend), minlength=3), np.bincount(x, weights=w32, minlength=3))


def test_bincount_errors(backend):
    with pytest.raises(ValueError, match="negative"):
        gnp.bincount(up(np.array([1, -1, 2]), backend))
    with pytest.raises(TypeError, match="safe"):
        gnp.bincount(up(np.array([1.0, 2.0]), backend))
    with pytest.raises(ValueError):
        gnp.bincount(up(np.zeros((2, 2), np.int64), backend))
    with pytest.raises(ValueError, match="same length"):
        gnp.bincount(up(np.arange(3), backend), weights=up(np.ones(2), backend))
    with pytest.raises(ValueError, match="minlength"):
        gnp.bincount(up(np.arange(3), backend), minlength=-1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
@pytest.mark.parametrize("bins,rng", [(10, None), (1, None), (7, (-1.0, 2.5)), (4, (0, 0)),
                                      ([-2.0, -0.5, 0.0, 0.5, 3.0], None), (np.arange(-3, 4), None)])
def test_histogram(backend, dtype, bins, rng):
    x = data((60,), dtype)
    g = up(x, backend)
    same(gnp.histogram(g, bins=bins, range=rng), np.histogram(x, bins=bins, range=rng))
    w = RNG.random(60)
    got = gnp.histogram(g, bins=bins, range=rng, weights=up(w, backend))
    want = np.histogram(x, bins=bins, range=rng, weights=w)
    same(got, want, exact=np.ndim(bins) == 0)        # array bins: numpy differences a cumsum (rounding)
    same(gnp.histogram(g, bins=bins, range=rng, density=True), np.histogram(x, bins=bins, range=rng, density=True),
         exact=False)
    dev_bins = gnp.histogram(g, bins=up(np.asarray(bins, np.float64), backend)) if np.ndim(bins) else None
    if dev_bins is not None:
        same(dev_bins, np.histogram(x, bins=np.asarray(bins, np.float64)))


def test_histogram_edges_and_errors(backend):
    x = np.array([0.5, np.nan, 1.5, 2.0])
    g = up(x, backend)
    same(gnp.histogram(g, bins=2, range=(0, 2)), np.histogram(x, bins=2, range=(0, 2)))
    same(gnp.histogram(up(np.zeros(0), backend)), np.histogram(np.zeros(0)))
    with pytest.raises(ValueError, match="not finite"):
        gnp.histogram(g)
    with pytest.raises(ValueError, match="larger"):
        gnp.histogram(g, range=(2, 1))
    with pytest.raises(ValueError, match="positive"):
        gnp.histogram(g, bins=0, range=(0, 1))
    with pytest.raises(ValueError, match="monotonically"):
        gnp.histogram(g, bins=[0, 2, 1])
    with pytest.raises(NotImplementedError, match="estimator"):
        gnp.histogram(g, bins="auto")


@pytest.mark.parametrize("adt,vdt", [(np.float64, np.float64), (np.float32, np.float64), (np.int32, np.int64),
                                     (np.int64, np.float32), (np.uint8, np.int8)])
def test_searchsorted(backend, adt, vdt):
    a = np.sort(data((25,), adt, nans=True))
    v = data((3, 7), vdt, nans=True)
    ga, gv = up(a, backend), up(v, backend)
    for side in ("left", "right"):
        same(gnp.searchsorted(ga, gv, side=side), np.searchsorted(a, v, side=side))
        same(ga.searchsorted(gv, side), a.searchsorted(v, side))
    same(gnp.searchsorted(ga, 3), np.asarray(np.searchsorted(a, 3)))
    perm = RNG.permutation(25)
    shuffled = a[perm]
    sorter = np.argsort(shuffled, kind="stable")
    same(gnp.searchsorted(up(shuffled, backend), gv, sorter=up(sorter, backend)),
         np.searchsorted(shuffled, v, sorter=sorter))
    same(gnp.searchsorted(up(a[:0], backend), gv), np.searchsorted(a[:0], v))
    with pytest.raises(ValueError, match="side"):
        gnp.searchsorted(ga, gv, side="middle")


@pytest.mark.parametrize("edt,tdt", [(np.int64, np.int64), (np.float32, np.float64), (np.int8, np.float32)])
@pytest.mark.parametrize("tsize", [0, 1, 9])
def test_isin(backend, edt, tdt, tsize):
    e = data((4, 6), edt, nans=True)
    t = data((tsize,), tdt, nans=True)
    ge, gt = up(e, backend), up(t, backend)
    same(gnp.isin(ge, gt), np.isin(e, t))
    same(gnp.isin(ge, gt, invert=True), np.isin(e, t, invert=True))
    same(gnp.isin(ge, 1), np.isin(e, 1))
    same(np.isin(ge, gt), np.isin(e, t))           # __array_function__ dispatch


def test_interp(backend):
    xp = np.array([-1.0, 0.0, 0.5, 2.0, 2.0, 4.0])
    fp = np.array([3.0, -1.0, 2.5, 0.0, 1.0, np.inf])
    x = np.concatenate([np.linspace(-3, 6, 41), [np.nan, 2.0, 4.0, -1.0]])
    gx, gxp, gfp = up(x, backend), up(xp, backend), up(fp, backend)
    same(gnp.interp(gx, gxp, gfp), np.interp(x, xp, fp))
    same(gnp.interp(gx, gxp, gfp, left=-7, right=9.5), np.interp(x, xp, fp, left=-7, right=9.5))
    xi = np.arange(-2, 6, dtype=np.int32).reshape(2, 4)
    same(gnp.interp(up(xi, backend), gxp, up(fp.astype(np.float32), backend)), np.interp(xi, xp, fp.astype(np.float32)))
    same(gnp.interp(1.25, gxp, gfp), np.asarray(np.interp(1.25, xp, fp)))
    xq, fq = np.array([350.0, 10.0, 190.0]), np.array([1.0, 2.0, 3.0])
    xs = np.linspace(-400, 400, 33)
    same(gnp.interp(up(xs, backend), up(xq, backend), up(fq, backend), period=360),
         np.interp(xs, xq, fq, period=360))
    # where the slope form is NaN (infinite fp): numpy's form from the right end, then the shared value
    xi2, fi2 = np.array([0.0, 1.0, 2.0, 3.0]), np.array([-np.inf, 1.0, np.inf, np.inf])
    x2 = np.linspace(-0.5, 3.5, 17)
    same(gnp.interp(up(x2, backend), up(xi2, backend), up(fi2, backend)), np.interp(x2, xi2, fi2))
    with pytest.raises(ValueError, match="same length"):
        gnp.interp(gx, gxp, gfp[:3])
    with pytest.raises(ValueError, match="empty"):
        gnp.interp(gx, gxp[:0], gfp[:0])
    with pytest.raises(ValueError, match="period"):
        gnp.interp(gx, gxp, gfp, period=0)


def test_numpy_dispatch_and_no_transfers(backend):
    x = data((8, 5), np.float64)
    g = up(x, backend)
    same(np.quantile(g, 0.3, axis=0), np.quantile(x, 0.3, axis=0))
    same(np.median(g, axis=1), np.median(x, axis=1))
    same(np.unique(g), np.unique(x))
    gnp.reset_transfer_stats()
    gnp.quantile(g, [0.2, 0.8], axis=1)
    gnp.median(g, axis=0)
    gnp.nanmedian(g, axis=0)
    gnp.searchsorted(gnp.sort(g.reshape(-1)), g)
    gnp.isin(g, g[0])
    gnp.unique(g, return_inverse=True, return_counts=True)      # one count read back: the result's size
    stats = gnp.transfer_stats()
    assert stats["h2d"] == 0, stats
    assert stats["d2h"] <= 1, stats


def test_long_arrays(backend):
    """Past the radix sort's threshold the 1-D sorts are radix sorts: still stable (numpy's
    first indices, bincount's adding order) and NaN last."""
    n = 20000
    x = RNG.normal(size=n)
    x[RNG.random(n) < 0.3] = 0.5
    x[::997] = np.nan
    g = up(x, backend)
    same(gnp.quantile(g, [0.1, 0.5]), np.quantile(x, [0.1, 0.5]))
    same(gnp.nanmedian(g), np.nanmedian(x))
    same(gnp.unique(g, return_index=True, return_inverse=True, return_counts=True),
         np.unique(x, return_index=True, return_inverse=True, return_counts=True))
    k = RNG.integers(0, 300, size=n)
    w = RNG.normal(size=n)
    same(gnp.bincount(up(k, backend), up(w, backend)), np.bincount(k, w))
    xn = np.nan_to_num(x)
    same(gnp.histogram(up(xn, backend), 40, weights=up(w, backend)), np.histogram(xn, 40, weights=w))
    same(gnp.isin(g, g[:3000]), np.isin(x, x[:3000]))


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.uint8])
@pytest.mark.parametrize("sizes", [(15, 9), (0, 4), (6, 0), (1, 1)])
def test_set_operations(backend, dtype, sizes):
    a = RNG.integers(0, 12, size=sizes[0]).astype(dtype).reshape(-1, 1) if sizes[0] % 3 else \
        RNG.integers(0, 12, size=sizes[0]).astype(dtype)
    b = RNG.integers(5, 20, size=sizes[1]).astype(dtype)
    ga, gb = up(a, backend), up(b, backend)
    for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
        same(getattr(gnp, name)(ga, gb), getattr(np, name)(a, b))
        same(getattr(np, name)(ga, gb), getattr(np, name)(a, b))       # dispatched
    same(gnp.intersect1d(ga, gb, return_indices=True), np.intersect1d(a, b, return_indices=True))
    ua, ub = np.unique(a), np.unique(b)
    for name in ("intersect1d", "setdiff1d", "setxor1d"):
        same(getattr(gnp, name)(up(ua, backend), up(ub, backend), assume_unique=True),
             getattr(np, name)(ua, ub, assume_unique=True))


def test_set_operations_with_nan(backend):
    a = np.array([1.0, np.nan, 2.0, np.nan, 3.0])
    b = np.array([np.nan, 3.0, 4.0])
    for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
        same(getattr(gnp, name)(up(a, backend), up(b, backend)), getattr(np, name)(a, b))


@pytest.mark.parametrize("nkeys", [1, 2, 3])
def test_lexsort(backend, nkeys):
    keys = [RNG.integers(0, 3, size=40) for _ in range(nkeys)]
    keys[0] = keys[0].astype(np.float32)
    keys[0][::9] = np.nan
    same(gnp.lexsort([up(k, backend) for k in keys]), np.lexsort(keys))
    if nkeys > 1:
        stacked = np.stack(keys[1:])
        same(gnp.lexsort(up(stacked, backend)), np.lexsort(stacked))
    with pytest.raises(ValueError, match="same shape"):
        gnp.lexsort([up(keys[0], backend), up(keys[0][:5], backend)])


@pytest.mark.parametrize("bins", [[0.0, 1.0, 2.5, 4.0], [4.0, 2.5, 2.5, 1.0, 0.0], [1.0], [2.0, 2.0]])
@pytest.mark.parametrize("right", [False, True])
def test_digitize(backend, bins, right):
    x = np.concatenate([np.linspace(-1, 5, 25), [np.nan, 2.5, 1.0]])
    b = np.array(bins)
    same(gnp.digitize(up(x, backend), up(b, backend), right=right), np.digitize(x, b, right=right))
    xi = np.arange(-1, 6).astype(np.int32)
    same(gnp.digitize(up(xi, backend), up(b, backend), right), np.digitize(xi, b, right))
    with pytest.raises(ValueError, match="monotonically"):
        gnp.digitize(up(x, backend), up(np.array([0.0, 2.0, 1.0]), backend))
