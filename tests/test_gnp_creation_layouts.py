"""Creation keeps numpy's layouts: asarray/array of a Fortran-ordered host array stay Fortran-ordered
(numpy's default order keeps the layout), *_like(order="K") of a strided prototype lay memory out
in its axis order (numpy's strides), array(g, copy=False) raises where a copy is needed, and
empty(None) is numpy's TypeError."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


@pytest.mark.parametrize("fortran", [False, True])
@pytest.mark.parametrize("make", [gnp.asarray, gnp.array], ids=["asarray", "array"])
def test_host_layout_is_kept(backend, fortran, make):
    a = np.arange(24).reshape(2, 3, 4)
    a = np.asfortranarray(a) if fortran else a
    g = make(a, device=backend)
    assert g.flags.f_contiguous == a.flags.f_contiguous
    assert g.flags.c_contiguous == a.flags.c_contiguous
    np.testing.assert_array_equal(g.get(), a)


@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like"])
@pytest.mark.parametrize("dt", [np.float32, np.int8, np.complex64], ids=lambda t: np.dtype(t).name)
def test_like_order_k_follows_a_strided_prototype(backend, name, dt):
    a = np.arange(24).reshape(2, 3, 4).astype(dt)[:, ::2, :].swapaxes(0, 1)
    g = gnp.asarray(np.arange(24).reshape(2, 3, 4).astype(dt), device=backend)[:, ::2, :].swapaxes(0, 1)
    want, got = getattr(np, name)(a, order="K"), getattr(gnp, name)(g, order="K")
    assert got.strides == want.strides
    if name != "empty_like":
        np.testing.assert_array_equal(got.get(), want)
    for order in ("C", "F", "A"):
        assert gnp.empty_like(g, order=order).strides == np.empty_like(a, order=order).strides
    full = gnp.full_like(g, 7, order="K")
    assert full.strides == np.full_like(a, 7, order="K").strides
    np.testing.assert_array_equal(full.get(), np.full_like(a, 7))


def test_array_copy_false_raises_where_a_copy_is_needed(backend):
    g = gnp.arange(24, device=backend).reshape(2, 3, 4)
    assert gnp.array(g, copy=False) is g
    with pytest.raises(ValueError, match="avoid copy"):
        gnp.array(g, copy=False, order="F")
    with pytest.raises(ValueError, match="avoid copy"):
        gnp.array(g, copy=False, dtype=np.float32)
    assert gnp.array(g, copy=None, order="F").flags.f_contiguous


def test_empty_of_none_is_numpys_type_error(backend):
    with pytest.raises(TypeError, match=r"Use \(\)"):
        gnp.empty(None, device=backend)


@pytest.mark.parametrize("order", list("CFAK"))
@pytest.mark.parametrize("shape", [None, (4, 3, 2), (6, 4), (24,), (2, 2)])
def test_like_with_a_new_shape_takes_numpys_layout(backend, order, shape):
    host = [np.asfortranarray(np.arange(24).reshape(2, 3, 4)), np.arange(24).reshape(2, 3, 4)[:, ::2, :].swapaxes(0, 1)]
    g = gnp.arange(24, device=backend).reshape(2, 3, 4)
    dev = [gnp.asfortranarray(g), g[:, ::2, :].swapaxes(0, 1)]
    for a, d in zip(host, dev):
        want, got = np.empty_like(a, order=order, shape=shape), gnp.empty_like(d, order=order, shape=shape)
        assert got.shape == want.shape
        assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)
        assert got.strides == want.strides
