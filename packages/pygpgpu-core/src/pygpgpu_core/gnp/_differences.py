"""``diff``: differences of neighbours along an axis, each order one subtraction of two shifted
views on the device."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis
from ._creation import full
from ._dispatch import ops
from ._functions import concatenate
from ._views import broadcast_to, device_operand

__all__ = ["diff"]


def _edge(values: Any, a: DeviceArray, axis: int) -> DeviceArray:
    """``prepend``/``append`` as numpy takes them: an array, or a scalar spread over ``a``'s
    shape with length 1 along ``axis`` (filled on the device, in the scalar's own numpy type)."""
    shape = a.shape[:axis] + (1,) + a.shape[axis + 1:]
    if isinstance(values, DeviceArray):
        return broadcast_to(values, shape) if values.ndim == 0 else values
    if np.ndim(values):
        device_operand(values, "diff")          # host arrays: the usual TypeError
    return full(shape, values, np.asarray(values).dtype, a.context)


def diff(a: DeviceArray, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> DeviceArray:
    """The ``n``-th differences along ``axis`` (``a[1:] - a[:-1]``, repeated); bool arrays give
    ``a[1:] != a[:-1]`` as numpy's. ``prepend``/``append`` join values at either end first."""
    n = operator_index(n)
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    a = device_operand(a, "diff")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _normalize_axis(axis, a.ndim)
    if prepend is not None or append is not None:
        parts = [_edge(prepend, a, ax)] if prepend is not None else []
        parts.append(a)
        if append is not None:
            parts.append(_edge(append, a, ax))
        a = concatenate(parts, ax)
    later = tuple(slice(1, None) if k == ax else slice(None) for k in range(a.ndim))
    earlier = tuple(slice(None, -1) if k == ax else slice(None) for k in range(a.ndim))
    op = "not_equal" if a.dtype == np.bool_ else "subtract"
    for _ in range(n):
        a = ops().ufunc_call(op, (a[later], a[earlier]))
    return a
