"""complex64/complex128 device arrays against numpy: arithmetic and the ufuncs numpy defines for
complex, comparisons in numpy's lexicographic order, reductions, scans, sorting (numpy's complex
order, NaN parts last), where, indexing, matmul, the parts (real/imag as views, angle, conj) and
numpy 2's promotion with Python complex scalars (NEP 50).

Bit-for-bit where numpy's loops are arithmetic (+ - * / with numpy's fused multiply-adds for *,
reciprocal, integer powers, sign, comparisons, maximum/minimum, sums along an axis); within a
few ulp where numpy calls the C library (clog, csin...), whose results are not specified to the
bit: ``ULPS`` below, relative to the result's magnitude, on finite inputs away from branch cuts."""
from __future__ import annotations

import operator

import numpy as np
import pygpgpu.numpy as gnp
import pytest

COMPLEX = [np.complex64, np.complex128]
IDS = ["c64", "c128"]
ULPS = 8          # of the part type's epsilon, relative to |result|


def sample(shape, dtype, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    z = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * scale
    return z.astype(dtype)


def specials(dtype):
    """Numbers with NaN, infinite and zero parts, and ties of real parts."""
    n, i = np.nan, np.inf
    return np.array([0, -0.0, 1 + 1j, 1 - 1j, 1, complex(n, 0), complex(0, n), complex(n, n), complex(1, n),
                     complex(n, 1), complex(i, 0), complex(-i, 1), complex(2, i), complex(2, -i), -3 + 2j, 2 + 0j],
                    dtype=dtype)


def up(x, backend):
    return gnp.asarray(x, device=backend)


def exact(got, want):
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.get(), want)


def close(got, want, ulps=ULPS):
    """Within ``ulps`` of the part type's epsilon times |want| (NaN where numpy has NaN)."""
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    host = got.get()
    eps = np.finfo(want.dtype).eps
    scale = np.maximum(np.abs(want), np.finfo(want.dtype).tiny)
    err = np.abs(host.astype(np.complex128) - want.astype(np.complex128))
    both_nan = np.isnan(want) & np.isnan(host)
    bad = ~((err <= ulps * eps * scale) | both_nan | (host == want))
    assert not bad.any(), (np.flatnonzero(bad)[:8], host[bad][:8], want[bad][:8])


# -- creation and round trips ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_round_trip_fill_and_copies(backend, dtype):
    a = sample((5, 6), dtype)
    g = up(a, backend)
    exact(g, a)
    exact(g[:, ::2].copy(), a[:, ::2])
    exact(gnp.full(4, 2 - 3j, dtype=dtype, device=backend), np.full(4, 2 - 3j, dtype=dtype))
    z = gnp.zeros(3, dtype, device=backend)
    z[...] = 1j
    exact(z, np.full(3, 1j, dtype))
    assert complex(g[1, 2]) == complex(a[1, 2])


# -- arithmetic: numpy's loops bit for bit -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow],
                         ids=lambda f: f.__name__)
def test_binary_arithmetic(backend, dtype, op):
    a, b = sample(200, dtype, 1), sample(200, dtype, 2, scale=3.0 if op is not operator.pow else 0.5)
    b[:3] = [2, -3, 0.5]                  # integer powers take numpy's repeated squaring
    with np.errstate(all="ignore"):
        want = op(a, b)
    got = op(up(a, backend), up(b, backend))
    if op is operator.pow:
        # numpy calls the C library's cpow, exp(b * log(a)): its error grows with |b * log(a)|
        close(got[3:], want[3:], ulps=64)
        exact(got[:2], want[:2])
    else:
        exact(got, want)


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_arithmetic_with_specials_and_broadcasting(backend, dtype):
    s = specials(dtype)
    a, b = s[:, None], s[None, :]
    with np.errstate(all="ignore"):
        for op in (operator.add, operator.sub, operator.mul, operator.truediv):
            exact(op(up(a, backend), up(b, backend)), op(a, b))


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
@pytest.mark.parametrize("name", ["negative", "positive", "conjugate", "square", "reciprocal", "rint",
                                  "isnan", "isinf", "isfinite", "logical_not"])
