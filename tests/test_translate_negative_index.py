"""Negative indices count from the end, as in Python, also when they are only known at run time
(pygpgpu_translate._signs decides which indices need the wrap). Kernels run on the device and
compare with the same function run on the host."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_translate import kernel


@kernel
def shifted(x, out, k):
    for i in range(out.shape[0]):
        out[i] = x[i - k] * 10.0 + x[-1 - i]


@kernel
def write_back_to_front(x, out):
    n = x.shape[0]
    for i in range(n):
        out[-1 - i] = x[i]                     # every store lands in bounds, from the end


@kernel
def grid_neighbours(u, out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = u[y - 1, x] + 2.0 * u[y, x - 1]    # row and column -1 are the last ones


def _row_picker(m, r):
    return m[r, 0] + m[r, 1]


@kernel
def helper_index(m, rows, out):
    for i in range(out.shape[0]):
        out[i] = _row_picker(m, rows[i])       # negative row numbers come from an array


@kernel
def count_from_the_end(slots, counts):
    gpu.work_size(slots)
    i = gpu.get_global_id(0)
    gpu.atomic_add(counts, slots[i], 1)        # slot -1 is the last counter


def test_dynamic_negative_indices_read_from_the_end(backend):
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(10, np.float32)
    for k in (3, 1, 10):
        shifted[backend](x, out, k)
        want = np.zeros_like(out)
        shifted.py_func(x, want, k)
        np.testing.assert_array_equal(out, want)


def test_dynamic_negative_stores_stay_in_the_array(backend):
    x = np.arange(7, dtype=np.float32)
    guard = np.full(16, -5.0, np.float32)
    out = guard[4:11]                          # the elements around must survive
    write_back_to_front[backend](x, out)
    np.testing.assert_array_equal(out, x[::-1])
    assert (guard[:4] == -5).all() and (guard[11:] == -5).all()


def test_two_dimensional_and_helper_indices(backend):
    u = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = np.zeros_like(u)
    grid_neighbours[backend](u, out)
    want = np.zeros_like(u)
    grid_neighbours.py_func(u, want)
    np.testing.assert_array_equal(out, want)
    m = np.arange(8, dtype=np.float32).reshape(4, 2)
    rows = np.array([0, -1, -4, 2], np.int32)
    res = np.zeros(4, np.float32)
    helper_index[backend](m, rows, res)
    np.testing.assert_array_equal(res, [m[r, 0] + m[r, 1] for r in rows])


def test_atomics_at_negative_indices(backend):
    slots = np.array([0, -1, -1, 2, -3, 1, -1], np.int32)
    counts = np.zeros(4, np.int32)
    count_from_the_end[backend](slots, counts)
    want = np.zeros(4, np.int32)
    for s in slots:
        want[s] += 1
    np.testing.assert_array_equal(counts, want)


@kernel
def row_sums_of_transpose(a, out):
    for i in range(out.shape[0]):
        total = 0.0
        for k in range(1, a.shape[0], 2):
            total += a[k, i] + a[k - 1, i]    # k counts up from 1: k - 1 >= 0 needs no wrap either
        out[i] = total


@kernel
def gather_gid(x, out):
    gpu.work_size(out)
    i = gpu.get_global_id(0)
    n = x.shape[0]
    out[i] = x[(i + 1) % n] + x[i * 2 % n]


@pytest.mark.parametrize("k, args, wraps", [
    (row_sums_of_transpose, lambda: (np.ones((4, 4), np.float32), np.ones(4, np.float32)), 0),
    (gather_gid, lambda: (np.ones(8, np.float32), np.ones(8, np.float32)), 0),
])
def test_indices_proven_non_negative_need_no_wrap(k, args, wraps):
    """Loop counters, work-item ids, shapes and their sums, products and Python % need no compare."""
    src = k.inspect(*args()).source
    assert src.count("< 0) ?") == wraps, src


def test_a_stepped_loop_kernel_matches_the_host(backend):
    a = np.arange(20, dtype=np.float32).reshape(5, 4)
    out = np.zeros(4, np.float32)
    row_sums_of_transpose[backend](a, out)
    want = np.zeros(4, np.float32)
    row_sums_of_transpose.py_func(a, want)
    np.testing.assert_array_equal(out, want)
