"""gnp reductions on webgpu device arrays (issue 35), compared with numpy on lavapipe.

WGSL has no 64-bit integers; the device says so (``int64 = False``, an optional Device attribute
of the protocol), and gnp's reduction kernels then count and index in 32 bits: argmin/argmax give
int32 positions, arrays too large for 32-bit index arithmetic are refused, and a reduction whose
numpy result type is 64-bit (the sum of int32) is refused naming the dtype= that works."""
from __future__ import annotations

import numpy as np
import pytest

from webgpu_support import webgpu_device


@pytest.fixture(scope="module")
def dev():
    return webgpu_device()


def _up(a):
    import pygpgpu.numpy as gnp
    return gnp.asarray(a, device="webgpu")


def _sample(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.uniform(-50, 50, shape).astype(dtype)
    return rng.integers(0, 1000, shape).astype(dtype)


@pytest.mark.parametrize("layout", ["device", "gpu", "cpu"])
def test_float32_reductions_match_numpy(dev, layout, monkeypatch):
    """One long row (split over groups: two passes), short rows (columns kernel), long columns
    (chunked: two passes), a middle axis; both variants of the rows kernel (GPU strided with
    vector loads, CPU chunked) whatever the adapter is."""
    from pygpgpu_translate.array_ops import _reduction

    if layout != "device":
        monkeypatch.setattr(_reduction, "cpu_layout", lambda device: layout == "cpu")
    cases = [((100_003,), None), ((3, 20_000), 1), ((500, 5), 1), ((3000, 7), 0), ((6, 50, 70), 1)]
    for k, (shape, axis) in enumerate(cases):
        a = _sample(shape, np.float32, k)
        g = _up(a)
        for op in ("sum", "max", "min", "mean", "prod"):
            want = getattr(np, op)(a.astype(np.float64) if op != "prod" else a / 50, axis=axis)
            got = getattr(g if op != "prod" else g / np.float32(50), op)(axis=axis)
            assert got.dtype == np.float32, op
            np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=1e-2, err_msg=f"{op} {shape} {axis}")


