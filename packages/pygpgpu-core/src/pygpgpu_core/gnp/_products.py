"""Products beyond ``dot`` and ``matmul``: ``outer``, ``inner``, ``kron`` as broadcast
multiplications of views (and a sum for ``inner``), and ``trace``, the sum of a diagonal view."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray
from ._dispatch import ops
from ._functions import dot
from ._views import device_operand, diagonal, expand_dims

__all__ = ["outer", "inner", "kron", "trace"]


def outer(a: DeviceArray, b: DeviceArray, out: Any = None) -> DeviceArray:
    """``a[i] * b[j]`` of the flattened arrays, as an (a.size, b.size) matrix."""
    a, b = device_operand(a, "outer"), device_operand(b, "outer")
    return ops().ufunc_call("multiply", (a.ravel()[:, None], b.ravel()[None, :]), out=out)


def inner(a: Any, b: Any) -> DeviceArray:
    """Sums of products over the last axes: shape ``a.shape[:-1] + b.shape[:-1]`` (a scalar
    operand multiplies elementwise; bools combine with or, as numpy's)."""
    a, b = (device_operand(x, "inner") if isinstance(x, (list, tuple)) else x for x in (a, b))
    if not isinstance(a, DeviceArray) or not isinstance(b, DeviceArray) or a.ndim == 0 or b.ndim == 0:
        return ops().ufunc_call("multiply", (a, b))
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                         f"{b.shape[-1]} (dim {b.ndim - 1})")
    if a.ndim == 1 and b.ndim == 1:
        return dot(a, b)
    # every row of a against every row of b: (a rows..., 1..., k) * (1..., b rows..., k), summed over k
    rows_a = a[(Ellipsis,) + (None,) * (b.ndim - 1) + (slice(None),)]
    rows_b = b[(None,) * (a.ndim - 1) + (Ellipsis,)]
    dt = np.result_type(a.dtype, b.dtype)
    if dt.kind == "b":
        return ops().ufunc_call("logical_and", (rows_a, rows_b)).any(-1)
    return ops().ufunc_call("multiply", (rows_a, rows_b), dtype=dt).sum(-1, dtype=dt)


def kron(a: DeviceArray, b: DeviceArray) -> DeviceArray:
    """The Kronecker product: each element of ``a`` times the whole of ``b``, the blocks laid out
    in ``a``'s shape (one broadcast multiplication of interleaved views)."""
    a, b = device_operand(a, "kron"), device_operand(b, "kron")
    if a.ndim == 0 or b.ndim == 0:
        return ops().ufunc_call("multiply", (a, b))
    nd = max(a.ndim, b.ndim)
    a = expand_dims(a, tuple(range(nd - a.ndim)))
    b = expand_dims(b, tuple(range(nd - b.ndim)))
    spread = ops().ufunc_call("multiply", (expand_dims(a, tuple(range(1, 2 * nd, 2))),
                                           expand_dims(b, tuple(range(0, 2 * nd, 2)))))
    return spread.reshape(tuple(m * n for m, n in zip(a.shape, b.shape)))


def trace(a: DeviceArray, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> DeviceArray:
    """The sum along a diagonal (numpy's sum types: int32 traces are int64)."""
    return diagonal(a, offset, axis1, axis2).sum(-1, dtype=dtype, out=out)
