"""``gnp.cross``: numpy's cross product of (arrays of) 2- and 3-component vectors, composed of
elementwise products of the components in numpy's order (each component array is a view along the
vector axis; the result's components are stacked on the device)."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis
from ._dispatch import ops
from ._views import device_operand, moveaxis

__all__ = ["cross"]


def _mul(x: DeviceArray, y: DeviceArray, dtype: np.dtype) -> DeviceArray:
    return ops().ufunc_call("multiply", (x, y)).astype(dtype, copy=False)

# numpy 2.5 removed the 2-component vectors numpy 2.0 deprecated; gnp answers as the numpy beside it
_TWO_COMPONENTS_REMOVED = np.lib.NumpyVersion(np.__version__) >= "2.5.0.dev0"


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: Any = None) -> DeviceArray:
    """The cross product of the vectors along ``axisa`` of ``a`` and ``axisb`` of ``b`` (both
    ``axis`` when given), broadcast over the other axes; 3-component results along ``axisc``.
    2-component vectors follow the installed numpy: deprecated in numpy 2.0-2.4 (a DeprecationWarning;
    2 x 2 gives the z component alone), a ValueError from numpy 2.5 on."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = device_operand(a, "cross"), device_operand(b, "cross")
    if a.ndim == 0 or b.ndim == 0:
        raise np.exceptions.AxisError(axisa if a.ndim == 0 else axisb, 0)
    a = moveaxis(a, _normalize_axis(axisa, a.ndim), -1)
    b = moveaxis(b, _normalize_axis(axisb, b.ndim), -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if (na == 2 or nb == 2) and _TWO_COMPONENTS_REMOVED:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
                         f"{na} and {nb} dimensional instead.")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional vectors "
                      "instead. (deprecated in NumPy 2.0)", DeprecationWarning, stacklevel=2)
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    if na == 3 or nb == 3:
        _normalize_axis(axisc, len(shape) + 1)          # numpy's AxisError before computing
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype == np.bool_:
        raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` "
                        "operator, or the logical_xor function instead.")
    u = ops().ufunc_call
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    z = u("subtract", (_mul(a0, b1, dtype), _mul(a1, b0, dtype))).astype(dtype, copy=False)
    if na == 2 and nb == 2:
        return ops().copy(z) if z.shape == shape else z
    if na == 2:
        b2 = b[..., 2]
        x, y = _mul(a1, b2, dtype), u("negative", (_mul(a0, b2, dtype),))
    elif nb == 2:
        a2 = a[..., 2]
        x, y = u("negative", (_mul(a2, b1, dtype),)), _mul(a2, b0, dtype)
    else:
        a2, b2 = a[..., 2], b[..., 2]
        x = u("subtract", (_mul(a1, b2, dtype), _mul(a2, b1, dtype)))
        y = u("subtract", (_mul(a2, b0, dtype), _mul(a0, b2, dtype)))
    from ._functions import stack
    from ._views import broadcast_to
    parts = [broadcast_to(c.astype(dtype, copy=False), shape) for c in (x, y, z)]
    return moveaxis(stack(parts, axis=-1), -1, axisc)
