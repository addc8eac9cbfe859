"""``norm`` (with numpy's ord/axis/keepdims rules), ``vector_norm``, ``matrix_norm`` and ``cond``,
built from device reductions; the 2-norms and nuclear norm of matrices from :func:`svd`."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._array import DeviceArray
from .._functions import amax, amin, sum, where
from .._views import device_operand, moveaxis, normalize_axes
from ._decompositions import svd
from ._operands import ufunc


def absolute(x: DeviceArray) -> DeviceArray:
    return ufunc("absolute", x)


def sqrt(x: DeviceArray) -> DeviceArray:
    return ufunc("sqrt", x)


def power(x: DeviceArray, p: float) -> DeviceArray:
    return ufunc("power", x, p)

__all__ = ["norm", "vector_norm", "matrix_norm", "cond"]

_INF = float("inf")


def _float_operand(x: Any) -> DeviceArray:
    x = device_operand(x, "linalg.norm")
    return x if x.dtype.kind in "fc" else x.astype(np.float64)     # numpy: non-inexact types become float


def _magnitudes(x: DeviceArray, ord: Any, matrix: bool) -> DeviceArray:
    """Complex ``x`` as its magnitudes (real, of the matching precision): every norm but the
    matrix 2, -2 and nuclear norms (which take the complex SVD) depends on those alone."""
    if x.dtype.kind != "c" or (matrix and ord in (2, -2, "nuc")):
        return x
    return absolute(x)


def _svd_norm(x: DeviceArray, row: int, col: int, how: Any) -> DeviceArray:
    s = svd(moveaxis(x, (row, col), (-2, -1)), compute_uv=False)
    return how(s, axis=-1)


def _vector(x: DeviceArray, ord: Any, axis: "tuple[int, ...]", keepdims: bool) -> DeviceArray:
    x = _magnitudes(x, ord, False)
    if ord == _INF:
        return amax(absolute(x), axis=axis, keepdims=keepdims)
    if ord == -_INF:
        return amin(absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum((x != 0).astype(x.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(absolute(x), axis=axis, keepdims=keepdims)
    if ord is None or ord == 2:
        return sqrt(sum(x * x, axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    p = float(ord)
    return power(sum(power(absolute(x), p), axis=axis, keepdims=keepdims), 1.0 / p).astype(x.dtype)


def _matrix(x: DeviceArray, ord: Any, row: int, col: int, keepdims: bool) -> DeviceArray:
    if row == col:
        raise ValueError("Duplicate axes given.")
    x = _magnitudes(x, ord, True)
    if ord == 2:
        ret = _svd_norm(x, row, col, amax)
    elif ord == -2:
        ret = _svd_norm(x, row, col, amin)
    elif ord in (1, -1):
        c = col - 1 if col > row else col
        ret = (amax if ord == 1 else amin)(sum(absolute(x), axis=row), axis=c)
    elif ord in (_INF, -_INF):
        r = row - 1 if row > col else row
        ret = (amax if ord == _INF else amin)(sum(absolute(x), axis=col), axis=r)
    elif ord in (None, "fro", "f"):
        ret = sqrt(sum(x * x, axis=(row, col)))
    elif ord == "nuc":
        ret = _svd_norm(x, row, col, sum)
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        ret = ret.reshape(tuple(shape))
    return ret


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> DeviceArray:
    """numpy's ``norm``: vector norms over one axis (ord None/2, inf, -inf, 0, 1, -1, any p),
    matrix norms over two (None/'fro', 'nuc', inf, -inf, 1, -1, 2, -2); with ``axis=None`` the
    2-norm of the flattened array when ``ord`` is None, else by ``x.ndim`` (1: vector, 2: matrix).
    Integers compute in float64, float32 stays float32."""
    x = _float_operand(x)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and x.ndim == 2) or (ord == 2 and x.ndim == 1):
            flat = _magnitudes(x, None, False).reshape(-1)
            ret = sqrt(sum(flat * flat))
            return ret.reshape((1,) * x.ndim) if keepdims else ret
        axes: tuple[int, ...] = tuple(range(x.ndim))
    elif isinstance(axis, tuple):
        axes = tuple(operator.index(a) for a in axis)
    else:
        try:
            axes = (operator.index(axis),)
        except TypeError:
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
    if len(axes) == 1:
        return _vector(x, ord, normalize_axes(axes, x.ndim), keepdims)
    if len(axes) == 2:
        row, col = (a % x.ndim if -x.ndim <= a < x.ndim else normalize_axes((a,), x.ndim)[0] for a in axes)
        return _matrix(x, ord, row, col, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> DeviceArray:
    """numpy 2's ``vector_norm``: ``axis=None`` flattens; any ``ord`` of :func:`norm`'s vector norms."""
    x = _float_operand(x)
    if axis is None:
        ret = _vector(x.reshape(-1), ord, (0,), False)
        return ret.reshape((1,) * x.ndim) if keepdims else ret
    axes = normalize_axes(axis, x.ndim)
    if len(axes) == 1:
        return _vector(x, ord, axes, keepdims)
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    moved = x.transpose(*(rest + axes)).reshape(tuple(x.shape[a] for a in rest) + (-1,))
    ret = _vector(moved, ord, (moved.ndim - 1,), False)
    if keepdims:
        ret = ret.reshape(tuple(1 if a in axes else x.shape[a] for a in range(x.ndim)))
    return ret


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> DeviceArray:
    """numpy 2's ``matrix_norm``: :func:`norm` over the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def cond(x: Any, p: Any = None) -> DeviceArray:
    """The condition number of each matrix: ``s[0] / s[-1]`` for p None/2 (-2: the inverse),
    else ``norm(x, p) * norm(inv(x), p)`` (square matrices); inf for singular matrices, as numpy
    (NaN only where x has NaN)."""
    from .._functions import any as any_of
    from ._operands import LinAlgError, matrix_operand, square_operand
    from ._solve import inv_or_nan
    x = matrix_operand(x, "cond")
    if x.size == 0:
        raise LinAlgError("cond is not defined on empty arrays")
    if p is None or p in (2, -2):
        s = svd(x, compute_uv=False)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
    else:
        x = square_operand(x, "cond")
        r = norm(x, p, axis=(-2, -1)) * norm(inv_or_nan(x), p, axis=(-2, -1))
    undefined = ufunc("logical_and", ufunc("isnan", r), ufunc("logical_not", any_of(ufunc("isnan", x), axis=(-2, -1))))
    return where(undefined, np.inf, r).astype(r.dtype)
