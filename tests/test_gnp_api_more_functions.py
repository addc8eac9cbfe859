"""numpy functions added to gnp after the first round of issue 32 (each out of the
NotImplementedError table), compared with numpy on real kernels: correlate, the windows, sinc,
select, compress, extract, fill_diagonal, tensordot, cov, corrcoef, polyadd/polysub/polymul."""
from __future__ import annotations

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
import pytest


def check(got, want, exact=True):
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    if exact:
        np.testing.assert_array_equal(got.get(), want)
    else:
        np.testing.assert_allclose(got.get(), want, rtol=1e-6 if want.dtype == np.float32 else 1e-12, atol=1e-12)


RNG = np.random.default_rng(3201)


@pytest.mark.parametrize("mode", ["valid", "same", "full"])
@pytest.mark.parametrize("a, v", [(RNG.random(5), RNG.random(3)), (RNG.random(3), RNG.random(5)), (RNG.random(4), RNG.random(6)),
                                  (RNG.random(6), RNG.random(4)), (np.int32([1, 2, 3]), np.int32([0, 1]))])
def test_correlate(backend, a, v, mode):
    got = gnp.correlate(gnp.asarray(a, device=backend), gnp.asarray(v, device=backend), mode)
    check(got, np.correlate(a, v, mode), exact=a.dtype.kind != "f")


@pytest.mark.parametrize("M", [0, 1, 2, 5, 8, 13])
@pytest.mark.parametrize("name", ["bartlett", "hanning", "hamming", "blackman"])
def test_windows(backend, name, M):
    check(getattr(gnp, name)(M, device=backend), getattr(np, name)(M), exact=False)


@pytest.mark.parametrize("host", [np.array([-1.5, 0.0, 0.5, 2.0, np.inf]), np.float32([0, 0.25, -3]), np.arange(-2, 3)])
def test_sinc(backend, host):
    with np.errstate(all="ignore"):
        want = np.sinc(host)
    check(gnp.sinc(gnp.asarray(host, device=backend)), want, exact=False)


def test_select(backend):
    x = np.arange(10)
    gx = gnp.asarray(x, device=backend)
    conds, gconds = [x < 3, x > 5], [gx < 3, gx > 5]
    check(gnp.select(gconds, [gx, gx * gx], 42), np.select(conds, [x, x * x], 42))
    x8 = x.astype(np.int8)
    check(gnp.select(gconds, [1.5, gnp.asarray(x8, device=backend)]), np.select(conds, [1.5, x8]))
    check(gnp.select(gconds, [gx.astype(np.float32), 2], default=np.float32(-1)),
          np.select(conds, [x.astype(np.float32), 2], default=np.float32(-1)))
    with pytest.raises(TypeError, match="boolean"):
        gnp.select([gx], [gx])
    with pytest.raises(ValueError, match="same length"):
        gnp.select(gconds, [gx])


def test_compress_and_extract(backend):
    a = np.arange(12).reshape(3, 4)
    g = gnp.asarray(a, device=backend)
    with pygpgpu.device(backend):
        check(gnp.compress([True, False, True], g, axis=0), np.compress([True, False, True], a, axis=0))
        check(gnp.compress([0, 1], g, axis=1), np.compress([0, 1], a, axis=1))
        check(gnp.compress([1, 0, 1], g), np.compress([1, 0, 1], a))
    check(gnp.extract(g % 3 == 0, g), np.extract(a % 3 == 0, a))
    check(np.extract(g > 4, g), np.extract(a > 4, a))


@pytest.mark.parametrize("shape, val, wrap", [((3, 3), 5, False), ((5, 3), [1, 2], True), ((5, 3), 7, False),
                                              ((3, 5), [1, 2, 3], False), ((3, 3, 3), 9, False), ((6, 2), 4, True),
                                              ((4, 4), "device", False)])
def test_fill_diagonal(backend, shape, val, wrap):
    host = np.zeros(shape, np.int32)
    g = gnp.asarray(host, device=backend)
    if val == "device":
        val, gval = np.arange(1, 5), gnp.arange(1, 5, device=backend)
    else:
        gval = val
    np.fill_diagonal(host, val, wrap)
    assert gnp.fill_diagonal(g, gval, wrap) is None
    check(g, host)


