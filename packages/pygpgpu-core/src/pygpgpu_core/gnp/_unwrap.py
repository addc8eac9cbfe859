"""``gnp.unwrap``: numpy's phase unwrapping, composed of device operations with numpy's steps
(differences wrapped into [-period/2, period/2), corrections accumulated along the axis)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis
from ._dispatch import ops
from ._views import device_operand

__all__ = ["unwrap"]


def unwrap(p: Any, discont: Any = None, axis: int = -1, *, period: Any = 2 * np.pi) -> DeviceArray:
    """``p`` with jumps larger than ``discont`` (``period / 2`` by default) along ``axis`` replaced by
    their complement modulo ``period``."""
    from ._differences import diff

    p = device_operand(p, "unwrap")
    ax = _normalize_axis(axis, p.ndim)
    u = ops().ufunc_call
    dd = diff(p, axis=ax)
    if discont is None:
        discont = period / 2
    dtype = np.result_type(dd.dtype, np.asarray(period).dtype if isinstance(period, (np.generic, np.ndarray))
                           else period)
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = u("add", (u("remainder", (u("subtract", (dd, interval_low)), period)), interval_low))
    if boundary_ambiguous:      # numpy maps -period/2 to +period/2 where the step went up
        at_low = u("logical_and", (u("equal", (ddmod, interval_low)), u("greater", (dd, 0))))
        ddmod = ops().where(at_low, np.asarray(interval_high, dtype=ddmod.dtype)[()], ddmod)
    correction = u("subtract", (ddmod, dd))
    correction = ops().where(u("less", (u("absolute", (dd,)), discont)), np.asarray(0, correction.dtype)[()],
                             correction)
    up = p.astype(dtype, copy=True)
    tail = (slice(None),) * ax + (slice(1, None),)
    if p.shape[ax] > 1:
        up[tail] = u("add", (p[tail], ops().scan("cumsum", correction, axis=ax)))
    return up
