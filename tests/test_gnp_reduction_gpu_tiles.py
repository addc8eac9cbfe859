"""The GPU layout of the rows reduction (issue 16, g.sum() speed): rows cut into tiles of TILE
elements dealt round-robin to a row's groups, eight loads in flight per work item, the one
partial tile read with guarded loads. Run on whatever device the test has, with the GPU layout
forced and many groups per row, at sizes around the tile edges: every element counted exactly
once (integer sums are exact), float sums accurate, the same result run to run."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

EDGES = [1, 255, 257, 2047, 2048, 2049, 2048 * 5 + 1792, 2048 * 5 + 1793, 2048 * 37 + 3, 300_001]


@pytest.fixture
def gpu_layout(monkeypatch):
    from pygpgpu_translate.array_ops import _reduction

    monkeypatch.setattr(_reduction, "cpu_layout", lambda device: False)
    return _reduction


@pytest.mark.parametrize("target", [1, 3, 16, 1056])
def test_tiles_count_every_element_once(backend, gpu_layout, monkeypatch, target):
    monkeypatch.setattr(gpu_layout, "_target_groups", lambda device: target)
    for n in EDGES:
        x = np.arange(1, n + 1, dtype=np.int64) * 7 % 1_000_003     # distinct, exact in int64
        g = gnp.asarray(x, device=backend)
        assert int(g.sum().get()) == int(x.sum()), (n, target)
        assert int(g.max().get()) == int(x.max()) and int(g.min().get()) == int(x.min()), (n, target)
        m = np.stack([x, x[::-1] * 3])
        np.testing.assert_array_equal(gnp.asarray(m, device=backend).sum(axis=1).get(), m.sum(axis=1))


def test_float_sum_accurate_and_deterministic(backend, gpu_layout, monkeypatch):
    monkeypatch.setattr(gpu_layout, "_target_groups", lambda device: 64)
    x = np.random.default_rng(5).random(2048 * 300 + 1234, dtype=np.float32)
    g = gnp.asarray(x, device=backend)
    first = g.sum().get()
    np.testing.assert_allclose(first, x.astype(np.float64).sum(), rtol=2e-6)
    for _ in range(3):
        assert g.sum().get() == first        # the split depends on the size only, never on timing
    np.testing.assert_allclose(g.mean().get(), x.astype(np.float64).mean(), rtol=2e-6)


def test_segments_give_each_group_the_same_number_of_tiles():
    from pygpgpu_translate.array_ops._reduction import GROUP, TILE, row_segments

    assert row_segments(1, 64 << 20, 132 * 8, strided=False) == 1024        # 32 tiles each
    assert row_segments(1, 64 << 20, 132 * 8, strided=True) == 132 * 8      # element-wise split
    assert row_segments(5000, 8192, 1056, strided=False) == 1               # rows fill the device
    assert row_segments(1, 8 * GROUP, 1056, strided=False) == 1             # too short to split
    for r in (TILE * 10 + 1, TILE * 1000 - 1, 12_345_678, 64 << 20):
        for target in (7, 264, 1056):
            segs = row_segments(1, r, target, strided=False)
            tiles = -(-r // TILE)
            assert segs <= target and -(-tiles // segs) * (segs - 1) < tiles, (r, target, segs)
