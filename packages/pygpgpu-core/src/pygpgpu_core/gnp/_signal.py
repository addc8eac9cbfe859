"""Signal helpers composed of device operations with numpy's formulas: ``correlate`` (a
convolution with the reversed second operand), the windows ``bartlett``, ``hanning``,
``hamming`` and ``blackman``, and ``sinc``."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import arange, ones, zeros
from ._dispatch import ops
from ._views import device_operand

__all__ = ["correlate", "bartlett", "hanning", "hamming", "blackman", "sinc"]


def correlate(a: Any, v: Any, mode: str = "valid") -> DeviceArray:
    """``np.correlate`` of 1-D arrays: ``sum(a[n + k] * conj(v[n]))``, which is the convolution of
    ``a`` with ``v`` conjugated and reversed (numpy's default mode is "valid")."""
    from ._polynomials import convolve
    a, v = device_operand(a, "correlate"), device_operand(v, "correlate")
    if a.ndim == 0 or v.ndim == 0:      # numpy's correlate (unlike its convolve) refuses 0-d operands
        raise ValueError("object of too small depth for desired array")
    if v.size > a.size:     # numpy swaps the operands and reverses the result (an even "same" centres apart)
        swapped = correlate(v, a, mode)
        if swapped.dtype.kind == "c":     # correlate(a, v) is conj(correlate(v, a)) reversed
            swapped = ops().ufunc_call("conjugate", (swapped,))
        return swapped[::-1].copy()
    if v.dtype.kind == "c":              # numpy's sum(a[n + k] * conj(v[n]))
        v = ops().ufunc_call("conjugate", (v,))
    return convolve(a, v[::-1] if v.ndim else v, mode)


def _window(M: Any, device: Any) -> "tuple[DeviceArray | None, int]":
    """numpy's start of every window: ``n = arange(1 - M, M, 2)``; None for the M < 2 cases."""
    M = operator_index(M)
    if M < 2:
        return None, M
    return arange(1 - M, M, 2, device=device), M


def _short(M: int, device: Any) -> DeviceArray:
    # numpy: an empty array for M < 1 and [1.0] for M == 1, float64 (result_type(M, 0.0))
    return zeros(0, np.float64, device) if M < 1 else ones(1, np.float64, device)


def _cosine_term(n: DeviceArray, M: int, factor: float) -> DeviceArray:
    u = ops().ufunc_call
    return u("cos", (u("true_divide", (u("multiply", (factor * np.pi, n)), M - 1)),))


def bartlett(M: Any, *, device: Any = None) -> DeviceArray:
    """The triangular window: ``1 + n/(M-1)`` for n <= 0, ``1 - n/(M-1)`` after."""
    n, M = _window(M, device)
    if n is None:
        return _short(M, device)
    u = ops().ufunc_call
    ratio = u("true_divide", (n, M - 1))
    return ops().where(u("less_equal", (n, 0)), u("add", (1, ratio)), u("subtract", (1, ratio)))


def hanning(M: Any, *, device: Any = None) -> DeviceArray:
    """``0.5 + 0.5 * cos(pi * n / (M - 1))``."""
    n, M = _window(M, device)
    if n is None:
        return _short(M, device)
    u = ops().ufunc_call
    return u("add", (0.5, u("multiply", (0.5, _cosine_term(n, M, 1.0)))))


def hamming(M: Any, *, device: Any = None) -> DeviceArray:
    """``0.54 + 0.46 * cos(pi * n / (M - 1))``."""
    n, M = _window(M, device)
    if n is None:
        return _short(M, device)
    u = ops().ufunc_call
    return u("add", (0.54, u("multiply", (0.46, _cosine_term(n, M, 1.0)))))


def blackman(M: Any, *, device: Any = None) -> DeviceArray:
    """``0.42 + 0.5 * cos(pi * n / (M - 1)) + 0.08 * cos(2 * pi * n / (M - 1))``."""
    n, M = _window(M, device)
    if n is None:
        return _short(M, device)
    u = ops().ufunc_call
    first = u("add", (0.42, u("multiply", (0.5, _cosine_term(n, M, 1.0)))))
    return u("add", (first, u("multiply", (0.08, _cosine_term(n, M, 2.0)))))


def sinc(x: Any) -> DeviceArray:
    """``sin(pi x) / (pi x)``, 1 at 0 (numpy's 1e-20 stand-in for 0 gives 1; it would underflow
    to 0 in float16, so 0 is chosen directly), in x's float type."""
    x = device_operand(x, "sinc")
    u = ops().ufunc_call
    zero = u("equal", (x, 0))
    y = u("multiply", (np.pi, ops().where(zero, 1, x)))
    return ops().where(zero, 1.0, u("true_divide", (u("sin", (y,)), y)))
