"""The @kernel runtime tried as a Numba-CUDA / Warp / Taichi user would: each result is compared
with the same function run on the host (``k.py_func`` on numpy copies)."""
from __future__ import annotations

import types

import numpy as np
import pytest

import pygpgpu.numpy as gnp
from pygpgpu_translate import kernel


@kernel
def bump_both(a, b):
    for i in range(a.shape[0]):
        a[i] = a[i] + 1
        b[i] = b[i] + 1


class Holder:
    def __init__(self, w):
        self.w = w

    @kernel
    def read(self, out):
        for i in range(out.shape[0]):
            out[i] = self.w[i]

    @kernel
    def fill(self, v):
        for i in range(self.w.shape[0]):
            self.w[i] = v


def _closure_reader(w):
    @kernel
    def read(out):
        for i in range(out.shape[0]):
            out[i] = w[i]
    return read


VIEWS = {"offset": lambda g: g[8:], "strided": lambda g: g[::2], "reversed": lambda g: g[::-1]}


@pytest.mark.parametrize("view", list(VIEWS))
def test_a_gnp_view_as_self_attribute_or_closure_array_reads_its_own_elements(backend, view):
    host = np.arange(16, dtype=np.float32)
    g = gnp.asarray(host, device=backend)
    expected = VIEWS[view](host)
    out = np.zeros(expected.shape, np.float32)
    Holder(VIEWS[view](g)).read[backend](out)
    np.testing.assert_array_equal(out, expected)
    out = np.zeros(expected.shape, np.float32)
    _closure_reader(VIEWS[view](g))[backend](out)
    np.testing.assert_array_equal(out, expected)


def test_a_gnp_view_as_self_attribute_is_written_in_place(backend):
    g = gnp.zeros(16, np.float32, device=backend)
    Holder(g[8:]).fill[backend](7.0)
    np.testing.assert_array_equal(g.get(), np.r_[np.zeros(8), np.full(8, 7)])


@pytest.mark.parametrize("view", list(VIEWS))
def test_one_gnp_view_passed_twice_is_one_array(backend, view):
    host = np.zeros(16, np.float32)
    bump_both.py_func(VIEWS[view](host), VIEWS[view](host))
    g = gnp.zeros(16, np.float32, device=backend)
    v = VIEWS[view](g)
    bump_both[backend](v, v)
    np.testing.assert_array_equal(g.get(), host)
    g = gnp.zeros(16, np.float32, device=backend)
    bump_both[backend](VIEWS[view](g), VIEWS[view](g))      # equal views, two objects
    np.testing.assert_array_equal(g.get(), host)


@pytest.mark.parametrize("pair", [lambda g: (g[1:9], g[:8]), lambda g: (g[:8], g[1:9]),
                                  lambda g: (g[::2], g[:8]), lambda g: (g[::-1][8:], g[4:12])])
def test_overlapping_gnp_views_that_are_written_raise(backend, pair):
    g = gnp.zeros(16, np.float32, device=backend)
    with pytest.raises(ValueError, match="overlapping"):
        bump_both[backend](*pair(g))
    np.testing.assert_array_equal(g.get(), np.zeros(16))


def test_disjoint_gnp_views_of_one_array_are_fine(backend):
    host = np.zeros(16, np.float32)
    bump_both.py_func(host[::2], host[1::2])
    g = gnp.zeros(16, np.float32, device=backend)
    bump_both[backend](g[::2], g[1::2])
    np.testing.assert_array_equal(g.get(), host)


@kernel
def increment(out):
    for i in range(out.shape[0]):
        out[i] = out[i] + 1


