"""numpy's functions that take floats apart: ``modf``, ``frexp``, ``ldexp``, ``nextafter`` and
``spacing``, composed of device operations.

``frexp``, ``ldexp`` and ``nextafter`` work on the bit patterns (an integer view of the same
memory: sign, exponent field, mantissa), so they are exact on every backend and for float16 too
(a device that only stores half computes nothing in half here). Subnormals are first scaled into
the normal range by an exact power of two; ``ldexp`` rounds a subnormal result once, by one
multiplication by a normal power of two, as the C library's does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray
from ._dispatch import ops
from ._views import device_operand

__all__ = ["modf", "frexp", "ldexp", "nextafter", "spacing"]


def _u(name: str, *args: Any, dtype: Any = None) -> DeviceArray:
    return ops().ufunc_call(name, args, dtype=dtype)


def _loop_dtype(fn: Any, *operands: Any) -> tuple:
    """The output dtypes numpy's ``fn`` gives for ``operands`` (dtypes of arrays, or Python scalars,
    which stay weak as NEP 50 says); numpy's TypeError where it has no loop."""
    with np.errstate(all="ignore"):
        res = fn(*(np.zeros(0, op) if isinstance(op, np.dtype) else op for op in operands))
    return tuple(np.asarray(r).dtype for r in res) if isinstance(res, tuple) else (np.asarray(res).dtype,)


def _binary(fn: Any, name: str, x1: Any, x2: Any) -> tuple:
    """Both operands as device arrays (a Python scalar uploaded in the loop's type, since numpy
    types it weakly) and the result dtype."""
    from ._creation import asarray
    if not isinstance(x1, DeviceArray) and not isinstance(x2, DeviceArray):
        x1 = device_operand(x1, name)
    device = (x1 if isinstance(x1, DeviceArray) else x2).context
    keys = [x.dtype if isinstance(x, DeviceArray) else x for x in (x1, x2)]
    keys = [asarray(k).dtype if isinstance(k, (list, tuple)) else k for k in keys]
    (dt,) = _loop_dtype(fn, *keys)
    weak = (bool, int, float)

    def up(x: Any, like: np.dtype) -> DeviceArray:
        if isinstance(x, DeviceArray):
            return x
        if isinstance(x, weak) and not isinstance(x, np.generic):
            return asarray(x, dtype=like, device=device)
        return device_operand(x, name, device)
    return up(x1, dt), up(x2, dt if fn is not np.ldexp else np.dtype(np.int64)), dt


def _as(a: DeviceArray, dtype: np.dtype) -> DeviceArray:
    return a if a.dtype == dtype and a.flags.c_contiguous else a.astype(dtype)


def _out(result: DeviceArray, out: Any) -> DeviceArray:
    if out is None:
        return result
    if not isinstance(out, DeviceArray):
        raise TypeError(f"out must be a device array, got {type(out).__name__}")
    out[...] = result
    return out


class _Layout:
    """A float type's bit fields: its same-sized signed integer, mantissa bits and exponent bias."""

    def __init__(self, dtype: np.dtype) -> None:
        info = np.finfo(dtype)
        self.dtype = dtype
        self.int = np.dtype(f"int{dtype.itemsize * 8}")
        self.mant = int(info.nmant)                       # 52, 23, 10
        self.bias = int(info.maxexp) - 1                   # 1023, 127, 15
        self.field = (1 << (dtype.itemsize * 8 - 1 - self.mant)) - 1     # the exponent field's mask
        self.tiny = float(info.smallest_normal)

    def power_of_two(self, k: int) -> Any:
        """2**k as a scalar of this float type (k in the normal range)."""
        return self.dtype.type(2.0 ** k)


def _fields(x: DeviceArray, lay: _Layout) -> tuple:
    """(scaled x, biased exponent field, shift): subnormals scaled by 2**(mant + 2) into the normal
    range, so ``field - shift`` is every finite nonzero number's biased exponent."""
    sub = _u("logical_and", _u("not_equal", x, 0), _u("less", _u("absolute", x), lay.tiny))
    shift = lay.mant + 2
    xs = ops().where(sub, _u("multiply", x, lay.power_of_two(shift)), x)
    xs = _as(xs, lay.dtype)
    bits = xs.view(lay.int)
    field = _u("bitwise_and", _u("right_shift", bits, lay.mant), lay.field)
    field = _u("subtract", field, ops().where(sub, lay.int.type(shift), lay.int.type(0)))
    return xs, bits, field


def _sign_and_mantissa(lay: _Layout) -> Any:
    """The mask of the sign and mantissa bits, as the signed integer of the float's size."""
    full = (1 << (lay.dtype.itemsize * 8)) - 1
    unsigned = np.dtype(f"uint{lay.dtype.itemsize * 8}")
    return np.array(~(lay.field << lay.mant) & full, dtype=unsigned).view(lay.int)[()]


