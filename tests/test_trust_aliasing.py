"""One numpy array passed to several parameters (``k(x, x)``) is one array in the kernel, as it is
when the function runs on the host: staged once, read and written through one device buffer.
Different views of overlapping memory that the kernel writes raise instead of computing on
separate copies. Small arrays (one batch per call) and large ones (staged one by one) alike.
"""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_translate import kernel

SIZES = [5, 300_000]          # the small-array batch, and arrays staged one by one


@kernel
def add_one_to_both(a, out):
    for i in range(out.shape[0]):
        a[i] += 1.0
        out[i] += 1.0


@kernel
def overwrite_then_add(a, out):
    for i in range(out.shape[0]):
        out[i] = 0.0
        out[i] += a[i]


@kernel
def add(a, b, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + b[i]


@kernel
def scale_in_place(x, out, f):
    for i in range(out.shape[0]):
        out[i] = x[i] * f



@pytest.mark.parametrize("n", SIZES)
def test_an_array_written_through_two_parameters_sees_both_writes(backend, n):
    x = np.arange(n, dtype=np.float32)
    add_one_to_both[backend](x, x)
    np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32) + 2)


@pytest.mark.parametrize("n", SIZES)
def test_a_store_is_seen_through_the_other_parameter(backend, n):
    x = np.arange(n, dtype=np.float32) + 1
    overwrite_then_add[backend](x, x)
    np.testing.assert_array_equal(x, 0.0)                 # as on the host: out[i] = 0; out[i] += out[i]
    y = np.arange(n, dtype=np.float32) + 1
    overwrite_then_add[backend](y, y[:])                  # another object, the same view
    np.testing.assert_array_equal(y, 0.0)


@pytest.mark.parametrize("n", SIZES)
def test_an_array_read_twice_and_written_in_place(backend, n):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    add[backend](x, x, out)
    np.testing.assert_array_equal(out, 2 * np.arange(n, dtype=np.float32))
    add[backend](x, x, x)
    np.testing.assert_array_equal(x, 2 * np.arange(n, dtype=np.float32))
    scale_in_place[backend](x, x, 0.5)
    np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32))


@pytest.mark.parametrize("n", SIZES)
def test_overlapping_views_that_are_written_raise(backend, n):
    x = np.arange(n + 1, dtype=np.float32)
    before = x.copy()
    with pytest.raises(ValueError, match="overlapping memory"):
        scale_in_place[backend](x[1:], x[:-1], 2.0)
    np.testing.assert_array_equal(x, before)              # nothing ran


@pytest.mark.parametrize("n", SIZES)
def test_overlapping_views_only_read_and_disjoint_views_are_fine(backend, n):
    x = np.arange(2 * n + 1, dtype=np.float32)
    out = np.zeros(n, np.float32)
    add[backend](x[1:n + 1], x[:n], out)                  # read only: copies are harmless
    np.testing.assert_array_equal(out, 2 * np.arange(n, dtype=np.float32) + 1)
    scale_in_place[backend](x[:n], x[n:2 * n], 3.0)       # disjoint halves of one array
    np.testing.assert_array_equal(x[n:2 * n], 3 * np.arange(n, dtype=np.float32))


def test_a_big_endian_array_passed_twice_is_one_array(backend):
    x = np.arange(10, dtype=">f4")
    add_one_to_both[backend](x, x)
    np.testing.assert_array_equal(x, np.arange(10, dtype=np.float32) + 2)
    assert x.dtype == np.dtype(">f4")
