"""numpy's stacking functions, each a :func:`concatenate` (device copies into slices of the
result) of views that give the inputs the axes numpy gives them first."""
from __future__ import annotations

from typing import Any

from ._array import DeviceArray
from ._functions import concatenate
from ._views import atleast_1d, atleast_2d, atleast_3d, device_operand

__all__ = ["vstack", "hstack", "column_stack", "dstack", "append"]


def _as_tuple(arrays: Any) -> tuple:
    """What ``atleast_*d`` gave: one array for one input, a tuple for several."""
    return arrays if isinstance(arrays, tuple) else (arrays,)


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> DeviceArray:
    """Rows after rows: 1-D arrays become rows, then join along axis 0."""
    return concatenate(_as_tuple(atleast_2d(*tup)), 0, dtype=dtype, casting=casting)


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> DeviceArray:
    """Side by side: along axis 1, or end to end (axis 0) for 1-D arrays."""
    arrays = _as_tuple(atleast_1d(*tup))
    return concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def column_stack(tup: Any) -> DeviceArray:
    """1-D arrays as the columns of a 2-D array (2-D arrays join as they are), along axis 1."""
    columns = []
    for a in tup:
        a = device_operand(a, "column_stack")
        columns.append(atleast_2d(a).T if a.ndim < 2 else a)
    return concatenate(columns, 1)


def dstack(tup: Any) -> DeviceArray:
    """Along the third axis, after making every array at least 3-D ((m, n) becomes (m, n, 1))."""
    return concatenate(_as_tuple(atleast_3d(*tup)), 2)


def append(arr: DeviceArray, values: DeviceArray, axis: Any = None) -> DeviceArray:
    """``values`` after ``arr`` along ``axis`` (both flattened when None), in a new array."""
    arr, values = device_operand(arr, "append"), device_operand(values, "append")
    if axis is None:
        arr, values = arr.ravel(), values.ravel()
        axis = arr.ndim - 1
    return concatenate((arr, values), axis)
