"""pygpgpu.numpy elementwise operations against numpy: operators, ufuncs, comparisons, in-place
forms, broadcasting, views, numpy 2 type promotion with weak Python scalars (NEP 50), and the
errors numpy raises. Every test runs real kernels on each backend of the run (``backend``)."""
from __future__ import annotations

import operator

import numpy as np
import pygpgpu.numpy as gnp
import pytest

INTS = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64]
FLOATS = [np.float32, np.float64]


def sample(shape, dtype, seed=0, low=None, high=None, zeros=True):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo = info.min if low is None else max(low, info.min)
        hi = info.max if high is None else high
        a = rng.integers(lo, hi, shape, endpoint=True, dtype=dt)
        if zeros and a.size > 3:
            a.flat[::7] = 0
        return a
    a = (rng.standard_normal(shape) * 10).astype(dt)
    if zeros and a.size > 3:
        a.flat[::7] = 0
    return a


def check(got, want, exact=None):
    """``got`` (a device array) equals numpy's ``want``: same dtype, shape and values."""
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    host = got.get()
    if want.dtype.kind == "f" and not exact:
        rtol = 4e-7 if want.dtype == np.float32 else 1e-15
        np.testing.assert_allclose(host, want, rtol=rtol, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(host, want)


def up(x, backend):
    return gnp.asarray(x, device=backend)


# -- arithmetic operators over dtypes -------------------------------------------------------------------
ARITH = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod]


@pytest.mark.parametrize("dtype", INTS + FLOATS)
@pytest.mark.parametrize("op", ARITH, ids=lambda f: f.__name__)
def test_arithmetic_operators(backend, op, dtype):
    a, b = sample(37, dtype, 1), sample(37, dtype, 2)
    with np.errstate(all="ignore"):
        want = op(a, b)          # integer division by zero gives 0 in numpy, as on the device
    check(op(up(a, backend), up(b, backend)), want)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64])
def test_power(backend, dtype):
    a = sample(40, dtype, 3, low=-3, high=5) if np.dtype(dtype).kind != "f" else np.abs(sample(40, dtype, 3)) / 5
    b = sample(40, dtype, 4, low=0, high=6) if np.dtype(dtype).kind != "f" else sample(40, dtype, 4) / 10
    with np.errstate(all="ignore"):
        check(up(a, backend) ** up(b, backend), a ** b)
        check(up(a, backend) ** 3, a ** 3)


def test_mixed_dtypes_promote_like_numpy(backend):
    pairs = [(np.int8, np.uint8), (np.int32, np.float32), (np.uint64, np.int64), (np.int16, np.float64),
             (np.bool_, np.int8), (np.uint8, np.float32)]
    for ta, tb in pairs:
        a, b = sample(20, ta, 5), sample(20, tb, 6)
        with np.errstate(all="ignore"):
            check(up(a, backend) + up(b, backend), a + b)
            check(up(a, backend) * up(b, backend), a * b)
            check(up(a, backend) < up(b, backend), a < b)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64, np.bool_])
def test_bitwise_and_shifts(backend, dtype):
    a, b = sample(50, dtype, 7), sample(50, dtype, 8)
    for op in (operator.and_, operator.or_, operator.xor):
        check(op(up(a, backend), up(b, backend)), op(a, b))
    check(~up(a, backend), ~a)
    if np.dtype(dtype).kind != "b":
        bits = np.dtype(dtype).itemsize * 8
        counts = (np.arange(50) % (bits + 4) - (1 if np.dtype(dtype).kind == "i" else 0)).astype(dtype)
        check(up(a, backend) << up(counts, backend), a << counts)    # counts >= bits give 0, as numpy
        check(up(a, backend) >> up(counts, backend), a >> counts)
        check(up(a, backend) >> 3, a >> 3)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.float32, np.float64, np.bool_])
def test_comparisons_give_bool_arrays(backend, dtype):
    a, b = sample(30, dtype, 9), sample(30, dtype, 10)
    b[:5] = a[:5]
    for op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
        check(op(up(a, backend), up(b, backend)), op(a, b))


def test_float_comparisons_with_nan(backend):
    a = np.array([1.0, np.nan, -0.0, np.inf, np.nan], np.float32)
    b = np.array([np.nan, np.nan, 0.0, np.inf, 1.0], np.float32)
    for op in (operator.eq, operator.ne, operator.lt, operator.ge):
        check(op(up(a, backend), up(b, backend)), op(a, b))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.float32, np.float64])