def test_arithmetic_unary_ufuncs_are_exact(backend, dtype, name):
    a = np.concatenate([sample(64, dtype, 3), specials(dtype)])
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    exact(getattr(gnp, name)(up(a, backend)), want)


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
# sign: z/|z|, whose last bit numpy 2.4 and 2.5 round differently (measured on CUDA)
@pytest.mark.parametrize("name", ["sign", "absolute", "exp", "exp2", "expm1", "sqrt", "log", "log2", "log10", "log1p",
                                  "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan",
                                  "arcsinh", "arccosh", "arctanh"])
def test_library_ufuncs_within_a_few_ulp(backend, dtype, name):
    a = sample(256, dtype, 4, scale=1.5)
    want = getattr(np, name)(a)
    close(getattr(gnp, name)(up(a, backend)), want)


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_absolute_and_sqrt_of_specials(backend, dtype):
    a = specials(dtype)
    with np.errstate(all="ignore"):
        close(gnp.abs(up(a, backend)), np.abs(a), ulps=2)
        close(gnp.sqrt(up(a, backend)), np.sqrt(a), ulps=2)


# -- comparisons and extremes: numpy's lexicographic order with its NaN rules -----------------------------------
@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                                  "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or", "logical_xor"])
def test_comparisons_and_extremes(backend, dtype, name):
    s = specials(dtype)
    a, b = s[:, None], s[None, :]
    with np.errstate(all="ignore"):
        exact(getattr(gnp, name)(up(a, backend), up(b, backend)), getattr(np, name)(a, b))


# -- promotion (NEP 50) -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int16, np.int64, np.uint8, np.uint64,
                                   np.bool_, np.complex64, np.complex128])
@pytest.mark.parametrize("scalar", [2j, 1.5 + 0.5j, 2.5, 3, np.complex64(1 - 1j), np.complex128(1j)],
                         ids=["2j", "1.5+.5j", "2.5", "3", "np-c64", "np-c128"])
def test_promotion_with_python_and_numpy_scalars(backend, dtype, scalar):
    a = (np.arange(1, 7) % 2 == 0) if dtype is np.bool_ else np.arange(1, 7).astype(dtype)
    if np.dtype(dtype).kind == "c":
        a = a * (1 + 1j)
    g = up(a, backend)
    for op in (operator.add, operator.mul, lambda x, y: y - x, operator.truediv, operator.eq, operator.ne):
        want = op(a, scalar)
        got = op(g, scalar)
        assert got.dtype == want.dtype, (dtype, scalar, got.dtype, want.dtype)
        exact(got, want)


def test_where_promotes_like_numpy(backend):
    cond = np.array([True, False, True, False])
    x = np.arange(4, dtype=np.float32)
    for y in (1j, np.complex128(2j), sample(4, np.complex64, 5)):
        yy = up(y, backend) if isinstance(y, np.ndarray) else y
        exact(gnp.where(up(cond, backend), up(x, backend), yy), np.where(cond, x, y))


# -- reductions and scans -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(backend, dtype, axis):
    a = sample((37, 9), dtype, 6, scale=1.0)      # prod stays finite
    a[3, 4] = complex(np.nan, 1)
    g = up(a, backend)
    clean, gclean = a[:, :4], g[:, :4]
    for name in ("min", "max", "argmin", "argmax", "any", "all"):
        exact(getattr(g, name)(axis=axis), getattr(a, name)(axis=axis))
    for name in ("sum", "mean", "prod"):
        close(getattr(gclean, name)(axis=axis), getattr(clean, name)(axis=axis), ulps=64)
    for name in ("var", "std"):
        close(getattr(gclean, name)(axis=axis), getattr(clean, name)(axis=axis), ulps=64)


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_extremes_without_nan_and_with_ties(backend, dtype):
    a = np.array([1 + 5j, 3 - 1j, 3 + 2j, -1 + 9j, 3 + 2j, 3 - 7j, -1 + 9j], dtype=dtype)
    g = up(a, backend)
    for name in ("min", "max", "argmin", "argmax"):
        exact(getattr(g, name)(), getattr(a, name)())


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_scans(backend, dtype, axis):
    a = sample((30, 70), dtype, 7, scale=0.7)
    g = up(a, backend)
    close(g.cumsum(axis=axis), a.cumsum(axis=axis), ulps=256)
    close(g.cumprod(axis=axis)[..., :8], a.cumprod(axis=axis)[..., :8], ulps=256)


