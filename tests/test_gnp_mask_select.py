"""``g[mask]`` against numpy: the one-pass compaction (array_ops/_scan.py mask_select: a prefix
count of the mask, then each selected element copied to its place) for masks of the whole shape
and of leading axes, every density, lengths across several scan tiles, views, empty shapes."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, np.int64, np.float32, np.float64])
def test_one_dimensional_select(device, dtype):
    rng = np.random.default_rng(1)
    for n, density in ((1, 1.0), (7, 0.5), (2048, 0.3), (2049, 0.9), (70_001, 0.5), (70_001, 0.0),
                       (5000, 1.0)):
        h = (rng.standard_normal(n) * 50).astype(dtype)
        m = rng.random(n) < density
        got = gnp.asarray(h, device=device)[gnp.asarray(m, device=device)]
        assert got.dtype == h.dtype and got.shape == h[m].shape
        np.testing.assert_array_equal(got.get(), h[m])


def test_masks_of_leading_axes_and_whole_shapes(device):
    rng = np.random.default_rng(2)
    h = rng.integers(-100, 100, (300, 7, 3)).astype(np.int32)
    g = gnp.asarray(h, device=device)
    for m in (rng.random(300) < 0.4, rng.random((300, 7)) < 0.6, rng.random((300, 7, 3)) < 0.5):
        np.testing.assert_array_equal(g[gnp.asarray(m, device=device)].get(), h[m])
        np.testing.assert_array_equal(g[m].get(), h[m])                    # a host mask too
    empty_rows = np.zeros((4, 0), np.float32)
    m = np.array([True, False, True, True])
    got = gnp.asarray(empty_rows, device=device)[gnp.asarray(m, device=device)]
    assert got.shape == empty_rows[m].shape == (3, 0)
    assert gnp.asarray(np.zeros((0, 5)), device=device)[gnp.asarray(np.zeros(0, bool), device=device)].shape == (0, 5)


def test_views_as_array_and_mask(device):
    rng = np.random.default_rng(3)
    h = rng.standard_normal((60, 80)).astype(np.float32)
    mh = rng.random((80, 60)) < 0.5
    g, gm = gnp.asarray(h, device=device), gnp.asarray(mh, device=device)
    np.testing.assert_array_equal(g.T[gm].get(), h.T[mh])
    np.testing.assert_array_equal(g[5:, ::2][gm.T[5:, ::2]].get(), h[5:, ::2][mh.T[5:, ::2]])
    np.testing.assert_array_equal(g[3][gm.T[3]].get(), h[3][mh.T[3]])
