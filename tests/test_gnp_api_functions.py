"""numpy functions gnp lacked (issue 32), each compared with numpy on real kernels: float_power,
conj/conjugate, real/imag/angle (real dtypes here; complex ones in test_gnp_complex.py), reciprocal of
integers, around of Python scalars, arange of bools, cumulative_sum/cumulative_prod, gradient,
convolve, vander, polyval and meshgrid of lists."""
from __future__ import annotations

import warnings

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


RNG = np.random.default_rng(32)
REALS = {
    "int32": np.arange(-4, 5, dtype=np.int32), "uint8": np.arange(0, 9, dtype=np.uint8),
    "float32": RNG.normal(size=9).astype(np.float32), "float64": np.array([-2.5, -0.0, 0.0, 1.5, np.inf, np.nan]),
    "bool": np.array([True, False, True]), "int64-2d": np.arange(-6, 6, dtype=np.int64).reshape(3, 4),
}


@pytest.mark.parametrize("exponent", [2, -1.5, 0.5, np.float32(3), "array"])
@pytest.mark.parametrize("kind", REALS)
def test_float_power(backend, kind, exponent):
    host = REALS[kind]
    e = np.linspace(-2, 2, host.shape[-1]) if isinstance(exponent, str) else exponent
    g = gnp.asarray(host, device=backend)
    ge = gnp.asarray(e, device=backend) if isinstance(e, np.ndarray) else e
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.float_power(host, e)
    check(gnp.float_power(g, ge), want, exact=False)
    check(np.float_power(g, ge), want, exact=False)


@pytest.mark.parametrize("kind", REALS)
def test_real_parts(backend, kind):
    host = REALS[kind]
    g = gnp.asarray(host, device=backend)
    for name in ("conj", "conjugate", "real", "imag"):
        check(getattr(gnp, name)(g), getattr(np, name)(host))
    check(np.conjugate(g), np.conjugate(host))
    check(gnp.real(g), np.real(host))
    assert gnp.real(g) is g                      # numpy's real of a real array is the array itself
    assert gnp.imag(g).flags.writeable is np.imag(host).flags.writeable is False
    if np.angle(host).dtype == np.float16:     # (uint8, int8: numpy's arctan2 loop is float16's)
        try:
            check(gnp.angle(g), np.angle(host), exact=False)
        except TypeError as exc:              # a device without float16 says so
            assert "float16" in str(exc)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(gnp.angle(g), np.angle(host), exact=False)
        check(gnp.angle(g, deg=True), np.angle(host, deg=True), exact=False)
        check(np.angle(g), np.angle(host), exact=False)


def test_parts_of_complex_host_data(backend):
    with pygpgpu.device(backend):
        for name in ("real", "imag"):
            check(getattr(gnp, name)([1 + 2j, 3]), getattr(np, name)([1 + 2j, 3]))
        check(gnp.angle([1 + 2j, -3]), np.angle([1 + 2j, -3]), exact=False)
        check(gnp.angle([1, -2, 0]), np.angle([1, -2, 0]), exact=False)
        check(gnp.real([1.5, 2]), np.real([1.5, 2]))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                   np.bool_])
