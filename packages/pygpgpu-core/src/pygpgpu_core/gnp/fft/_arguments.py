"""The arguments of ``gnp.fft``'s transforms as numpy reads them: the complex type a transform
computes in (CuPy's: float16/float32/complex64 in single precision, everything else in double),
the scale each ``norm`` asks for, the length ``n`` and ``s``/``axes`` of the N-D transforms, and
the operand along one axis cut or zero-padded to ``n`` as a C-contiguous complex array (the
layout the kernels of ``pygpgpu_translate.array_ops._fft`` take)."""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from .._array import DeviceArray, _normalize_axis
from .._creation import zeros
from .._views import device_operand

__all__ = ["complex_type", "real_type", "scale", "swap_direction", "length", "along", "cook_nd", "operand",
           "operand_on_axis", "into"]

_SWAP_DIRECTION = {"backward": "forward", None: "forward", "ortho": "ortho", "forward": "backward"}


def operand(a: Any, what: str) -> DeviceArray:
    """``a`` as a device array (Python lists and scalars are uploaded; numpy arrays refused)."""
    return device_operand(a, f"fft.{what}")


def complex_type(dtype: np.dtype, what: str) -> np.dtype:
    """The complex dtype a transform of ``dtype`` data computes and returns (CuPy's rule)."""
    if dtype == np.complex64 or dtype in (np.float16, np.float32):
        return np.dtype(np.complex64)
    if dtype.kind in "biufc":
        return np.dtype(np.complex128)
    raise TypeError(f"gnp.fft.{what} takes numeric arrays, got {dtype}")


def real_type(dtype: np.dtype, what: str) -> np.dtype:
    """The float dtype a real transform of real ``dtype`` data computes in (float32 for float16 and
    float32, float64 otherwise; the result is :func:`complex_type`'s)."""
    return np.dtype(np.float32) if complex_type(dtype, what) == np.complex64 else np.dtype(np.float64)


def swap_direction(norm: Any) -> Any:
    """The ``norm`` that gives the same scale in the opposite direction (numpy's hfft/ihfft)."""
    try:
        return _SWAP_DIRECTION[norm]
    except (KeyError, TypeError):
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".') from None


def scale(n: int, norm: Any, forward: bool) -> float:
    """The factor a length-``n`` transform's result is multiplied by for ``norm``."""
    if norm not in _SWAP_DIRECTION:
        swap_direction(norm)                 # (raises numpy's ValueError)
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    divides = norm == "forward" if forward else norm in (None, "backward")
    return 1.0 / n if divides else 1.0


def length(n: Any, default: int) -> int:
    """The transform length ``n`` (``default`` when None), numpy's ValueError below 1."""
    n = default if n is None else operator.index(n)
    if n < 1:
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    return n


def along(a: DeviceArray, axis: Any) -> int:
    """``axis`` of ``a`` as a non-negative index (numpy's AxisError when out of range)."""
    return _normalize_axis(operator.index(axis), a.ndim)


def operand_on_axis(a: DeviceArray, axis: int, n: int, dtype: np.dtype) -> DeviceArray:
    """``a`` cut to its first ``n`` points along ``axis`` or zero-padded to ``n``, in ``dtype``,
    as a C-contiguous array of its own (never a view: the kernels index it flat)."""
    have = a.shape[axis]
    if n < have:
        a = a[(slice(None),) * axis + (slice(0, n),)]
    elif n > have:
        padded = zeros(a.shape[:axis] + (n,) + a.shape[axis + 1:], dtype, a.context)
        padded[(slice(None),) * axis + (slice(0, have),)] = a
        a = padded
    if a.dtype != dtype:
        a = a.astype(dtype)
    if type(a) is not DeviceArray:
        a = a.copy()
    return a


def cook_nd(a: DeviceArray, s: Any, axes: Any, inverse_real: bool = False) -> tuple[list, list]:
    """numpy's ``s`` and ``axes`` of an N-D transform: every axis (or the last ``len(s)``, with
    numpy 2's DeprecationWarning) when ``axes`` is None; ``s`` the axes' lengths when None
    (``irfftn``: ``2 * (m - 1)`` for the last); -1 in ``s`` the axis's own length."""
    shapeless = s is None
    if s is None:
        s = list(a.shape) if axes is None else [a.shape[along(a, ax)] for ax in axes]
    s = list(s)
    if axes is None:
        if not shapeless:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0): pass "
                          "axes explicitly, e.g. [0, ..., k-1] for an array of dimension k", DeprecationWarning,
                          stacklevel=3)
        axes = list(range(-len(s), 0))
    axes = [along(a, ax) for ax in axes]
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if inverse_real and shapeless and axes:
        s[-1] = (a.shape[axes[-1]] - 1) * 2
    if None in s:
        warnings.warn("Passing an array containing `None` values to `s` is deprecated in NumPy 2.0: pass the "
                      "default length of each axis instead, or omit s", DeprecationWarning, stacklevel=3)
    s = [a.shape[ax] if n == -1 else n for n, ax in zip(s, axes)]
    return s, axes


def into(result: DeviceArray, out: Any) -> DeviceArray:
    """``result``, or written into ``out`` (numpy's ``out=``: the same shape) and ``out``."""
    if out is None:
        return result
    if not isinstance(out, DeviceArray):
        raise TypeError(f"out must be a device array, got {type(out).__name__}")
    if out.shape != result.shape:
        raise ValueError(f"output array has wrong shape: {out.shape}, the result's is {result.shape}")
    out[...] = result
    return out
