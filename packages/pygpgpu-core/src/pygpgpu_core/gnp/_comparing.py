"""Whole-array comparisons as numpy computes them: ``isclose`` elementwise on the device, and
``allclose`` / ``array_equal``, which reduce that on the device and read back the one bool
numpy returns."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray
from ._dispatch import ops
from ._views import device_operand

__all__ = ["isclose", "allclose", "array_equal"]


def _ufunc(name: str, *inputs: Any) -> Any:
    """ufunc ``name`` on the device, or numpy's own when its inputs are scalars alone (``b``'s
    bound in ``isclose(g, 3.0)``: numpy's scalar result, typed as numpy types it)."""
    if any(isinstance(x, DeviceArray) for x in inputs):
        return ops().ufunc_call(name, inputs)
    return getattr(np, name)(*inputs)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> DeviceArray:
    """``|a - b| <= atol + rtol * |b|`` with ``b`` finite, or ``a == b`` (so equal infinities are
    close); NaNs are close to each other only with ``equal_nan``. As numpy does, ``b`` is made a
    float type first (``|b|`` of the most negative integer would overflow)."""
    from ._functions import ufunc_operands
    a, b = ufunc_operands((a, b))     # lists uploaded; with no device array, a becomes one (as numpy's array)
    if not isinstance(a, DeviceArray) and not isinstance(b, DeviceArray):
        raise TypeError("gnp.isclose: one of a and b must be a device array (upload host data with gnp.asarray)")
    if isinstance(b, DeviceArray):
        b = b.astype(np.result_type(b.dtype, 1.0), copy=False)
    elif isinstance(b, (np.generic, np.ndarray)):
        b = np.asarray(b, dtype=np.result_type(b, 1.0))
    elif type(b) is int:
        b = float(b)
    # numpy's expression, operators and all: Python scalars stay weak in abs(), + and *
    near = _ufunc("less_equal", abs(a - b), atol + rtol * abs(b)) & _ufunc("isfinite", b)
    result = near | _ufunc("equal", a, b)
    if equal_nan:
        result = result | (_ufunc("isnan", a) & _ufunc("isnan", b))
    return result


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> bool:
    """Whether :func:`isclose` holds everywhere (a Python bool, as numpy returns)."""
    return bool(isclose(a, b, rtol, atol, equal_nan).all())


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    """Whether the arrays have one shape and equal elements (NaNs equal to NaNs with
    ``equal_nan``); a Python bool, as numpy returns."""
    a1, a2 = device_operand(a1, "array_equal"), device_operand(a2, "array_equal")
    if a1.shape != a2.shape:
        return False
    equal = _ufunc("equal", a1, a2)
    if equal_nan:
        equal = _ufunc("logical_or", equal, _ufunc("logical_and", _ufunc("isnan", a1), _ufunc("isnan", a2)))
    return bool(equal.all())
