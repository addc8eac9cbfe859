"""numpy's rules at the edges of repeat and row_stack: device counts must cast safely to int64
(uint64 and float counts are numpy's TypeError), and row_stack warns as numpy 2 deprecates it."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


@pytest.mark.parametrize("dt", [np.uint64, np.float64], ids=lambda t: np.dtype(t).name)
def test_repeat_refuses_counts_numpy_refuses(backend, dt):
    counts = np.array([1, 2, 3], dtype=dt)
    with pytest.raises(TypeError):
        np.repeat(np.arange(3), counts)
    with pytest.raises(TypeError, match="safe"):
        gnp.repeat(gnp.arange(3, device=backend), gnp.asarray(counts, device=backend))


@pytest.mark.parametrize("dt", [np.uint8, np.int32, np.uint32, np.bool_], ids=lambda t: np.dtype(t).name)
def test_repeat_takes_counts_that_cast_safely(backend, dt):
    counts = np.array([1, 0, 3], dtype=dt)
    got = gnp.repeat(gnp.arange(3, device=backend), gnp.asarray(counts, device=backend))
    np.testing.assert_array_equal(got.get(), np.repeat(np.arange(3), counts))


def test_row_stack_is_deprecated_as_in_numpy(backend):
    a, b = gnp.zeros(2, device=backend), gnp.ones(2, device=backend)
    with pytest.warns(DeprecationWarning, match="row_stack"):
        got = gnp.row_stack((a, b))
    np.testing.assert_array_equal(got.get(), np.vstack((np.zeros(2), np.ones(2))))


def test_searchsorted_refuses_a_float_sorter_before_its_length(backend):
    bins = gnp.asarray([10, 4, 2, 1, 8], device=backend)
    with pytest.raises(TypeError, match="integers"):
        gnp.searchsorted(bins, gnp.arange(12.0, device=backend), sorter=gnp.asarray(np.array([], np.float64),
                                                                                  device=backend))
    sorter = gnp.asarray(np.argsort([10, 4, 2, 1, 8]).astype(np.uint32), device=backend)
    np.testing.assert_array_equal(gnp.searchsorted(bins, gnp.asarray([3, 9], device=backend), sorter=sorter).get(),
                                  np.searchsorted([10, 4, 2, 1, 8], [3, 9], sorter=np.argsort([10, 4, 2, 1, 8])))


@pytest.mark.parametrize("ddof", [3, 4])
def test_cov_warns_where_numpy_warns(backend, ddof):
    a = np.arange(6.0).reshape(2, 3)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        want = np.cov(a, ddof=ddof)
    with pytest.warns(RuntimeWarning, match="Degrees of freedom"):
        got = gnp.cov(gnp.asarray(a, device=backend), ddof=ddof)
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("dt", [np.int8, np.bool_, np.uint32], ids=lambda t: np.dtype(t).name)
def test_cov_of_an_integer_dtype_is_numpys_casting_error(backend, dt):
    a = np.arange(6).reshape(2, 3).astype(dt)
    with pytest.raises(TypeError):
        np.cov(a, dtype=dt)
    with pytest.raises(TypeError, match="same_kind"):
        gnp.cov(gnp.asarray(a, device=backend), dtype=dt)