def test_unary_operators(backend, dtype):
    a = sample(33, dtype, 11)
    with np.errstate(all="ignore"):
        check(-up(a, backend), -a)
        check(+up(a, backend), +a)
        check(abs(up(a, backend)), abs(a))


# -- ufuncs ---------------------------------------------------------------------------------------------
FLOAT_UFUNCS = ["sqrt", "exp", "log", "sin", "cos", "tanh", "floor", "ceil", "trunc", "rint", "isnan", "isfinite",
                "isinf", "sign", "square", "log1p", "expm1", "arctan", "fabs"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", FLOAT_UFUNCS)
def test_float_ufuncs(backend, name, dtype):
    a = sample(64, dtype, 12)
    a[:4] = [np.nan, np.inf, -np.inf, -0.0]
    if name in ("log", "sqrt", "log1p"):
        a = np.abs(a)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    # exp/log/sin/cos/tanh: the device's libm, within a few ulp of numpy's
    tol = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 4e-15}[np.dtype(dtype)]
    got = getattr(gnp, name)(up(a, backend))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.get(), want, rtol=tol, atol=tol if name in ("sin", "cos") else 0, equal_nan=True)


def test_integer_inputs_of_float_ufuncs(backend):
    a = sample(20, np.int32, 13, low=0, high=1000)
    check(gnp.sqrt(up(a, backend)), np.sqrt(a))              # int32 -> float64, as numpy
    check(gnp.floor(up(a, backend)), np.floor(a))            # integers stay integers
    check(gnp.isnan(up(a, backend)), np.isnan(a))


@pytest.mark.parametrize("dtype", [np.int16, np.uint32, np.float32, np.float64])
def test_minimum_maximum_clip_where(backend, dtype):
    a, b = sample(45, dtype, 14), sample(45, dtype, 15)
    if np.dtype(dtype).kind == "f":
        a[3] = np.nan
        b[5] = np.nan
    ga, gb = up(a, backend), up(b, backend)
    check(gnp.minimum(ga, gb), np.minimum(a, b))
    check(gnp.maximum(ga, gb), np.maximum(a, b))
    check(gnp.fmin(ga, gb), np.fmin(a, b))
    lo, hi = (2, 90) if np.dtype(dtype).kind == "u" else (-5, 7)
    check(gnp.clip(ga, lo, hi), np.clip(a, lo, hi))
    check(ga.clip(lo, hi), np.clip(a, lo, hi))
    check(gnp.clip(ga, gb, hi), np.clip(a, b, hi))
    check(gnp.where(ga > gb, ga, gb), np.where(a > b, a, b))
    check(gnp.where(ga > gb, ga, 0), np.where(a > b, a, dtype(0)))
    check(gnp.where(ga > gb, 1.5, ga), np.where(a > b, 1.5, a))     # a Python float is weak


def test_logical_ufuncs(backend):
    a, b = sample(30, np.int32, 16), sample(30, np.float32, 17)
    for name in ("logical_and", "logical_or", "logical_xor"):
        check(getattr(gnp, name)(up(a, backend), up(b, backend)), getattr(np, name)(a, b))
    check(gnp.logical_not(up(a, backend)), np.logical_not(a))


def test_array_ufunc_protocol_stays_on_device(backend):
    a, b = sample((4, 5), np.float32, 18), sample((4, 5), np.float32, 19)
    ga, gb = up(a, backend), up(b, backend)
    gnp.reset_transfer_stats()
    r1 = np.sqrt(np.abs(ga))
    r2 = np.add(ga, gb)
    r3 = np.multiply(ga, 2.0)
    out = gnp.empty_like(ga)
    r4 = np.subtract(ga, gb, out=out)
    r5 = np.maximum(ga, gb)
    assert r4 is out
    assert gnp.transfer_stats()["h2d"] == 0 and gnp.transfer_stats()["d2h"] == 0
    check(r1, np.sqrt(np.abs(a)))
    check(r2, a + b)
    check(r3, a * 2.0)
    check(r4, a - b)
    check(r5, np.maximum(a, b))
    check(np.add(ga, gb, dtype=np.float64), np.add(a, b, dtype=np.float64))


