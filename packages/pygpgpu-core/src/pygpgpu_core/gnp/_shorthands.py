"""numpy functions that are other gnp functions under numpy's newer or older names, or one line of
them (``concat``, ``permute_dims``, ``row_stack``, ``flatnonzero``, ``isposinf``...): numpy's
parameters and results, no kernels of their own."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis
from ._creation import asarray, ones, zeros
from ._dispatch import ops
from ._functions import concatenate
from ._joining import vstack
from ._patterns import diag
from ._views import device_operand, swapaxes

__all__ = ["concat", "permute_dims", "matrix_transpose", "row_stack", "asanyarray", "asfortranarray", "isfortran",
           "iscomplexobj", "isrealobj", "iscomplex", "isreal", "isposinf", "isneginf", "flatnonzero", "argwhere",
           "fix", "divmod", "array_equiv", "diagflat", "rollaxis", "may_share_memory", "asarray_chkfinite", "require"]


# numpy 2's np.concat is np.concatenate itself
concat = concatenate


def permute_dims(a: Any, /, axes: Any = None) -> DeviceArray:
    """The array API's ``transpose`` (a view)."""
    return device_operand(a, "permute_dims").transpose(axes)


def matrix_transpose(x: Any, /) -> DeviceArray:
    """The last two axes swapped (a view); numpy's ValueError below two dimensions."""
    x = device_operand(x, "matrix_transpose")
    if x.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {x.ndim}")
    return swapaxes(x, -1, -2)


def row_stack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> DeviceArray:
    """numpy's older name of ``vstack`` (deprecated in numpy 2.0: numpy's DeprecationWarning)."""
    import warnings
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.", DeprecationWarning, stacklevel=2)
    return vstack(tup, dtype=dtype, casting=casting)


def asanyarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None) -> DeviceArray:
    """``asarray`` (device arrays have no subclasses to keep)."""
    return asarray(a, dtype=dtype, device=device, order=order)


def asfortranarray(a: Any, dtype: Any = None, *, device: Any = None) -> DeviceArray:
    """A Fortran-ordered device array (a copy unless ``a`` is one already)."""
    return asarray(a, dtype=dtype, device=device, order="F")


def isfortran(a: DeviceArray) -> bool:
    """Whether ``a`` is Fortran-contiguous and not C-contiguous (numpy's rule)."""
    return bool(a.flags.f_contiguous and not a.flags.c_contiguous)


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (only its dtype is looked at, as numpy)."""
    dt = x.dtype if isinstance(x, DeviceArray) else np.asarray(x).dtype
    return dt.kind == "c"


def isrealobj(x: Any) -> bool:
    return not iscomplexobj(x)


def iscomplex(x: Any) -> DeviceArray:
    """Elementwise: a nonzero imaginary part (all False for real dtypes)."""
    x = device_operand(x, "iscomplex")
    if x.dtype.kind == "c":
        return ops().ufunc_call("not_equal", (x.imag, 0))
    return zeros(x.shape, bool, x.context)


def isreal(x: Any) -> DeviceArray:
    """Elementwise: a zero imaginary part (all True for real dtypes)."""
    x = device_operand(x, "isreal")
    if x.dtype.kind == "c":
        return ops().ufunc_call("equal", (x.imag, 0))
    return ones(x.shape, bool, x.context)


def _infinity(x: Any, sign: str, op: str, out: Any) -> DeviceArray:
    x = device_operand(x, op)
    return ops().ufunc_call("logical_and", (ops().ufunc_call("isinf", (x,)), ops().ufunc_call(sign, (x, 0))), out=out)


def isposinf(x: Any, out: Any = None) -> DeviceArray:
    """Elementwise ``x == +inf`` (False for integers and NaN)."""
    return _infinity(x, "greater", "isposinf", out)


def isneginf(x: Any, out: Any = None) -> DeviceArray:
    """Elementwise ``x == -inf`` (False for integers and NaN)."""
    return _infinity(x, "less", "isneginf", out)


def flatnonzero(a: Any) -> DeviceArray:
    """Indices of the nonzero elements of the flattened array."""
    return ops().nonzero(device_operand(a, "flatnonzero").ravel())[0]


def argwhere(a: Any) -> DeviceArray:
    """The indices of the nonzero elements, one row each: shape (count, a.ndim), as numpy's."""
    a = device_operand(a, "argwhere")
    if a.ndim == 0:       # numpy's: a 0-d array is taken as 1-D, then its one index column dropped
        return argwhere(a.reshape(1))[:, :0]
    return ops().stack(ops().nonzero(a), axis=1)


