"""numpy 2's array-API names in ``numpy.linalg`` that are gnp's existing operations applied to the
last axes: ``matmul``, ``tensordot``, ``outer`` (1-D only), ``trace`` and ``diagonal`` (of the
last two axes), ``matrix_transpose``, ``vecdot`` and ``cross`` (along ``axis``, default -1)."""
from __future__ import annotations

from typing import Any

from .. import _contractions, _cross, _functions, _products, _shorthands
from .._array import DeviceArray
from .._views import device_operand
from ._operands import ufunc

__all__ = ["matmul", "tensordot", "outer", "trace", "diagonal", "matrix_transpose", "vecdot", "cross"]

matrix_transpose = _shorthands.matrix_transpose


def matmul(x1: Any, x2: Any, /) -> DeviceArray:
    """``x1 @ x2`` (gnp.matmul)."""
    return _functions.matmul(x1, x2)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> DeviceArray:
    """gnp.tensordot with numpy.linalg's keyword-only ``axes``."""
    return _contractions.tensordot(x1, x2, axes)


def outer(x1: Any, x2: Any, /) -> DeviceArray:
    """The outer product of two 1-D arrays (numpy.linalg's ValueError for other dimensions)."""
    x1, x2 = device_operand(x1, "linalg.outer"), device_operand(x2, "linalg.outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim} and x2.ndim={x2.ndim}")
    return _products.outer(x1, x2)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> DeviceArray:
    """The sum of each matrix's diagonal ``offset`` (last two axes)."""
    return _products.trace(device_operand(x, "linalg.trace"), offset, -2, -1, dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> DeviceArray:
    """Each matrix's diagonal ``offset`` (last two axes; a view)."""
    from .._views import diagonal as view_diagonal
    return view_diagonal(device_operand(x, "linalg.diagonal"), offset, -2, -1)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> DeviceArray:
    """The dot product of the vectors along ``axis`` (broadcast over the others), x1 conjugated."""
    x1, x2 = device_operand(x1, "linalg.vecdot"), device_operand(x2, "linalg.vecdot")
    if x1.dtype.kind == "c":
        x1 = ufunc("conjugate", x1)
    return _functions.sum(x1 * x2, axis=axis)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> DeviceArray:
    """The cross product of 3-element vectors along ``axis`` (numpy.linalg's: 3 only)."""
    x1, x2 = device_operand(x1, "linalg.cross"), device_operand(x2, "linalg.cross")
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
                         f"{x1.shape[axis]} and {x2.shape[axis]} dimensional instead.")
    return _cross.cross(x1, x2, axis=axis)
