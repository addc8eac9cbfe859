"""pygpgpu.numpy as numpy does it (bugs found by trying gnp as a CuPy user would), each
compared with numpy: fills of C-contiguous prefixes (``g[0] = 5`` of a matrix), numpy's setitem
conversion of scalars, ``logical_xor`` of non-bool values, ``round`` with negative decimals and
of integers, ``np.matmul``, ``value in g``, ``bool(g)``'s errors, ``np.zeros_like(g)`` and
``np.result_type(g, ...)``. Every test runs real kernels on each backend of the run."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def up(x, backend):
    return gnp.asarray(x, device=backend)


def check(got, want):
    """``got`` (a device array) equals numpy's ``want`` exactly: dtype, shape and values."""
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


# -- a C-contiguous prefix (g[0], g[:2]) shares the buffer as a plain array: fill only its bytes ---------------
PREFIX_WRITES = {
    "g[0, 0, 0] = 5": lambda x: x.__setitem__((0, 0, 0), 5),
    "g[0] = 2.7": lambda x: x.__setitem__(0, 2.7),
    "g[:2] = 7": lambda x: x.__setitem__(slice(0, 2), 7),
    "g[0].fill(-1)": lambda x: x[0].fill(-1),
    "g.reshape(-1)[:5].fill(0)": lambda x: x.reshape(-1)[:5].fill(0),
    "g[0].view(uint32).fill(0)": lambda x: x[0].view(np.uint32).fill(0),
}


@pytest.mark.parametrize("write", PREFIX_WRITES, ids=list(PREFIX_WRITES))
def test_writes_to_a_contiguous_prefix_leave_the_rest(backend, write):
    host = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    g = up(host, backend)
    PREFIX_WRITES[write](g)
    PREFIX_WRITES[write](host)
    check(g, host)


def test_whole_array_fills_still_fill(backend):
    g = up(np.arange(12, dtype=np.float32).reshape(3, 4), backend)
    g.fill(1.5)
    check(g, np.full((3, 4), 1.5, np.float32))
    g[...] = 0
    check(g, np.zeros((3, 4), np.float32))
    check(gnp.full((5, 7), 3, np.int16, device=backend), np.full((5, 7), 3, np.int16))


# -- scalars convert as numpy's setitem converts them ---------------------------------------------------------
@pytest.mark.parametrize("value, error", [
    (np.float64(np.nan), ValueError), (np.float32(np.nan), ValueError), (float("inf"), OverflowError),
    (np.float64(3e9), OverflowError), (1e20, OverflowError),
], ids=["np-nan", "np-float32-nan", "inf", "np-3e9", "1e20"])
@pytest.mark.parametrize("key", [(0, 0), 0, Ellipsis, (slice(None), 1)], ids=["item", "row", "all", "column"])
def test_unrepresentable_scalars_raise_like_numpy(backend, value, error, key):
    host = np.arange(6, dtype=np.int32).reshape(2, 3)
    with pytest.raises(error):
        host[key] = value
    g = up(host, backend)
    with pytest.raises(error):
        g[key] = value
    check(g, host)                  # nothing was written


@pytest.mark.parametrize("value", [-1.5, 300.5, [np.nan, 1, 2]], ids=["-1.5", "300.5", "list-with-nan"])
def test_unrepresentable_values_into_uint8_raise_like_numpy(backend, value):
    host = np.arange(6, dtype=np.uint8).reshape(2, 3)
    with pytest.raises((ValueError, OverflowError)) as want:
        host[0] = value
    g = up(host, backend)
    with pytest.raises(want.type):
        g[0] = value
    if np.ndim(value) == 0:
        with pytest.raises(want.type):
            g[0].fill(value)
    check(g, host)


def test_setitem_conversions_numpy_allows(backend):
    for dtype, key, value in [(np.int32, 0, 2.7), (np.int32, (1, 2), -1.5), (np.float64, 0, None),
                              (np.int32, 0, "5"), (np.uint8, Ellipsis, np.array([2.7, -1.0, 300.0])),
                              (np.float32, (slice(None), 1), True)]:
        host = np.arange(6, dtype=dtype).reshape(2, 3)
        g = up(host, backend)
        with np.errstate(invalid="ignore"):
            host[key] = value
            g[key] = value
        check(g, host)


# -- logical_xor compares truth values ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint64, np.float32, np.float64])
def test_logical_xor_of_non_bool_values(backend, dtype):
    a = np.array([0, 1, 2, 0, 3, 0], dtype=dtype)
    b = np.array([0, 0, 5, 7, 3, 0], dtype=dtype)
    if a.dtype.kind == "f":
        a[5] = np.nan                   # NaN is true
    check(np.logical_xor(up(a, backend), up(b, backend)), np.logical_xor(a, b))
    check(gnp.logical_xor(up(a, backend), 2), np.logical_xor(a, 2))