def frexp(x: Any, out1: Any = None, out2: Any = None, *, out: Any = None) -> tuple:
    """``(mantissa, exponent)`` with ``x == mantissa * 2**exponent`` and ``0.5 <= |mantissa| < 1``
    (the exponent int32, as numpy's); zeros, infinities and NaN keep ``x`` with exponent 0."""
    if out is not None:
        out1, out2 = out
    x = device_operand(x, "frexp")
    mdt, edt = _loop_dtype(np.frexp, x.dtype)
    x = _as(x, mdt)
    lay = _Layout(mdt)
    _, bits, field = _fields(x, lay)
    special = _u("logical_or", _u("equal", x, 0), _u("logical_not", _u("isfinite", x)))
    exponent = _u("subtract", field.astype(edt), edt.type(lay.bias - 1))
    mant_bits = _u("bitwise_or", _u("bitwise_and", bits, _sign_and_mantissa(lay)),
                   lay.int.type((lay.bias - 1) << lay.mant))
    mantissa = ops().where(special, x, _as(mant_bits, lay.int).view(mdt))
    exponent = ops().where(special, edt.type(0), exponent)
    return _out(_as(mantissa, mdt), out1), _out(_as(exponent, edt), out2)


def ldexp(x1: Any, x2: Any, out: Any = None) -> DeviceArray:
    """``x1 * 2**x2`` exactly (x2 integers), rounded once where the result is subnormal; inf past
    the largest float and 0 below the smallest, with ``x1``'s sign."""
    from ._views import broadcast_to
    x1, x2, dt = _binary(np.ldexp, "ldexp", x1, x2)
    lay = _Layout(dt)
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    x = _as(broadcast_to(_as(x1, dt), shape), dt)
    i64 = np.dtype(np.int64)
    reach = 4 * (lay.bias + lay.mant + 2)           # past this the result is 0 or inf whatever x is
    n = ops().clip(_as(broadcast_to(x2, shape), i64), -reach, reach)
    _, bits, field = _fields(x, lay)
    # x = m * 2**e with m in [0.5, 1) and e = field - (bias - 1); the result's exponent is e + n
    low = 2 - lay.bias - lay.mant - 3               # m * 2**low rounds to 0 for every m
    e = ops().clip(_u("add", _u("subtract", field.astype(i64), lay.bias - 1), n), low, lay.bias + 2)
    normal = _u("greater_equal", e, 2 - lay.bias)   # m * 2**e >= the smallest normal
    k = lay.mant + 3
    # a normal result: x's exponent field replaced; a smaller one: m * 2**(e + k) (normal), times
    # 2**-k once, so it rounds once
    biased = _u("add", e, ops().where(normal, i64.type(lay.bias - 1), i64.type(lay.bias - 1 + k)))
    field_bits = _u("left_shift", _as(ops().clip(biased, 0, lay.field), lay.int), lay.int.type(lay.mant))
    built = _as(_u("bitwise_or", _u("bitwise_and", bits, _sign_and_mantissa(lay)), field_bits), lay.int).view(dt)
    value = ops().where(normal, built, _u("multiply", built, lay.power_of_two(-k)))
    value = ops().where(_u("greater", e, lay.bias + 1), _u("copysign", dt.type(np.inf), x), value)
    special = _u("logical_or", _u("equal", x, 0), _u("logical_not", _u("isfinite", x)))
    return _out(_as(ops().where(special, x, value), dt), out)


def nextafter(x1: Any, x2: Any, out: Any = None) -> DeviceArray:
    """The next float after ``x1`` towards ``x2`` (``x2`` itself where they are equal; NaN if either is)."""
    from ._views import broadcast_to
    x1, x2, dt = _binary(np.nextafter, "nextafter", x1, x2)
    lay = _Layout(dt)
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    x = _as(broadcast_to(_as(x1, dt), shape), dt)
    y = _as(broadcast_to(_as(x2, dt), shape), dt)
    up = _u("greater", y, x)
    # away from zero the bit pattern's magnitude grows by one, towards zero it shrinks by one
    step = ops().where(_u("equal", _u("greater", x, 0), up), lay.int.type(1), lay.int.type(-1))
    moved = _as(_u("add", x.view(lay.int), step, dtype=lay.int), lay.int).view(dt)
    smallest = dt.type(np.finfo(dt).smallest_subnormal)
    from_zero = ops().where(up, smallest, -smallest)
    r = ops().where(_u("equal", x, 0), from_zero, moved)
    r = ops().where(_u("equal", x, y), y, r)
    r = ops().where(_u("logical_or", _u("isnan", x), _u("isnan", y)), dt.type(np.nan), r)
    return _out(_as(r, dt), out)


def spacing(x: Any, out: Any = None) -> DeviceArray:
    """The distance from ``x`` to the next float away from zero (negative for negative ``x``; NaN for
    infinities and NaN), as numpy's."""
    x = device_operand(x, "spacing")
    (dt,) = _loop_dtype(np.spacing, x.dtype)
    x = _as(x, dt)
    if dt == np.float16:         # numpy's npy_half_spacing steps up whatever the sign
        toward: Any = dt.type(np.inf)
    else:                        # (-0.0 goes up, as numpy's)
        toward = ops().where(_u("less", x, 0), dt.type(-np.inf), dt.type(np.inf))
    r = _u("subtract", nextafter(x, toward), x)
    r = ops().where(_u("isfinite", x), r, dt.type(np.nan))
    return _out(_as(r, dt), out)


def modf(x: Any, out1: Any = None, out2: Any = None, *, out: Any = None) -> tuple:
    """``(fractional part, integral part)``, both with ``x``'s sign; infinities give (±0, ±inf)."""
    if out is not None:
        out1, out2 = out
    x = device_operand(x, "modf")
    dt, _ = _loop_dtype(np.modf, x.dtype)
    x = _as(x, dt)
    whole = _u("trunc", x)
    frac = _u("copysign", ops().where(_u("isinf", x), dt.type(0), _u("subtract", x, whole)), x)
    return _out(_as(frac, dt), out1), _out(whole, out2)