# -- broadcasting, shapes, views ----------------------------------------------------------------------------
@pytest.mark.parametrize("sa,sb", [((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((5,), ()), ((), ()), ((0,), (1,)),
                                   ((2, 0, 3), (2, 1, 3)), ((1,), (6, 1)), ((2, 1, 3, 1, 2), (1, 4, 1, 5, 1))])
def test_broadcasting(backend, sa, sb):
    a, b = sample(sa, np.float32, 20), sample(sb, np.float32, 21)
    check(up(a, backend) + up(b, backend), a + b)
    check(up(a, backend) * up(b, backend), a * b)
    check(up(b, backend) - up(a, backend), b - a)


def test_strided_views_as_operands(backend):
    host = sample((6, 8), np.int32, 22)
    g = up(host, backend)
    views = [(lambda x: x[::2, 1::3]), (lambda x: x[:, 3]), (lambda x: x[::-1, ::-2]), (lambda x: x.T),
             (lambda x: x[2:5]), (lambda x: x[1:, None, :4])]
    for v in views:
        check(v(g) * 3 + 1, v(host) * 3 + 1)
        check(v(g) - v(g), v(host) - v(host))
    check(g.T[:, :6] + g[0, :6], host.T[:, :6] + host[0, :6])


def test_in_place_operators(backend):
    a = sample((4, 6), np.float32, 23)
    b = sample((4, 6), np.float32, 24)
    g, h = up(a, backend), up(b, backend)
    buffer = g.buffer
    g += h
    g *= 2
    g -= 1.5
    g /= h + 100
    a = (((a + b) * 2) - 1.5) / (b + 100)
    check(g, a)
    assert g.buffer is buffer                  # in place: the same memory
    i = up(sample(10, np.int32, 25), backend)
    want = i.get()
    i //= 3
    i %= 5
    i <<= 2
    i |= 1
    i ^= 6
    want = (((want // 3) % 5) << 2 | 1) ^ 6
    check(i, want)


def test_in_place_on_views_and_overlap(backend):
    a = np.arange(20, dtype=np.int64)
    g = up(a, backend)
    g[::2] += 100                              # a strided view written in place
    a[::2] += 100
    check(g, a)
    g[1:] += g[:-1]                            # overlapping read and write: numpy's result, not a race
    a[1:] += a[:-1]
    check(g, a)
    m = np.arange(12, dtype=np.float64).reshape(3, 4)
    gm = up(m, backend)
    gm.T[1:] *= -1
    m.T[1:] *= -1
    check(gm, m)


def test_in_place_casting_rule(backend):
    g = up(np.arange(5, dtype=np.int32), backend)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output from dtype\\('float64'\\)"):
        g += 1.5
    f = up(np.arange(5, dtype=np.float64), backend)
    f += up(np.arange(5, dtype=np.int8), backend)        # int8 -> float64 is fine
    check(f, np.arange(5.0) * 2)


# -- NEP 50 scalars -------------------------------------------------------------------------------------------
def test_python_scalars_are_weak(backend):
    i8 = np.array([100, -100, 5, 0], np.int8)
    g = up(i8, backend)
    check(g + 1, i8 + 1)                        # stays int8
    check(g * 2, i8 * 2)                        # wraps like numpy
    check(g + 1.5, i8 + 1.5)                    # float64
    check(g / 2, i8 / 2)
    check(g > 5, i8 > 5)
    check(1 - g, 1 - i8)
    check(3 // (g + 1), 3 // (i8 + 1))
    f = up(np.array([1.5, -2.0], np.float32), backend)
    check(f * 2.5, np.array([1.5, -2.0], np.float32) * 2.5)          # stays float32
    check(f + 2, np.array([1.5, -2.0], np.float32) + 2)
    check(f + np.float64(1), np.array([1.5, -2.0], np.float32) + np.float64(1))   # numpy scalars are strong
    b = up(np.array([True, False]), backend)
    check(b + 1, np.array([True, False]) + 1)
    check(b & True, np.array([True, False]) & True)
    u = up(np.array([1, 2], np.uint8), backend)
    check(u + np.int64(300), np.array([1, 2], np.uint8) + np.int64(300))


def test_out_of_range_python_ints(backend):
    g = up(np.array([1, 2, 3], np.int8), backend)
    with pytest.raises(OverflowError, match="Python integer 1000 out of bounds for int8"):
        g + 1000
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        up(np.array([1], np.uint8), backend) + (-1)
    check(g == 300, np.array([1, 2, 3], np.int8) == 300)        # comparisons are exact in numpy 2
    check(g < 300, np.array([1, 2, 3], np.int8) < 300)
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed"):
        g ** -1


# -- bad input -----------------------------------------------------------------------------------------------
def test_shape_mismatch_message_is_numpys(backend):
    a, b = np.ones((2, 3), np.float32), np.ones((4,), np.float32)
    with pytest.raises(ValueError) as numpy_error:
        a + b
    with pytest.raises(ValueError) as ours:
        up(a, backend) + up(b, backend)
    assert str(ours.value) == str(numpy_error.value)
    out = gnp.empty((3,), np.float32, device=backend)
    with pytest.raises(ValueError, match="non-broadcastable output operand with shape \\(3,\\)"):
        np.add(up(a, backend), 1, out=out)


def test_unsupported_dtypes_and_ops_raise_type_error(backend):
    f = up(np.ones(3, np.float32), backend)
    with pytest.raises(TypeError, match=r"gnp.left_shift \(<<\) is not supported for operands of type float32"):
        f << 1
    with pytest.raises(TypeError, match="subtract"):
        up(np.array([True]), backend) - up(np.array([False]), backend)
    c = up(np.ones(3, np.complex64), backend)
    with pytest.raises(TypeError, match=r"gnp.floor_divide \(//\) is not supported for operands of type complex64"):
        c // 1
    with pytest.raises(TypeError, match=r"gnp.remainder \(%\) is not supported for operands of type float32, Python complex"):
        f % 1j
    with pytest.raises(TypeError, match="host \\(numpy\\) array"):
        f + np.ones(3, np.float32)
    with pytest.raises(TypeError, match="host \\(numpy\\) array"):
        np.ones(3, np.float32) + f
    with pytest.raises(TypeError, match="list"):
        f + [1, 2, 3]
    with pytest.raises(TypeError, match="not implemented for device arrays"):
        np.vecdot(f, f)          # (a gufunc gnp does not take over)
    with pytest.raises(TypeError):
        f + "text"


def test_float16_where_the_device_has_none(backend):
    from pygpgpu_core import registry

    from pygpgpu_translate.array_ops._half import stores_half_only

    dev = registry.get_device(backend)
    g = up(np.array([4, 9], np.int8), backend)
    if getattr(dev, "fp16", False) and dev.backend.name == "opencl" or stores_half_only(dev):
        check(gnp.sqrt(g), np.sqrt(np.array([4, 9], np.int8)))     # numpy: float16 (through float32 there)
    else:
        with pytest.raises(TypeError, match="float16"):
            gnp.sqrt(g)


def test_operands_on_different_contexts():
    from conftest import first_device

    dev = first_device("opencl")
    from pygpgpu_opencl import Context

    g = gnp.asarray(np.ones(4, np.float32), device=dev)
    with Context(dev) as other:
        h = gnp.asarray(np.ones(4, np.float32), device=other)
        with pytest.raises(ValueError, match=r"g\.to\(|\.to\("):
            g + h
        with pytest.raises(ValueError, match=r"\.to\("):
            h * 2


def test_warm_path_keeps_numpy_rules(backend):
    """The second call of an operation takes the cached fast path; it must still convert, refuse
    and promote exactly as the first (full) one."""
    i8 = np.array([1, -2, 3], np.int8)
    g = up(i8, backend)
    for _ in range(3):
        check(g + 1, i8 + 1)
        check(g == 3, i8 == 3)
        check(g == 300, i8 == 300)                 # out of range: the full path, exact
        with pytest.raises(OverflowError):
            g + 1000
        check(g * np.int16(2), i8 * np.int16(2))
    f = up(np.array([1.0, 2.0], np.float32), backend)
    for _ in range(3):
        check(f * 2.5, np.array([1.0, 2.0], np.float32) * 2.5)
        with np.errstate(over="ignore"):
            check(f * 1e300, np.array([1.0, 2.0], np.float32) * np.float32(np.inf))
        check(f + 2**40, np.array([1.0, 2.0], np.float32) + 2**40)
    out = gnp.empty((2,), np.float64, device=backend)
    for _ in range(2):
        assert np.add(f, 1.0, out=out) is out
        check(out, np.array([2.0, 3.0]))


def test_warm_path_keeps_the_context_check():
    from conftest import first_device
    from pygpgpu_opencl import Context

    dev = first_device("opencl")
    a = gnp.asarray(np.ones(2, np.float32), device=dev)
    a + a
    with Context(dev) as other:                    # a cached signature never skips the context check
        b = gnp.asarray(np.ones(2, np.float32), device=other)
        with pytest.raises(ValueError, match=r"\.to\("):
            b + b
