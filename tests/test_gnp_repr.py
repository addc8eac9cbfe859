"""Printing a large device array: numpy's summary, with only the shown elements read back."""
from __future__ import annotations

import numpy as np
import pytest

import pygpgpu.numpy as gnp


def _d2h_bytes() -> int:
    return gnp.transfer_stats()["d2h_bytes"]


@pytest.mark.parametrize("shape", [(1_000_000,), (2000, 3000), (5, 400, 7), (3, 4, 50, 6)])
def test_large_arrays_print_like_numpy_reading_only_the_edges(device, shape):
    host = (np.arange(np.prod(shape), dtype=np.float32) * np.float32(0.25)).reshape(shape)
    g = gnp.asarray(host, device=device)
    before = _d2h_bytes()
    text, rep = str(g), repr(g)
    read = _d2h_bytes() - before
    assert text == str(host)
    assert rep == (f"array({np.array2string(host, separator=', ', prefix='array(')}, shape={shape}, "
                   f"dtype=float32, device='{device.selector}')")
    # at most (2*3+1) elements per axis are read, for str and repr each
    assert read <= 2 * 4 * 7 ** len(shape), read


def test_small_arrays_print_in_full(device):
    host = np.arange(12, dtype=np.int32).reshape(3, 4)
    g = gnp.asarray(host, device=device)
    assert str(g) == str(host)
    assert repr(g) == repr(host)[:-1] + f", device='{device.selector}')"


def test_print_options_are_followed(device):
    host = np.linspace(0, 1, 50, dtype=np.float64)
    g = gnp.asarray(host, device=device)
    with np.printoptions(threshold=10, edgeitems=2, precision=3):
        assert str(g) == str(host) and "..." in str(g)