def test_reciprocal_of_integers(backend, dtype):
    host = np.array([True, False]) if dtype is np.bool_ else np.array([0, 1, 2, 3, 7, 100], dtype=dtype)
    if np.dtype(dtype).kind == "i":
        host = np.concatenate([host, np.array([-1, -2, np.iinfo(dtype).min], dtype=dtype)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.reciprocal(host)
    check(gnp.reciprocal(gnp.asarray(host, device=backend)), want)


def test_around_of_python_scalars_and_lists(backend):
    with pygpgpu.device(backend):
        for args in ((14, -1), (15, -1), (2.5,), (1.25, 1), ([1.5, 2.5, -0.5],), ((14, 26), -1)):
            check(gnp.around(*args), np.around(*args))
            check(gnp.round(*args), np.round(*args))


@pytest.mark.parametrize("args", [(0, 2), (2,), (1,), (True,), (0,), (1, 2)])
def test_arange_of_bools(backend, args):
    check(gnp.arange(*args, dtype=bool, device=backend), np.arange(*args, dtype=bool))


def test_arange_of_too_many_bools_is_numpys_error(backend):
    with pytest.raises(TypeError, match="at most length 2"):
        gnp.arange(0, 3, dtype=bool, device=backend)


CUMULATIVE = [
    (np.int32([1, 2, 3, -4]), {}), (np.arange(6.0).reshape(2, 3), dict(axis=1, include_initial=True)),
    (np.array([True, True, False]), dict(include_initial=True)), (np.array(3), {}),
    (np.arange(1, 7).reshape(2, 3), dict(axis=0, dtype=np.float32)), (np.arange(1, 7).reshape(3, 2), dict(axis=-1)),
    (np.zeros((2, 0)), dict(axis=1, include_initial=True)),
]


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("host, kwargs", CUMULATIVE)
def test_cumulative(backend, name, host, kwargs):
    if not hasattr(np, name):
        pytest.fail(f"numpy {np.__version__} has no {name} to compare with (numpy >= 2.1 does)")
    g = gnp.asarray(host, device=backend)
    check(getattr(gnp, name)(g, **kwargs), getattr(np, name)(host, **kwargs))
    out = gnp.zeros(getattr(np, name)(host, **kwargs).shape, getattr(np, name)(host, **kwargs).dtype, device=backend)
    assert getattr(gnp, name)(g, out=out, **kwargs) is out
    check(out, getattr(np, name)(host, **kwargs))


def test_cumulative_needs_axis_for_matrices(backend):
    g = gnp.ones((2, 2), device=backend)
    with pytest.raises(ValueError, match="axis"):
        gnp.cumulative_sum(g)


GRADIENT_DATA = {
    "float64-2d": RNG.random((5, 6)), "int-2d": RNG.integers(0, 9, (4, 5)), "float32-1d": RNG.random(7).astype(np.float32),
    "float64-3d": RNG.random((3, 4, 5)),
}
GRADIENT_ARGS = [
    ((), {}), ((2.0,), {}), ((), dict(edge_order=2)), ((), dict(axis=0)), ((np.float32(0.5),), dict(axis=-1, edge_order=2)),
    ((3,), dict(axis=(0, -1))),
]


@pytest.mark.parametrize("args, kwargs", GRADIENT_ARGS)
@pytest.mark.parametrize("name", GRADIENT_DATA)
def test_gradient_uniform(backend, name, args, kwargs):
    host = GRADIENT_DATA[name]
    try:
        want = np.gradient(host, *args, **kwargs)
    except ValueError as exc:             # (two axes of a 1-D array: numpy's "repeated axis")
        with pytest.raises(type(exc)):
            gnp.gradient(gnp.asarray(host, device=backend), *args, **kwargs)
        return
    got = gnp.gradient(gnp.asarray(host, device=backend), *args, **kwargs)
    if isinstance(want, (list, tuple)):
        assert isinstance(got, tuple) and len(got) == len(want)
        for a, b in zip(got, want):
            check(a, b, exact=False)
    else:
        check(got, want, exact=False)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_coordinates(backend, edge_order):
    x = np.cumsum(RNG.random(7))
    h = RNG.random(7)
    g = gnp.asarray(h, device=backend)
    check(gnp.gradient(g, x.tolist(), edge_order=edge_order), np.gradient(h, x, edge_order=edge_order), exact=False)
    check(gnp.gradient(g, gnp.asarray(x, device=backend), edge_order=edge_order),
          np.gradient(h, x, edge_order=edge_order), exact=False)
    even = [0, 2, 4, 6, 8, 10, 12]                # equal differences: numpy's uniform path
    check(gnp.gradient(g, even, edge_order=edge_order), np.gradient(h, even, edge_order=edge_order), exact=False)
    h2 = RNG.random((3, 7))
    got = gnp.gradient(gnp.asarray(h2, device=backend), 1.0, x.tolist(), edge_order=edge_order)
    for a, b in zip(got, np.gradient(h2, 1.0, x, edge_order=edge_order)):
        check(a, b, exact=False)
    np.testing.assert_allclose(np.gradient(g, x.tolist()).get(), np.gradient(h, x))


def test_gradient_errors_are_numpys(backend):
    g = gnp.asarray(np.arange(2.0), device=backend)
    with pytest.raises(ValueError, match="too small"):
        gnp.gradient(g, edge_order=2)
    with pytest.raises(ValueError, match="too small"):
        np.gradient(np.arange(2.0), edge_order=2)
    with pytest.raises(TypeError, match="invalid number of arguments"):
        gnp.gradient(gnp.ones((3, 3), device=backend), 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="distances must match"):
        gnp.gradient(gnp.ones(3, device=backend), [1.0, 2.0])


CONVOLUTIONS = [
    ([1, 2, 3], [0, 1, 0.5]), (RNG.random(10), RNG.random(4)), (np.int32([1, 2, 3, 4]), np.int8([1, -1])),
    (np.array([True, False, True]), np.array([False, True])), ([1, 2], [1, 2, 3, 4, 5]), ([3], [2]),
    (RNG.random(6).astype(np.float32), RNG.random(6).astype(np.float32)),
]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("a, v", CONVOLUTIONS)
def test_convolve(backend, a, v, mode):
    ga, gv = (gnp.asarray(np.asarray(x), device=backend) for x in (a, v))
    want = np.convolve(a, v, mode)
    check(gnp.convolve(ga, gv, mode), want, exact=want.dtype.kind != "f")
    check(np.convolve(ga, gv, mode), want, exact=want.dtype.kind != "f")


def test_convolve_errors(backend):
    g = gnp.ones(3, device=backend)
    with pytest.raises(ValueError, match="cannot be empty"):
        gnp.convolve(g, gnp.ones(0, device=backend))
    with pytest.raises(ValueError, match="mode"):
        gnp.convolve(g, g, "middle")


@pytest.mark.parametrize("x, kwargs", [
    ([1, 2, 3], {}), (np.float32([1.5, 2, -3]), dict(N=4, increasing=True)), ([2, 3], dict(N=0)),
    ([True, False], {}), (np.uint8([2, 3, 4]), dict(N=5)), (np.int8([3, -2]), dict(N=6)), ([0.5], dict(N=1)),
])
def test_vander(backend, x, kwargs):
    with pygpgpu.device(backend):
        got = gnp.vander(x if isinstance(x, list) else gnp.asarray(x), **kwargs)
    check(got, np.vander(x, **kwargs))


@pytest.mark.parametrize("p, x", [
    ([1, 2, 3], [0.5, 1, 2]), (np.float32([1, -2]), np.float32([1, 2, 3])), ([3, 0, 1], 5),
    ([1.5, 2], np.int32([1, 2])), (np.int64([2, -1, 4]), np.arange(6).reshape(2, 3)), ([], [1.0, 2.0]),
])
def test_polyval(backend, p, x):
    with pygpgpu.device(backend):
        gp = gnp.asarray(p) if isinstance(p, np.ndarray) else p
        gx = gnp.asarray(x) if isinstance(x, np.ndarray) else x
        got = gnp.polyval(gp, gx)
    check(got, np.polyval(p, x), exact=False)


def test_meshgrid_of_lists(backend):
    with pygpgpu.device(backend):
        for kwargs in ({}, dict(indexing="ij"), dict(sparse=True)):
            got = gnp.meshgrid([1, 2], [3.5, 4, 5], **kwargs)
            want = np.meshgrid([1, 2], [3.5, 4, 5], **kwargs)
            for a, b in zip(got, want):
                check(a, b)


EDGES = {
    "float64": np.array([-np.inf, -2.5, -0.0, 0.0, 1.5, np.inf, np.nan, 720.0]),
    "float32": np.array([-np.inf, -2.5, -0.0, 0.0, 1.5, np.inf, np.nan, 720.0], np.float32),
    "int32": np.arange(-3, 5, dtype=np.int32), "random": RNG.normal(size=8) * 100,
}


@pytest.mark.parametrize("name", ["deg2rad", "radians", "rad2deg", "degrees", "signbit"])
@pytest.mark.parametrize("kind", EDGES)
def test_unary_ufuncs_added(backend, kind, name):
    host = EDGES[kind]
    got = getattr(gnp, name)(gnp.asarray(host, device=backend))
    check(got, getattr(np, name)(host))          # numpy's constant in the loop's type: the same bits


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "heaviside"])
@pytest.mark.parametrize("kind", EDGES)
def test_binary_ufuncs_added(backend, kind, name):
    host = EDGES[kind]
    g = gnp.asarray(host, device=backend)
    for other in (host[::-1].copy(), np.float32(0.5), 0.0, host):
        go = gnp.asarray(other, device=backend) if isinstance(other, np.ndarray) else other
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(np, name)(host, other)
        check(getattr(gnp, name)(g, go), want, exact=False)
        check(getattr(np, name)(g, go), want, exact=False)


