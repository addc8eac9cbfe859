"""pygpgpu.numpy where numpy's edges are easy to miss (issue 30, items 7-9), each compared with the
installed numpy: bool bytes other than 0 and 1 (a view of int8 data as bool) read as True by every
operation and by a ``@kernel``; comparisons with None; numpy's errors for what it rejects; the
all-NaN warnings of the nan-reductions. Every test runs real kernels on each backend of the run."""
from __future__ import annotations

import functools

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
import pytest
from pygpgpu import kernel


def up(x, backend):
    return gnp.asarray(x, device=backend)


def check(got, want):
    """``got`` (a device array) equals numpy's ``want`` exactly: dtype, shape and values."""
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


# -- item 7: a bool is its byte compared with 0 ---------------------------------------------------------------
def odd_bools():
    """Bools whose bytes are 3, 255, 0, 1, 2, 0, 128, 1: numpy reads [T, T, F, T, T, F, T, T]."""
    return np.array([3, -1, 0, 1, 2, 0, -128, 1], np.int8).view(bool)


BOOL_OPS = {
    "arange + b": lambda m, b: m.arange(8) + b,
    "b * 3": lambda m, b: b * 3,
    "b.sum()": lambda m, b: b.sum(),
    "sum(axis=0)": lambda m, b: b.reshape(2, 4).sum(axis=0),
    "sum(axis=1)": lambda m, b: b.reshape(2, 4).sum(axis=1),
    "mean": lambda m, b: m.mean(b),
    "cumsum": lambda m, b: m.cumsum(b),
    "count_nonzero": lambda m, b: m.count_nonzero(b),
    "argmax": lambda m, b: m.argmax(b),
    "nonzero": lambda m, b: m.nonzero(b)[0],
    "mask": lambda m, b: m.arange(8)[b],
    "astype(int32)": lambda m, b: b.astype(np.int32),
    "b == True": lambda m, b: b == True,  # noqa: E712  (numpy's elementwise compare is the point)
    "where": lambda m, b: m.where(b, 1, 2),
}


@pytest.mark.parametrize("op", BOOL_OPS, ids=list(BOOL_OPS))
def test_bool_bytes_other_than_one_are_true(backend, op):
    b = odd_bools()
    with pygpgpu.device(backend):          # gnp.arange & co on the same device as b
        check(BOOL_OPS[op](gnp, up(b, backend)), BOOL_OPS[op](np, b))


def test_kernel_reads_a_numpy_bool_argument_as_numpy_does(backend):
    @kernel
    def add_index(b, out):
        for i in range(out.shape[0]):
            out[i] = i + b[i]
            if b[i] == True:  # noqa: E712
                out[i] += 10

    b = odd_bools()
    out = np.zeros(8, np.int64)
    add_index[backend](b, out)
    want = np.arange(8) + b + 10 * (b == True)  # noqa: E712
    np.testing.assert_array_equal(out, want)


# -- item 8: comparisons with objects that are no operand -----------------------------------------------------
@pytest.mark.parametrize("other", [None, "a", object(), {}], ids=["None", "str", "object", "dict"])
@pytest.mark.parametrize("op", ["==", "!="])
def test_comparing_with_an_object_is_elementwise(backend, other, op):
    host = np.arange(6).reshape(2, 3)
    g = up(host, backend)
    compare = {"==": lambda x, y: x == y, "!=": lambda x, y: x != y}[op]
    check(compare(g, other), compare(host, other))
    check(compare(other, g), compare(other, host))
    ufunc = {"==": "equal", "!=": "not_equal"}[op]     # the functions: numpy refuses a string there
    assert outcome(lambda: getattr(np, ufunc)(g, other)) == outcome(lambda: getattr(np, ufunc)(host, other))
    assert outcome(lambda: getattr(gnp, ufunc)(other, g)) == outcome(lambda: getattr(np, ufunc)(other, host))


def test_an_object_with_its_own_eq_keeps_its_say(backend):
    class Anything:
        def __eq__(self, other):
            return "asked"

    g = up(np.arange(3), backend)
    assert (g == Anything()) == "asked"          # Python's reflected ==, as for any operand gnp does not take


