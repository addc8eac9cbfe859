"""pygpgpu.numpy scans (cumsum, cumprod: the block scan, its multi-level form, axes, dtypes) and
sorting (sort, argsort: bitonic, NaN last, stable ties) against numpy."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def up(x, backend):
    return gnp.asarray(x, device=backend)


def sample(shape, dtype, seed=0, lo=-9, hi=10):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(max(lo, 0) if dt.kind == "u" else lo, hi, shape).astype(dt)
    return (rng.standard_normal(shape) * 3).astype(dt)


def check(got, want, rtol=None):
    assert isinstance(got, gnp.ndarray)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got.get(), want, rtol=rtol or 1e-12, atol=rtol or 1e-12, equal_nan=True)
    else:
        np.testing.assert_array_equal(got.get(), want)


def check_float_scan(got, a, axis=None, dtype=None):
    """A float32 cumsum: numpy's dtype and shape; values within float32 rounding of the exact
    running sums (relative to the running sum of magnitudes: cancellation makes relative errors
    of the sums themselves meaningless, for numpy's sequential loop too)."""
    want = np.cumsum(a, axis=axis, dtype=dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    exact = np.cumsum(a.astype(np.float64), axis=axis)
    scale = np.cumsum(np.abs(a).astype(np.float64), axis=axis)
    assert np.all(np.abs(got.get() - exact) <= 4e-6 * scale + 1e-30)


# -- scans ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float64])
@pytest.mark.parametrize("n", [0, 1, 7, 2047, 2048, 2049, 50_001])
def test_cumsum_sizes_and_dtypes(backend, dtype, n):
    a = sample(n, dtype, n)
    check(up(a, backend).cumsum(), np.cumsum(a))        # int8 -> int64 as numpy, bool -> int64


def test_multi_level_scan(backend):
    a = sample(5_000_000, np.int32, 1)                  # 2442 tiles: the tiles' totals are scanned in two levels
    check(gnp.cumsum(up(a, backend)), np.cumsum(a))


def test_cumprod(backend):
    a = sample(5000, np.int64, 2, lo=-1, hi=2)          # products stay in range
    check(up(a, backend).cumprod(), np.cumprod(a))
    f = (1 + sample(3000, np.float64, 3) / 1000).astype(np.float64)
    check(up(f, backend).cumprod(), np.cumprod(f), rtol=1e-12)
    b = sample(100, np.bool_, 4)
    check(up(b, backend).cumprod(), np.cumprod(b))


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1])
def test_scan_axes(backend, axis):
    a = sample((4, 5, 3000), np.int32, 5)
    check(up(a, backend).cumsum(axis=axis), np.cumsum(a, axis=axis))
    check(gnp.cumprod(up(a[:, :, :6], backend), axis=axis), np.cumprod(a[:, :, :6], axis=axis))


def test_scan_of_views_dtype_out_and_numpy_entry_points(backend):
    a = sample((30, 40), np.float32, 6)
    ga = up(a, backend)
    check_float_scan(ga[::2, 3:].cumsum(axis=1), a[::2, 3:], axis=1)
    check_float_scan(ga.T.cumsum(axis=0), a.T, axis=0)
    check(ga.cumsum(dtype=np.float64), np.cumsum(a, dtype=np.float64), rtol=1e-12)
    out = gnp.empty((30, 40), np.float32, device=backend)
    assert ga.cumsum(axis=0, out=out) is out
    check_float_scan(out, a, axis=0)
    check_float_scan(np.cumsum(ga), a)
    check_float_scan(np.add.accumulate(ga), a, axis=0)
    check(np.multiply.accumulate(ga[:3, :3], axis=1), np.multiply.accumulate(a[:3, :3], axis=1), rtol=1e-5)


def test_float32_cumsum_accuracy(backend):
    x = np.random.default_rng(7).random(1_000_000).astype(np.float32)
    exact = np.cumsum(x.astype(np.float64))
    got = up(x, backend).cumsum().get()
    assert np.max(np.abs(got - exact) / exact) < 1e-5      # numpy's sequential float32 cumsum is worse


# -- sorting -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float32,
                                   np.float64])
@pytest.mark.parametrize("n", [0, 1, 2, 511, 512, 513, 70_000])
def test_sort_and_argsort(backend, dtype, n):
    a = sample(n, dtype, n, lo=-50, hi=50)                 # many ties: argsort must be stable
    if np.dtype(dtype).kind == "f" and n > 10:
        a[::17] = np.nan
        a[3::29] = -np.inf
        a[5::31] = -0.0
    g = up(a, backend)
    check(gnp.sort(g), np.sort(a))
    check(gnp.argsort(g), np.argsort(a, kind="stable"))
    check(g.argsort(), np.argsort(a, kind="stable"))


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_axes(backend, axis):
    a = sample((9, 700), np.float32, 8)
    a[2, ::5] = np.nan
    check(gnp.sort(up(a, backend), axis=axis), np.sort(a, axis=axis))
    check(gnp.argsort(up(a, backend), axis=axis), np.argsort(a, axis=axis, kind="stable"))
    small = sample((300, 5), np.int16, 9)                  # many short rows share a block
    check(gnp.sort(up(small, backend), axis=axis), np.sort(small, axis=axis))


def test_sort_in_place_and_views(backend):
    a = sample(1000, np.int32, 10)
    g = up(a, backend)
    buffer = g.buffer
    g.sort()
    assert g.buffer is buffer
    check(g, np.sort(a))
    h = up(a, backend)
    check(gnp.sort(h[::-3]), np.sort(a[::-3]))
    m = up(sample((20, 30), np.float64, 11), backend)
    m[:, 5:].sort(axis=0)
    want = sample((20, 30), np.float64, 11)
    want[:, 5:].sort(axis=0)
    check(m, want)


def test_sort_arguments(backend):
    g = up(np.array([3, 1, 2]), backend)
    check(gnp.sort(g, kind="stable"), np.sort(np.array([3, 1, 2])))
    with pytest.raises(ValueError, match="order"):
        gnp.sort(g, order="x")
    with pytest.raises(ValueError, match="kind"):
        gnp.sort(g, kind="bogus")
    with pytest.raises(np.exceptions.AxisError):
        gnp.sort(g, axis=1)
    with pytest.raises(TypeError, match="device array"):
        gnp.sort(np.array([1, 2]))


@pytest.mark.parametrize("path", ["radix", "bitonic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int32, np.uint32, np.int64, np.uint64,
                                   np.bool_])
def test_both_sort_paths(backend, path, dtype, monkeypatch):
    """The radix sort (long 1-D arrays) and the bitonic sort (short ones, axes) agree with numpy on
    tile boundaries, every NaN (also negative ones) last, -0.0 equal to 0.0, and stable ties."""
    from pygpgpu_translate.array_ops import _sort

    monkeypatch.setattr(_sort, "RADIX_MIN", 1 if path == "radix" else 1 << 40)
    for n in (1, 2, 2047, 2048, 2049, 6000):
        a = sample(n, dtype, n, lo=-30, hi=30)
        if np.dtype(dtype).kind == "f" and n > 100:
            a[::37] = np.nan
            a[1::41] = -np.array(np.nan, dtype)          # a NaN with the sign bit set
            a[2::43] = -0.0
            a[3::47] = np.inf
            a[4::53] = -np.inf
        g = up(a, backend)
        check(gnp.sort(g), np.sort(a))
        check(gnp.argsort(g), np.argsort(a, kind="stable"))
        check(gnp.sort(g[::-2]), np.sort(a[::-2]))