@pytest.mark.parametrize("args, kwargs", [((3,), {}), ((4,), dict(k=1)), ((3,), dict(k=-1, m=5)), ((0,), {}),
                                          ((4,), dict(k=-2, m=2))])
@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices(backend, name, args, kwargs):
    got = getattr(gnp, name)(*args, device=backend, **kwargs)
    want = getattr(np, name)(*args, **kwargs)
    assert len(got) == len(want) == 2
    for a, b in zip(got, want):
        check(a, b)
    host = np.zeros((args[0], kwargs.get("m", args[0])))
    g = gnp.asarray(host, device=backend)
    for a, b in zip(getattr(gnp, name + "_from")(g, kwargs.get("k", 0)),
                    getattr(np, name + "_from")(host, kwargs.get("k", 0))):
        check(a, b)


def test_diag_indices_and_indices(backend):
    for a, b in zip(gnp.diag_indices(4, 3, device=backend), np.diag_indices(4, 3)):
        check(a, b)
    cube = np.zeros((3, 3, 3))
    for a, b in zip(gnp.diag_indices_from(gnp.asarray(cube, device=backend)), np.diag_indices_from(cube)):
        check(a, b)
    with pytest.raises(ValueError, match="equal length"):
        gnp.diag_indices_from(gnp.zeros((2, 3), device=backend))
    check(gnp.indices((2, 3, 4), device=backend), np.indices((2, 3, 4)))
    check(gnp.indices((3, 2), dtype=np.int16, device=backend), np.indices((3, 2), dtype=np.int16))
    for a, b in zip(gnp.indices((2, 5), sparse=True, device=backend), np.indices((2, 5), sparse=True)):
        check(a, b)


