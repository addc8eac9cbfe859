"""numpy's memory-order names in any case ('c', 'f', 'a', 'k' as numpy takes them) across creation,
copies, reshape/ravel/flatten and get; and ``g.base``, numpy's link from a view to the array whose
memory it sees. Compared with numpy on each backend of the run."""
from __future__ import annotations

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
import pytest


def up(x, backend):
    return gnp.asarray(x, device=backend)


def layout(x):
    flags = x.flags
    return (x.shape, bool(flags.c_contiguous), bool(flags.f_contiguous))


HOST = np.arange(6.0).reshape(2, 3)

ORDER_CASES = {
    "zeros": lambda m, a, o: m.zeros((2, 3), order=o),
    "empty_like": lambda m, a, o: m.empty_like(a, order=o),
    "asarray": lambda m, a, o: m.asarray(a, order=o),
    "array": lambda m, a, o: m.array(a, order=o),
    "copy": lambda m, a, o: a.copy(order=o),
    "reshape": lambda m, a, o: a.reshape(3, 2, order=o),
    "ravel": lambda m, a, o: a.ravel(o),
    "flatten": lambda m, a, o: a.flatten(o),
}


@pytest.mark.parametrize("order", ["c", "f", "a", "k", "C", "F"])
@pytest.mark.parametrize("case", ORDER_CASES)
def test_order_names_in_any_case_as_numpy(backend, case, order):
    try:
        want = ORDER_CASES[case](np, HOST, order)
    except ValueError:
        with pytest.raises(ValueError):
            with pygpgpu.device(backend):
                ORDER_CASES[case](gnp, up(HOST, backend), order)
        return
    with pygpgpu.device(backend):
        got = ORDER_CASES[case](gnp, up(HOST, backend), order)
    assert layout(got) == layout(want)
    if case not in ("zeros", "empty_like"):
        np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("order", ["f", "c", "a", "k"])
def test_get_takes_lower_case_orders(backend, order):
    got = up(HOST, backend).get(order=order)
    want = np.asarray(HOST, order=order.upper())
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)
    np.testing.assert_array_equal(got, want)


def test_bad_order_names_are_still_refused(backend):
    g = up(HOST, backend)
    for bad in ("x", "cf", ""):
        with pytest.raises(ValueError):
            np.ones((2, 3)).copy(order=bad)
        with pytest.raises(ValueError):
            g.copy(order=bad)


VIEW_CASES = {
    "row": lambda a: a[0], "transpose": lambda a: a.T, "reshape": lambda a: a.reshape(3, 2),
    "view of a view": lambda a: a.T[1:], "ravel": lambda a: a.ravel(), "slice": lambda a: a[:, ::2],
}


@pytest.mark.parametrize("case", VIEW_CASES)
def test_base_of_a_view_is_the_array_it_sees_as_numpy(backend, case):
    host = np.array(np.arange(6.0).reshape(2, 3))     # owns its memory, as g does
    g = up(host, backend)
    assert host.base is None and g.base is None
    assert (VIEW_CASES[case](host).base is host) == (VIEW_CASES[case](g).base is g)
    assert VIEW_CASES[case](g).base is g


def test_base_of_a_copy_is_none(backend):
    g = up(HOST, backend)
    assert g.copy().base is None
    assert (g + 1).base is None
    assert g.T.copy().base is None


EMPTY_RESULTS = {
    "matmul (3, 2) @ (2, 0)": lambda m: m.ones((3, 2)) @ m.ones((2, 0)),
    "dot (0, 3) . (3, 4)": lambda m: m.dot(m.ones((0, 3)), m.ones((3, 4))),
    "vander N=0": lambda m: m.vander(m.ones(3), 0),
    "zeros (2, 0)": lambda m: m.zeros((2, 0)),
    "slice [:, :0]": lambda m: m.ones((2, 3))[:, :0],
    "slice [:0, ::2] of 3-D": lambda m: m.ones((2, 3, 4))[:0, ::2],
}


@pytest.mark.parametrize("case", EMPTY_RESULTS)
def test_arrays_without_elements_are_c_and_f_contiguous_as_numpy(backend, case):
    with pygpgpu.device(backend):
        got = EMPTY_RESULTS[case](gnp)
    want = EMPTY_RESULTS[case](np)
    assert (got.flags.c_contiguous, got.flags.f_contiguous) == (want.flags.c_contiguous, want.flags.f_contiguous)
