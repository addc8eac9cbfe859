"""Python scalars, lists and tuples where numpy takes them (issue 32): ufuncs of scalars only
(``gnp.true_divide(0, 0)``), lists in ufuncs, reductions, ``diag``, ``tril``, ``triu``, ``kron``,
``atleast_*d``, ``average``, ``repeat`` counts and ``linspace`` bounds, each compared with numpy:
the values and the result types (numpy 2's promotion: Python scalars are weak, NEP 50)."""
from __future__ import annotations

import warnings

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def check(got, want):
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


SCALAR_CALLS = [
    ("true_divide", (0, 0)), ("true_divide", (1, 3)), ("add", (1, np.float32(2))), ("add", (np.int8(100), 2)),
    ("add", (True, 1)), ("multiply", (True, False)), ("add", (1, 2.5)), ("sqrt", (4,)), ("negative", (np.uint8(3),)),
    ("power", (2, 10)), ("maximum", (np.int16(3), 2.5)), ("less", (1, 2.0)), ("floor_divide", (7, -2)),
]


@pytest.mark.parametrize("name, args", SCALAR_CALLS, ids=[f"{n}{a}" for n, a in SCALAR_CALLS])
def test_ufuncs_of_scalars_only(backend, name, args):
    import pygpgpu
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(getattr(np, name)(*args))
        with pygpgpu.device(backend):
            got = getattr(gnp, name)(*args)
    assert got.ndim == 0
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


LIST_CALLS = [
    ("add", ([1, 2, 3], 1)), ("multiply", (2.5, (1, 2))), ("subtract", ([1.5, 2], [[1], [2]])),
    ("equal", ([1, 2], 2)), ("maximum", ([True, False], [1, 0])),
]


@pytest.mark.parametrize("name, args", LIST_CALLS, ids=[n for n, _ in LIST_CALLS])
def test_ufuncs_of_lists(backend, name, args):
    import pygpgpu
    with pygpgpu.device(backend):
        check(getattr(gnp, name)(*args), getattr(np, name)(*args))


def test_lists_with_device_arrays_go_to_the_arrays_device(backend):
    g = gnp.asarray(np.float32([1, 2, 3]), device=backend)
    got = gnp.add(g, [1, 2, 3])
    assert got.device == g.device
    check(got, np.add(np.float32([1, 2, 3]), [1, 2, 3]))


@pytest.mark.parametrize("name, args", [
    ("all", ([True, False],)), ("any", ([[0, 0], [0, 1]], 1)), ("sum", ([1, 2, 3],)), ("mean", ((1.0, 2.0),)),
    ("max", ([[1, 5], [3, 2]], 0)), ("reshape", ([1, 2, 3, 4], (2, 2))),
])
def test_reductions_of_lists(backend, name, args):
    import pygpgpu
    with pygpgpu.device(backend):
        check(getattr(gnp, name)(*args), getattr(np, name)(*args))


MATRIX = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
COMPOSED = [
    ("diag", ([1, 2, 3],)), ("diag", (MATRIX, 1)), ("diag", ((1.5, 2.5), -1)), ("tril", (MATRIX,)),
    ("triu", (MATRIX, 1)), ("tril", ([1, 2, 3], -1)), ("kron", ([1, 2], [3, 4, 5])), ("kron", ([[1, 2]], (1.5, 2))),
    ("atleast_1d", (5,)), ("atleast_1d", ([1, 2],)), ("atleast_2d", ([1, 2],)), ("atleast_2d", (3.5,)),
    ("atleast_3d", ([[1, 2]],)), ("atleast_3d", (True,)), ("average", ([1, 2, 3, 4],)),
    ("average", (MATRIX, 0, [1, 2, 3])),
]


@pytest.mark.parametrize("name, args", COMPOSED, ids=[n for n, _ in COMPOSED])
def test_composed_functions_take_lists(backend, name, args):
    import pygpgpu
    with pygpgpu.device(backend):
        got = getattr(gnp, name)(*args)
    check(got, getattr(np, name)(*args))