def outcome(f):
    """What ``f()`` does: the exception's class (numpy's UFuncTypeError is a TypeError, its AxisError
    an IndexError and a ValueError), or the result's dtype, shape and values."""
    try:
        r = f()
    except IndexError:
        return IndexError
    except ValueError:
        return ValueError
    except TypeError:
        return TypeError
    host = r.get() if isinstance(r, gnp.ndarray) else np.asarray(r)
    return r.dtype, r.shape, host.tolist()


# -- item 8: numpy's edges of creation and layout -------------------------------------------------------------
@pytest.mark.parametrize("args", [(0., 5e-324, 10), (1e-320, 5e-324, 6), (0., 1e-310, 4), (2., -3., 11, False),
                                  (0.1, 0.7, 7), (-1e3, 1e-3, 37), (3., 4., 1), (0, 10, 5, True, False, np.int32)],
                         ids=["underflow", "denormal", "tiny", "no-endpoint", "0.1", "wide", "one", "int32"])
def test_linspace_is_numpys_to_the_last_bit(backend, args):
    check(gnp.linspace(*args, device=backend), np.linspace(*args))


def test_linspace_of_many_random_intervals_is_numpys(backend):
    rng = np.random.default_rng(7)
    for _ in range(40):
        a, b = rng.normal(size=2) * 10.0 ** rng.integers(-3, 4, 2)
        n, endpoint = int(rng.integers(0, 40)), bool(rng.integers(2))
        check(gnp.linspace(a, b, n, endpoint, device=backend), np.linspace(a, b, n, endpoint))


def test_ascontiguousarray_of_a_0d_array_is_1d(backend):
    host = np.array(3.5, np.float32)
    got = gnp.ascontiguousarray(up(host, backend))
    check(got, np.ascontiguousarray(host))


EMPTY = {
    "zeros((0, 3))": lambda m: m.zeros((0, 3)),
    "empty((3, 0, 2), float32)": lambda m: m.empty((3, 0, 2), np.float32),
    "zeros(0)": lambda m: m.zeros(0),
    "upload": lambda m: m.asarray(np.zeros((0, 3))),
    "reshape(3, 0)": lambda m: m.zeros((0, 3)).reshape(3, 0),
    "reshape(0, 3)": lambda m: m.zeros((0, 3)).reshape(0, 3),
    ".T": lambda m: m.zeros((0, 3)).T,
    "[None]": lambda m: m.zeros((0, 3))[None],
    "ravel": lambda m: m.zeros((0, 3)).ravel(),
    "flatten": lambda m: m.zeros((0, 3)).flatten(),
    "slice": lambda m: m.arange(6.).reshape(2, 3)[:0],
    "column slice": lambda m: m.arange(6.).reshape(2, 3)[:, :0],
    "copy": lambda m: m.arange(6.).reshape(2, 3)[:0].copy(),
    "+ 1": lambda m: m.zeros((0, 3)) + 1,
    "sum(axis=0)": lambda m: m.zeros((3, 0)).sum(axis=0),
    "cumsum(axis=1)": lambda m: m.cumsum(m.zeros((3, 0)), axis=1),
    "sort": lambda m: m.sort(m.zeros((3, 0))),
    "concatenate": lambda m: m.concatenate([m.zeros((0, 3)), m.zeros((0, 3))]),
}


@pytest.mark.parametrize("make", EMPTY, ids=list(EMPTY))
def test_arrays_without_elements_report_numpys_strides(backend, make):
    want = EMPTY[make](np)
    got = EMPTY[make](OnDevice(backend))
    assert (got.shape, got.strides) == (want.shape, want.strides)


class OnDevice:
    """``gnp`` with its creation functions bound to ``backend``'s device, so one table of calls
    runs against numpy and against gnp (``m.zeros(...)``)."""
    CREATORS = ("zeros", "empty", "full", "ones", "arange", "asarray", "array", "ascontiguousarray", "linspace")

    def __init__(self, backend):
        self.backend = backend

    def __getattr__(self, name):
        f = getattr(gnp, name)
        return functools.partial(f, device=self.backend) if name in self.CREATORS else f


