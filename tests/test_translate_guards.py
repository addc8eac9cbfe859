"""Bounds guards exercised without oclgrind: every kind of iteration domain, in 1, 2 and 3
dimensions, launched with group sizes that do not divide it, writing into sentinel-filled
outputs larger than the domain. The work items past the domain must write nothing: one
element too many (a ``<`` guard turned ``<=``, a ``>=`` turned ``>``) lands on a sentinel.

PoCL launches exactly the domain when the call gives no local size, so without these launches
the guards would only ever run under oclgrind.
"""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_translate import kernel

SENTINEL = -7777.0
PAD = (3, 5, 7)                  # extra elements past the domain, per dimension (outermost first)


@kernel
def range_1d(x, out, n):
    for i in range(n):
        out[i] = x[i] * 2.0


@kernel
def range_stepped(x, out, start, stop):
    for i in range(start, stop, 3):
        out[i] = x[i] + 1.0


@kernel
def ndindex_2d(x, out, h, w):
    for y, xx in np.ndindex((h, w)):
        out[y, xx] = x[y, xx] + 1.0


@kernel
def ndindex_3d(x, out, d, h, w):
    for z, y, xx in np.ndindex((d, h, w)):
        out[z, y, xx] = x[z, y, xx] + 1.0


@kernel
def enumerate_1d(a, out):
    for i, v in enumerate(a):
        out[i] = v + 1.0


@kernel
def ndenumerate_2d(a, out):
    for (y, xx), v in np.ndenumerate(a):
        out[y, xx] = v + 1.0


@kernel
def ndenumerate_3d(a, out):
    for (z, y, xx), v in np.ndenumerate(a):
        out[z, y, xx] = v + 1.0


@kernel
def work_size_1d(a, out):
    gpu.work_size(a)
    i = gpu.get_global_id(0)
    out[i] = a[i] + 1.0


@kernel
def work_size_2d(a, out):
    gpu.work_size(a)
    xx = gpu.get_global_id(0)
    y = gpu.get_global_id(1)
    out[y, xx] = a[y, xx] + 1.0


@kernel
def work_size_3d(a, out):
    gpu.work_size(a)
    xx = gpu.get_global_id(0)
    y = gpu.get_global_id(1)
    z = gpu.get_global_id(2)
    out[z, y, xx] = a[z, y, xx] + 1.0


def _padded(shape):
    """A sentinel-filled output with PAD more elements than ``shape`` in every dimension."""
    return np.full(tuple(n + p for n, p in zip(shape, PAD)), SENTINEL, np.float32)


def _data(shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) * 0.5 - 3.0


def _check(out, inside, want):
    """``want`` at ``inside`` (a tuple of slices or an index array), the sentinel everywhere else."""
    got = out.copy()
    np.testing.assert_array_equal(got[inside], want)
    got[inside] = SENTINEL
    stray = np.argwhere(got != SENTINEL)
    assert not stray.size, f"{len(stray)} elements past the domain were written, e.g. at {stray[:4].tolist()}"


# (kernel, domain shape, local size in launch order: dimension 0 is the last index); every local
# size leaves the domain ragged in every dimension: 100 = 7*14+2, 13 = 5*2+3, 29 = 7*4+1 ...
LOCALS = {1: (7,), 2: (7, 5), 3: (4, 3, 2)}
SHAPES = {1: (100,), 2: (13, 29), 3: (5, 7, 11)}


def _ragged(ndim):
    shape, local = SHAPES[ndim], LOCALS[ndim]
    for n, g in zip(reversed(shape), local):
        assert n % g, "the test needs a domain that is not a whole number of groups"
    return shape, local


def test_range_guard(backend):
    (n,), local = _ragged(1)
    x = _data((n + PAD[0],))
    out = _padded((n,))
    range_1d[backend][(None, local)](x, out, n)
    _check(out, np.s_[:n], x[:n] * 2.0)


def test_stepped_range_guard(backend):
    start, stop = 5, 96                       # 31 items: 7 groups of 5 with 4 left over
    x = _data((stop + 9,))
    out = np.full(stop + 9, SENTINEL, np.float32)
    range_stepped[backend][(None, (5,))](x, out, start, stop)
    _check(out, np.s_[start:stop:3], x[start:stop:3] + 1.0)


@pytest.mark.parametrize("ndim", [2, 3])
def test_ndindex_guard(backend, ndim):
    shape, local = _ragged(ndim)
    x = _data(tuple(n + p for n, p in zip(shape, PAD)))
    out = _padded(shape)
    k = ndindex_2d if ndim == 2 else ndindex_3d
    k[backend][(None, local)](x, out, *shape)
    inside = tuple(slice(0, n) for n in shape)
    _check(out, inside, x[inside] + 1.0)


def test_enumerate_guard(backend):
    (n,), local = _ragged(1)
    a = _data((n,))
    out = _padded((n,))
    enumerate_1d[backend][(None, local)](a, out)
    _check(out, np.s_[:n], a + 1.0)


@pytest.mark.parametrize("ndim", [2, 3])
def test_ndenumerate_guard(backend, ndim):
    shape, local = _ragged(ndim)
    a = _data(shape)
    out = _padded(shape)
    (ndenumerate_2d if ndim == 2 else ndenumerate_3d)[backend][(None, local)](a, out)
    _check(out, tuple(slice(0, n) for n in shape), a + 1.0)


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_work_size_guard(backend, ndim):
    shape, local = _ragged(ndim)
    a = _data(shape)
    out = _padded(shape)
    {1: work_size_1d, 2: work_size_2d, 3: work_size_3d}[ndim][backend][(None, local)](a, out)
    _check(out, tuple(slice(0, n) for n in shape), a + 1.0)


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_work_size_guard_with_automatic_groups(backend, ndim):
    """Without a local size too: whatever the backend picks, nothing past the domain is written."""
    shape, _ = _ragged(ndim)
    a = _data(shape)
    out = _padded(shape)
    {1: work_size_1d, 2: work_size_2d, 3: work_size_3d}[ndim][backend](a, out)
    _check(out, tuple(slice(0, n) for n in shape), a + 1.0)
