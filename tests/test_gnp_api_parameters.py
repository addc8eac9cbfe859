"""numpy's parameters that gnp lacked (issue 32), each compared with numpy on real kernels: ``all``/
``any`` (and the other reductions) with ``out``/``keepdims`` positional as numpy's signature,
``array(ndmin=)``, ``*_like(order=)``, ``reshape(copy=)`` and ``empty/zeros/ones(order=None / 'c')``."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def check(got, want):
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


HOST = np.array([[1, 0, 3], [4, 5, 0]], dtype=np.int32)


@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_take_out_and_keepdims_positionally(backend, name):
    g = gnp.asarray(HOST, device=backend)
    for axis in (0, 1, None, (0, 1)):
        check(getattr(gnp, name)(g, axis, None, True), getattr(np, name)(HOST, axis, None, True))
        check(getattr(gnp, name)(g, axis, None, False), getattr(np, name)(HOST, axis, None, False))
    out = gnp.ones(3, bool, device=backend)
    host_out = np.ones(3, bool)
    got = getattr(gnp, name)(g, 0, out)
    want = getattr(np, name)(HOST, 0, host_out)
    assert got is out
    check(out, host_out)
    check(got, want)
    out2 = gnp.zeros((2, 1), bool, device=backend)
    assert getattr(gnp, name)(g, 1, out2, True) is out2
    check(out2, getattr(np, name)(HOST, 1, np.zeros((2, 1), bool), True))


@pytest.mark.parametrize("name, args", [
    ("sum", (0, np.float32, None, True)), ("prod", (1, np.int64)), ("min", (0, None, True)),
    ("max", (1, None, False)), ("mean", (0, np.float32, None, True)), ("argmax", (1,)), ("argmin", (0, None)),
])
def test_reductions_take_numpys_positional_parameters(backend, name, args):
    g = gnp.asarray(HOST, device=backend)
    check(getattr(gnp, name)(g, *args), getattr(np, name)(HOST, *args))


def test_reductions_refuse_what_numpys_refuse(backend):
    g = gnp.asarray(HOST, device=backend)
    with pytest.raises(TypeError, match="positional arguments"):
        gnp.all(g, 0, None, True, True)
    with pytest.raises(TypeError, match="multiple values"):
        gnp.any(g, 0, axis=1)
    with pytest.raises(TypeError, match="unexpected keyword"):
        gnp.all(g, dtype=bool)
    with pytest.raises(TypeError):
        np.all(HOST, dtype=bool)


@pytest.mark.parametrize("ndmin", [0, 1, 2, 4])
@pytest.mark.parametrize("data", [5, [1.5, 2.5], [[1, 2], [3, 4]]], ids=["scalar", "vector", "matrix"])
def test_array_ndmin(backend, data, ndmin):
    check(gnp.array(data, ndmin=ndmin, device=backend), np.array(data, ndmin=ndmin))
    g = gnp.asarray(np.asarray(data), device=backend)
    check(gnp.array(g, ndmin=ndmin), np.array(np.asarray(data), ndmin=ndmin))


@pytest.mark.parametrize("order", ["K", "A", "C", "F", None, "c", "f"])
@pytest.mark.parametrize("name", ["empty_like", "zeros_like", "ones_like", "full_like"])
@pytest.mark.parametrize("fortran", [False, True], ids=["C-source", "F-source"])
def test_like_functions_take_order(backend, name, order, fortran):
    host = np.asfortranarray(HOST) if fortran else HOST
    g = gnp.asarray(host, device=backend, order="F" if fortran else "C")
    extra = (7,) if name == "full_like" else ()
    got = getattr(gnp, name)(g, *extra, order=order)
    want = getattr(np, name)(host, *extra, order=order)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)
    if name != "empty_like":
        check(got, want)
    # numpy's functions hand device arrays to gnp's, with the same parameters
    got = getattr(np, name)(g, *extra, None, order)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)


def test_like_functions_refuse_unknown_orders(backend):
    g = gnp.asarray(HOST, device=backend)
    with pytest.raises(ValueError, match="order must be one of"):
        gnp.zeros_like(g, order="X")


@pytest.mark.parametrize("order", [None, "C", "c", "F", "f"])
@pytest.mark.parametrize("name", ["empty", "zeros", "ones"])
def test_creation_takes_numpys_orders(backend, name, order):
    got = getattr(gnp, name)((2, 3), np.float32, order=order, device=backend)
    want = getattr(np, name)((2, 3), np.float32, order=order)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)
    if name != "empty":
        check(got, want)
    positional = getattr(gnp, name)((2, 3), np.int16, "F" if order in ("F", "f") else "C")
    assert positional.flags.f_contiguous == want.flags.f_contiguous
    with pytest.raises(ValueError, match="only 'C' or 'F'"):
        getattr(gnp, name)((2, 3), order="K", device=backend)
    with pytest.raises(ValueError, match="only 'C' or 'F'"):
        getattr(np, name)((2, 3), order="K")


def test_reshape_copy(backend):
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    g = gnp.asarray(host, device=backend)
    for copy in (None, True, False):
        got = gnp.reshape(g, (4, 3), copy=copy)
        check(got, np.reshape(host, (4, 3), copy=copy))
        assert (got.buffer is g.buffer) == (copy is not True)
    check(g.reshape(2, 6, copy=True), host.reshape(2, 6, copy=True))
    view = g.T          # (a transpose cannot be flattened in place)
    with pytest.raises(ValueError, match="Unable to avoid creating a copy"):
        view.reshape(12, copy=False)
    with pytest.raises(ValueError):
        host.T.reshape(12, copy=False)
    check(np.reshape(view, (12,), copy=True), host.T.reshape(12))
    check(gnp.reshape(g, newshape=(2, 6)), host.reshape(2, 6))
