"""``linspace`` between array bounds: numpy's own steps (``arange(num) * step + start``, the last
row set to ``stop``), composed of device operations, so the values round as numpy's do."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import arange
from ._dispatch import ops
from ._views import device_operand, moveaxis

__all__: list[str] = []


def _bound(x: Any, device: Any) -> Any:
    """A device array, or a scalar as it is (a Python scalar stays weak, as in numpy's arithmetic)."""
    if isinstance(x, DeviceArray) or np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        return x
    return device_operand(x, "linspace", device)


def linspace_of_arrays(start: Any, stop: Any, num: Any, endpoint: bool, retstep: bool, dtype: Any, axis: int,
                       device: Any) -> Any:
    num = operator_index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if device is None:
        device = next((x.context for x in (start, stop) if isinstance(x, DeviceArray)), None)
    a, b = _bound(start, device), _bound(stop, device)
    div = (num - 1) if endpoint else num
    # numpy's result_type(ensure_inexact=True), Python scalars weak
    dt = np.result_type(*(x.dtype if isinstance(x, DeviceArray) else x for x in (a, b)), 1.0)
    context = next(x.context for x in (a, b) if isinstance(x, DeviceArray))
    delta = ops().ufunc_call("subtract", (b, a), dtype=dt)
    y = arange(0, num, dtype=dt, device=context).reshape((-1,) + (1,) * delta.ndim)
    step = ops().ufunc_call("true_divide", (delta, div)) if div > 0 else None
    if step is None or bool((step == 0).any()):
        y = ops().ufunc_call("multiply", (ops().ufunc_call("true_divide", (y, div)) if div > 0 else y, delta))
    else:
        y = ops().ufunc_call("multiply", (y, step))
    y = ops().ufunc_call("add", (y, a))
    if endpoint and num > 1:
        y[-1, ...] = b
    if axis != 0:
        y = moveaxis(y, 0, axis)
    if dtype is not None and np.issubdtype(dtype, np.integer):
        y = ops().ufunc_call("floor", (y,))
    y = y.astype(dtype if dtype is not None else dt, copy=False)
    if retstep:
        return y, (step if step is not None else np.nan)
    return y
