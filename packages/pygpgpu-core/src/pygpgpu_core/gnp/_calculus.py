"""Discrete calculus composed of device operations: ``cumulative_sum`` / ``cumulative_prod``
(numpy 2's array-API scans, with ``include_initial``) and ``gradient`` (numpy's second-order
central differences inside, first- or second-order one-sided differences at the edges, with
uniform spacings or coordinate arrays), computed by numpy's own formulas so values round alike."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis
from ._creation import empty, full
from ._dispatch import ops
from ._views import device_operand, normalize_axes

__all__ = ["cumulative_sum", "cumulative_prod", "gradient"]


def _cumulative(name: str, x: Any, axis: Any, dtype: Any, out: Any, include_initial: bool) -> DeviceArray:
    scan, identity = {"cumulative_sum": ("cumsum", 0), "cumulative_prod": ("cumprod", 1)}[name]
    x = device_operand(x, name)
    if x.ndim == 0:
        x = x.reshape(1)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument is required.")
        axis = 0
    axis = _normalize_axis(axis, x.ndim)
    result = ops().scan(scan, x, axis=axis, dtype=dtype)
    if include_initial:
        shape = x.shape[:axis] + (1,) + x.shape[axis + 1:]
        first = full(shape, identity, result.dtype, x.context)
        result = ops().concatenate([first, result], axis=axis)
    if out is None:
        return result
    out[...] = result
    return out


def cumulative_sum(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                   include_initial: bool = False) -> DeviceArray:
    """``np.cumulative_sum``: ``cumsum`` that needs ``axis`` for more than one dimension and can start
    with the 0 before the first element (``include_initial``)."""
    return _cumulative("cumulative_sum", x, axis, dtype, out, include_initial)


def cumulative_prod(x: Any, /, *, axis: Any = None, dtype: Any = None, out: Any = None,
                    include_initial: bool = False) -> DeviceArray:
    """``np.cumulative_prod``: ``cumprod`` that needs ``axis`` for more than one dimension and can
    start with the 1 before the first element (``include_initial``)."""
    return _cumulative("cumulative_prod", x, axis, dtype, out, include_initial)


def _spacing(d: Any, n: int) -> Any:
    """One axis's spacing as numpy's gradient takes it: a scalar (kept as numpy's strong scalar), or
    the differences of coordinates (one scalar when they are all equal, as numpy checks)."""
    if isinstance(d, DeviceArray) or np.ndim(d):
        coords = device_operand(d, "gradient")
        if coords.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if coords.shape[0] != n:
            raise ValueError("when 1d, distances must match the length of the corresponding dimension")
        if coords.dtype.kind in "iub":
            coords = coords.astype(np.float64)
        diffs = ops().ufunc_call("subtract", (coords[1:], coords[:-1]))
        if bool(ops().reduce("all", ops().ufunc_call("equal", (diffs, diffs[0])))):
            return diffs[0]
        return diffs
    return np.asarray(d)[()]


def _along(axis: int, ndim: int, s: Any) -> tuple:
    return (slice(None),) * axis + (s,) + (slice(None),) * (ndim - axis - 1)


def _shaped(dx: DeviceArray, axis: int, ndim: int) -> DeviceArray:
    """Spacings along ``axis``, shaped to broadcast against the array (numpy's ``shape[axis] = -1``)."""
    return dx.reshape(tuple(-1 if k == axis else 1 for k in range(ndim)))


def _ufunc(name: str, args: tuple) -> Any:
    """``np.<name>`` of device arrays on the device; of host scalars alone (a uniform spacing's
    coefficients) on the host, as numpy computes them there."""
    if any(isinstance(a, DeviceArray) for a in args):
        return ops().ufunc_call(name, args)
    return getattr(np, name)(*args)


def _axis_gradient(f: DeviceArray, out: DeviceArray, axis: int, dx: Any, edge_order: int) -> None:
    u = _ufunc
    nd = f.ndim

    def at(s: Any) -> DeviceArray:
        return f[_along(axis, nd, s)]

    uniform = not (isinstance(dx, DeviceArray) and dx.ndim == 1)
    if uniform:
        out[_along(axis, nd, slice(1, -1))] = u("true_divide", (u("subtract", (at(slice(2, None)), at(slice(None, -2)))),
                                                                u("multiply", (2.0, dx))))
    else:
        dx1, dx2 = dx[:-1], dx[1:]
        a = u("true_divide", (u("negative", (dx2,)), u("multiply", (dx1, u("add", (dx1, dx2))))))
        b = u("true_divide", (u("subtract", (dx2, dx1)), u("multiply", (dx1, dx2))))
        c = u("true_divide", (dx1, u("multiply", (dx2, u("add", (dx1, dx2))))))
        a, b, c = (_shaped(v, axis, nd) for v in (a, b, c))
        out[_along(axis, nd, slice(1, -1))] = u("add", (u("add", (u("multiply", (a, at(slice(None, -2)))),
                                                                  u("multiply", (b, at(slice(1, -1)))))),
                                                        u("multiply", (c, at(slice(2, None))))))
    if edge_order == 1:
        first = dx if uniform else dx[0]
        last = dx if uniform else dx[-1]
        out[_along(axis, nd, 0)] = u("true_divide", (u("subtract", (at(1), at(0))), first))
        out[_along(axis, nd, -1)] = u("true_divide", (u("subtract", (at(-1), at(-2))), last))
        return
    if uniform:
        a, b, c = u("true_divide", (-1.5, dx)), u("true_divide", (2.0, dx)), u("true_divide", (-0.5, dx))
    else:
        dx1, dx2 = dx[0], dx[1]
        a = u("true_divide", (u("negative", (u("add", (u("multiply", (2.0, dx1)), dx2)),)),
                              u("multiply", (dx1, u("add", (dx1, dx2))))))
        b = u("true_divide", (u("add", (dx1, dx2)), u("multiply", (dx1, dx2))))
        c = u("true_divide", (u("negative", (dx1,)), u("multiply", (dx2, u("add", (dx1, dx2))))))
    out[_along(axis, nd, 0)] = u("add", (u("add", (u("multiply", (a, at(0))), u("multiply", (b, at(1))))),
                                         u("multiply", (c, at(2)))))
    if uniform:
        a, b, c = u("true_divide", (0.5, dx)), u("true_divide", (-2.0, dx)), u("true_divide", (1.5, dx))
    else:
        dx1, dx2 = dx[-2], dx[-1]
        a = u("true_divide", (dx2, u("multiply", (dx1, u("add", (dx1, dx2))))))
        b = u("true_divide", (u("negative", (u("add", (dx2, dx1)),)), u("multiply", (dx1, dx2))))
        c = u("true_divide", (u("add", (u("multiply", (2.0, dx2)), dx1)), u("multiply", (dx2, u("add", (dx1, dx2))))))
    out[_along(axis, nd, -1)] = u("add", (u("add", (u("multiply", (a, at(-3))), u("multiply", (b, at(-2))))),
                                          u("multiply", (c, at(-1)))))


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int = 1) -> Any:
    """``np.gradient``: one array per axis (a single array for one axis), of ``f``'s float dtype
    (float64 for integers), by numpy's formulas; spacings as numpy's: none (1), one scalar for all
    axes, or one scalar or coordinate array per axis."""
    f = device_operand(f, "gradient")
    nd = f.ndim
    axes = tuple(range(nd)) if axis is None else normalize_axes(axis, nd)
    n = len(varargs)
    if n == 0:
        spacings: list = [1.0] * len(axes)
    elif n == 1 and np.ndim(varargs[0]) == 0 and not isinstance(varargs[0], DeviceArray):
        spacings = [np.asarray(varargs[0])[()]] * len(axes)
    elif n == len(axes):
        spacings = [_spacing(d, f.shape[ax]) for d, ax in zip(varargs, axes)]
    else:
        raise TypeError("invalid number of arguments")
    edge_order = operator_index(edge_order)
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    if f.dtype.kind in "iub":
        if f.dtype.kind == "b":
            raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the "
                            "`^` operator, or the logical_xor function instead.")
        f = f.astype(np.float64)
    results = []
    for ax, dx in zip(axes, spacings):
        if f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) "
                             "elements are required.")
        out = empty(f.shape, f.dtype, f.context)
        _axis_gradient(f, out, ax, dx, edge_order)
        results.append(out)
    return results[0] if len(axes) == 1 else tuple(results)
