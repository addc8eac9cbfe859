"""gnp.matmul takes numpy's gufunc parameters: axes= (which axes hold each operand's matrices, and
the result's), dtype=, and an out of another type where casting= allows it."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

AXES_CASES = [((2, 5, 3, 2, 3, 4), (3, 5, 1, 1, 1, 4), (5, 5, 2, 2, 3, 4), [(1, 2), (0, 1), (0, 1)]),
              ((3, 2, 4, 4), (4, 4, 3, 2), (4, 4, 3, 3), [(0, 1), (-1, -2), (-2, -1)]),
              ((3, 4), (4, 5), (5, 3), [(0, 1), (0, 1), (1, 0)])]


@pytest.mark.parametrize("sa, sb, so, axes", AXES_CASES)
def test_matmul_axes(backend, sa, sb, so, axes):
    a = np.arange(np.prod(sa)).reshape(sa).astype(np.float64)
    b = np.arange(np.prod(sb)).reshape(sb).astype(np.float64) - 7
    want = np.matmul(a, b, axes=axes)
    ga, gb = gnp.asarray(a, device=backend), gnp.asarray(b, device=backend)
    got = gnp.matmul(ga, gb, axes=axes)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.get(), want)
    out = gnp.zeros(so, device=backend)
    assert gnp.matmul(ga, gb, axes=axes, out=out) is out
    np.testing.assert_allclose(out.get(), want)


def test_matmul_out_cast_and_dtype(backend):
    a = np.arange(6).reshape(2, 3).astype(np.int8)
    b = (np.arange(12).reshape(3, 4) - 5).astype(np.float32)
    ga, gb = gnp.asarray(a, device=backend), gnp.asarray(b, device=backend)
    out = gnp.zeros((2, 4), bool, device=backend)
    assert gnp.matmul(ga, gb, out=out, casting="unsafe") is out
    np.testing.assert_array_equal(out.get(), np.matmul(a, b, out=np.zeros((2, 4), bool), casting="unsafe"))
    with pytest.raises(TypeError, match="same_kind"):
        gnp.matmul(ga, gb, out=out)
    got = gnp.matmul(ga, gb, dtype=np.float64)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.get(), np.matmul(a, b, dtype=np.float64))
    with pytest.raises(TypeError, match="axis"):
        gnp.matmul(ga, gb, axis=0)