# -- item 8: order="F" is Fortran order (or numpy's ValueError), never silently C --------------------------------
FORTRAN = {
    "array(h, order=F)": lambda m, h: m.array(h, order="F"),
    "asarray(h, order=F)": lambda m, h: m.asarray(h, order="F"),
    "asarray(fortran, order=K)": lambda m, h: m.asarray(np.asfortranarray(h), order="K"),
    "array(fortran, order=A)": lambda m, h: m.array(np.asfortranarray(h), order="A"),
    "zeros(order=F)": lambda m, h: m.zeros((2, 3), order="F"),
    "full(order=F)": lambda m, h: m.full((2, 3), 7, order="F"),
    "copy(order=F)": lambda m, h: m.asarray(h).copy(order="F"),
    "np.copy(order=F)": lambda m, h: np.copy(m.asarray(h), order="F"),
    "array(device array, order=F)": lambda m, h: m.array(m.asarray(h), order="F"),
    "reshape(order=F)": lambda m, h: m.asarray(h).reshape(4, 6, order="F"),
    "ravel(F)": lambda m, h: m.asarray(h).ravel("F"),
    "flatten(F)": lambda m, h: m.asarray(h).flatten("F"),
    "ascontiguousarray(F)": lambda m, h: m.ascontiguousarray(m.array(h, order="F")),
}


@pytest.mark.parametrize("make", FORTRAN, ids=list(FORTRAN))
def test_fortran_order_is_numpys_layout(backend, make):
    host = np.arange(24.).reshape(2, 3, 4)
    want = FORTRAN[make](np, host)
    got = FORTRAN[make](OnDevice(backend), host)
    assert (got.shape, got.strides, got.flags.f_contiguous, got.flags.c_contiguous) == \
        (want.shape, want.strides, want.flags.f_contiguous, want.flags.c_contiguous)
    np.testing.assert_array_equal(got.get(), want)
    assert got.get(order="F").flags.f_contiguous or got.ndim < 2


REJECTED = {
    "asarray(order=X)": lambda m, g: m.asarray(g, order="X"),
    "array(order=X)": lambda m, g: m.array(g, order="X"),
    "zeros(order=A)": lambda m, g: m.zeros(3, order="A"),
    "empty(order=K)": lambda m, g: m.empty(3, order="K"),
    "65 dimensions": lambda m, g: m.zeros((1,) * 65),
    "reshape to 65": lambda m, g: g.reshape((1,) * 65),
    "expand_dims to 65": lambda m, g: m.expand_dims(g[0, 0, :1].reshape((1,) * 64), 0),
    "g[None] to 65": lambda m, g: g[0, 0, :1].reshape((1,) * 64)[None],
    "squeeze((0, 0))": lambda m, g: m.squeeze(g.reshape(1, 6, 1, 4), axis=(0, 0)),
    "g.squeeze((2, 2))": lambda m, g: g.reshape(1, 6, 1, 4).squeeze(axis=(2, 2)),
    "squeeze((2, -2))": lambda m, g: g.reshape(1, 6, 1, 4).squeeze(axis=(2, -2)),
    "nonzero of 0-d": lambda m, g: m.nonzero(g[0, 0, 0]),
    "np.nonzero of 0-d": lambda m, g: np.nonzero(g[0, 0, 0]),
    "clip(a, 3)": lambda m, g: m.clip(g, 3),
    "clip(a, a_min=3)": lambda m, g: m.clip(g, a_min=3),
    "clip(a, a_max=3)": lambda m, g: m.clip(g, a_max=3),
    "np.clip(g, 3)": lambda m, g: np.clip(g, 3),
    "clip(a, 1, 3, min=1)": lambda m, g: m.clip(g, 1, 3, min=1),
}
ACCEPTED = {
    "clip(a, 3, None)": lambda m, g: m.clip(g, 3, None),
    "clip(a, min=3)": lambda m, g: m.clip(g, min=3),
    "clip(a, max=3)": lambda m, g: m.clip(g, max=3),
    "g.clip(3)": lambda m, g: g.clip(3),
    "np.clip(g, None, 5)": lambda m, g: np.clip(g, None, 5),
    "reshape to 64": lambda m, g: g.reshape((1,) * 61 + (2, 3, 4)),
    "g[None] to 64": lambda m, g: g[0, 0, :1].reshape((1,) * 63)[None],
    "squeeze((0, 2))": lambda m, g: m.squeeze(g.reshape(1, 6, 1, 4), axis=(0, 2)),
}


