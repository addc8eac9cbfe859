"""``k.split(devices)`` for kernels whose work items read more than their own element (issue 36,
item 2): a forward stencil (each part gets its slice plus a halo of the rows after it) and an
n-body step (every part gets all positions, its own bodies' slice of the rest). Compared with the
unsplit kernel on the same device (bit for bit) and with numpy; the patterns a part cannot
reproduce are refused with what to do instead.

The "devices" are the test backend's device listed several times, as in tests/test_split.py;
tests/test_multi_bench_split.py runs the same kernels over two PoCL devices."""
from __future__ import annotations

import numpy as np
import pytest
from pygpgpu import kernel


@kernel
def smooth3(x, out):                   # out[i] is the smoothed x[i + 1]: out holds the interior points
    for i in range(out.shape[0]):
        out[i] = 0.25 * x[i] + 0.5 * x[i + 1] + 0.25 * x[i + 2]


@kernel
def smooth3_from_x(x, out):            # the domain from the halo array's own length
    for i in range(x.shape[0] - 2):
        out[i] = x[i] + x[i + 2]


@kernel
def accelerations(px, py, ax, ay, all_x, all_y, mass, eps2):
    for i in range(ax.shape[0]):
        fx = 0.0
        fy = 0.0
        for j in range(all_x.shape[0]):
            dx = all_x[j] - px[i]
            dy = all_y[j] - py[i]
            inv = 1.0 / np.sqrt(dx * dx + dy * dy + eps2)
            s = mass[j] * inv * inv * inv
            fx += s * dx
            fy += s * dy
        ax[i] = fx
        ay[i] = fy


@kernel
def row_sums_weighted(w, table, out):  # every part reads the whole 2-D table
    for i in range(out.shape[0]):
        acc = 0.0
        for r in range(table.shape[0]):
            for c in range(table.shape[1]):
                acc += table[r, c] * (c + 1)
        out[i] = w[i] * acc


@kernel
def backward(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i - 1] + x[i]


@kernel
def in_place(x):                       # reads the neighbour it may already have overwritten
    for i in range(x.shape[0] - 1):
        x[i] = x[i] + x[i + 1]


@kernel
def gather_from_index(x, out):
    for i in range(out.shape[0]):
        k = (i * 7) % x.shape[0]
        out[i] = x[k]


def _nbody_host(px, py, mass, eps2):
    dx = px[None, :] - px[:, None]
    dy = py[None, :] - py[:, None]
    inv = 1.0 / np.sqrt(dx * dx + dy * dy + eps2)
    s = mass[None, :] * inv ** 3
    return (s * dx).sum(axis=1), (s * dy).sum(axis=1)


def test_a_forward_stencil_is_split_with_a_halo(backend):
    x = np.random.default_rng(2).standard_normal(50_002)
    whole = np.zeros(50_000)
    smooth3[backend](x, whole)
    np.testing.assert_allclose(whole, 0.25 * x[:-2] + 0.5 * x[1:-1] + 0.25 * x[2:], rtol=1e-12)
    for devices, weights in (([backend] * 2, None), ([backend] * 3, [1, 3, 2]), ([backend] * 4, None)):
        out = np.full(50_000, np.nan)
        smooth3.split(devices, weights)(x, out)
        np.testing.assert_array_equal(out, whole)        # the rows at every seam read the next part's first rows
    out = np.zeros(50_000)
    smooth3_from_x.split([backend] * 3)(x, out)
    np.testing.assert_array_equal(out, x[:-2] + x[2:])


def test_an_nbody_step_is_split_with_all_positions_on_every_part(backend):
    rng = np.random.default_rng(4)
    n = 1500
    px, py = rng.standard_normal(n), rng.standard_normal(n)
    mass = rng.random(n) + 0.5
    whole = np.zeros(n), np.zeros(n)
    accelerations[backend](px, py, *whole, px, py, mass, 0.01)
    want = _nbody_host(px, py, mass, 0.01)
    np.testing.assert_allclose(whole[0], want[0], rtol=1e-5, atol=1e-6)     # (the sums round in float32)
    np.testing.assert_allclose(whole[1], want[1], rtol=1e-5, atol=1e-6)
    ax, ay = np.full(n, np.nan), np.full(n, np.nan)
    split = accelerations.split([backend] * 3, weights=[2, 1, 1])
    assert [(lo, hi) for _d, lo, hi in split.parts(px, py, ax, ay, px, py, mass, 0.01)] == [(0, 750), (750, 1125),
                                                                                          (1125, 1500)]
    split(px, py, ax, ay, px, py, mass, 0.01)
    np.testing.assert_array_equal(ax, whole[0])
    np.testing.assert_array_equal(ay, whole[1])


def test_a_2d_table_read_at_indices_free_of_i_goes_whole_to_every_part(backend):
    w = np.arange(1000, dtype=np.float32)
    table = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.full(1000, np.nan, np.float32)
    row_sums_weighted.split([backend] * 3)(w, table, out)
    np.testing.assert_allclose(out, w * float((table * np.arange(1, 5)).sum()), rtol=1e-6)


@pytest.mark.parametrize(("k", "args", "reason"), [
    (backward, lambda x: (x, np.empty_like(x)), r"read behind the work item's own element \(x\[i - 1\]\).*forward offsets"),
    (in_place, lambda x: (x,), "not accessed only at each work item's own element"),
    (gather_from_index, lambda x: (x, np.empty_like(x)), "read at an index computed from 'i'"),
])
def test_patterns_a_part_cannot_reproduce_are_refused(backend, k, args, reason):
    x = np.arange(100, dtype=np.float64)
    with pytest.raises(ValueError, match=reason):
        k.split([backend, backend])(*args(x))


def test_a_halo_array_too_short_for_the_domain_says_how_long_it_must_be(backend):
    x = np.arange(100, dtype=np.float64)
    with pytest.raises(ValueError, match=r"reads up to x\[i \+ 2\] for each of the 100 work items, so it needs 102"):
        smooth3.split([backend, backend])(x, np.empty(100))
