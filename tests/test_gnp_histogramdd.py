"""gnp.histogramdd and gnp.histogram2d against numpy: counts and weight sums, counts of bins per
dimension, edges given as device arrays, ranges, density, empty samples and numpy's errors. Real
kernels (binary searches, atomic counts) on each backend of the run."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def up(x, backend):
    return gnp.asarray(x, device=backend)


def sample(dtype, n=100, d=3):
    return (np.random.default_rng(7).random((n, d)) * 100).astype(dtype)


def same_histogram(got, want):
    (h, edges), (wh, wedges) = got, want
    assert (h.dtype, h.shape) == (wh.dtype, wh.shape)
    np.testing.assert_allclose(h.get(), wh, rtol=1e-7, atol=1e-7)
    assert len(edges) == len(wedges)
    for e, we in zip(edges, wedges):
        np.testing.assert_allclose(e.get(), we)


LIST_EDGES = [np.arange(0, 100, 10), np.arange(0, 100, 10), np.arange(25)]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "uint8"])
@pytest.mark.parametrize("bins", [10, (8, 16, 8), "device edges"], ids=str)
@pytest.mark.parametrize("rng", [None, ((20, 50), (10, 100), (0, 40))], ids=["auto", "range"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("density", [None, True])
def test_histogramdd_matches_numpy(backend, dtype, bins, rng, weighted, density):
    x = sample(dtype)
    w = np.linspace(0.5, 2.0, len(x)).astype(np.float32) if weighted else None
    host_bins = LIST_EDGES if bins == "device edges" else bins
    dev_bins = [up(e, backend) for e in LIST_EDGES] if bins == "device edges" else bins
    want = np.histogramdd(x, bins=host_bins, range=rng, weights=w, density=density)
    got = gnp.histogramdd(up(x, backend), bins=dev_bins, range=rng, weights=None if w is None else up(w, backend),
                          density=density)
    same_histogram(got, want)


def test_histogramdd_of_columns_and_edge_values(backend):
    # values exactly on the last edge count in the last bin; outside values are dropped
    x = np.array([0.0, 1.0, 2.0, 2.0, 3.0, -1.0])
    y = np.array([5.0, 5.0, 6.0, 7.0, 7.0, 6.0])
    want = np.histogramdd([x, y], bins=(3, 2), range=((0, 2), (5, 7)))
    same_histogram(gnp.histogramdd([up(x, backend), up(y, backend)], bins=(3, 2), range=((0, 2), (5, 7))), want)


def test_histogramdd_of_an_empty_sample(backend):
    x = np.zeros((0, 2))
    same_histogram(gnp.histogramdd(up(x, backend), bins=4), np.histogramdd(x, bins=4))


@pytest.mark.parametrize("case", ["three edge arrays for 2-D", "zero bins", "decreasing edges", "2-D edges",
                                  "three ranges"])
def test_histogramdd_raises_numpys_errors(backend, case):
    x = sample(np.float64, 16, 2)
    bad = np.arange(100)
    bad[30] = 99
    args = {"three edge arrays for 2-D": {"bins": [np.arange(0, 100, 10)] * 3}, "zero bins": {"bins": 0},
            "decreasing edges": {"bins": [bad, np.arange(5)]}, "2-D edges": {"bins": np.arange(64).reshape(8, 8)},
            "three ranges": {"range": ((0, 100),) * 3}}[case]
    with pytest.raises(ValueError):
        np.histogramdd(x, **args)
    dev_args = {k: ([up(e, backend) for e in v] if k == "bins" and isinstance(v, list) else
                    up(v, backend) if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    with pytest.raises(ValueError):
        gnp.histogramdd(up(x, backend), **dev_args)


@pytest.mark.parametrize("bins", [10, (8, 16), (16, 8), "edge list", "one edge array"], ids=str)
@pytest.mark.parametrize("rng", [None, ((20, 50), (10, 100))], ids=["auto", "range"])
@pytest.mark.parametrize("density", [None, True])
def test_histogram2d_matches_numpy(backend, bins, rng, density):
    x, y = sample(np.float64, 100, 2).T
    host_bins = {"edge list": [np.arange(0, 100, 10), np.arange(0, 100, 4)],
                 "one edge array": np.arange(0, 100, 4)}.get(bins, bins)
    dev_bins = ([up(e, backend) for e in host_bins] if bins == "edge list" else
                up(host_bins, backend) if bins == "one edge array" else bins)
    h, ex, ey = gnp.histogram2d(up(x, backend), up(y, backend), bins=dev_bins, range=rng, density=density)
    wh, wex, wey = np.histogram2d(x, y, bins=host_bins, range=rng, density=density)
    same_histogram((h, [ex, ey]), (wh, [wex, wey]))
