"""Polynomials and sequences of products: ``convolve`` (a device kernel), ``vander`` (columns of
powers, numpy's running products) and ``polyval`` (Horner's rule, numpy's steps and types)."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import empty, zeros_like
from ._dispatch import ops
from ._views import device_operand

__all__ = ["convolve", "vander", "polyval", "polyadd", "polysub", "polymul"]


def convolve(a: Any, v: Any, mode: str = "full") -> DeviceArray:
    """``np.convolve`` of two 1-D arrays (the shorter slides over the longer), numpy's result type."""
    a, v = device_operand(a, "convolve"), device_operand(v, "convolve")
    return ops().convolve(a.reshape(-1) if a.ndim == 0 else a, v.reshape(-1) if v.ndim == 0 else v, mode)


def vander(x: Any, N: "int | None" = None, increasing: bool = False) -> DeviceArray:
    """``np.vander``: columns ``x**(N-1) ... x**0`` (reversed with ``increasing``), each the
    previous times ``x`` as numpy builds them, in ``promote_types(x.dtype, int)``."""
    x = device_operand(x, "vander")
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    N = x.shape[0] if N is None else operator_index(N)
    v = empty((x.shape[0], N), np.promote_types(x.dtype, int), x.context)
    tmp = v if increasing else v[:, ::-1]
    if N > 0:
        tmp[:, 0] = 1
    if N > 1:
        tmp[:, 1:] = x[:, None]
        tmp[:, 1:] = ops().scan("cumprod", tmp[:, 1:], axis=1)
    return v


def polyval(p: Any, x: Any) -> DeviceArray:
    """``np.polyval``: ``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule from ``zeros_like(x)``,
    each coefficient a strong scalar of ``p``'s type as numpy's loop over ``p`` gives them."""
    if isinstance(p, DeviceArray):
        coefficients = [p[k] for k in range(p.shape[0])] if p.ndim else [p]
    else:
        host = np.asarray(p)
        if host.dtype.kind not in "biuf":
            raise TypeError(f"gnp.polyval takes real coefficients, got {host.dtype}")
        coefficients = list(host.reshape(-1))
    x = device_operand(x, "polyval")
    y = zeros_like(x)
    for c in coefficients:
        y = ops().ufunc_call("add", (ops().ufunc_call("multiply", (y, x)), c))
    return y


def _coefficients(p: Any) -> DeviceArray:
    p = device_operand(p, "polynomial")
    return p.reshape(1) if p.ndim == 0 else p


def _aligned(a1: Any, a2: Any) -> tuple[DeviceArray, DeviceArray]:
    """Both coefficient vectors, the shorter padded with leading zeros (highest power first)."""
    from ._joining import append
    from ._creation import zeros
    a1, a2 = _coefficients(a1), _coefficients(a2)
    diff = a1.shape[0] - a2.shape[0]
    if diff > 0:
        a2 = append(zeros(diff, a2.dtype, a2.context), a2)
    elif diff < 0:
        a1 = append(zeros(-diff, a1.dtype, a1.context), a1)
    return a1, a2


def polyadd(a1: Any, a2: Any) -> DeviceArray:
    """The sum of two polynomials' coefficient vectors (highest power first)."""
    a1, a2 = _aligned(a1, a2)
    return ops().ufunc_call("add", (a1, a2))


def polysub(a1: Any, a2: Any) -> DeviceArray:
    """The difference of two polynomials' coefficient vectors (highest power first)."""
    a1, a2 = _aligned(a1, a2)
    return ops().ufunc_call("subtract", (a1, a2))


def polymul(a1: Any, a2: Any) -> DeviceArray:
    """The product of two polynomials: the convolution of their coefficients."""
    return convolve(_coefficients(a1), _coefficients(a2))
