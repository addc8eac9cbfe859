"""Assignment through several index arrays mixed with ints and slices (``g[rows, cols] = v``,
``g[1, idx, 1:3] = v``), also into strided views, against numpy's setitem on every backend of the
run (issue 32: it raised IndexError; CuPy's tests assign this way)."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

CASES = [((3, 4), ([0, 2], [1, 3]), 5), ((3, 4), ([0, 2], slice(1, 3)), [[7, 8], [9, 10]]),
         ((3, 4), (1, [0, 3]), [1, 2]), ((3, 4), (slice(None), [0, 2, 2]), 3.5),
         ((2, 3, 4), (1, [0, 2], slice(1, 3)), [[1, 2], [3, 4]]), ((2, 3, 4), ([[0], [1]], [0, 2], 3), 6),
         ((5,), ([4, -1, 0],), [1, 2, 3]), ((3, 4), ([-1, 0], [-2, 1]), [[[4, 5]]])]


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64])
@pytest.mark.parametrize("shape, key, value", CASES, ids=[str(c[1]) for c in CASES])
def test_assignment_through_several_index_arrays_matches_numpy(backend, shape, key, value, dtype):
    host = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
    g = gnp.asarray(host, device=backend)
    host[key] = value
    g[key] = value
    np.testing.assert_array_equal(g.get(), host)
    g2 = gnp.asarray(host, device=backend)
    g2[key] = gnp.asarray(np.asarray(value, dtype=dtype), device=backend)        # a device value too
    np.testing.assert_array_equal(g2.get(), host)


def test_assignment_into_a_strided_view_writes_through(backend):
    host = np.zeros((4, 6), np.float32)
    g = gnp.asarray(host, device=backend)
    host[:, ::2][[0, 3], [1, 2]] = 9
    view = g[:, ::2]
    view[[0, 3], [1, 2]] = 9
    np.testing.assert_array_equal(g.get(), host)


def test_a_value_that_does_not_broadcast_is_numpys_error(backend):
    g = gnp.zeros((2, 3, 4), device=backend)
    with pytest.raises(ValueError, match="shape mismatch"):
        g[[0, 1], [1, 2]] = [1, 2, 3]
    with pytest.raises(IndexError):
        g[[0, 1], [1, 5]] = 1                                  # out of bounds, as numpy


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_repeated_indices_keep_the_last_value_as_numpy(backend, dtype):
    """numpy assigns in order: where an index repeats, the last value stays (work items write in no
    order on GPUs, so this needs the last-writer pass; PoCL happens to run them in order). Rows,
    negative aliases and a flat put alike."""
    rng = np.random.default_rng(3)
    host = np.zeros((50, 3), dtype)
    idx = rng.integers(-50, 50, 4000)                     # each row hit about 80 times, some as -k
    vals = np.arange(4000 * 3, dtype=dtype).reshape(4000, 3)
    g = gnp.asarray(host, device=backend)
    host[idx] = vals
    g[idx] = vals
    np.testing.assert_array_equal(g.get(), host)
    flat, gflat = np.zeros(7, dtype), gnp.zeros(7, dtype=dtype, device=backend)
    np.put(flat, [1, 6, -1, 1, 6], [10, 20, 30, 40, 50])
    gnp.put(gflat, [1, 6, -1, 1, 6], [10, 20, 30, 40, 50])
    np.testing.assert_array_equal(gflat.get(), flat)