@pytest.mark.parametrize("call", {**REJECTED, **ACCEPTED}, ids=list({**REJECTED, **ACCEPTED}))
def test_rejects_what_numpy_rejects(backend, call):
    host = np.arange(24.).reshape(2, 3, 4)
    f = {**REJECTED, **ACCEPTED}[call]
    want = outcome(lambda: f(np, host))
    assert (want in (ValueError, TypeError, IndexError)) == (call in REJECTED)      # the table says what numpy does
    assert outcome(lambda: f(OnDevice(backend), up(host, backend))) == want


# -- item 8: out= of another dtype casts by numpy's rules (concatenate, stack) or must match exactly (dot) ----
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_, np.uint8]


@pytest.mark.parametrize("casting", ["same_kind", "unsafe", "safe"])
@pytest.mark.parametrize("func, out_shape", [("concatenate", (6,)), ("stack", (2, 3)), ("concatenate", (7,)),
                                             ("concatenate", (6, 1))], ids=["concatenate", "stack", "wrong-shape",
                                                                            "wrong-ndim"])
def test_join_into_out_of_another_dtype_casts_as_numpy(backend, func, out_shape, casting):
    for a in DTYPES:
        for o in DTYPES:
            x, y = np.arange(3).astype(a), np.ones(3, a)
            want = outcome(lambda: getattr(np, func)([x, y], out=np.zeros(out_shape, o), casting=casting))
            gx, gy, gout = up(x, backend), up(y, backend), gnp.zeros(out_shape, o, device=backend)
            assert outcome(lambda: getattr(gnp, func)([gx, gy], out=gout, casting=casting)) == want, (a, o)
            gout = gnp.zeros(out_shape, o, device=backend)
            assert outcome(lambda: getattr(np, func)([gx, gy], out=gout, casting=casting)) == want, (a, o)


def test_concatenate_refuses_out_and_dtype_together(backend):
    g = gnp.ones(3, device=backend)
    want = outcome(lambda: np.concatenate([np.ones(3)], out=np.zeros(3), dtype=np.float64))
    assert outcome(lambda: gnp.concatenate([g], out=gnp.zeros(3, device=backend), dtype=np.float64)) == want


@pytest.mark.parametrize("a", DTYPES, ids=[d.__name__ for d in DTYPES])
def test_dot_into_out_follows_numpy(backend, a):
    scalars = [2, 2.0, np.float32(2), np.int32(2), True]
    m = np.arange(4).reshape(2, 2).astype(a)
    cases = [(m, s, (2, 2)) for s in scalars] + [(s, m, (2, 2)) for s in scalars]
    cases += [(m, m, (2, 2)), (m, m, (2, 3)), (m[0], m[1], ()), (m[0], m[1], (1,)), (m, np.ones(2, np.float32), (2,))]
    for x, y, shape in cases:
        for o in DTYPES[:5]:
            want = outcome(lambda: np.dot(x, y, out=np.zeros(shape, o)))
            gx = up(x, backend) if isinstance(x, np.ndarray) else x
            gy = up(y, backend) if isinstance(y, np.ndarray) else y
            assert outcome(lambda: gnp.dot(gx, gy, out=gnp.zeros(shape, o, device=backend))) == want, (x, y, o)


def test_dot_with_a_python_scalar_computes_in_numpys_type(backend):
    m = np.arange(4, dtype=np.float32).reshape(2, 2)
    check(gnp.dot(up(m, backend), 2), np.dot(m, 2))