def test_repeat_counts_and_device_arrays(backend):
    host = np.arange(6, dtype=np.int16).reshape(2, 3)
    g = gnp.asarray(host, device=backend)
    check(gnp.repeat(g, [1, 0, 2], axis=1), np.repeat(host, [1, 0, 2], axis=1))
    check(gnp.repeat(g, (2, 3), axis=0), np.repeat(host, (2, 3), axis=0))
    check(gnp.repeat([1, 2], 3), np.repeat([1, 2], 3))


LINSPACES = [
    (([0.0, 1.0], [2.0, 3.0]), {}),
    ((0, [[1, 2], [3, 4]]), dict(num=5, axis=-1)),
    (([0, 1], [10, 7]), dict(dtype=int, endpoint=False, num=3)),
    (((1, 2), 5), dict(num=4, axis=1)),
    (([0.0, 0.0], [0.0, 1.0]), dict(num=3)),
]


@pytest.mark.parametrize("args, kwargs", LINSPACES)
def test_linspace_of_sequences(backend, args, kwargs):
    import pygpgpu
    with pygpgpu.device(backend):
        got = gnp.linspace(*args, **kwargs)
    check(got, np.linspace(*args, **kwargs))


def test_linspace_of_device_arrays(backend):
    lo = np.float32([1, 2])
    g = gnp.asarray(lo, device=backend)
    check(gnp.linspace(g, 5, num=4, axis=1), np.linspace(lo, 5, num=4, axis=1))
    got, step = gnp.linspace(g, [3, 10], num=5, retstep=True)
    want, wstep = np.linspace(lo, [3, 10], num=5, retstep=True)
    check(got, want)
    check(step, wstep)


def test_numpy_arrays_stay_refused(backend):
    with pytest.raises(TypeError, match="upload host data"):
        gnp.diag(np.arange(3))


L23 = [[1, 2, 3], [4, 5, 6]]
FUNCTIONS_OF_LISTS = [
    ("sort", ([3, 1, 2],)), ("argsort", ([3, 1, 2],)), ("cumsum", (L23,)), ("cumprod", (L23, 1)), ("var", (L23,)),
    ("std", (L23, 0)), ("where", ([True, False], [1, 2], [3.5, 4])), ("where", ([True, False], 1, 2.5)),
    ("clip", (L23, 2, 4)), ("concatenate", (([1, 2], [3]),)), ("stack", (([1, 2], [3, 4]),)), ("take", (L23, [0, 2])),
    ("dot", ([1, 2], [3, 4])), ("matmul", (L23, [[1], [2], [3]])), ("nonzero", ([0, 1, 2],)), ("copy", (L23,)),
    ("transpose", (L23,)), ("ravel", (L23,)), ("isclose", ([1.0, 2.0], [1.0, 2.1])), ("isclose", (1.0, [1.0, 2.0])),
    ("inner", ([1, 2], [3, 4])), ("vdot", ([1, 2], [3, 4])), ("diff", ([1, 4, 9],)), ("outer", ([1, 2], [3, 4])),
    ("tile", ([1, 2], 2)), ("roll", ([1, 2, 3], 1)),
]


@pytest.mark.parametrize("name, args", FUNCTIONS_OF_LISTS, ids=[f"{n}-{k}" for k, (n, _) in enumerate(FUNCTIONS_OF_LISTS)])
def test_functions_take_lists(backend, name, args):
    import pygpgpu
    with pygpgpu.device(backend):
        got = getattr(gnp, name)(*args)
    want = getattr(np, name)(*args)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for a, b in zip(got, want):
            check(a, b)
    else:
        check(got, want)


def test_lists_join_device_arrays_on_their_device(backend):
    g = gnp.asarray(np.float32([1, 2]), device=backend)
    got = gnp.concatenate([g, [3, 4]])
    assert got.device == g.device
    check(got, np.concatenate([np.float32([1, 2]), [3, 4]]))
    check(gnp.where(g > 1, [10, 20], g), np.where(np.float32([1, 2]) > 1, [10, 20], np.float32([1, 2])))
    assert gnp.allclose(g, [1, 2]) == np.allclose(np.float32([1, 2]), [1, 2])