# -- round -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64])
@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
def test_round_like_numpy(backend, dtype, decimals):
    host = np.arange(-95, 100, 7).astype(dtype)
    if host.dtype.kind == "f":
        host = host * np.asarray(1.37, dtype) + np.asarray(0.5, dtype)
    check(gnp.round(up(host, backend), decimals), np.round(host, decimals))     # bit for bit
    check(up(host, backend).round(decimals), host.round(decimals))


def test_round_into_out_and_errors(backend):
    host = np.arange(-20, 20, 3)
    out = gnp.zeros(host.shape, np.int64, device=backend)
    assert gnp.round(up(host, backend), -1, out=out) is out
    check(out, np.round(host, -1))
    with pytest.raises(TypeError, match="bool"):
        gnp.round(up(np.array([True, False]), backend), 1)


# -- numpy functions and protocols ------------------------------------------------------------------------------
def test_np_matmul_runs_on_the_device(backend):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    got = np.matmul(up(a, backend), up(b, backend))
    np.testing.assert_allclose(got.get(), a @ b, rtol=1e-13)
    out = gnp.zeros((5, 3), device=backend)
    assert np.matmul(up(a, backend), up(b, backend), out=out) is out
    np.testing.assert_allclose(out.get(), a @ b, rtol=1e-13)
    np.testing.assert_allclose(np.matmul(up(a[0], backend), up(b, backend)).get(), a[0] @ b, rtol=1e-13)


def test_in_operator_and_truth_value(backend):
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = up(host, backend)
    for value in (5.0, 50, np.nan, np.float32(7)):
        assert (value in g) == (value in host)
    assert (up(host[0, 1], backend) in g) == (host[0, 1] in host)     # a device row, broadcast
    assert (3 in up(np.zeros(0), backend)) is False
    with pytest.raises(ValueError, match="more than one element is ambiguous"):
        bool(g)
    with pytest.raises(ValueError, match="empty array is ambiguous"):
        bool(up(np.zeros(0), backend))
    assert bool(up(np.ones(1), backend)) is True


def test_np_like_functions_and_result_type(backend):
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = up(host, backend)
    check(np.zeros_like(g), np.zeros_like(host))
    check(np.ones_like(g[:, ::-2], dtype=np.int8), np.ones_like(host[:, ::-2], dtype=np.int8))
    check(np.full_like(g, 3.5, shape=(2, 2), dtype=np.float64), np.full((2, 2), 3.5))
    e = np.empty_like(g)
    assert isinstance(e, gnp.ndarray) and (e.shape, e.dtype) == (host.shape, host.dtype)
    assert np.result_type(g, np.int64) == np.result_type(host, np.int64)
    assert np.result_type(g, 1.5) == np.float32
    assert np.result_type(up(np.asarray(np.int8(3)), backend), 300) == np.result_type(np.asarray(np.int8(3)), 300)


# -- np.clip of integers with Python int bounds beyond their type (numpy 2 drops such a bound) ------------------
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int64, np.uint64])
@pytest.mark.parametrize("lo, hi", [(0, 300), (-1, 2), (-300, 300), (None, None), (-2**70, 1), (np.int64(-3), 2)],
                         ids=["0-300", "-1-2", "both-out", "none", "-2**70-1", "np.int64"])
def test_clip_drops_out_of_range_python_int_bounds(backend, dtype, lo, hi):
    host = np.arange(-3, 4).astype(dtype)
    check(gnp.clip(up(host, backend), lo, hi), np.clip(host, lo, hi))
    check(np.clip(up(host, backend), lo, hi), np.clip(host, lo, hi))


def test_clip_bound_that_excludes_every_value_still_raises(backend):
    host = np.arange(-3, 4).astype(np.int8)
    with pytest.raises(OverflowError):
        np.clip(host, 300, 400)
    with pytest.raises(OverflowError):
        gnp.clip(up(host, backend), 300, 400)


def test_float_axis_is_refused_like_numpy(backend):
    g = up(np.arange(6.0).reshape(2, 3), backend)
    for reduce in (g.sum, g.argmax, g.cumsum, g.max):
        with pytest.raises(TypeError, match="axis must be an integer"):
            reduce(axis=1.5)
    with pytest.raises(TypeError, match="axis must be an integer"):
        gnp.sort(g, axis=1.0)
    check(g.sum(axis=np.int64(1)), np.arange(6.0).reshape(2, 3).sum(axis=1))


@pytest.mark.parametrize("dtype, exponent", [(np.uint8, -2), (np.uint64, -2), (np.int8, -2**63), (np.int8, -2),
                                             (np.int64, -1)])