@pytest.mark.parametrize("kwargs", [{}, dict(nan=-1.0, posinf=9.0), dict(neginf=-7.5), dict(copy=False)])
@pytest.mark.parametrize("kind", ["float64", "float32", "int32"])
def test_nan_to_num(backend, kind, kwargs):
    host = EDGES[kind].copy()
    g = gnp.asarray(host, device=backend)
    got = gnp.nan_to_num(g, **kwargs)
    want = np.nan_to_num(host, **kwargs)
    check(got, want)
    if kwargs.get("copy") is False:
        assert got is g
        check(g, host)              # numpy changed its input too


@pytest.mark.parametrize("host, kwargs", [
    (np.arange(6.0), {}), (np.arange(12).reshape(3, 4), dict(dx=0.5)), (np.arange(12.0).reshape(3, 4), dict(axis=0)),
    (RNG.random(7).astype(np.float32), dict(x=np.cumsum(RNG.random(7)).tolist())),
    (RNG.random((3, 5)), dict(x=[0.0, 1, 3, 6, 10], axis=1)), (RNG.random((3, 5)), dict(x=RNG.random((3, 5)), axis=0)),
])
def test_trapezoid(backend, host, kwargs):
    if not hasattr(np, "trapezoid"):
        pytest.fail(f"numpy {np.__version__} has no trapezoid to compare with (numpy >= 2.0 does)")
    kw = dict(kwargs)
    if isinstance(kw.get("x"), np.ndarray):
        kw["x"] = gnp.asarray(kw["x"], device=backend)
    check(gnp.trapezoid(gnp.asarray(host, device=backend), **kw), np.trapezoid(host, **kwargs), exact=False)


@pytest.mark.parametrize("kwargs", [{}, dict(to_end=[9, 8]), dict(to_begin=-1), dict(to_begin=[0], to_end=(5,))])
def test_ediff1d(backend, kwargs):
    host = np.array([[1, 4, 9], [16, 25, 36]], dtype=np.int32)
    check(gnp.ediff1d(gnp.asarray(host, device=backend), **kwargs), np.ediff1d(host, **kwargs))
    with pytest.raises(TypeError, match="same_kind"):
        gnp.ediff1d(gnp.asarray(host, device=backend), to_end=[1.5])


@pytest.mark.parametrize("axis, start", [(0, 0), (2, 0), (0, 3), (-1, 1), (1, 2), (1, 1)])
def test_rollaxis(backend, axis, start):
    host = np.arange(24).reshape(2, 3, 4)
    check(gnp.rollaxis(gnp.asarray(host, device=backend), axis, start), np.rollaxis(host, axis, start))


def test_may_share_memory(backend):
    host = np.arange(12.0).reshape(3, 4)
    g = gnp.asarray(host, device=backend)
    other = gnp.asarray(host, device=backend)
    pairs = [(g, g), (g[0], g[1]), (g[:, 0], g[:, 1]), (g[1:], g[:2]), (g, other), (g.T, g[2]), (g[0, :2], g[0, 2:])]
    hosts = [(host, host), (host[0], host[1]), (host[:, 0], host[:, 1]), (host[1:], host[:2]), (host, host.copy()),
             (host.T, host[2]), (host[0, :2], host[0, 2:])]
    for (a, b), (ha, hb) in zip(pairs, hosts):
        assert gnp.may_share_memory(a, b) == np.may_share_memory(ha, hb)


@pytest.mark.parametrize("kind", REALS)
def test_real_part_methods(backend, kind):
    host = REALS[kind].copy()
    g = gnp.asarray(host, device=backend)
    assert (g.real is g) and (host.real is host)
    assert (g.conj() is g) and (host.conj() is host) and (g.conjugate() is g)
    check(g.imag, host.imag)
    assert g.imag.flags.writeable is host.imag.flags.writeable is False
    g.real = 1
    host.real = 1
    check(g, host)
