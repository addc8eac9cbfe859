"""gnp.nan_to_num with device arrays of replacement values (numpy broadcasts them into x), against
numpy, and numpy's ValueError for replacements that do not broadcast. Real kernels on each backend."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

X = np.array([[0, 1, np.nan, 4], [11, np.inf, 12, -np.inf]])


@pytest.mark.parametrize("kwarg", ["nan", "posinf", "neginf"])
@pytest.mark.parametrize("values", [np.zeros((2, 4)) + 7, np.arange(4.0), np.arange(2.0).reshape(2, 1),
                                    np.array([3], np.int32)], ids=lambda v: str(v.shape))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_nan_to_num_with_device_replacements(backend, kwarg, values, dtype):
    x = X.astype(dtype)
    got = gnp.nan_to_num(gnp.asarray(x, device=backend), **{kwarg: gnp.asarray(values, device=backend)})
    want = np.nan_to_num(x, **{kwarg: values})
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("kwarg", ["nan", "posinf", "neginf"])
def test_nan_to_num_replacements_that_do_not_broadcast(backend, kwarg):
    with pytest.raises(ValueError):
        np.nan_to_num(X, **{kwarg: np.zeros((3, 4))})
    with pytest.raises(ValueError):
        gnp.nan_to_num(gnp.asarray(X, device=backend), **{kwarg: gnp.zeros((3, 4), device=backend)})
