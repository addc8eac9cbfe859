"""Helpers that return tuples (issue 15, item 4): ``lo, hi = minmax(a, b)``, tuples of scalars and
vectors unpacked at the call, indexed or bound to a name. Every kernel is compared with the same
Python helpers run on the host."""
from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest

from conftest import assert_code_object, assert_cubin
from pygpgpu import float3, kernel
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture


def minmax(a, b):
    if a < b:
        return a, b
    return (b, a)


def sort3(a, b, c):                    # a tuple helper built from another one
    a, b = minmax(a, b)
    b, c = minmax(b, c)
    a, b = minmax(a, b)
    return a, b, c


def split(v, w):                       # vectors and a scalar in one tuple
    return v - w, v + w, float(v.x)


def divmod_like(n, d):                 # items of different types; int and float joined per item
    if d == 0:
        return 0, 0.0
    return n // d, n / d


@kernel
def sort_rows(m, out):
    for i in range(out.shape[0]):
        a, b, c = sort3(m[i, 0], m[i, 1], m[i, 2])
        out[i, 0] = a
        out[i, 1] = b
        out[i, 2] = c


@kernel
def ranges(x, y, lo, hi, width):
    for i in range(x.shape[0]):
        pair = minmax(x[i], y[i])            # bound to a name
        lo[i] = pair[0]
        hi[i] = minmax(x[i], y[i])[1]        # indexed at the call
        width[i] = pair[1] - pair[0]


@kernel
def vectors(v, w, a, b, s):
    for i in range(v.shape[0]):
        p, q, r = split(v[i], w[i])
        a[i] = p
        b[i] = q
        s[i] = r


@kernel
def quotients(n, d, q, f):
    for i in range(n.shape[0]):
        q[i], f[i] = divmod_like(n[i], d[i])


def test_sort3_matches_the_host(backend):
    m = np.random.default_rng(0).random((64, 3)).astype(np.float32)
    out = np.zeros_like(m)
    sort_rows[backend](m, out)
    np.testing.assert_array_equal(out, np.array([sort3(*row) for row in m], np.float32))
    np.testing.assert_array_equal(out, np.sort(m, axis=1))


def test_a_tuple_bound_to_a_name_and_indexed(backend):
    rng = np.random.default_rng(1)
    x, y = rng.random(32).astype(np.float32), rng.random(32).astype(np.float32)
    lo, hi, width = (np.zeros(32, np.float32) for _ in range(3))
    ranges[backend](x, y, lo, hi, width)
    np.testing.assert_array_equal(lo, [minmax(a, b)[0] for a, b in zip(x, y)])
    np.testing.assert_array_equal(hi, [minmax(a, b)[1] for a, b in zip(x, y)])
    np.testing.assert_array_equal(width, hi - lo)


def test_vectors_and_scalars_in_one_tuple(backend):
    rng = np.random.default_rng(2)
    v, w = rng.random((16, 3)).astype(np.float32), rng.random((16, 3)).astype(np.float32)
    a, b = np.zeros_like(v), np.zeros_like(v)
    s = np.zeros(16, np.float32)
    vectors[backend](v, w, a, b, s)
    host = [split(float3(*p), float3(*q)) for p, q in zip(v, w)]
    np.testing.assert_array_equal(a, [np.asarray(h[0]) for h in host])
    np.testing.assert_array_equal(b, [np.asarray(h[1]) for h in host])
    np.testing.assert_array_equal(s, [h[2] for h in host])


def test_item_types_join_across_returns(backend):
    n = np.array([7, -7, 9, 4], np.int32)
    d = np.array([2, 2, 0, -3], np.int32)
    q = np.zeros(4, np.int32)
    f = np.zeros(4, np.float32)
    quotients[backend](n, d, q, f)
    host = [divmod_like(int(a), int(b)) for a, b in zip(n, d)]
    np.testing.assert_array_equal(q, [h[0] for h in host])
    np.testing.assert_allclose(f, [h[1] for h in host], rtol=1e-6)


def test_a_closure_helper_returning_a_tuple(backend):
    scale = 2.0

    def scaled_pair(v):
        return v * scale, v / scale

    @kernel
    def k(x, a, b):
        for i in range(x.shape[0]):
            a[i], b[i] = scaled_pair(x[i])

    x = np.arange(1, 9, dtype=np.float32)
    a, b = np.zeros_like(x), np.zeros_like(x)
    k[backend](x, a, b)
    np.testing.assert_array_equal(a, x * 2)
    np.testing.assert_array_equal(b, x / 2)


# ---- errors: each at the helper, saying what to write -----------------------------------------------
def _kernel_from(tmp_path, helper: str):
    path = tmp_path / "tuple_helpers.py"
    path.write_text("from pygpgpu import kernel\n\n" + textwrap.dedent(helper) + textwrap.dedent("""

        @kernel
        def k(x, out):
            for i in range(out.shape[0]):
                a, b = h(x[i])
                out[i] = a + b
    """))
    spec = importlib.util.spec_from_file_location("tuple_helpers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k, path


@pytest.mark.parametrize("helper, exc, message", [
    ("def h(v):\n    if v > 0:\n        return v, v\n    return v, v, v\n", TypeError, "returns tuples of 2 and 3 items"),
    ("def h(v):\n    if v > 0:\n        return v, v\n    return v\n", SyntaxError,
     "returns a tuple on some paths and something else on others"),
    ("def h(v):\n    if v > 0:\n        return v, v\n", SyntaxError, "returns a tuple on some paths and nothing on others"),
    ("def h(v):\n    return v, (v, v)\n", SyntaxError, "item 1 of the returned tuple is a tuple"),
])
def test_tuple_return_errors(helper, exc, message, tmp_path):
    k, path = _kernel_from(tmp_path, helper)
    with pytest.raises(exc, match=message) as info:
        k.inspect(np.zeros(4, np.float32), np.zeros(4, np.float32), backend="opencl")
    assert info.value.filename == str(path)


def test_tuple_helpers_compile_for_cuda_and_hip(rtc_compile):
    dialect, compile_ = rtc_compile
    for k, args in ((sort_rows, (np.zeros((4, 3), np.float32), np.zeros((4, 3), np.float32))),
                    (vectors, (np.zeros((4, 3), np.float32),) * 4 + (np.zeros(4, np.float32),)),
                    (quotients, (np.zeros(4, np.int32),) * 3 + (np.zeros(4, np.float32),))):
        src = k.inspect(*args, backend=dialect).source
        image = compile_(src)
        (assert_cubin if dialect == "cuda" else assert_code_object)(image, src)