@kernel
def increment_2d(out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = out[y, x] + 1


@pytest.mark.parametrize("work", [(8, 4, 2), ((8, 4), (2, 2)), ((8, 2, 2), (4, 1, 1))])
def test_a_bracket_with_more_dimensions_than_the_loop_raises(backend, work):
    # the extra dimensions' work items would each run the loop body again: out[i] += 1 eight times
    out = np.zeros(8, np.float32)
    with pytest.raises(ValueError, match="dimension"):
        increment[backend][work](out)
    np.testing.assert_array_equal(out, np.zeros(8))
    out2 = np.zeros((2, 8), np.float32)
    if len(work) == 3 or len(work[0]) == 3:
        with pytest.raises(ValueError, match="dimension"):
            increment_2d[backend][work](out2)
    else:
        increment_2d[backend][work](out2)
        np.testing.assert_array_equal(out2, np.ones((2, 8)))


def test_two_device_selectors_in_one_bracket_raise():
    # the last one used to win silently: k["cuda:0", "cuda:1"] ran on cuda:1
    with pytest.raises(ValueError, match="two device selectors"):
        increment["opencl", "cuda"]
    with pytest.raises(ValueError, match="two device selectors"):
        increment["opencl", 8, "opencl:0"]


@kernel
def scaled(x, out, a=2.0, b=1):
    for i in range(out.shape[0]):
        out[i] = x[i] * a + b


def test_a_missing_argument_of_a_kernel_with_defaults_is_named():
    # it said "takes 4 arguments (x, out, a, b), 1 given", as if a and b had to be given too
    with pytest.raises(TypeError, match="missing a required argument: 'out'"):
        scaled(np.zeros(4, np.float32))


class NotSelf:
    scale = 3.0

    @kernel
    def apply(this, x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * this.scale


def test_a_kernel_method_whose_first_parameter_is_not_self_says_so():
    # Python binds any first parameter; a kernel method is one only when it is named self, and the
    # call said "takes 3 arguments (this, x, out), 2 given"
    with pytest.raises(TypeError, match="named self"):
        NotSelf().apply(np.zeros(4, np.float32), np.zeros(4, np.float32))


class Biased:
    def __init__(self, bias):
        self.bias = bias

    @kernel
    def apply(self, x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] + self.bias


def test_bound_and_bracketed_kernels_have_py_func_and_name(backend):
    # k.py_func runs the function on the host; m.apply and k["opencl"] had neither it nor __name__
    x = np.arange(4, dtype=np.float32)
    m = Biased(2.5)
    host, dev = np.zeros(4, np.float32), np.zeros(4, np.float32)
    m.apply.py_func(x, host)                  # bound: self is filled in, as in m.apply(x, out)
    m.apply[backend](x, dev)
    np.testing.assert_array_equal(dev, host)
    assert m.apply.__name__ == "apply"
    assert increment[backend].py_func is increment.py_func
    assert increment[backend][8].__name__ == "increment"


def test_an_unsupported_dtype_lists_complex_and_records_among_what_works():
    # the message offered only bool, int8..uint64, float16, float32 or float64
    with pytest.raises(TypeError, match="complex64, complex128 or a record dtype"):
        increment.inspect(np.zeros(3, "U3"))


def test_a_0d_array_says_to_pass_a_number():
    with pytest.raises(ValueError, match=r"got 0; to pass it as a number, index it with \[\(\)\]"):
        scaled.inspect(np.zeros(4, np.float32), np.zeros(4, np.float32), np.array(2.0))


# ---- a helper called through its module (mod.f) follows rebinding, as a global helper does -----------------
helpers = types.ModuleType("pygpgpu_test_rebound_helpers")


def _plus_one(i):
    return i + 1


def _times_fifty(i):
    return i * 50


@kernel
def through_module(out):
    for i in range(out.shape[0]):
        out[i] = helpers.step(i)


def test_a_helper_rebound_in_its_module_is_called_anew(backend):
    for helper in (_plus_one, _times_fifty, _plus_one):
        helpers.step = helper
        out, host = np.zeros(4, np.int64), np.zeros(4, np.int64)
        through_module[backend](out)
        through_module.py_func(host)
        np.testing.assert_array_equal(out, host)
