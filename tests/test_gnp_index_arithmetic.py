"""take_along_axis, unravel_index, ravel_multi_index (every mode and order), astype and
array_str/array_repr against numpy."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

A = np.random.default_rng(0).random((3, 4, 5))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_take_along_axis_as_numpy(backend, axis):
    g = gnp.asarray(A, device=backend)
    order = np.argsort(A, axis=axis)
    idx = order[..., :2] if axis in (2, -1) else order
    got = gnp.take_along_axis(g, gnp.asarray(idx, device=backend), axis=axis)
    np.testing.assert_array_equal(got.get(), np.take_along_axis(A, idx, axis=axis))
    ones = np.ones((3, 1, 5), int)
    np.testing.assert_array_equal(gnp.take_along_axis(g, gnp.asarray(ones, device=backend), 1).get(),
                                  np.take_along_axis(A, ones, 1))
    np.testing.assert_array_equal(gnp.take_along_axis(g, gnp.asarray([3, 7], device=backend), None).get(),
                                  np.take_along_axis(A, np.array([3, 7]), None))


@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_and_ravel_multi_index_as_numpy(backend, order):
    flat = np.array([0, 7, 59, 13])
    got = gnp.unravel_index(gnp.asarray(flat, device=backend), (3, 4, 5), order=order)
    for g, w in zip(got, np.unravel_index(flat, (3, 4, 5), order=order)):
        np.testing.assert_array_equal(g.get(), w)
    coords = (np.array([0, 2, 1]), np.array([3, 0, 1]), np.array([4, 1, 0]))
    got = gnp.ravel_multi_index(tuple(gnp.asarray(c, device=backend) for c in coords), (3, 4, 5), order=order)
    np.testing.assert_array_equal(got.get(), np.ravel_multi_index(coords, (3, 4, 5), order=order))


@pytest.mark.parametrize("mode", ["wrap", "clip", ("wrap", "clip")])
def test_ravel_multi_index_modes(backend, mode):
    coords = (np.array([0, 5, -1]), np.array([3, 9, 1]))
    got = gnp.ravel_multi_index(tuple(gnp.asarray(c, device=backend) for c in coords), (3, 4), mode=mode)
    np.testing.assert_array_equal(got.get(), np.ravel_multi_index(coords, (3, 4), mode=mode))


def test_index_arithmetic_errors_as_numpy(backend):
    coords = (gnp.asarray([0, 5], device=backend), gnp.asarray([3, 1], device=backend))
    with pytest.raises(ValueError, match="invalid entry"):
        gnp.ravel_multi_index(coords, (3, 4))
    with pytest.raises(ValueError, match="out of bounds"):
        gnp.unravel_index(gnp.asarray([60], device=backend), (3, 4, 5))
    with pytest.raises(IndexError):
        gnp.take_along_axis(gnp.asarray(A, device=backend), gnp.asarray(np.zeros((3, 1, 5)), device=backend), 1)


def test_astype_and_text(backend):
    g = gnp.asarray(np.array([1.5, 2.0]), device=backend)
    assert gnp.astype(g, np.float32).dtype == np.float32
    assert gnp.astype(g, np.float64, copy=False) is g
    assert gnp.array_str(g) == np.array_str(np.array([1.5, 2.0]))
    assert gnp.array_repr(g) == repr(g)
    assert gnp.array_repr(g, precision=2) == np.array_repr(np.array([1.5, 2.0]), precision=2)
