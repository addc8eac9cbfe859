"""Choosing elements by conditions, composed of device operations: ``select`` (nested ``where``),
``compress`` and ``extract`` (the nonzero positions of a condition, gathered), and
``fill_diagonal`` (a strided view of the diagonal, written in place), with numpy's result types."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray, _view
from ._creation import asarray, full
from ._dispatch import ops
from ._views import device_operand

__all__ = ["select", "compress", "extract", "fill_diagonal"]


def _typed(x: Any) -> Any:
    """What numpy's select types a choice by: a Python int/float as itself (weak, NEP 50), anything
    else as an array (its dtype)."""
    if type(x) in (int, float):
        return x
    return x.dtype if isinstance(x, DeviceArray) else np.asarray(x).dtype


def select(condlist: Any, choicelist: Any, default: Any = 0) -> DeviceArray:
    """The choice of the first true condition at each position, ``default`` where none is; numpy's
    type: ``result_type`` of the choices and the default (Python int and float weak, as numpy's)."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    conds = [device_operand(c, "select") for c in condlist]
    for k, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {k} in condlist: should be boolean ndarray")
    dtype = np.result_type(*(_typed(x) for x in list(choicelist) + [default]))
    device = conds[0].context
    choices = [x if isinstance(x, DeviceArray) else asarray(np.asarray(x, dtype=dtype), device=device)
               for x in choicelist]
    shape = np.broadcast_shapes(*(x.shape for x in conds + choices))
    result = full(shape, np.asarray(default, dtype=dtype)[()], dtype, device)
    for cond, choice in zip(conds[::-1], choices[::-1]):
        result = ops().where(cond, choice.astype(dtype, copy=False), result)
    return result


def compress(condition: Any, a: Any, axis: Any = None, out: Any = None) -> DeviceArray:
    """The slices of ``a`` along ``axis`` (of the flattened ``a`` when None) where the 1-D
    ``condition`` is true."""
    a = device_operand(a, "compress")
    cond = device_operand(condition, "compress")
    if cond.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    if axis is None:
        a, axis = a.ravel(), 0
    positions = ops().nonzero(cond)[0]
    return ops().take(a, positions, axis=axis, out=out)


def extract(condition: Any, arr: Any) -> DeviceArray:
    """The elements of the flattened ``arr`` where the flattened ``condition`` is nonzero."""
    arr = device_operand(arr, "extract")
    cond = device_operand(condition, "extract")
    return ops().take(arr.ravel(), ops().nonzero(cond.ravel())[0])


def fill_diagonal(a: DeviceArray, val: Any, wrap: bool = False) -> None:
    """Write ``val`` on the main diagonal of ``a`` in place, as numpy's ``a.flat[::step] = val``: a
    tall matrix's diagonal continues after a blank row with ``wrap``; ``val`` repeats cyclically."""
    if not isinstance(a, DeviceArray):
        raise TypeError("gnp.fill_diagonal fills a device array in place")
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else min(a.size, a.shape[1] * a.shape[1])
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
        end = a.size
    if not a.flags.c_contiguous:
        raise TypeError("gnp.fill_diagonal needs a C-contiguous array (numpy's a.flat order); fill a copy and "
                        "assign it back")
    count = -(-end // step) if end else 0
    diagonal = _view(a, (count,), (step * a.dtype.itemsize,), a.offset)
    if isinstance(val, DeviceArray) or np.ndim(val):
        v = device_operand(val, "fill_diagonal").ravel()
        if v.size != count and v.size:
            v = ops().take(v, asarray(np.arange(count) % v.size, device=a.context))
        diagonal[...] = v
    else:
        diagonal[...] = val
