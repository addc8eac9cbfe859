"""A store every work item of a parallel loop makes to one element is refused (issue 30 item 5):
``for i in range(n): t[0] += x[i]`` raced silently (12500 instead of 100000). Stores that only
look alike stay allowed and match the host: one work item writing (``if i == 0:``), the same value
from every item, indices that follow the work item through locals and inner loops."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_translate import kernel


def sum_into_one(x, t):
    for i in range(x.shape[0]):
        t[0] += x[i]


def through_a_local(x, t):
    for i in range(x.shape[0]):
        k = 3
        t[k] = t[k] + x[i]


def inner_loop_counter(x, t):
    for i in range(x.shape[0]):
        for k in range(4):
            t[k] += x[i] * k


def scalar_index(x, t, j):
    for i in range(x.shape[0]):
        t[j] = x[i]


def negative_constant(x, t):
    for i in range(x.shape[0]):
        t[-1] = max(t[-1], x[i])


def count_everything(x, t):
    for i in range(x.shape[0]):
        t[0] = t[0] + 1                     # the same expression everywhere, but a read-modify-write


def two_dimensional(img, t):
    for y, z in np.ndindex(img.shape):
        t[0] += img[y, z]


def row_sums(img, t):
    for y, z in np.ndindex(img.shape):
        t[y] += img[y, z]                   # the same element from every z


def enumerated(x, t):
    for i, v in enumerate(x):
        t[1] = v


def one_index_of_two_pinned(img, t):
    for y, z in np.ndindex(img.shape):
        if y == 0:
            t[0] = img[y, z]


@pytest.mark.parametrize("fn, args, shown", [
    (sum_into_one, (np.ones(64, np.float32), np.zeros(1, np.float32)), "t[0] += x[i]"),
    (through_a_local, (np.ones(64, np.float32), np.zeros(4, np.float32)), "t[k] = t[k] + x[i]"),
    (inner_loop_counter, (np.ones(64, np.float32), np.zeros(4, np.float32)), "t[k] += x[i] * k"),
    (scalar_index, (np.ones(64, np.float32), np.zeros(4, np.float32), 2), "t[j] = x[i]"),
    (negative_constant, (np.ones(64, np.float32), np.zeros(4, np.float32)), "t[-1] = max(t[-1], x[i])"),
    (count_everything, (np.ones(64, np.float32), np.zeros(1, np.float32)), "t[0] = t[0] + 1"),
    (two_dimensional, (np.ones((8, 8), np.float32), np.zeros(1, np.float32)), "t[0] += img[y, z]"),
    (enumerated, (np.ones(64, np.float32), np.zeros(4, np.float32)), "t[1] = v"),
    (row_sums, (np.ones((8, 8), np.float32), np.zeros(8, np.float32)), "t[y] += img[y, z]"),
    (one_index_of_two_pinned, (np.ones((8, 8), np.float32), np.zeros(1, np.float32)), "t[0] = img[y, z]"),
])
def test_a_store_every_work_item_makes_to_one_element_is_refused(backend, fn, args, shown):
    k = kernel(fn)
    before = [np.array(a, copy=True) for a in args]
    with pytest.raises(SyntaxError) as info:
        k[backend](*args)
    err = info.value
    assert shown in err.msg and "every work item" in err.msg
    assert "gpu.atomic_add" in err.hint and "@pygpgpu.reduce" in err.hint and "if i == 0:" in err.hint
    assert err.filename == __file__
    assert shown in err.text                                       # the line itself
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)                        # nothing ran


def atomic_sum(x, t):
    for i in range(x.shape[0]):
        gpu.atomic_add(t, 0, x[i])


def test_the_hinted_atomic_gives_the_sum(backend):
    x = np.ones(100_000, np.float32)
    t = np.zeros(1, np.float32)
    kernel(atomic_sum)[backend](x, t)
    assert t[0] == 100_000


def first_item_writes(x, t):
    for i in range(x.shape[0]):
        if i == 0:
            t[0] += x[i] * 10
        j = i + 1
        if j == 2:
            t[1] = x[i]


def same_value_from_every_item(x, t):
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            t[0] = 1
        t[1] = x[0] * 2


def indices_through_locals_and_loops(x, t):
    for i in range(x.shape[0]):
        j = i * 4
        for k in range(4):
            t[j + k] = x[i] + k
        m = j + 3
        t[m] = t[m] * 2


def private_scratch(x, t):
    for i in range(x.shape[0]):
        p = np.zeros(2, np.float32)
        p[0] = x[i]
        p[1] += p[0]
        t[i * 4] = p[1]


def data_dependent_index(x, t):
    for i in range(x.shape[0]):
        m = 0
        if x[i] > 100:
            m = i
        t[m * 4 + 1] = 5


def all_indices_pinned(img, t):
    for y, z in np.ndindex(img.shape):
        if y == 0 and z == 1:
            t[0] = img[y, z]
        if z == 2:
            t[1 + y] = img[y, z] * 2


@pytest.mark.parametrize("fn", [first_item_writes, same_value_from_every_item, indices_through_locals_and_loops,
                                private_scratch, data_dependent_index])
def test_stores_that_only_look_shared_run_and_match_the_host(backend, fn):
    x = np.arange(1, 17, dtype=np.float32)
    t = np.zeros(64, np.float32)
    kernel(fn)[backend](x, t)
    want = np.zeros(64, np.float32)
    fn(x, want)
    np.testing.assert_array_equal(t, want)


def first_column_writes_its_row(img, t):
    for y, z in np.ndindex(img.shape):
        if z == 0:
            s = 0.0
            for k in range(img.shape[1]):
                s += img[y, k]
            t[y] = s
        if img[y, z] > 10:
            t[y + 3] = 1


@pytest.mark.parametrize("fn", [all_indices_pinned, first_column_writes_its_row])
def test_ndindex_stores_pinned_along_the_shared_dimension_run(backend, fn):
    img = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = np.zeros(8, np.float32)
    kernel(fn)[backend](img, t)
    want = np.zeros(8, np.float32)
    fn(img, want)
    np.testing.assert_array_equal(t, want)
