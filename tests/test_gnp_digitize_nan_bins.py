"""gnp.digitize's check of its bins as numpy's: the direction is that of the first edge that differs
from the first one, NaN edges (sorted last, or first when decreasing) are accepted, repeated edges
too; bins that step both ways raise numpy's ValueError. Real kernels on each backend of the run."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

NAN = float("nan")
BINS = [[1, 3, 5, 8, NAN, NAN], [NAN, NAN, 8, 5, 3, 1], [1, 1, 1], [3, 3, 1, 0], [1, 2, 2, 3],
        [2, 2, NAN], [1.0], []]


@pytest.mark.parametrize("bins", BINS, ids=str)
@pytest.mark.parametrize("right", [False, True])
def test_digitize_accepts_what_numpy_accepts(backend, bins, right):
    x = np.arange(14, dtype=np.float32)
    x[5] = NAN
    b = np.array(bins, np.float32)
    got = gnp.digitize(gnp.asarray(x, device=backend), gnp.asarray(b, device=backend), right=right)
    want = np.digitize(x, b, right=right)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("bins", [[5, 1, 2], [1, 3, 2], [3, 3, 4, 1], [NAN, 1, 2]], ids=str)
def test_digitize_refuses_bins_that_step_both_ways(backend, bins):
    x, b = np.arange(4.0), np.array(bins, np.float64)
    with pytest.raises(ValueError):
        np.digitize(x, b)
    with pytest.raises(ValueError, match="monotonically"):
        gnp.digitize(gnp.asarray(x, device=backend), gnp.asarray(b, device=backend))
