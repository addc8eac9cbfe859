"""Helpers the ``gnp.linalg`` kernels call so one kernel text serves real and complex matrices:
the real part, imaginary part, conjugate and squared magnitude of an element (for real types
the identity, zero, the identity and ``x * x``)."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["parts", "real_type"]


def _re_c(z):
    return z.real


def _im_c(z):
    return z.imag


def _conj_c(z):
    return z.conjugate()


def _abs2_c(z):
    return z.real * z.real + z.imag * z.imag


def _re_f(x):
    return x


def _im_f(x):
    return x - x


def _conj_f(x):
    return x


def _abs2_f(x):
    return x * x


# (the helpers are untyped on purpose: the translator specialises them per element type)
_PARTS = {"c": {"re": _re_c, "im": _im_c, "conj": _conj_c, "abs2": _abs2_c},
          "f": {"re": _re_f, "im": _im_f, "conj": _conj_f, "abs2": _abs2_f}}


def parts(dtype: np.dtype) -> "dict[str, Any]":
    """The helpers ``re``, ``im``, ``conj``, ``abs2`` for kernels over ``dtype``."""
    return _PARTS[dtype.kind]


def real_type(dtype: np.dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128, the type itself for real types."""
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
