"""Private arrays (issue 15, item 5): ``t = np.zeros(8, np.float32)`` (np.empty, np.ones, np.full,
2-D shapes) inside a kernel or helper is an array of each work item's own, with a shape known
when translating (a literal, a module constant, a constant of the enclosing function). Each
kernel is compared with the same Python function run on the host (``k.py_func``)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_code_object, assert_cubin
from pygpgpu import float3, kernel
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture

WINDOW = 5


def insertion_sort(t):                 # a helper that sorts a private array in place
    for j in range(1, t.shape[0]):
        v = t[j]
        k = j - 1
        while k >= 0 and t[k] > v:
            t[k + 1] = t[k]
            k -= 1
        t[k + 1] = v


@kernel
def median_filter(x, out):
    for i in range(out.shape[0]):
        t = np.zeros(WINDOW, np.float32)       # a module constant as the shape
        for k in range(WINDOW):
            t[k] = x[i + k]
        insertion_sort(t)
        out[i] = t[WINDOW // 2]


@kernel
def rows(p, out):
    for i in range(out.shape[0]):
        acc = np.zeros((4, 3), np.float32)     # 2-D: rows are float3
        for k in range(4):
            acc[k] = p[i] * (k + 1)
        s = float3(0.0)
        for k in range(acc.shape[0]):
            s = s + acc[k]
        out[i] = s + float3(acc[3, 0], acc[2, 1], len(acc))


def counts(v, i):                      # a private array declared in a helper
    c = np.full(4, 0)                  # int fill: int64, as numpy
    for k in range(v.shape[1]):
        c[v[i, k] % 4] += 1
    best = 0
    for k in range(4):
        if c[k] > c[best]:
            best = k
    return best


@kernel
def modes(v, out):
    for i in range(out.shape[0]):
        out[i] = counts(v, i)


@kernel
def restarts(x, out):
    for i in range(out.shape[0]):
        total = 0.0
        for r in range(3):
            t = np.ones(4, dtype=np.float64)    # filled again each turn
            t[r] = x[i]
            total += t[0] + t[1] + t[2] + t[3]
        e = np.empty(2, np.int32)
        e[0] = i
        e[1] = e[0] * 2
        out[i] = total + e[1]


def test_a_median_filter_sorts_a_private_window(backend):
    x = np.random.default_rng(0).random(64 + WINDOW - 1).astype(np.float32)
    out, host = np.zeros(64, np.float32), np.zeros(64, np.float32)
    median_filter[backend](x, out)
    median_filter.py_func(x, host)
    np.testing.assert_array_equal(out, host)
    np.testing.assert_array_equal(out, np.median(np.lib.stride_tricks.sliding_window_view(x, WINDOW), axis=1))


def test_2d_private_arrays_have_vector_rows(backend):
    p = np.random.default_rng(1).random((16, 3)).astype(np.float32)
    out = np.zeros_like(p)
    rows[backend](p, out)
    host = np.array([np.asarray(sum((float3(*row) * (k + 1) for k in range(4)), float3(0.0))
                                + float3(row[0] * 4, row[1] * 3, 4)) for row in p], np.float32)
    np.testing.assert_allclose(out, host, rtol=1e-6)


def test_a_private_array_in_a_helper(backend):
    v = np.random.default_rng(2).integers(0, 100, (32, 9)).astype(np.int32)
    out, host = np.zeros(32, np.int32), np.zeros(32, np.int32)
    modes[backend](v, out)
    modes.py_func(v, host)
    np.testing.assert_array_equal(out, host)


def test_ones_refill_in_a_loop_and_empty(backend):
    x = np.arange(8, dtype=np.float64)
    out, host = np.zeros(8), np.zeros(8)
    restarts[backend](x, out)
    restarts.py_func(x, host)
    np.testing.assert_array_equal(out, host)


def test_a_closure_constant_and_a_tuple_give_the_shape(backend):
    def make(n, shape):
        @kernel
        def k(x, out):
            for i in range(out.shape[0]):
                t = np.full(shape, x[i])            # float32 fill: a float32 array
                w = np.zeros(n, np.int32)
                for a in range(shape[0]):
                    for b in range(shape[1]):
                        t[a, b] += a * b
                for a in range(n):
                    w[a] = a
                out[i] = t[shape[0] - 1, shape[1] - 1] + w[n - 1]
        return k

    x = np.arange(6, dtype=np.float32)
    for n, shape in ((3, (2, 5)), (7, (4, 4))):
        k = make(n, shape)
        out, host = np.zeros(6, np.float32), np.zeros(6, np.float32)
        k[backend](x, out)
        k.py_func(x, host)
        np.testing.assert_array_equal(out, host)


def test_an_index_past_a_private_array_is_reported_in_debug_mode(backend):
    @kernel(debug=True)
    def past(x, out):
        for i in range(out.shape[0]):
            t = np.zeros(4, np.float32)
            t[x[i]] = 1.0
            out[i] = t[0]

    with pytest.raises(IndexError, match=r"index 4 is out of bounds.*array 't'"):
        past[backend](np.array([0, 4], np.int32), np.zeros(2, np.float32))


# ---- errors ----------------------------------------------------------------------------------------
def _inspect(body, *args):
    k = kernel(body)
    return k.inspect(*args, backend="opencl")


def test_a_shape_known_at_run_time_says_what_is_accepted():
    def k(x, out):
        for i in range(out.shape[0]):
            t = np.zeros(x.shape[0], np.float32)
            out[i] = t[0]

    with pytest.raises(SyntaxError, match="np.zeros\\(\\) in a kernel needs a compile-time shape") as info:
        _inspect(k, np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert "enclosing function" in info.value.msg and info.value.lineno == k.__code__.co_firstlineno + 2


def test_a_constructor_not_assigned_to_a_name():
    def k(out):
        for i in range(out.shape[0]):
            out[i] = np.zeros(3, np.float32)[0]

    with pytest.raises(SyntaxError, match="must be assigned to a name"):
        _inspect(k, np.zeros(4, np.float32))


def test_too_large_and_vector_elements_are_refused():
    def big(out):
        for i in range(out.shape[0]):
            t = np.zeros((128, 128), np.float64)
            out[i] = t[0, 0]

    def vec(out):
        for i in range(out.shape[0]):
            t = np.zeros(4, float3)
            out[i] = t[0].x

    with pytest.raises(SyntaxError, match="too large for one work item"):
        _inspect(big, np.zeros(4))
    with pytest.raises(SyntaxError, match=r"(?s)holds numbers, not float3.*np.zeros\(\(n, 3\)"):
        _inspect(vec, np.zeros(4, np.float32))


def test_private_arrays_compile_for_cuda_and_hip(rtc_compile):
    dialect, compile_ = rtc_compile
    for k, args in ((median_filter, (np.zeros(12, np.float32), np.zeros(8, np.float32))),
                    (rows, (np.zeros((4, 3), np.float32), np.zeros((4, 3), np.float32))),
                    (modes, (np.zeros((4, 9), np.int32), np.zeros(4, np.int32))),
                    (restarts, (np.zeros(4), np.zeros(4)))):
        src = k.inspect(*args, backend=dialect).source
        image = compile_(src)
        (assert_cubin if dialect == "cuda" else assert_code_object)(image, src)
