"""``gnp.i0`` (numpy's modified Bessel function of order 0, one device kernel) and the window
built on it, ``gnp.kaiser``, with numpy's formula."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import arange, ones, zeros
from ._dispatch import ops
from ._views import device_operand

__all__ = ["i0", "kaiser"]


def i0(x: Any) -> DeviceArray:
    """The modified Bessel function of the first kind, order 0, of each element (numpy's series)."""
    return ops().bessel_i0(device_operand(x, "i0"))


def kaiser(M: Any, beta: Any, *, device: Any = None) -> DeviceArray:
    """The Kaiser window of ``M`` points: ``i0(beta * sqrt(1 - ((n - alpha) / alpha)**2)) / i0(beta)``
    with ``alpha = (M - 1) / 2`` (float64; empty for M < 1, ``[1.]`` for M == 1)."""
    M = operator_index(M)
    if M < 1:
        return zeros(0, np.float64, device)
    if M == 1:
        return ones(1, np.float64, device)
    u = ops().ufunc_call
    n = arange(0, M, dtype=np.float64, device=device)
    alpha = (M - 1) / 2.0
    ratio = u("true_divide", (u("subtract", (n, alpha)), alpha))
    arg = u("multiply", (float(beta), u("sqrt", (u("subtract", (1.0, u("power", (ratio, 2.0)))),))))
    return u("true_divide", (i0(arg), i0(ones((), np.float64, device) * float(beta))))
