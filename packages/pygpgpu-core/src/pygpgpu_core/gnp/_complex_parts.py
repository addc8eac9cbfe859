"""The parts of numbers that numpy defines for every dtype: ``real``, ``imag`` and ``angle`` (and
``conj``/``conjugate``, which are ufuncs in :mod:`._functions`).

For a complex array, ``real`` and ``imag`` are numpy's: views of the same memory (the parts are
interleaved, so each is a strided float view, writable where the array is). For a real array,
``real`` is the array itself and ``imag`` read-only zeros, as numpy's."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray, DeviceArrayView
from ._creation import zeros
from ._dispatch import ops
from ._views import device_operand

__all__ = ["real", "imag", "angle", "sort_complex", "real_if_close"]      # (complex_part: internal)


def complex_part(a: DeviceArray, which: str) -> DeviceArrayView:
    """The real (``which`` "real") or imaginary part of complex ``a`` as a view of its memory."""
    part = np.dtype(np.float32) if a.dtype == np.complex64 else np.dtype(np.float64)
    offset = a.offset + (part.itemsize if which == "imag" else 0)
    return DeviceArrayView._make(a, a.shape, part, a.strides, offset)


def real(val: Any) -> DeviceArray:
    """The real part: a view for a complex array; a real array itself (numpy's ``a.real`` is ``a``)."""
    a = device_operand(val, "real")
    return complex_part(a, "real") if a.dtype.kind == "c" else a


def imag(val: Any) -> DeviceArray:
    """The imaginary part: a view for a complex array; zeros of the array's shape and dtype for a
    real one (as numpy's, read-only, since numpy's ``a.imag`` of a real array cannot be written)."""
    a = device_operand(val, "imag")
    if a.dtype.kind == "c":
        return complex_part(a, "imag")
    out = zeros(a.shape, a.dtype, a.context)
    out._readonly = True
    return out


def angle(z: Any, deg: bool = False) -> DeviceArray:
    """The counterclockwise angle from the positive real axis: numpy's ``arctan2(z.imag, z.real)``
    (for real ``z`` ``arctan2(0, z)``: 0 for positive numbers and +0.0, pi for negative ones and
    -0.0), in degrees with ``deg``."""
    a = device_operand(z, "angle")
    if a.dtype.kind == "c":
        a = ops().ufunc_call("arctan2", (complex_part(a, "imag"), complex_part(a, "real")))
    else:
        a = ops().ufunc_call("arctan2", (0, a))
    if deg:
        a = ops().ufunc_call("multiply", (a, 180 / np.pi))
    return a


def sort_complex(a: Any) -> DeviceArray:
    """numpy's ``sort_complex``: sorted along the last axis in numpy's complex order, as complex
    (complex64 for int8/uint8/int16/uint16 input, complex128 for the other real types)."""
    a = device_operand(a, "sort_complex")
    if a.dtype.kind != "c":
        a = a.astype(np.complex64 if a.dtype.kind in "iu" and a.dtype.itemsize <= 2 else np.complex128)
    return ops().sort(a)


def real_if_close(a: Any, tol: float = 100) -> DeviceArray:
    """numpy's ``real_if_close``: the real part when every imaginary part is within ``tol``
    machine epsilons of zero (an absolute tolerance when ``tol`` < 1), else ``a``. Reads back one bool."""
    a = device_operand(a, "real_if_close")
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = float(np.finfo(a.dtype).eps) * tol
    small = ops().reduce("all", ops().ufunc_call("less", (ops().ufunc_call("absolute", (complex_part(a, "imag"),)),
                                                          tol)))
    return complex_part(a, "real").copy() if bool(small) else a
