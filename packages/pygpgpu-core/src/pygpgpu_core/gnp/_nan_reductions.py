"""numpy's NaN-ignoring reductions and scans: NaNs are replaced on the device by the value that cannot
change the result (0 for sums, 1 for products, -inf for maxima...), then the ordinary reduction
runs. Arrays of integers and bools hold no NaN and reduce as they are."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray, check_out_writeable
from ._dispatch import ops
from ._read_warnings import warn_when_read
from ._statistics import count_dtype
from ._functions import where as choose  # (the reductions take a where= argument of their own)
from ._views import device_operand

__all__ = ["nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "nanargmax", "nanargmin",
           "nancumsum", "nancumprod"]


def _replace_nan(a: DeviceArray, value: float, op: str, kinds: str = "fc") -> "tuple[DeviceArray, DeviceArray | None]":
    """``a`` with its NaNs replaced by ``value``, and where they were (None for types without NaN).
    A complex number is NaN where either part is (numpy's isnan); ``kinds``: the dtype kinds
    replaced (the extremes leave complex arrays as they are)."""
    a = device_operand(a, op)
    if a.dtype.kind not in kinds:
        return a, None
    mask = ops().ufunc_call("isnan", (a,))
    return choose(mask, a.dtype.type(value), a), mask


def nansum(a: DeviceArray, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> DeviceArray:
    """The sum, NaNs counted as 0 (an all-NaN slice sums to 0)."""
    filled, _ = _replace_nan(a, 0.0, "nansum")
    return filled.sum(axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)


def nanprod(a: DeviceArray, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, where: Any = None) -> DeviceArray:
    """The product, NaNs counted as 1."""
    filled, _ = _replace_nan(a, 1.0, "nanprod")
    return filled.prod(axis, dtype=dtype, out=out, keepdims=keepdims, initial=initial, where=where)


def nanmean(a: DeviceArray, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
            where: Any = None) -> DeviceArray:
    """The mean of the non-NaN elements: their sum divided by their count (NaN where there are
    none; numpy's RuntimeWarning "Mean of empty slice" comes when the result is read back)."""
    filled, mask = _replace_nan(a, 0.0, "nanmean")
    if mask is None:
        return filled.mean(axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise TypeError("If a is inexact, then dtype must be inexact")
    count = ops().ufunc_call("logical_not", (mask,)).sum(axis, dtype=count_dtype(filled), keepdims=keepdims)
    total = filled.sum(axis, dtype=dtype, out=out, keepdims=keepdims, where=where)
    if count.dtype != np.intp and total.dtype == np.float32:
        # a device without 64-bit integers (nor float64) divides in float32: a count below 2**24 is
        # exact there, and a float32 quotient rounds as numpy's float64 one rounded to float32
        count = count.astype(np.float32)
    # numpy divides in place: the quotient (float64 for a float32 total) is cast back to the total's type
    mean = ops().ufunc_call("true_divide", (total, count), out=total, casting="unsafe")
    return warn_when_read(mean, "Mean of empty slice", ops().ufunc_call("equal", (count, 0)))


def nanvar(a: DeviceArray, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, *, where: Any = None) -> DeviceArray:
    """The variance of the non-NaN elements over their count minus ``ddof`` (NaN where that is
    not positive; numpy's RuntimeWarning comes when the result is read back), in numpy's steps:
    their mean, the squared deviations of the non-NaN elements, and their sum divided by the count."""
    check_out_writeable(out)
    filled, mask = _replace_nan(a, 0.0, "nanvar")
    if mask is None:
        return filled.var(axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where)
    _no_where(where, "nanvar")
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise TypeError("If a is inexact, then dtype must be inexact")
    if out is not None and out.dtype.kind != "f":
        raise TypeError("If a is inexact, then out must be inexact")
    count = ops().ufunc_call("logical_not", (mask,)).sum(axis, dtype=count_dtype(filled), keepdims=True)
    mean = filled.sum(axis, dtype=dtype, keepdims=True)
    ops().ufunc_call("true_divide", (mean, count), out=mean, casting="unsafe")
    # filled is this function's own array: the deviations overwrite it, in its type, as numpy's do
    ops().ufunc_call("subtract", (filled, mean), out=filled, casting="unsafe")
    deviations = choose(mask, filled.dtype.type(0), filled)
    if deviations.dtype.kind == "c":      # numpy: (d * conj(d)).real, the squared magnitude, in the parts' type
        from ._complex_parts import complex_part
        re, im = complex_part(deviations, "real"), complex_part(deviations, "imag")
        squares = ops().ufunc_call("add", (ops().ufunc_call("multiply", (re, re)), ops().ufunc_call("multiply", (im, im))))
    else:
        squares = ops().ufunc_call("multiply", (deviations, deviations))
    variance = squares.sum(axis, dtype=dtype, keepdims=keepdims)
    dof = ops().ufunc_call("subtract", (count.reshape(variance.shape), ddof))
    ops().ufunc_call("true_divide", (variance, dof), out=variance, casting="unsafe")
    degenerate = ops().ufunc_call("less_equal", (dof, 0))
    result = choose(degenerate, variance.dtype.type(np.nan), variance)
    if out is not None:
        out[...] = result
        result = out
    return warn_when_read(result, "Degrees of freedom <= 0 for slice.", degenerate)


def nanstd(a: DeviceArray, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, *, where: Any = None) -> DeviceArray:
    """The square root of :func:`nanvar`."""
    variance = nanvar(a, axis, dtype, out, ddof, keepdims, where=where)
    return ops().ufunc_call("sqrt", (variance,), out=variance)


def _extreme(a: DeviceArray, kind: str, axis: Any, out: Any, keepdims: bool, initial: Any) -> DeviceArray:
    """nanmax / nanmin: the extreme of the non-NaN elements, NaN for a slice of NaNs alone
    (``initial`` for it when given, as numpy's ``fmax.reduce`` gives)."""
    check_out_writeable(out)
    op = f"nan{kind}"
    filled, mask = _replace_nan(a, -np.inf if kind == "max" else np.inf, op, "f")
    if mask is None or initial is not None:
        return getattr(filled, kind)(axis, out=out, keepdims=keepdims, initial=initial)
    result = choose(mask.all(axis, keepdims=keepdims), filled.dtype.type(np.nan),
                    getattr(filled, kind)(axis, keepdims=keepdims))
    if out is not None:
        out[...] = result
        result = out
    return warn_when_read(result, "All-NaN slice encountered")     # NaN there: a slice of NaNs alone


def nanmax(a: DeviceArray, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> DeviceArray:
    """The largest non-NaN element (NaN for a slice of NaNs alone; numpy's RuntimeWarning comes when
    the result is read back)."""
    _no_where(where, "nanmax")
    return _extreme(a, "max", axis, out, keepdims, initial)


def nanmin(a: DeviceArray, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None,
           where: Any = None) -> DeviceArray:
    """The smallest non-NaN element (NaN for a slice of NaNs alone; numpy's RuntimeWarning comes when
    the result is read back)."""
    _no_where(where, "nanmin")
    return _extreme(a, "min", axis, out, keepdims, initial)


def _no_where(where: Any, op: str) -> None:
    if where is not None and where is not True:
        raise TypeError(f"gnp.{op}: where= is not supported on device arrays")


def _arg_extreme(a: DeviceArray, kind: str, axis: Any, out: Any, keepdims: bool) -> DeviceArray:
    """nanargmax / nanargmin: the index of the extreme non-NaN element. A slice of NaNs alone is
    numpy's ValueError, so whether there is one is read back (one bool)."""
    filled, mask = _replace_nan(a, -np.inf if kind == "max" else np.inf, f"nanarg{kind}", "f")
    if mask is not None and mask.size and bool(mask.all(axis).any()):
        raise ValueError("All-NaN slice encountered")
    return getattr(filled, f"arg{kind}")(axis, out=out, keepdims=keepdims)


def nanargmax(a: DeviceArray, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> DeviceArray:
    """The index of the largest non-NaN element (int64; ValueError for a slice of NaNs alone)."""
    return _arg_extreme(a, "max", axis, out, keepdims)


def nanargmin(a: DeviceArray, axis: Any = None, out: Any = None, *, keepdims: bool = False) -> DeviceArray:
    """The index of the smallest non-NaN element (int64; ValueError for a slice of NaNs alone)."""
    return _arg_extreme(a, "min", axis, out, keepdims)


def nancumsum(a: DeviceArray, axis: Any = None, dtype: Any = None, out: Any = None) -> DeviceArray:
    """Running sums with NaNs counted as 0 (flattened when ``axis`` is None)."""
    filled, _ = _replace_nan(a, 0.0, "nancumsum")
    return filled.cumsum(axis, dtype=dtype, out=out)


def nancumprod(a: DeviceArray, axis: Any = None, dtype: Any = None, out: Any = None) -> DeviceArray:
    """Running products with NaNs counted as 1 (flattened when ``axis`` is None)."""
    filled, _ = _replace_nan(a, 1.0, "nancumprod")
    return filled.cumprod(axis, dtype=dtype, out=out)
