"""gnp.einsum, gnp.pad, and numpy's placing functions (put, putmask, place, put_along_axis, choose),
each against numpy on every backend of the run (issue 32: CuPy has them; they raised
NotImplementedError). np.einsum / np.pad / np.put ... on device arrays run the same functions."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

RNG = np.random.default_rng(7)

EINSUM = [("ij,jk->ik", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("ij->ji", [(3, 4)]),
          ("i,i", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
          ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ijk->", [(2, 3, 4)]), ("ij,ij->ij", [(3, 4), (3, 4)]),
          ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("ji", [(3, 4)]), ("ij,jk", [(3, 4), (4, 5)]),
          ("iij->ij", [(3, 3, 2)]), ("...i,...i->...", [(2, 3, 4), (3, 4)]), ("i,i->", [(0,), (0,)]),
          ("ij,kj->ik", [(3, 4), (5, 4)]), ("ijk,ikl->jl", [(2, 3, 4), (2, 4, 5)]),
          ("a,b,c->abc", [(2,), (3,), (4,)]), ("...", [(2, 3)]), ("ij,j", [(3, 1), (4,)])]


def _operand(shape, dtype):
    if dtype == np.bool_:
        return RNG.random(shape) > 0.5
    return (RNG.random(shape) * 4).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.complex64, np.bool_])
@pytest.mark.parametrize("subscripts, shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum_matches_numpy(backend, subscripts, shapes, dtype):
    hosts = [_operand(s, dtype) for s in shapes]
    want = np.einsum(subscripts, *hosts)
    got = gnp.einsum(subscripts, *[gnp.asarray(h, device=backend) for h in hosts])
    assert (got.dtype, got.shape) == (want.dtype, np.shape(want))
    np.testing.assert_allclose(got.get(), want, rtol=2e-5 if dtype in (np.float32, np.complex64) else 1e-12)


def test_einsum_dtype_out_errors_and_numpys_entry_point(backend):
    a, b = _operand((3, 4), np.float32), _operand((4, 2), np.float32)
    ga, gb = gnp.asarray(a, device=backend), gnp.asarray(b, device=backend)
    got = np.einsum("ij,jk->ik", ga, gb, dtype=np.float64)             # np.einsum on device arrays
    assert isinstance(got, gnp.ndarray) and got.dtype == np.float64
    np.testing.assert_allclose(got.get(), np.einsum("ij,jk->ik", a, b, dtype=np.float64), rtol=1e-6)
    out = gnp.zeros((3, 2), np.float32, device=backend)
    assert gnp.einsum("ij,jk", ga, gb, out=out) is out
    np.testing.assert_allclose(out.get(), a @ b, rtol=1e-5)
    for bad, args in [("ij,jk->ik", (ga,)), ("ij->ii", (ga,)), ("ij->k", (ga,)), ("ij,jk->ik", (ga, ga)),
                      ("i1->i", (ga,))]:
        with pytest.raises(ValueError):
            np.einsum(bad, *[x.get() for x in args])
        with pytest.raises(ValueError):
            gnp.einsum(bad, *args)
    with pytest.raises(TypeError):
        gnp.einsum("ij->ij", ga, dtype=np.int32)                        # casting='safe' refuses float32 -> int32
    # numpy's interleaved (operand, sublist) form, with and without the output sublist and with '...'
    for args, hosts in [((ga, [0, 1], gb, [1, 2], [0, 2]), (a, [0, 1], b, [1, 2], [0, 2])),
                        ((ga, [0, 1], gb, [1, 2]), (a, [0, 1], b, [1, 2])),
                        ((ga, [Ellipsis, 1], [Ellipsis]), (a, [Ellipsis, 1], [Ellipsis]))]:
        np.testing.assert_allclose(gnp.einsum(*args).get(), np.einsum(*hosts), rtol=1e-5)


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 2), (1,), (4, 1)])
def test_pad_matches_numpy(backend, mode, shape):
    a = (RNG.random(shape) * 10).astype(np.float32)
    for width in [1, (2, 3), ((1, 0),) * len(shape), 7, ((0, 9),) + ((2, 1),) * (len(shape) - 1)]:
        kw = {"constant_values": ((1, 2),) * len(shape)} if mode == "constant" else {}
        want = np.pad(a, width, mode, **kw)
        got = gnp.pad(gnp.asarray(a, device=backend), width, mode, **kw)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        np.testing.assert_array_equal(got.get(), want)


def test_pad_refuses_what_it_does_not_do(backend):
    g = gnp.arange(4, device=backend)
    with pytest.raises(NotImplementedError, match="np.pad"):
        gnp.pad(g, 1, "mean")
    with pytest.raises(ValueError):
        gnp.pad(g, -1)
    with pytest.raises(TypeError):
        gnp.pad(g, 1.5)
    np.testing.assert_array_equal(np.pad(g, 2).get(), np.pad(np.arange(4), 2))    # np.pad on a device array


@pytest.mark.parametrize("mode, ind", [("raise", [0, 5, -1]), ("wrap", [13, -14, 2]), ("clip", [-3, 40, 1])])
def test_put_modes_and_strided_targets(backend, mode, ind):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = a.copy()
    np.put(want, ind, [9, 8], mode=mode)
    g = gnp.asarray(a, device=backend)
    assert gnp.put(g, ind, [9, 8], mode=mode) is None
    np.testing.assert_array_equal(g.get(), want)
    want, g = a.copy(), gnp.asarray(a, device=backend)
    np.put(want[:, 1:3], ind, [7, 6], mode=mode)
    gnp.put(g[:, 1:3], ind, [7, 6], mode=mode)                       # a view: written through
    np.testing.assert_array_equal(g.get(), want)
    if mode == "raise":
        with pytest.raises(IndexError):
            gnp.put(g, [12], 1.0)


def test_putmask_place_and_put_along_axis(backend):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    mask = a % 3 == 0
    for np_fn, g_fn in [(np.putmask, gnp.putmask), (np.place, gnp.place)]:
        want, g = a.copy(), gnp.asarray(a, device=backend)
        np_fn(want, mask, [100, 200, 300])
        g_fn(g, gnp.asarray(mask, device=backend), [100, 200, 300])
        np.testing.assert_array_equal(g.get(), want)
    for axis in (0, 1, None):
        idx = np.argsort(a, axis=axis if axis is not None else -1)
        idx = idx[:2] if axis == 0 else idx[:, :2] if axis == 1 else idx.ravel()[:3]
        want, g = a.copy(), gnp.asarray(a, device=backend)
        np.put_along_axis(want, idx, -1.0, axis)
        gnp.put_along_axis(g, gnp.asarray(idx, device=backend), -1.0, axis)
        np.testing.assert_array_equal(g.get(), want)


def test_choose_modes_broadcasting_and_errors(backend):
    choices = [np.arange(6).reshape(2, 3) * k for k in range(1, 4)]
    gchoices = [gnp.asarray(c, device=backend) for c in choices]
    sel = np.array([[0, 1, 2], [2, 1, 0]])
    for mode, s in [("raise", sel), ("wrap", sel + 3), ("clip", sel * 2 - 1)]:
        got = gnp.choose(gnp.asarray(s, device=backend), gchoices, mode=mode)
        want = np.choose(s, choices, mode=mode)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.get(), want)
    got = gnp.choose(gnp.asarray(sel, device=backend), [0.5, gchoices[1], 7])
    np.testing.assert_array_equal(got.get(), np.choose(sel, [0.5, choices[1], 7]))
    with pytest.raises(ValueError):
        gnp.choose(gnp.asarray(sel + 1, device=backend), gchoices)
