"""Float ``//``, ``%``, ``math.fmod`` and ``floor`` on the device against numpy, element for element.

Random float32/float64 pairs (fixed seeds) of three kinds: near-multiples ``a ~= k * b``, where the
last step of CPython's ``float_divmod`` (round ``floor((a - fmod(a, b)) / b)`` up when it lies more
than 0.5 below) decides the result; magnitudes spread log-uniformly from subnormal to huge, so
``a / b`` overflows and underflows; and every pair of special values (signed zeros, infinities,
NaN, the largest and smallest numbers). numpy's ``floor_divide``/``remainder`` follow the same
algorithm in the array's own precision, so results must be bit-identical, zeros' signs included.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from pygpgpu_translate import kernel

N_RANDOM = 3000          # per kind and dtype: one launch each


@kernel
def float_divmod_all(a, b, q, r, q2, r2, fm, fl):
    for i in range(a.shape[0]):
        x = a[i]
        y = b[i]
        q[i] = x // y
        r[i] = x % y
        q2[i], r2[i] = x // y, x % y          # divmod spelled as a tuple (divmod() is not translated)
        fm[i] = math.fmod(x, y)
        fl[i] = np.floor(x / y)


@kernel
def float_divmod_literals(a, out):
    for i in range(a.shape[0]):
        x = a[i]
        out[i, 0] = x // 2.5                  # weak float literal: stays in a's precision
        out[i, 1] = x % -0.75
        out[i, 2] = 7.0 // x
        out[i, 3] = -7.0 % x
        out[i, 4] = x // 3                    # weak int literal
        out[i, 5] = x % 3
        out[i, 6] = math.fmod(x, 0.3)


@kernel
def float_floor_to_int(a, b, out):
    for i in range(a.shape[0]):
        out[i, 0] = math.floor(a[i] / b[i])    # a Python int on the host, int32 on the device
        out[i, 1] = math.floor(a[i]) % 7
        out[i, 2] = math.floor(a[i] // b[i])


def _skip_without_fp64(device, dt):
    if dt == np.float64 and not getattr(device, "fp64", True):
        pytest.skip(f"{device.selector} has no float64 support")


def _specials(dt):
    fi = np.finfo(dt)
    tiny_sub = np.nextafter(dt(0), dt(1))            # the smallest subnormal
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -3.0, 7.25, math.inf, -math.inf, math.nan, float(fi.max), -float(fi.max),
            float(fi.tiny), -float(fi.tiny), float(tiny_sub), -float(tiny_sub), float(fi.eps), 1e30, -1e-30]
    v = np.array(vals, dt)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.ravel(), b.ravel()


def _near_multiples(dt, seed):
    rng = np.random.default_rng(seed)
    b = (rng.uniform(0.001, 10.0, N_RANDOM) * rng.choice([-1, 1], N_RANDOM)).astype(dt)
    k = rng.integers(-5000, 5000, N_RANDOM)
    a = (b.astype(np.float64) * k).astype(dt)
    a = np.where(rng.random(N_RANDOM) < 0.3, np.nextafter(a, dt(rng.choice([-1, 1]))), a).astype(dt)
    return a, b


def _log_uniform(dt, seed):
    rng = np.random.default_rng(seed)
    fi = np.finfo(dt)
    lo, hi = math.log10(float(fi.smallest_subnormal)) + 1, math.log10(float(fi.max)) - 1

    def draw():
        return (10.0 ** rng.uniform(lo, hi, N_RANDOM) * rng.choice([-1, 1], N_RANDOM)).astype(dt)
    return draw(), draw()


def _issue_pairs(dt):
    # issue 21: dropping the rounding step gave 520.1796734469845 // -5.352745571175097 == -99.0 (Python: -98.0)
    return np.array([520.1796734469845, 84.68], dt), np.array([-5.352745571175097, 0.027628], dt)


def _assert_same(got, want, what):
    np.testing.assert_array_equal(got, want, err_msg=what)
    zeros = want == 0
    bad = np.flatnonzero(np.signbit(got[zeros]) != np.signbit(want[zeros]))
    assert not bad.size, f"{what}: signed zero differs at {np.flatnonzero(zeros)[bad][:5]}"


def _run_and_compare(backend, a, b, label):
    dt = a.dtype.type
    outs = [np.full(len(a), 12345.0, dt) for _ in range(6)]
    float_divmod_all[backend](a, b, *outs)
    with np.errstate(all="ignore"):
        want_q, want_r = np.floor_divide(a, b), np.remainder(a, b)
        wants = [want_q, want_r, want_q, want_r, np.fmod(a, b), np.floor(a / b)]
    for got, want, name in zip(outs, wants, ["//", "%", "tuple //", "tuple %", "math.fmod", "np.floor(x / y)"]):
        mismatch = np.flatnonzero(~((got == want) | (np.isnan(got) & np.isnan(want))))
        detail = [(a[j], b[j], got[j], want[j]) for j in mismatch[:5]]
        _assert_same(got, want, f"{label} {dt.__name__} {name}: (a, b, device, numpy) {detail}")


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_issue_pairs(backend, device, dt):
    _skip_without_fp64(device, dt)
    a, b = _issue_pairs(dt)
    _run_and_compare(backend, a, b, "issue pairs")
    if dt == np.float64:       # and the value the issue quotes, beside numpy's
        q = np.zeros(2, dt)
        float_divmod_all[backend](a, b, q, *[np.zeros(2, dt) for _ in range(5)])
        assert q[0] == 520.1796734469845 // -5.352745571175097 == -98.0


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_special_values(backend, device, dt):
    _skip_without_fp64(device, dt)
    a, b = _specials(dt)
    _run_and_compare(backend, a, b, "special values")


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_near_multiples(backend, device, dt, seed):
    _skip_without_fp64(device, dt)
    a, b = _near_multiples(dt, seed)
    # the rounding step must matter for some of these, or the test would not test it
    with np.errstate(all="ignore"):
        m = np.fmod(a, b)
        d = (a - m) / b
        d = np.where((m != 0) & ((b < 0) != (m < 0)), d - dt(1), d)
    assert np.count_nonzero(d - np.floor(d) > dt(0.5)) > 10
    _run_and_compare(backend, a, b, f"near multiples seed {seed}")


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_magnitudes_subnormal_to_huge(backend, device, dt, seed):
    _skip_without_fp64(device, dt)
    a, b = _log_uniform(dt, 10 + seed)
    _run_and_compare(backend, a, b, f"log-uniform seed {seed}")


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_weak_literals_keep_the_array_precision(backend, device, dt):
    _skip_without_fp64(device, dt)
    a, _ = _near_multiples(dt, 5)
    sa, _ = _specials(dt)
    a = np.concatenate([a, sa, np.array([2.5, -2.5, 0.75, -0.75, 7.0, -7.0, 0.3, 3.0], dt)])
    out = np.zeros((len(a), 7), dt)
    float_divmod_literals[backend](a, out)
    with np.errstate(all="ignore"):
        want = np.stack([np.floor_divide(a, dt(2.5)), np.remainder(a, dt(-0.75)), np.floor_divide(dt(7.0), a),
                         np.remainder(dt(-7.0), a), np.floor_divide(a, dt(3)), np.remainder(a, dt(3)),
                         np.fmod(a, dt(0.3))], axis=1)
    for k in range(7):
        _assert_same(out[:, k], want[:, k], f"{dt.__name__} literal column {k}")


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_math_floor_gives_python_ints(backend, device, dt):
    _skip_without_fp64(device, dt)
    a, b = _near_multiples(dt, 7)
    keep = np.abs(a / b) < 2**30
    a, b = a[keep], b[keep]
    out = np.zeros((len(a), 3), np.int64)
    float_floor_to_int[backend](a, b, out)
    want = np.array([[math.floor(x / y), math.floor(x) % 7, math.floor(x // y)]
                     for x, y in zip(a.tolist(), b.tolist())] if dt == np.float64 else
                    [[math.floor(np.float32(x) / np.float32(y)), math.floor(x) % 7, math.floor(np.float32(x) // np.float32(y))]
                     for x, y in zip(a.tolist(), b.tolist())], np.int64)
    np.testing.assert_array_equal(out, want)