@pytest.mark.parametrize("a", DTYPES[:5], ids=[d.__name__ for d in DTYPES[:5]])
def test_matmul_into_out_casts_as_numpys_ufunc(backend, a):
    for sa, sb, so in [((2, 2), (2, 2), (2, 2)), ((3,), (3,), ()), ((2, 3), (3,), (2,)), ((2, 2), (2, 2), (2, 3))]:
        x, y = np.arange(np.prod(sa)).reshape(sa).astype(a), np.arange(np.prod(sb)).reshape(sb).astype(a)
        for o in DTYPES[:5]:
            want = outcome(lambda: np.matmul(x, y, out=np.zeros(so, o)))
            got = outcome(lambda: np.matmul(up(x, backend), up(y, backend), out=gnp.zeros(so, o, device=backend)))
            assert got == want, (sa, sb, so, o)


# -- item 9: the nan-reductions warn as numpy's when a slice has nothing left -------------------------------------
NAN_CASES = {
    "nanmax all-NaN": lambda m, x: m.nanmax(x),
    "nanmin axis=0": lambda m, x: m.nanmin(x, axis=0),
    "nanmax axis=1": lambda m, x: m.nanmax(x, axis=1),
    "nanmax initial": lambda m, x: m.nanmax(x, initial=0.0),
    "nanmean": lambda m, x: m.nanmean(x),
    "nanmean axis=0": lambda m, x: m.nanmean(x, axis=0),
    "nanmean axis=1 keepdims": lambda m, x: m.nanmean(x, axis=1, keepdims=True),
    "nanvar axis=0": lambda m, x: m.nanvar(x, axis=0),
    "nanvar ddof=1 axis=1": lambda m, x: m.nanvar(x, axis=1, ddof=1),
    "nanstd axis=0": lambda m, x: m.nanstd(x, axis=0),
}
NAN_DATA = {
    "column of NaN": np.array([[np.nan, 1.0, 2.0], [np.nan, 3.0, np.nan]]),
    "no slice of NaN": np.array([[5.0, 1.0, 2.0], [np.nan, 3.0, 4.0]]),
    "all NaN": np.full((2, 3), np.nan, np.float32),
    "inf - inf": np.array([[np.inf, 1.0, 2.0], [-np.inf, 3.0, np.nan]]),    # a NaN mean with elements left
}


def runtime_warnings(f):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = f()
    return result, sorted(str(w.message) for w in caught if w.category is RuntimeWarning
                          and not str(w.message).startswith("invalid value"))   # numpy's errstate, not ours


@pytest.mark.parametrize("data", NAN_DATA, ids=list(NAN_DATA))
@pytest.mark.parametrize("call", NAN_CASES, ids=list(NAN_CASES))
def test_nan_reductions_warn_as_numpy(backend, call, data):
    """numpy warns in the call; gnp at the first read-back of the result (the call reads nothing)."""
    host = NAN_DATA[data]
    want, want_warnings = runtime_warnings(lambda: NAN_CASES[call](np, host))
    g = up(host, backend)
    got, got_warnings = runtime_warnings(lambda: NAN_CASES[call](gnp, g).get())
    assert got_warnings == want_warnings
    np.testing.assert_array_equal(got, want)


def test_nan_reductions_read_nothing_back_until_asked_and_warn_once(backend):
    g = up(NAN_DATA["column of NaN"], backend)
    gnp.reset_transfer_stats()
    results, calls_warned = runtime_warnings(lambda: [gnp.nanmax(g, axis=0), gnp.nanmean(g, axis=0),
                                                      gnp.nanvar(g, axis=0)])
    assert calls_warned == [] and gnp.transfer_stats()["d2h"] == 0
    for r, message in zip(results, ["All-NaN slice encountered", "Mean of empty slice",
                                    "Degrees of freedom <= 0 for slice."]):
        assert runtime_warnings(lambda: repr(r))[1] == [message]
        assert runtime_warnings(lambda: r.get())[1] == []                # numpy warns once per call