def fix(x: Any, out: Any = None) -> DeviceArray:
    """Round toward zero (numpy's ``fix`` is ``trunc`` in values and types: integers stay integers)."""
    return ops().ufunc_call("trunc", (device_operand(x, "fix"),), out=out)


def divmod(x1: Any, x2: Any, out1: Any = None, out2: Any = None, /, *, out: Any = None) -> tuple[DeviceArray, DeviceArray]:
    """``(floor_divide(x1, x2), remainder(x1, x2))``, as numpy's two-output ufunc (``out`` a pair)."""
    from ._functions import ufunc_operands
    if out is not None:
        out1, out2 = out
    x1, x2 = ufunc_operands((x1, x2), out1)
    return (ops().ufunc_call("floor_divide", (x1, x2), out=out1),
            ops().ufunc_call("remainder", (x1, x2), out=out2))


def array_equiv(a1: Any, a2: Any) -> bool:
    """Whether the arrays broadcast to one shape and are equal there (one bool read back)."""
    a1, a2 = device_operand(a1, "array_equiv"), device_operand(a2, "array_equiv")
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return False
    return bool(ops().reduce("all", ops().ufunc_call("equal", (a1, a2))))


def diagflat(v: Any, k: int = 0) -> DeviceArray:
    """A square matrix with the flattened ``v`` on diagonal ``k``."""
    return diag(device_operand(v, "diagflat").ravel(), k)


def rollaxis(a: Any, axis: int, start: int = 0) -> DeviceArray:
    """numpy's older ``moveaxis``: ``axis`` moved to before position ``start`` (a view)."""
    a = device_operand(a, "rollaxis")
    n = a.ndim
    axis = _normalize_axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    axes = [k for k in range(n) if k != axis]
    axes.insert(start, axis)
    return a.transpose(axes)


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Whether ``a`` and ``b`` are views of one allocation whose byte ranges overlap (numpy's
    bounds check: True may still mean no element is shared)."""
    if not isinstance(a, DeviceArray) or not isinstance(b, DeviceArray):
        return False
    if a.buffer is not b.buffer:
        return False
    (lo1, hi1), (lo2, hi2) = _span(a), _span(b)
    return lo1 < hi2 and lo2 < hi1


def _span(a: DeviceArray) -> tuple[int, int]:
    """The bytes ``a`` can touch, [first, last + itemsize)."""
    if a.size == 0:
        return a.offset, a.offset
    low = high = a.offset
    for n, s in zip(a.shape, a.strides):
        if s > 0:
            high += (n - 1) * s
        else:
            low += (n - 1) * s
    return low, high + a.dtype.itemsize


def asarray_chkfinite(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None) -> DeviceArray:
    """:func:`asarray`, with numpy's ValueError when a float array holds an infinity or NaN (one
    bool read back)."""
    out = asarray(a, dtype=dtype, device=device, order=order)
    if out.dtype.kind == "f" and not bool(ops().reduce("all", ops().ufunc_call("isfinite", (out,)))):
        raise ValueError("array must not contain infs or NaNs")
    return out


_REQUIREMENTS = {"C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F", "FORTRAN": "F",
                 "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O", "OWNDATA": "O", "E": "E",
                 "ENSUREARRAY": "E"}


def require(a: Any, dtype: Any = None, requirements: Any = None, *, device: Any = None) -> DeviceArray:
    """A device array of ``dtype`` that meets numpy's flag requirements: C or F contiguous,
    writeable, owning its data (a copy where ``a`` does not already); aligned always holds."""
    wanted = set()
    for r in ([requirements] if isinstance(requirements, str) else requirements or []):
        key = _REQUIREMENTS.get(str(r).upper())
        if key is None:
            raise KeyError(f"Unknown requirement {r!r}")
        wanted.add(key)
    if {"C", "F"} <= wanted:
        raise ValueError("Cannot specify both 'C' and 'F' order")
    out = asarray(a, dtype=dtype, device=device)
    if "C" in wanted and not out.flags.c_contiguous:
        out = out.copy()
    elif "F" in wanted and not out.flags.f_contiguous:
        out = asarray(out, order="F")
    if ("W" in wanted and not out.flags.writeable) or ("O" in wanted and not out.flags.owndata):
        fortran = "F" in wanted or out.flags.f_contiguous and not out.flags.c_contiguous
        out = out.copy("F" if fortran else "C")      # (numpy's copy keeps a Fortran array's order)
    return out