@pytest.mark.parametrize("axes", [([1, 0], [0, 1]), 0, ([0], [1]), ((2, 1), (2, 0))])
def test_tensordot(backend, axes):
    a, b = RNG.random((3, 4, 5)), RNG.random((4, 3, 5))
    if axes == ((2, 1), (2, 0)):
        a = RNG.random((3, 4, 5))
    got = gnp.tensordot(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend), axes)
    check(got, np.tensordot(a, b, axes), exact=False)
    with pytest.raises(ValueError, match="shape-mismatch"):
        gnp.tensordot(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend), 1)


@pytest.mark.parametrize("kwargs", [{}, dict(bias=True), dict(ddof=2), dict(rowvar=False)])
def test_cov_and_corrcoef(backend, kwargs):
    x = RNG.random((3, 6))
    g = gnp.asarray(x, device=backend)
    check(gnp.cov(g, **kwargs), np.cov(x, **kwargs), exact=False)
    rowvar = kwargs.get("rowvar", True)
    check(gnp.corrcoef(g, rowvar=rowvar), np.corrcoef(x, rowvar=rowvar), exact=False)
    y = RNG.random((2, 6))
    check(gnp.cov(g, gnp.asarray(y, device=backend)), np.cov(x, y), exact=False)
    check(gnp.cov(g[0]), np.cov(x[0]), exact=False)
    f32 = x.astype(np.float32)
    check(gnp.cov(gnp.asarray(f32, device=backend)), np.cov(f32), exact=False)
    with pytest.raises(NotImplementedError, match="weights"):
        gnp.cov(g, fweights=[1, 2, 1, 1, 1, 1])


@pytest.mark.parametrize("a, b", [([1, 2, 3], [4, 5]), ([1.5], [1, 2, 3]), ([1, 2], [3, 4]), (np.int8([1, -1]), [2])])
def test_polynomial_arithmetic(backend, a, b):
    with pygpgpu.device(backend):
        ga = gnp.asarray(a) if isinstance(a, np.ndarray) else a
        for name in ("polyadd", "polysub", "polymul"):
            check(getattr(gnp, name)(ga, b), getattr(np, name)(a, b))


@pytest.mark.parametrize("key", [np.s_[0:3], np.s_[0:3, 1:5:2], np.s_[-1:1:5j], np.s_[0:2, 0:1:3j], np.s_[2:-1:-1]],
                         ids=["1d", "2d", "complex-step", "mixed", "down"])
def test_mgrid_ogrid(backend, key):
    with pygpgpu.device(backend):
        dense, sparse = gnp.mgrid[key], gnp.ogrid[key]
    check(dense, np.mgrid[key], exact=False)
    want = np.ogrid[key]
    if isinstance(want, (list, tuple)):
        assert isinstance(sparse, tuple) and len(sparse) == len(want)
        for a, b in zip(sparse, want):
            check(a, b, exact=False)
    else:
        check(sparse, want, exact=False)


def test_ix(backend):
    # (gnp's indexing takes one index array so far, so g[gnp.ix_(...)] itself is not compared here)
    with pygpgpu.device(backend):
        for args in (([0, 1], [2, 3, 4]), ([True, False, True, False], [1]), ((3,), (0, 4))):
            got, want = gnp.ix_(*args), np.ix_(*args)
            for a, b in zip(got, want):
                check(a, b)


def test_asarray_chkfinite_and_require(backend):
    with pygpgpu.device(backend):
        check(gnp.asarray_chkfinite([1.0, 2.0]), np.asarray_chkfinite([1.0, 2.0]))
        check(gnp.asarray_chkfinite([1, 2]), np.asarray_chkfinite([1, 2]))
        for bad in ([1.0, np.inf], [np.nan]):
            with pytest.raises(ValueError, match="infs or NaNs"):
                gnp.asarray_chkfinite(bad)
    host = np.arange(6.0).reshape(2, 3)
    g = gnp.asarray(host, device=backend)
    for source, hsource in ((g.T, host.T), (g, host), (g[:, ::2], host[:, ::2])):
        for req in (None, "C", ["F"], ["W", "O"], ["A"], ["O", "C"], ["E"]):
            got, want = gnp.require(source, requirements=req), np.require(hsource, requirements=req)
            assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous,
                                                                        want.flags.f_contiguous), (req, hsource.shape)
            check(got, want)
    with pytest.raises(ValueError, match="both 'C' and 'F'"):
        gnp.require(g, requirements=["C", "F"])
