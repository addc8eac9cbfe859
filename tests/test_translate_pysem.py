"""Python/numpy semantics the translator takes from the prelude library (pyfloordiv, pymod, pypow,
pymin/pymax, npminimum/npmaximum, npsign, funcs.abs/sign, double atomics): kernels run on the
device and compare with the same function run on the host (numpy scalars) or with numpy."""
from __future__ import annotations

import math

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_translate import kernel
from conftest import assert_code_object, assert_cubin


def _fp64(device):
    if not getattr(device, "fp64", True):
        pytest.skip(f"{device} has no float64 support")


@kernel
def float_divmod(a, b, q, r):
    for i in range(q.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


def test_float_floordiv_and_mod_follow_python(backend, device):
    _fp64(device)
    a = np.array([7.0, -7.0, 7.0, -4.0, 4.0, -0.0, 0.0, 1e-300, 3.0, -3.0, 5.5, -5.5])
    b = np.array([0.1, 0.1, -0.1, 2.0, -2.0, 3.0, -3.0, 7.0, math.inf, math.inf, 2.5, 2.5])
    q, r = np.zeros_like(a), np.zeros_like(a)
    float_divmod[backend](a, b, q, r)
    want_q = np.array([x // y for x, y in zip(a.tolist(), b.tolist())])
    want_r = np.array([x % y for x, y in zip(a.tolist(), b.tolist())])
    np.testing.assert_array_equal(q, want_q)       # 7.0 // 0.1 is 69.0, as in Python
    np.testing.assert_array_equal(r, want_r)
    np.testing.assert_array_equal(np.signbit(q), np.signbit(want_q))     # signed zeros too
    np.testing.assert_array_equal(np.signbit(r), np.signbit(want_r))


def test_float_division_by_zero_gives_numpy_results(backend, device):
    _fp64(device)
    a = np.array([1.0, -1.0, 0.0, 2.5])
    b = np.zeros(4)
    q, r = np.zeros_like(a), np.zeros_like(a)
    float_divmod[backend](a, b, q, r)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(q, np.floor_divide(a, b))     # inf, -inf, nan, inf
        np.testing.assert_array_equal(r, np.remainder(a, b))        # nan


@kernel
def int_semantics(a, b, out):
    for i in range(a.shape[0]):
        out[i, 0] = a[i] // b[i]
        out[i, 1] = a[i] % b[i]
        out[i, 2] = a[i] ** b[i]
        out[i, 3] = abs(a[i])
        out[i, 4] = min(a[i], b[i])
        out[i, 5] = max(a[i], b[i])
        out[i, 6] = np.sign(a[i])


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.int64])
def test_integer_semantics_wrap_like_numpy(backend, device, dt):
    info = np.iinfo(dt)
    a = np.array([info.min, info.min, 7, -7, 3, -2, 0, 5, info.max, -1, 2, 1], dt)
    b = np.array([-1, 0, -2, 2, 5, 3, 0, -1, 2, -3, 9, -4], dt)
    out = np.zeros((len(a), 7), dt)
    int_semantics[backend](a, b, out)
    want = np.zeros_like(out)
    with np.errstate(all="ignore"):
        for i in range(len(a)):
            x, y = int(a[i]), int(b[i])
            wrap = lambda v: np.array(v & ((1 << info.bits) - 1), f"u{info.bits // 8}").view(dt)  # noqa: E731
            want[i] = [wrap(x // y if y else 0), wrap(x % y if y else 0),
                       wrap(x ** y if y >= 0 else (1 if x == 1 else ((-1) ** (-y) if x == -1 else 0))),
                       wrap(abs(x)), min(x, y), max(x, y), (x > 0) - (x < 0)]
    np.testing.assert_array_equal(out, want)


@kernel
def float_minmax_sign(x, y, out):
    for i in range(x.shape[0]):
        out[i, 0] = min(x[i], y[i])
        out[i, 1] = max(x[i], y[i])
        out[i, 2] = np.minimum(x[i], y[i])
        out[i, 3] = np.maximum(x[i], y[i])
        out[i, 4] = np.sign(x[i])
        out[i, 5] = np.clip(x[i], -1.0, 1.0)


def test_float_min_max_sign_nan_rules(backend):
    nan = np.float32("nan")
    x = np.array([nan, 1.0, -0.0, 2.0, -3.0, nan, 0.5], np.float32)
    y = np.array([1.0, nan, 0.25, -2.0, 3.0, nan, 0.5], np.float32)   # (numpy's choice between
    # -0.0 and 0.0 in minimum/maximum depends on its SIMD loops, so no signed-zero tie here)
    out = np.zeros((len(x), 6), np.float32)
    float_minmax_sign[backend](x, y, out)
    want = np.zeros_like(out)
    float_minmax_sign.py_func(x, y, want)        # Python's min/max keep the first of a NaN pair
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(want))


@kernel
def double_atomics(vals, acc):
    for i in range(vals.shape[0]):
        gpu.atomic_add(acc, 0, vals[i])
        gpu.atomic_min(acc, 1, vals[i])
        gpu.atomic_max(acc, 2, vals[i])
        gpu.atomic_sub(acc, 3, vals[i])
        gpu.atomic_inc(acc, 4)


def test_float64_atomics(backend, device):
    _fp64(device)
    vals = np.linspace(-4.0, 4.0, 64)
    acc = np.array([0.0, 10.0, -10.0, 0.0, 0.0])
    double_atomics[backend](vals, acc)
    np.testing.assert_allclose(acc, [vals.sum(), -4.0, 4.0, -vals.sum(), 64.0], atol=1e-12)


_CASES = [
    (float_divmod, lambda: (np.ones(4), np.ones(4), np.zeros(4), np.zeros(4))),
    (int_semantics, lambda: (np.ones(4, np.int8), np.ones(4, np.int8), np.zeros((4, 7), np.int8))),
    (int_semantics, lambda: (np.ones(4, np.int64), np.ones(4, np.int64), np.zeros((4, 7), np.int64))),
    (float_minmax_sign, lambda: (np.ones(4, np.float32), np.ones(4, np.float32), np.zeros((4, 6), np.float32))),
    (double_atomics, lambda: (np.ones(4), np.zeros(5))),
]


@pytest.mark.parametrize("dialect", ["cuda", "hip"])
def test_cuda_and_hip_sources_compile(dialect, nvrtc_compile, hiprtc_compile):
    # each kernel also runs against its host reference above, on CUDA too where a device is present
    for k, args in _CASES:
        src = k.inspect(*args(), backend=dialect).source
        if dialect == "cuda":
            assert_cubin(nvrtc_compile(src), src)
        else:
            assert_code_object(hiprtc_compile(src, "gfx1030"), src)
