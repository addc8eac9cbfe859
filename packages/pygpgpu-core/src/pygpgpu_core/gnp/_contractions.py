"""Sums of products over several axes and the statistics built on them: ``tensordot`` (the
contracted axes moved together, reshaped to one matrix product), ``cov`` and ``corrcoef``
(numpy's centred products over n - ddof; without frequency or analytic weights)."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._dispatch import ops
from ._views import device_operand

__all__ = ["tensordot", "cov", "corrcoef"]


def _axis_lists(axes: Any, a: DeviceArray, b: DeviceArray) -> tuple[list[int], list[int]]:
    try:
        first, second = axes
        first = [operator_index(first)] if np.ndim(first) == 0 else [operator_index(k) for k in first]
        second = [operator_index(second)] if np.ndim(second) == 0 else [operator_index(k) for k in second]
    except TypeError:
        n = operator_index(axes)
        first, second = list(range(a.ndim - n, a.ndim)), list(range(n))
    if len(first) != len(second):
        raise ValueError("shape-mismatch for sum")
    first = [k + a.ndim if k < 0 else k for k in first]
    second = [k + b.ndim if k < 0 else k for k in second]
    for i, j in zip(first, second):
        if a.shape[i] != b.shape[j]:
            raise ValueError("shape-mismatch for sum")
    return first, second


def tensordot(a: Any, b: Any, axes: Any = 2) -> DeviceArray:
    """Sum of products over ``a``'s axes ``axes[0]`` and ``b``'s ``axes[1]`` (or the last ``axes``
    of ``a`` with the first of ``b``): ``a``'s other axes, then ``b``'s, in numpy's result type."""
    a, b = device_operand(a, "tensordot"), device_operand(b, "tensordot")
    sum_a, sum_b = _axis_lists(axes, a, b)
    keep_a = [k for k in range(a.ndim) if k not in sum_a]
    keep_b = [k for k in range(b.ndim) if k not in sum_b]
    inner = 1
    for k in sum_a:
        inner *= a.shape[k]
    rows = 1
    for k in keep_a:
        rows *= a.shape[k]
    cols = 1
    for k in keep_b:
        cols *= b.shape[k]
    left = a.transpose(keep_a + sum_a).reshape(rows, inner)
    right = b.transpose(sum_b + keep_b).reshape(inner, cols)
    product = ops().dot(left, right)
    return product.reshape(tuple(a.shape[k] for k in keep_a) + tuple(b.shape[k] for k in keep_b))


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None, fweights: Any = None,
        aweights: Any = None, *, dtype: Any = None) -> DeviceArray:
    """The covariance matrix of the variables (rows, or columns with ``rowvar=False``): centred
    products summed and divided by n - 1 (n with ``bias``, n - ``ddof`` when given)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("gnp.cov does not take fweights or aweights yet; compute np.cov on a host copy "
                                  "(g.get()) for weighted covariances")
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = device_operand(m, "cov")
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(m.dtype, np.float64) if y is None else \
            np.result_type(m.dtype, device_operand(y, "cov").dtype, np.float64)
    mean_dt = np.result_type(dtype, np.float64) if np.dtype(dtype).kind in "biu" else np.dtype(dtype)
    if not np.can_cast(mean_dt, dtype, "same_kind"):     # numpy centres in place: X -= mean
        raise TypeError(f"Cannot cast ufunc 'subtract' output from {mean_dt!r} to {np.dtype(dtype)!r} with casting "
                        "rule 'same_kind'")
    X = (m.reshape(1, -1) if m.ndim < 2 else m).astype(dtype)
    if not rowvar and X.shape[0] != 1:
        X = X.T
    if y is not None:
        yy = device_operand(y, "cov")
        if yy.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        Y = (yy.reshape(1, -1) if yy.ndim < 2 else yy).astype(dtype)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        X = ops().concatenate([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = X.shape[1]
    fact = max(n - int(ddof), 0)
    if fact <= 0:                   # numpy's warning (the shapes alone decide it: nothing is read back)
        import warnings
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
    centred = ops().ufunc_call("subtract", (X, ops().reduce("mean", X, axis=1, keepdims=True)))
    c = ops().dot(centred, centred.T.copy())
    c = ops().ufunc_call("true_divide", (c, float(fact)))
    return c.reshape(()) if c.shape == (1, 1) else c


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> DeviceArray:
    """Pearson correlation coefficients: ``cov`` over the outer product of the standard deviations,
    clipped to [-1, 1] as numpy's."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return ops().ufunc_call("true_divide", (c, c))
    stddev = ops().ufunc_call("sqrt", (c.diagonal(),))
    c = ops().ufunc_call("true_divide", (c, stddev[:, None]))
    c = ops().ufunc_call("true_divide", (c, stddev[None, :]))
    return ops().clip(c, -1, 1)
