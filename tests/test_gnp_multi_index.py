"""Advanced indexing with several integer index arrays (numpy's rules: they broadcast together,
ints among them count as indices, slices apply to the other axes, and the broadcast dimensions
replace adjacent indexed axes in place or go first otherwise)."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

A = np.random.default_rng(0).random((3, 3, 10))
ORDER = np.argsort(A, axis=-1)
KEYS = [
    ([[[0]], [[1]], [[2]]], [[[0], [1], [2]]], ORDER[:, :, :3]),
    ([0, 2], [1, 2]),
    ([0, 2], slice(None), [1, 3]),
    (slice(1, 3), [0, 2], [2, -1]),
    (1, [0, 2]),
    ([[0], [2]], slice(None, None, 2), 3),
    (slice(None), [1, 2]),
    (slice(None), [[1], [2]], slice(2, 5)),
    (np.array([-1, 0]), 2, slice(None)),
]


@pytest.mark.parametrize("key", KEYS, ids=[str(k) for k in range(len(KEYS))])
@pytest.mark.parametrize("dt", [np.float64, np.float16, np.complex64, np.int8], ids=lambda t: np.dtype(t).name)
def test_several_index_arrays_as_numpy(backend, key, dt):
    a = (A * 100).astype(dt)
    g = gnp.asarray(a, device=backend)
    got = g[key]
    want = a[key]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)


def test_device_index_arrays_with_negative_entries(backend):
    g = gnp.asarray(A, device=backend)
    rows, cols = gnp.asarray([0, -1], device=backend), gnp.asarray([[2], [-3]], device=backend)
    np.testing.assert_array_equal(g[rows, cols].get(), A[np.array([0, -1]), np.array([[2], [-3]])])


def test_index_errors_as_numpy(backend):
    g = gnp.asarray(A, device=backend)
    with pytest.raises(IndexError, match="out of bounds"):
        g[[0, 5], [0, 1]]
    with pytest.raises(IndexError, match="broadcast"):
        g[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match="too many indices"):
        g[[0], [0], [0], [0]]
