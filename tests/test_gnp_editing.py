"""gnp.delete, resize, trim_zeros, unwrap, the broadcast object, repeat with device counts, and numpy
scalars taken as host scalars, each against numpy (real kernels on each backend of the run)."""
from __future__ import annotations

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
import pytest


def up(x, backend):
    return gnp.asarray(x, device=backend)


def check(got, want):
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


DELETE_OBJS = {
    "device ints": np.array([0, 2, 4]), "device bools": np.array([True, False] * 5),
    "int": 5, "negative int": -1, "slice": slice(None, None, 3), "list": [1, 3], "empty list": [],
    "host bools": [False] * 9 + [True],
}


@pytest.mark.parametrize("name", DELETE_OBJS)
def test_delete_matches_numpy(backend, name):
    x = np.arange(10, 20)
    obj = DELETE_OBJS[name]
    dev_obj = up(obj, backend) if isinstance(obj, np.ndarray) else obj
    check(gnp.delete(up(x, backend), dev_obj), np.delete(x, obj))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_delete_along_an_axis(backend, axis):
    m = np.arange(20.0).reshape(4, 5)
    check(gnp.delete(up(m, backend), up(np.array([0, 2]), backend), axis=axis), np.delete(m, [0, 2], axis=axis))
    check(gnp.delete(up(m, backend), slice(1, 3), axis=axis), np.delete(m, slice(1, 3), axis=axis))


def test_delete_refuses_what_numpy_refuses(backend):
    x = np.arange(5)
    for obj in ([7], [1.5]):
        with pytest.raises(IndexError):
            np.delete(x, obj)
        with pytest.raises(IndexError):
            gnp.delete(up(x, backend), obj)
    with pytest.raises(ValueError):
        np.delete(x, [True, False])
    with pytest.raises(ValueError):
        gnp.delete(up(x, backend), [True, False])


@pytest.mark.parametrize("shape", [(10, 10), 15, (3,), (2, 0), ()], ids=str)
@pytest.mark.parametrize("source", ["arange(8)", "arange(10) 2-D", "scalar", "empty"])
def test_resize_matches_numpy(backend, shape, source):
    host = {"arange(8)": np.arange(8), "arange(10) 2-D": np.arange(10.0).reshape(2, 5),
            "scalar": np.float32(2.5), "empty": np.array([])}[source]
    with pygpgpu.device(backend):
        dev = host if np.ndim(host) == 0 else up(host, backend)
        check(gnp.resize(dev, shape), np.resize(host, shape))


@pytest.mark.parametrize("trim", ["fb", "f", "b", "F", "B"])
@pytest.mark.parametrize("values", [[0, 0, 1, 0, 2, 0, 0], [0, 0, 0], [3, 1], [0.0, -0.0, 2.5, 0.0], [1, 0, 2, 3, 0, 5]],
                         ids=str)
def test_trim_zeros_matches_numpy(backend, trim, values):
    a = np.array(values)
    check(gnp.trim_zeros(up(a, backend), trim), np.trim_zeros(a, trim))


def test_trim_zeros_of_a_matrix_trims_every_axis(backend):
    a = np.zeros((4, 5), np.int32)
    a[1, 2], a[2, 3] = 7, 8
    check(gnp.trim_zeros(up(a, backend)), np.trim_zeros(a))
    check(gnp.trim_zeros(up(a, backend), axis=1), np.trim_zeros(a, axis=1))
    with pytest.raises(ValueError):
        gnp.trim_zeros(up(a, backend), "x")


UNWRAP_KW = [{}, {"discont": 1.0}, {"period": 1.2}, {"discont": 5.0, "axis": 1, "period": 4.5}, {"axis": 0},
             {"period": 6}]


@pytest.mark.parametrize("kw", UNWRAP_KW, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8"])
def test_unwrap_matches_numpy(backend, kw, dtype):
    a = (np.random.default_rng(3).random((4, 5)) * 20).astype(dtype)
    try:
        want = np.unwrap(a, **kw)
    except OverflowError:               # uint8 with an integer period: numpy's NEP 50 error, and ours
        with pytest.raises(OverflowError):
            gnp.unwrap(up(a, backend), **kw)
        return
    got = gnp.unwrap(up(a, backend), **kw)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got.get(), want, rtol=1e-5)


def test_unwrap_of_a_jumping_phase(backend):
    phase = np.linspace(0, 6 * np.pi, 50) % (2 * np.pi)
    np.testing.assert_allclose(gnp.unwrap(up(phase, backend)).get(), np.unwrap(phase))


@pytest.mark.parametrize("shapes", [[(), ()], [(0,), (1,)], [(2, 1, 3, 4), (3, 1, 4)], [(2, 0, 1, 1, 3), (2, 1, 0, 0, 3)],
                                    [(4, 3, 2, 3), (2, 3), (1, 1)]], ids=str)
def test_broadcast_object_matches_numpy(backend, shapes):
    host = [np.ones(s, np.float32) for s in shapes]
    ours, theirs = gnp.broadcast(*(up(h, backend) for h in host)), np.broadcast(*host)
    assert (ours.shape, ours.size, ours.nd, ours.ndim, ours.numiter) == \
        (theirs.shape, theirs.size, theirs.nd, theirs.ndim, theirs.numiter)
    for view, h in zip(ours.values, host):
        check(view, np.broadcast_to(h, theirs.shape))


def test_broadcast_object_refuses_incompatible_shapes(backend):
    with pytest.raises(ValueError):
        np.broadcast(np.ones(3), np.ones(2))
    with pytest.raises(ValueError):
        gnp.broadcast(up(np.ones(3), backend), up(np.ones(2), backend))


@pytest.mark.parametrize("counts,axis", [([1, 0, 2], 1), ([2, 3], 0), ([3], None), ([0, 0, 0], 1),
                                         ([1, 2, 0, 1, 1, 3], None)], ids=str)
def test_repeat_with_device_counts(backend, counts, axis):
    a = np.arange(6.0).reshape(2, 3)
    check(gnp.repeat(up(a, backend), up(np.array(counts), backend), axis), np.repeat(a, counts, axis))


def test_repeat_with_device_counts_refuses_negative_and_mismatched(backend):
    a = up(np.arange(3), backend)
    with pytest.raises(ValueError, match="negative"):
        gnp.repeat(a, up(np.array([1, -1, 2]), backend))
    with pytest.raises(ValueError):
        np.repeat(np.arange(3), np.array([1, 2]))
    with pytest.raises(ValueError):
        gnp.repeat(a, up(np.array([1, 2]), backend))


@pytest.mark.parametrize("scalar", [np.float32(3.5), np.int16(-2), np.bool_(True), np.uint64(7)], ids=repr)
def test_numpy_scalars_are_taken_as_host_scalars(backend, scalar):
    with pygpgpu.device(backend):
        check(gnp.atleast_2d(scalar), np.atleast_2d(scalar))
        check(gnp.tile(scalar, 3), np.tile(scalar, 3))
