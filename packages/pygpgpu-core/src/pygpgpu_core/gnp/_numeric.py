"""Small numeric routines composed of device operations with numpy's formulas and types:
``nan_to_num``, ``trapezoid``, ``ediff1d``."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis
from ._dispatch import ops
from ._views import device_operand

__all__ = ["nan_to_num", "trapezoid", "ediff1d"]


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None) -> DeviceArray:
    """NaN replaced by ``nan``, +inf by ``posinf`` (the type's largest finite value by default), -inf
    by ``neginf`` (its most negative); integer and bool arrays are returned as they are (a copy
    unless ``copy`` is False). ``copy=False`` writes into ``x``, as numpy's."""
    x = device_operand(x, "nan_to_num")
    if x.dtype.kind not in "f":
        return x.copy() if copy else x
    info = np.finfo(x.dtype)
    t = x.dtype.type
    u = ops().ufunc_call
    y = x.copy() if copy else x
    def value(v: Any, default: Any) -> Any:
        # a device array of replacements (numpy broadcasts it into x) stays on the device, in x's type
        if isinstance(v, DeviceArray):
            return v.astype(x.dtype, copy=False)
        return t(default if v is None else v)

    big, small = value(posinf, info.max), value(neginf, info.min)
    y[...] = ops().where(u("isnan", (y,)), value(nan, 0.0), y)
    y[...] = ops().where(u("logical_and", (u("isinf", (y,)), u("greater", (y, 0)))), big, y)
    y[...] = ops().where(u("logical_and", (u("isinf", (y,)), u("less", (y, 0)))), small, y)
    return y


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> DeviceArray:
    """The integral by the trapezoidal rule, numpy's ``sum(d * (y[1:] + y[:-1]) / 2.0)`` along ``axis``."""
    y = device_operand(y, "trapezoid")
    axis = _normalize_axis(axis, y.ndim)
    u = ops().ufunc_call

    def part(s: slice) -> DeviceArray:
        return y[(slice(None),) * axis + (s,)]

    if x is None:
        d: Any = dx
    else:
        xs = device_operand(x, "trapezoid")
        from ._differences import diff
        d = diff(xs, axis=-1 if xs.ndim == 1 else axis)
        if xs.ndim == 1:
            d = d.reshape(tuple(-1 if k == axis else 1 for k in range(y.ndim)))
    terms = u("true_divide", (u("multiply", (d, u("add", (part(slice(1, None)), part(slice(None, -1)))))), 2.0))
    return ops().reduce("sum", terms, axis=axis)


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> DeviceArray:
    """Differences of consecutive elements of the flattened array, with ``to_begin`` / ``to_end``
    values around them (cast to the array's type, numpy's same_kind rule)."""
    a = device_operand(ary, "ediff1d").ravel()
    d = ops().ufunc_call("subtract", (a[1:], a[:-1]))
    parts = [_extra(to_begin, a), d, _extra(to_end, a)]
    return ops().concatenate([p for p in parts if p is not None], axis=0)


def _extra(values: Any, a: DeviceArray) -> "DeviceArray | None":
    if values is None:
        return None
    from ._creation import asarray
    dt = values.dtype if isinstance(values, DeviceArray) else np.asarray(values).dtype
    if not np.can_cast(dt, a.dtype, casting="same_kind"):
        raise TypeError("dtype of `to_begin` or `to_end` must be compatible with input `ary` under the `same_kind` "
                        "rule.")
    return asarray(values, dtype=a.dtype, device=a.context).ravel()