def test_negative_integer_power_errors_in_numpys_order(backend, dtype, exponent):
    host = np.arange(1, 5, dtype=dtype)
    with pytest.raises((OverflowError, ValueError)) as want:
        host ** exponent
    with pytest.raises(want.type):
        up(host, backend) ** exponent


@pytest.mark.parametrize("value, dtype", [(np.nan, np.int32), (1e20, np.int32), (300, np.uint8), (2.7, np.int8),
                                          (1 + 2j, None), (True, None), (np.float32(1.5), None)],
                         ids=["nan-int32", "1e20-int32", "300-uint8", "2.7-int8", "complex", "bool", "np-float32"])
def test_full_converts_like_np_full(backend, value, dtype):
    """np.full casts unsafely (NaN into int32 is numpy's unspecified integer, not an error), unlike
    setitem; a Python int that does not fit still raises."""
    with np.errstate(invalid="ignore"):
        try:
            want = np.full(3, value, dtype=dtype)
        except OverflowError:
            with pytest.raises(OverflowError):
                gnp.full(3, value, dtype=dtype, device=backend)
            return
        check(gnp.full(3, value, dtype=dtype, device=backend), want)


@pytest.mark.parametrize("op", ["sum", "prod", "min", "max"])
@pytest.mark.parametrize("initial", [1.5, -1.5, np.float64(2.5), True, 300, np.nan],
                         ids=["1.5", "-1.5", "np-2.5", "True", "300", "nan"])
def test_reduction_initial_converts_to_the_result_type_first(backend, op, initial):
    host = np.arange(-3, 4, dtype=np.int8).reshape(7, 1) * np.ones((1, 3), np.int8)
    for axis in (None, 0):
        try:
            want = getattr(host, op)(axis=axis, initial=initial)
        except (ValueError, OverflowError) as exc:     # NaN, or 300 into int8 (min/max)
            with pytest.raises(type(exc)):
                getattr(up(host, backend), op)(axis=axis, initial=initial)
            continue
        check(getattr(up(host, backend), op)(axis=axis, initial=initial), want)


@pytest.mark.parametrize("casting", ["safe", "same_kind", "unsafe"])
@pytest.mark.parametrize("dtype", [np.int8, np.float32, np.float64])
def test_ufunc_dtype_honours_casting(backend, casting, dtype):
    a = (np.arange(12) - 5).astype(np.int16).reshape(3, 4)
    b = np.arange(4).astype(np.float32)
    try:
        want = np.add(a, b, dtype=dtype, casting=casting)
    except TypeError:
        with pytest.raises(TypeError, match="Cannot cast"):
            np.add(up(a, backend), up(b, backend), dtype=dtype, casting=casting)
        return
    check(np.add(up(a, backend), up(b, backend), dtype=dtype, casting=casting), want)


# -- g.shape = ... and g.dtype = ... change the layout in place as numpy does, or raise ------------------------
def test_setting_shape_reshapes_in_place(backend):
    a = np.arange(12, dtype=np.float32)
    g = up(a, backend)
    g.shape = (3, 4)
    a.shape = (3, 4)
    check(g, a)
    g.shape = (-1, 6)
    check(g, a.reshape(-1, 6))
    rows = g[1:]                      # a view from an offset: still laid out for a new shape
    rows.shape = (6,)
    check(rows, a.reshape(-1, 6)[1:].reshape(6))


@pytest.mark.parametrize("shape", [(5, 5), (4,), (2, 2, 2)])
def test_setting_a_shape_of_another_size_raises_and_keeps_the_array(backend, shape):
    a = np.arange(6, dtype=np.float32)
    g = up(a, backend)
    with pytest.raises(ValueError, match="cannot reshape"):
        a.copy().shape = shape
    with pytest.raises(ValueError, match="cannot reshape"):
        g.shape = shape               # once accepted, and g.get() read past the 6 elements
    check(g, a)


def test_setting_the_shape_of_a_strided_view_raises(backend):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = up(a, backend)[:, :2]
    with pytest.raises(AttributeError):
        a[:, :2].shape = (6,)
    with pytest.raises(AttributeError, match=r"reshape\(\.\.\.\)"):
        v.shape = (6,)
    check(v, a[:, :2])


def test_setting_dtype_reinterprets_in_place(backend):
    a = np.arange(6, dtype=np.float32)
    g = up(a, backend)
    g.dtype = np.int32
    check(g, a.view(np.int32))
    g.dtype = np.float64              # 6 float32 are 3 float64, as numpy's view
    check(g, a.view(np.float64))
    odd = up(np.arange(3, dtype=np.float32), backend)
    with pytest.raises(ValueError):
        odd.dtype = np.float64        # 12 bytes are no whole number of float64: not 2 elements read past the end
    check(odd, np.arange(3, dtype=np.float32))