# -- sorting ----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
@pytest.mark.parametrize("n", [16, 1000, 20000])
def test_sort_in_numpys_complex_order(backend, dtype, n):
    rng = np.random.default_rng(n)
    a = (rng.integers(-3, 4, n) + 1j * rng.integers(-3, 4, n)).astype(dtype)      # many ties
    where = rng.integers(0, n, n // 8)
    a[where[::3]] = complex(np.nan, 1)
    a[where[1::3]] = complex(2, np.nan)
    a[where[2::3]] = complex(np.nan, np.nan)
    g = up(a, backend)
    exact(gnp.sort(g), np.sort(a))
    exact(gnp.argsort(g), np.argsort(a, kind="stable"))


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_sort_along_axes(backend, dtype):
    a = np.round(sample((7, 12), dtype, 8))
    g = up(a, backend)
    for axis in (0, 1, None):
        exact(gnp.sort(g, axis=axis), np.sort(a, axis=axis))
        exact(gnp.argsort(g, axis=axis), np.argsort(a, axis=axis, kind="stable"))


# -- indexing, where, parts, products --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_indexing_and_assignment(backend, dtype):
    a = sample((8, 5), dtype, 9)
    g = up(a, backend)
    idx = np.array([0, 7, 3, 3])
    exact(g[up(idx, backend)], a[idx])
    exact(g[g.real > 0], a[a.real > 0])
    exact(gnp.take(g, up(idx, backend), axis=0), np.take(a, idx, axis=0))
    b = a.copy()
    b[[1, 2]] = 5j
    b[b.real > 1] = 1 + 1j
    b[:, 2] = 7
    b[::2, 3] = a[1::2, 0]
    g[up(np.array([1, 2]), backend)] = 5j
    g[g.real > 1] = 1 + 1j
    g[:, 2] = 7
    g[::2, 3] = up(a, backend)[1::2, 0]
    exact(g, b)


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_real_imag_are_views_and_angle_conj(backend, dtype):
    a = sample((4, 6), dtype, 10)
    g = up(a, backend)
    exact(g.real, a.real)
    exact(g.imag, a.imag)
    exact(gnp.real(g[:, 1::2]), a[:, 1::2].real)
    exact(gnp.imag(g.T), a.T.imag)
    close(gnp.angle(g), np.angle(a), ulps=2)
    close(gnp.angle(g, deg=True), np.angle(a, deg=True), ulps=4)
    exact(g.conj(), a.conj())
    exact(np.conjugate(g), np.conjugate(a))
    g.imag[1] = 0.5                       # writes through the view, as numpy's
    a.imag[1] = 0.5
    g.real = 2
    a.real = 2
    exact(g, a)


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_conversions(backend, dtype):
    a = np.concatenate([sample(10, dtype, 11), specials(dtype)[:5]])
    g = up(a, backend)
    with pytest.warns(np.exceptions.ComplexWarning):
        want = a.astype(np.float64)
    exact(g.astype(np.float64), want)
    exact(g.astype(bool), a.astype(bool))
    exact(g.astype(np.complex128), a.astype(np.complex128))
    exact(g.astype(np.complex64), a.astype(np.complex64))
    r = np.arange(5, dtype=np.float32)
    exact(up(r, backend).astype(dtype), r.astype(dtype))


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_matmul_and_dot(backend, dtype):
    a, b = sample((20, 33), dtype, 12), sample((33, 17), dtype, 13)
    ga, gb = up(a, backend), up(b, backend)
    close(ga @ gb, a @ b, ulps=64)
    close(gnp.dot(ga[0], gb[:, 0]), np.dot(a[0], b[:, 0]), ulps=64)
    close(gnp.matmul(ga, gb[:, 3]), np.matmul(a, b[:, 3]), ulps=64)
    f = np.random.default_rng(14).standard_normal((33, 4)).astype(np.float32)
    close(ga @ up(f, backend), a @ f, ulps=64)


def test_floor_divide_is_refused_as_numpy_refuses_it(backend):
    g = up(sample(3, np.complex64), backend)
    with pytest.raises(TypeError, match="floor_divide"):
        g // g


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_clip_in_numpys_order(backend, dtype):
    s = specials(dtype)
    lo, hi = np.array(-1 + 2j, dtype), np.array(2 - 1j, dtype)
    exact(gnp.clip(up(s, backend), lo[()], hi[()]), np.clip(s, lo, hi))
    a, b = sample(40, dtype, 20), sample(40, dtype, 21)
    exact(gnp.clip(up(a, backend), up(b, backend), 1 + 1j), np.clip(a, b, 1 + 1j))


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_complex_helpers(backend, dtype):
    a = sample(12, dtype, 22)
    a[::3] = a[::3].real
    g = up(a, backend)
    exact(gnp.iscomplex(g), np.iscomplex(a))
    exact(gnp.isreal(g), np.isreal(a))
    close(gnp.vdot(g, g[::-1].copy()), np.vdot(a, a[::-1]), ulps=64)
    exact(gnp.sort_complex(g), np.sort_complex(a))
    exact(np.sort_complex(g), np.sort_complex(a))
    r = np.array([3, 1, 2], np.int16)
    exact(gnp.sort_complex(up(r, backend)), np.sort_complex(r))
    exact(gnp.real_if_close(g), np.real_if_close(a))
    near = (a.real + 1e-9j).astype(dtype)
    exact(gnp.real_if_close(up(near, backend)), np.real_if_close(near))


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
def test_median_unique_and_searchsorted_in_complex_order(backend, dtype):
    rng = np.random.default_rng(23)
    a = (rng.integers(-3, 4, (5, 8)) + 1j * rng.integers(-3, 4, (5, 8))).astype(dtype)
    a[2, 3] = complex(np.nan, 1)
    g = up(a, backend)
    for axis in (None, 0, 1):
        exact(gnp.median(g, axis=axis), np.median(a, axis=axis))
    clean = a[[0, 1, 3, 4]]
    exact(gnp.unique(up(clean, backend)), np.unique(clean))
    s = np.sort(a.ravel())
    for side in ("left", "right"):
        exact(gnp.searchsorted(up(s, backend), up(a[1], backend), side=side), np.searchsorted(s, a[1], side=side))
    exact(gnp.searchsorted(up(s, backend), 1 + 1j), np.searchsorted(s, 1 + 1j))


@pytest.mark.parametrize("args", [(0, 1 + 1j, 5), (1j, -3 + 2j, 7), (2.5, 3j, 4, False), (1 + 1j, 1 + 1j, 3),
                                  (0, 1j, 1), (0.1 + 0.3j, 1e-300j, 9)])
def test_linspace_with_complex_bounds(backend, args):
    start, stop, num = args[:3]
    endpoint = args[3] if len(args) > 3 else True
    exact(gnp.linspace(start, stop, num, endpoint=endpoint, device=backend),
          np.linspace(start, stop, num, endpoint=endpoint))
    got, step = gnp.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=np.complex64, device=backend)
    want, want_step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=np.complex64)
    exact(got, want)
    assert step == want_step or (np.isnan(step) and np.isnan(want_step))


@pytest.mark.parametrize("dtype", COMPLEX, ids=IDS)
@pytest.mark.parametrize("decimals", [0, 1, 2, -1])
def test_round_rounds_each_part(backend, dtype, decimals):
    a = sample((6, 50), dtype, 24)
    exact(gnp.round(up(a, backend), decimals), np.round(a, decimals))
    out = gnp.empty((6, 50), dtype, device=backend)
    gnp.round(up(a, backend), decimals, out=out)
    exact(out, np.round(a, decimals))
