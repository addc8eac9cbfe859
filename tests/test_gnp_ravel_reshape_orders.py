"""ravel and reshape with numpy's orders: "A" follows a Fortran-ordered array's layout, ravel "K"
reads memory order (axes by stride, index order along a negative stride), reshape refuses "K" as
numpy does, and the results' contiguity flags are numpy's."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def cases(backend):
    a = np.arange(24).reshape(2, 3, 4)
    g = gnp.asarray(a, device=backend)
    return [(np.asfortranarray(a), gnp.asfortranarray(g)), (a.transpose(0, 2, 1)[:, ::-2], g.transpose(0, 2, 1)[:, ::-2]),
            (a[:, ::2], g[:, ::2]), (a.swapaxes(0, 2)[::-1], g.swapaxes(0, 2)[::-1]), (a.T, g.T), (a, g)]


@pytest.mark.parametrize("order", list("CFAK"))
def test_ravel_orders_as_numpy(backend, order):
    for host, dev in cases(backend):
        np.testing.assert_array_equal(dev.ravel(order).get(), host.ravel(order))


@pytest.mark.parametrize("shape_in, shape_out", [((2, 3), (1, 6, 1)), ((6,), (2, 3)), ((3, 3, 3), (9, 3))])
@pytest.mark.parametrize("order_in", ["C", "F"])
@pytest.mark.parametrize("order", ["C", "F", "A"])
def test_reshape_orders_and_flags_as_numpy(backend, shape_in, shape_out, order_in, order):
    host = np.asarray(np.arange(np.prod(shape_in)).reshape(shape_in), order=order_in)
    dev = gnp.asarray(gnp.arange(int(np.prod(shape_in)), device=backend).reshape(shape_in), order=order_in)
    want, got = host.reshape(shape_out, order=order), dev.reshape(shape_out, order=order)
    np.testing.assert_array_equal(got.get(), want)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)


def test_reshape_refuses_order_k(backend):
    with pytest.raises(ValueError, match="is not permitted"):
        gnp.arange(24, device=backend).reshape(2, 3, 4).reshape(2, 4, 3, order="K")


@pytest.mark.parametrize("order", list("CFAK"))
def test_ravel_and_empty_like_of_a_broadcast_array(backend, order):
    a = np.arange(2.0).reshape(2, 1)
    g = gnp.asarray(a, device=backend)
    want = np.broadcast_to(a, (3, 2, 4))
    got = gnp.broadcast_to(g, (3, 2, 4))
    np.testing.assert_array_equal(got.ravel(order).get(), want.ravel(order))
    assert gnp.empty_like(got, order=order).strides == np.empty_like(want, order=order).strides
