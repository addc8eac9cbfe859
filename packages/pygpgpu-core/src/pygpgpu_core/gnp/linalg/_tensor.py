"""``tensorsolve`` and ``tensorinv``: :func:`solve` and :func:`inv` of the tensor flattened to a
square matrix, with numpy's shapes and errors."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._array import DeviceArray
from .._views import device_operand
from ._operands import LinAlgError
from ._solve import inv, solve

__all__ = ["tensorsolve", "tensorinv"]


def tensorsolve(a: Any, b: Any, axes: Any = None) -> DeviceArray:
    """x with ``tensordot(a, x, axes=x.ndim) == b``: x has shape ``a.shape[b.ndim:]`` (after moving
    ``axes`` of a to the end); ``prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])`` is required."""
    a = device_operand(a, "linalg.tensorsolve")
    b = device_operand(b, "linalg.tensorsolve", a.device)
    if axes is not None:
        order = [k for k in range(a.ndim) if k not in [operator.index(x) % a.ndim for x in axes]]
        a = a.transpose(*(order + [operator.index(x) % a.ndim for x in axes]))
    shape = a.shape[b.ndim:]
    n = int(np.prod(shape, dtype=np.int64))
    if a.size != n * n:
        raise LinAlgError("Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    return solve(a.reshape(n, n), b.reshape(-1)).reshape(shape)


def tensorinv(a: Any, ind: int = 2) -> DeviceArray:
    """The inverse of ``a`` for :func:`tensordot` over ``ind`` axes: shape ``a.shape[ind:] + a.shape[:ind]``."""
    a = device_operand(a, "linalg.tensorinv")
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    rows = int(np.prod(a.shape[ind:], dtype=np.int64))
    if rows == 0 or a.size % rows:
        raise LinAlgError(f"gnp.linalg.tensorinv: a of shape {a.shape} does not flatten to a square matrix at ind={ind}")
    return inv(a.reshape(rows, a.size // rows)).reshape(a.shape[ind:] + a.shape[:ind])