@pytest.mark.parametrize("layout", ["device", "gpu", "cpu"])
def test_argmax_and_argmin_give_int32_positions_as_numpy(dev, layout, monkeypatch):
    from pygpgpu_translate.array_ops import _reduction

    if layout != "device":
        monkeypatch.setattr(_reduction, "cpu_layout", lambda device: layout == "cpu")
    for k, (shape, axis) in enumerate([((100_003,), None), ((3, 20_000), 1), ((3000, 7), 0), ((40, 9), 1)]):
        a = _sample(shape, np.float32, 20 + k)
        a.flat[len(a.flat) // 3] = 99.0          # ties: the first position wins, as in numpy
        a.flat[len(a.flat) // 2] = 99.0
        a.flat[len(a.flat) // 5] = -99.0
        g = _up(a)
        for op in ("argmax", "argmin"):
            got = getattr(g, op)(axis=axis)
            assert got.dtype == np.int32, op
            np.testing.assert_array_equal(np.asarray(got), getattr(np, op)(a, axis=axis), err_msg=f"{op} {shape}")


def test_integer_reductions_with_a_32_bit_result(dev):
    a = _sample((70_000,), np.int32, 30)
    g = _up(a)
    assert g.max().dtype == np.int32
    assert int(np.asarray(g.max())) == a.max() and int(np.asarray(g.min())) == a.min()
    assert int(np.asarray(g.sum(dtype=np.int32))) == a.sum(dtype=np.int32)
    u = _up(a.astype(np.uint32).reshape(7, 10_000))
    np.testing.assert_array_equal(np.asarray(u.max(axis=1)), a.astype(np.uint32).reshape(7, -1).max(axis=1))
    np.testing.assert_array_equal(np.asarray(u.argmin(axis=0)), a.astype(np.uint32).reshape(7, -1).argmin(axis=0))


def test_cumsum_and_a_user_reduction(dev):
    import pygpgpu
    import pygpgpu.numpy as gnp

    a = _sample((5000,), np.float32, 40)
    np.testing.assert_allclose(np.asarray(gnp.cumsum(_up(a))), np.cumsum(a.astype(np.float64)), rtol=1e-4, atol=0.5)

    @pygpgpu.reduce(identity=-np.inf)
    def biggest(x, y):
        return x if x > y else y
    b = _sample((3, 20_000), np.float32, 41)
    np.testing.assert_array_equal(np.asarray(biggest(_up(b), axis=1)), b.max(axis=1))


def test_a_64_bit_result_is_refused_naming_the_dtype_that_works(dev):
    g = _up(np.arange(10, dtype=np.int32))
    with pytest.raises(TypeError, match=r"int64.*webgpu:0.*64-bit integers.*dtype="):
        g.sum()


def test_an_array_too_large_for_32_bit_indexing_is_refused(dev, monkeypatch):
    """The limit itself (2**30 elements, past any WebGPU storage buffer of 4-byte numbers) is
    lowered here so that a small array meets it."""
    from pygpgpu_translate.array_ops import _reduction

    monkeypatch.setattr(_reduction, "INDEX32_LIMIT", 1000)
    g = _up(np.ones(1000, np.float32))
    with pytest.raises(ValueError, match=r"gnp\.sum.*1000 elements.*webgpu:0.*64-bit integers.*at most 999"):
        g.sum()
    assert float(np.asarray(_up(np.ones(999, np.float32)).sum())) == 999.0


# ---- bool results and the NaN-ignoring reductions (bool arrays: bytes packed in WGSL's 32-bit words) ----
_SHAPES = [((1001,), None), ((1001, 37), 1), ((37, 1001), 0), ((5, 7, 9), 1), ((3, 4001), -1)]


def _with_nans_and_zeros(shape, dtype, seed):
    """Values with zeros (for any/all/count_nonzero) and, for floats, NaNs; some rows all NaN or all zero."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    a = rng.integers(0, 4, shape).astype(dtype) if np.dtype(dtype).kind != "f" else \
        np.where(rng.random(shape) < 0.3, 0, rng.uniform(-50, 50, shape)).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[rng.random(shape) < 0.2] = np.nan
        if a.ndim == 2:
            a[1] = np.nan
    if a.ndim == 2:
        a[0] = 0
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32, np.bool_])
def test_any_all_and_count_nonzero_match_numpy(dev, dtype):
    import pygpgpu.numpy as gnp

    for k, (shape, axis) in enumerate(_SHAPES):
        a = _with_nans_and_zeros(shape, dtype, 50 + k)
        g = _up(a)
        for op in ("any", "all"):
            got = getattr(gnp, op)(g, axis=axis)
            assert got.dtype == np.bool_, op
            np.testing.assert_array_equal(np.asarray(got), getattr(np, op)(a, axis=axis), err_msg=f"{op} {shape} {axis}")
        # the same through the methods, keepdims too (the bool result written byte by byte by neighbouring items)
        np.testing.assert_array_equal(np.asarray(g.any(axis=axis, keepdims=True)), a.any(axis=axis, keepdims=True))
        got = gnp.count_nonzero(g, axis=axis)
        assert got.dtype == np.int32            # numpy's intp: int32 on a device without 64-bit integers
        np.testing.assert_array_equal(np.asarray(got), np.count_nonzero(a, axis=axis), err_msg=f"{shape} {axis}")


def test_nan_reductions_of_float32_match_numpy(dev):
    import warnings

    import pygpgpu.numpy as gnp

    for k, (shape, axis) in enumerate(_SHAPES):
        a = _with_nans_and_zeros(shape, np.float32, 60 + k)
        g = _up(a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)      # all-NaN rows: numpy's warning, NaN results
            for op in ("nansum", "nanmax", "nanmin", "nanmean", "nanprod"):
                src = a / np.float32(50) if op == "nanprod" else a
                want = getattr(np, op)(src, axis=axis)
                got = getattr(gnp, op)(_up(src) if op == "nanprod" else g, axis=axis)
                assert got.dtype == np.float32, op
                np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=1e-3, err_msg=f"{op} {shape} {axis}")
            for op in ("nanargmax", "nanargmin"):
                if axis is None or not np.isnan(a).all(axis=axis).any():
                    np.testing.assert_array_equal(np.asarray(getattr(gnp, op)(g, axis=axis)),
                                                  getattr(np, op)(a, axis=axis), err_msg=f"{op} {shape}")


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.bool_])
def test_nan_reductions_of_integers_and_bools_match_numpy(dev, dtype):
    """Integers and bools hold no NaN: the ordinary reductions, in their 32-bit types."""
    import pygpgpu.numpy as gnp

    for k, (shape, axis) in enumerate(_SHAPES):
        a = _with_nans_and_zeros(shape, dtype, 70 + k)
        g = _up(a)
        for op in ("nanmax", "nanmin"):
            got = getattr(gnp, op)(g, axis=axis)
            assert got.dtype == a.dtype, op
            np.testing.assert_array_equal(np.asarray(got), getattr(np, op)(a, axis=axis), err_msg=f"{op} {shape}")
        want = np.nansum(a, axis=axis, dtype=np.int32)
        np.testing.assert_array_equal(np.asarray(gnp.nansum(g, axis=axis, dtype=np.int32)), want)
        f = g.astype(np.float32)
        np.testing.assert_allclose(np.asarray(gnp.nanmean(f, axis=axis)), np.nanmean(a.astype(np.float32), axis=axis),
                                   rtol=1e-6)


def test_a_nan_reduction_with_a_64_bit_result_is_refused_naming_the_dtype(dev):
    import pygpgpu.numpy as gnp

    g = _up(np.arange(10, dtype=np.int32))
    with pytest.raises(TypeError, match=r"int64.*webgpu:0.*64-bit integers"):
        gnp.nansum(g)
    with pytest.raises(TypeError, match=r"float64.*webgpu:0"):
        gnp.nanmean(g)


def test_bool_arrays_round_trip_and_mask_elementwise(dev):
    """Bool arrays of sizes that end inside a word; masks made and used on the device."""
    import pygpgpu.numpy as gnp

    for n in (1, 3, 5, 1027):
        a = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
        a[::3] = np.nan
        g = _up(a)
        mask = gnp.isnan(g)
        assert mask.dtype == np.bool_
        np.testing.assert_array_equal(np.asarray(mask), np.isnan(a))
        np.testing.assert_array_equal(np.asarray(_up(np.isnan(a))), np.isnan(a))
        np.testing.assert_array_equal(np.asarray(gnp.where(mask, np.float32(0), g)), np.where(np.isnan(a), 0, a))
        np.testing.assert_array_equal(np.asarray(gnp.logical_not(mask)), ~np.isnan(a))
