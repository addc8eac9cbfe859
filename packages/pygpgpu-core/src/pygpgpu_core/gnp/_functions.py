"""The numpy-named functions of ``pygpgpu.numpy`` (``gnp.sqrt``, ``gnp.sum``, ``gnp.sort``...).

Each one forwards to the operations provider (:mod:`._dispatch`, normally
``pygpgpu_translate.array_ops``), which runs it on the device of its array arguments; with no
translator installed they raise ``OperationsUnavailable`` saying what to install.
"""
from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ._dispatch import ops

if TYPE_CHECKING:
    from ._array import DeviceArray

# numpy ufuncs computed elementwise on the device (the names are numpy's)
UFUNC_NAMES = (
    "add", "subtract", "multiply", "true_divide", "divide", "floor_divide", "remainder", "mod", "power", "fmod",
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not",
    "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "copysign", "negative", "positive", "absolute",
    "invert", "square", "reciprocal", "sign", "floor", "ceil", "trunc", "rint", "isnan", "isinf", "isfinite",
    "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "fabs",
    "float_power", "conjugate", "deg2rad", "radians", "rad2deg", "degrees", "signbit", "logaddexp", "logaddexp2",
    "heaviside", "gcd", "lcm", "bitwise_count",
)
ALIASES = {"abs": "absolute", "bitwise_not": "invert", "pow": "power", "bitwise_invert": "invert",
           "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift", "acos": "arccos",
           "asin": "arcsin", "atan": "arctan", "atan2": "arctan2", "acosh": "arccosh", "asinh": "arcsinh",
           "atanh": "arctanh", "conj": "conjugate"}

# a literal list first, so that type checkers see these names exported; the ufuncs are added below
__all__ = [
    "where", "clip", "sum", "prod", "min", "max", "amin", "amax", "mean", "var", "std", "argmin", "argmax",
    "any", "all", "cumsum", "cumprod", "sort", "argsort", "dot", "vdot", "matmul", "round", "around",
    "concatenate", "stack", "linspace", "nonzero", "take", "transpose", "reshape", "ravel", "copy",
]
__all__ += list(UFUNC_NAMES) + list(ALIASES)


def ufunc_operands(args: tuple, out: Any = None) -> tuple:
    """numpy's ufunc operands as device operations take them: lists and tuples uploaded, and, where
    no operand is a device array (``gnp.true_divide(0, 0)``), one scalar uploaded as a 0-d array:
    a numpy scalar if there is one (it is strong, so the result type stays numpy's: NEP 50), else
    the first Python scalar (np.asarray's int64/float64/complex128/bool, the types numpy gives weak scalars alone).
    The result is then a 0-d device array, where numpy returns a scalar, as CuPy does."""
    from ._array import DeviceArray
    from ._creation import asarray
    where = out if isinstance(out, DeviceArray) else next((a for a in args if isinstance(a, DeviceArray)), None)
    device = None if where is None else where.context
    args = tuple(asarray(a, device=device) if isinstance(a, (list, tuple)) else a for a in args)
    if builtins.any(isinstance(a, DeviceArray) for a in args):     # (this module's any is gnp.any)
        return args
    pick = next((k for k, a in enumerate(args) if isinstance(a, np.generic)),
                next((k for k, a in enumerate(args) if isinstance(a, (bool, int, float, complex))), None))
    if pick is None:
        return args
    return args[:pick] + (asarray(args[pick], device=device),) + args[pick + 1:]


def _ufunc(name: str) -> Callable[..., DeviceArray]:
    def fn(*args: Any, out: Any = None, dtype: Any = None, casting: Any = "same_kind") -> DeviceArray:
        args = ufunc_operands(args, out)
        result = ops().ufunc_call(name, args, out=out, dtype=dtype, casting=casting)
        if result is NotImplemented:     # (operators pass that on to Python; a function call says it)
            kinds = ", ".join(type(a).__name__ for a in args)
            raise TypeError(f"gnp.{name} does not take operands of the types ({kinds}); it takes device arrays, "
                            "bool, int and float scalars")
        return result

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``np.{name}`` elementwise on the device: numpy broadcasting and result type "
                  "(Python scalars are weak, NEP 50); ``out`` must be a device array.")
    return fn


for _name in UFUNC_NAMES:
    globals()[_name] = _ufunc(_name)
for _alias, _name in ALIASES.items():
    globals()[_alias] = globals()[_name]


def where(condition: Any, x: Any = None, y: Any = None) -> Any:
    """``np.where(condition, x, y)`` elementwise; ``where(condition)`` is ``nonzero(condition)``."""
    condition, x, y = _sequences(condition, x, y)
    return ops().where(condition, x, y)


_NOT_GIVEN: Any = object()


def clip(a: Any, a_min: Any = _NOT_GIVEN, a_max: Any = _NOT_GIVEN, out: Any = None, *, min: Any = _NOT_GIVEN,
         max: Any = _NOT_GIVEN, **kwargs: Any) -> DeviceArray:
    """``np.clip``: limit values to [a_min, a_max] (NaN stays NaN). As numpy's: both bounds
    positionally (``None`` for no bound), or neither and the keywords ``min=`` / ``max=``."""
    if a_min is _NOT_GIVEN and a_max is _NOT_GIVEN:
        a_min = None if min is _NOT_GIVEN else min
        a_max = None if max is _NOT_GIVEN else max
    elif a_min is _NOT_GIVEN or a_max is _NOT_GIVEN:
        missing = "a_min" if a_min is _NOT_GIVEN else "a_max"
        raise TypeError(f"clip() missing 1 required positional argument: {missing!r} (numpy's np.clip takes both "
                        "bounds; pass None for no bound, or use the keywords min= / max=)")
    elif min is not _NOT_GIVEN or max is not _NOT_GIVEN:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` are provided is forbidden.")
    a, a_min, a_max = _sequences(_operand(a), a_min, a_max)
    return ops().clip(a, a_min, a_max, out=out, **kwargs)


def _operand(a: Any, device: Any = None) -> Any:
    """``a``, or a Python scalar, list or tuple uploaded (numpy takes those wherever it takes arrays)."""
    from ._views import device_operand
    return device_operand(a, "reduction", device) if isinstance(a, (list, tuple, bool, int, float, complex)) else a


def _sequences(*args: Any) -> tuple:
    """Lists and tuples among ``args`` uploaded to the device of the first device array among them
    (scalars stay as they are: weak operands of the operation)."""
    from ._array import DeviceArray
    device = next((a.context for a in args if isinstance(a, DeviceArray)), None)
    return tuple(_operand(a, device) if isinstance(a, (list, tuple)) else a for a in args)


def _each(arrays: Any) -> Any:
    """The elements of a sequence of arrays, the lists and tuples among them uploaded."""
    if isinstance(arrays, (list, tuple)):
        return type(arrays)(_sequences(*arrays))
    return arrays


# numpy's positional parameters after ``a`` of each reduction, in numpy's order (np.all(a, 0, out, True)
# passes out and keepdims positionally); the rest are keyword-only, as numpy's are
REDUCTION_PARAMETERS = {
    "sum": ("axis", "dtype", "out", "keepdims", "initial", "where"),
    "prod": ("axis", "dtype", "out", "keepdims", "initial", "where"),
    "min": ("axis", "out", "keepdims", "initial", "where"),
    "max": ("axis", "out", "keepdims", "initial", "where"),
    "mean": ("axis", "dtype", "out", "keepdims"),
    "argmin": ("axis", "out"),
    "argmax": ("axis", "out"),
    "any": ("axis", "out", "keepdims"),
    "all": ("axis", "out", "keepdims"),
}
_KEYWORD_ONLY = {"mean": ("where",), "argmin": ("keepdims",), "argmax": ("keepdims",), "any": ("where",),
                 "all": ("where",)}


def _reduction(name: str, doc: str) -> Callable[..., DeviceArray]:
    positional = REDUCTION_PARAMETERS[name]
    accepted = frozenset(positional + _KEYWORD_ONLY.get(name, ()))

    def fn(a: Any, *args: Any, **kwargs: Any) -> DeviceArray:
        if len(args) > len(positional):
            raise TypeError(f"{name}() takes from 1 to {len(positional) + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        for key, value in zip(positional, args):
            if key in kwargs:
                raise TypeError(f"{name}() got multiple values for argument {key!r}")
            kwargs[key] = value
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise TypeError(f"{name}() got an unexpected keyword argument {unknown[0]!r}")
        return ops().reduce(name, _operand(a), **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc + f" numpy's parameters: a, {', '.join(positional)}."
    return fn


sum: Callable[..., DeviceArray] = _reduction("sum", "Sum over all axes or ``axis`` (pairwise-accurate; int32 sums are int64 as numpy's).")
prod: Callable[..., DeviceArray] = _reduction("prod", "Product over all axes or ``axis``.")
min: Callable[..., DeviceArray] = _reduction("min", "Smallest element (NaN if any is NaN), over all axes or ``axis``.")
max: Callable[..., DeviceArray] = _reduction("max", "Largest element (NaN if any is NaN), over all axes or ``axis``.")
amin: Callable[..., DeviceArray] = min
amax: Callable[..., DeviceArray] = max
mean: Callable[..., DeviceArray] = _reduction("mean", "Mean (float64 for integer input, as numpy).")
argmin: Callable[..., DeviceArray] = _reduction("argmin", "Index of the smallest element (the first one; the first NaN).")
argmax: Callable[..., DeviceArray] = _reduction("argmax", "Index of the largest element (the first one; the first NaN).")
any: Callable[..., DeviceArray] = _reduction("any", "Whether any element is nonzero.")
all: Callable[..., DeviceArray] = _reduction("all", "Whether every element is nonzero.")


def var(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: Any = False) -> DeviceArray:
    """Variance: mean of squared deviations from the mean, over n - ddof."""
    return ops().moment("var", _operand(a), axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: Any = False) -> DeviceArray:
    """Standard deviation: the square root of :func:`var`."""
    return ops().moment("std", _operand(a), axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)


def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> DeviceArray:
    """Inclusive prefix sums (a block scan on the device); flattened when ``axis`` is None."""
    return ops().scan("cumsum", _operand(a), axis=axis, dtype=dtype, out=out)


def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> DeviceArray:
    """Inclusive prefix products; flattened when ``axis`` is None."""
    return ops().scan("cumprod", _operand(a), axis=axis, dtype=dtype, out=out)


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, stable: Any = None) -> DeviceArray:
    """A sorted copy of a 1-D array (or of the flattened array with ``axis=None``); NaNs last.
    The sort is stable whatever ``kind`` says."""
    return ops().sort(_operand(a), axis=axis, kind=kind, order=order, stable=stable)


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, stable: Any = None) -> DeviceArray:
    """The indices (int64) that sort a 1-D array; stable (equal elements keep their order)."""
    return _operand(a).argsort(axis=axis, kind=kind, order=order, stable=stable)


def dot(a: Any, b: Any, out: Any = None) -> DeviceArray:
    """``np.dot``: inner product of 1-D arrays (a 0-d array), matrix product of 2-D ones."""
    a, b = _sequences(_operand(a), _operand(b))
    return ops().dot(a, b, out=out)


def vdot(a: Any, b: Any) -> DeviceArray:
    """Inner product of the flattened arrays; a complex first argument is conjugated, as numpy's."""
    a, b = _sequences(_operand(a), _operand(b))
    if a.dtype.kind == "c":
        a = ops().ufunc_call("conjugate", (a,))
    return ops().dot(ops().copy(a).reshape(-1) if a.ndim != 1 else a,
                     ops().copy(b).reshape(-1) if b.ndim != 1 else b)


def matmul(a: Any, b: Any, out: Any = None, *, casting: Any = "same_kind", order: Any = "K", dtype: Any = None,
           subok: bool = True, axes: Any = None, axis: Any = None) -> DeviceArray:
    """``np.matmul`` / ``a @ b`` (a tiled kernel in local memory; stacks of matrices), with numpy's
    gufunc parameters: ``dtype`` (the inputs converted to it), ``out`` of another type where
    ``casting`` allows, and ``axes`` (which axes hold each operand's matrices)."""
    a, b = _sequences(_operand(a), _operand(b))
    if order not in ("K", "C", "A", None):
        raise ValueError(f"gnp.matmul: device arrays are C-ordered (order={order!r})")
    if axis is not None:        # numpy's error: matmul's core dimensions are not one shared one
        raise TypeError("matmul: axis can only be used with a single shared core dimension, not with the 3 distinct "
                        "ones implied by signature (n?,k),(k,m?)->(n?,m?).")
    if dtype is not None:
        dt = np.dtype(dtype)
        for x in (a, b):
            if not np.can_cast(x.dtype, dt, casting):
                raise TypeError(f"Cannot cast ufunc 'matmul' input from {x.dtype!r} to {dt!r} with casting rule "
                                f"{casting!r}")
        a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    out_axes = None
    if axes is not None:
        from ._views import moveaxis
        if len(axes) != 3:
            raise ValueError(f"axes should be a list with an entry for all 3 inputs and outputs; entry for {len(axes)} "
                             "given")
        a_axes, b_axes, out_axes = (tuple(ax) if isinstance(ax, (tuple, list)) else (ax,) for ax in axes)
        a = moveaxis(a, a_axes, tuple(range(-len(a_axes), 0)))
        b = moveaxis(b, b_axes, tuple(range(-len(b_axes), 0)))
    direct = out is not None and out_axes is None and out.dtype == np.result_type(a.dtype, b.dtype)
    result = ops().matmul(a, b, out=out if direct else None)
    if out_axes:
        from ._views import moveaxis
        result = moveaxis(result, tuple(range(-len(out_axes), 0)), out_axes)
    if out is None or direct:
        return result
    if not np.can_cast(result.dtype, out.dtype, casting):
        raise TypeError(f"Cannot cast ufunc 'matmul' output from {result.dtype!r} to {out.dtype!r} with casting "
                        f"rule {casting!r}")
    out[...] = result
    return out


def around(a: Any, decimals: Any = 0, out: Any = None) -> DeviceArray:
    """Round half to even (``np.round``); a Python scalar or list is uploaded first, as numpy takes it."""
    return ops().around(_operand(a), decimals, out=out)


round = around


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None, casting: Any = "same_kind") -> DeviceArray:
    """Join device arrays along an existing axis (copies on the device; numpy's result type)."""
    return ops().concatenate(_each(arrays), axis=axis, out=out, dtype=dtype, casting=casting)


def stack(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None, casting: Any = "same_kind") -> DeviceArray:
    """Join device arrays along a new axis."""
    return ops().stack(_each(arrays), axis=axis, out=out, dtype=dtype, casting=casting)


def linspace(start: Any, stop: Any, num: Any = 50, endpoint: Any = True, retstep: Any = False, dtype: Any = None, axis: Any = 0, *, device: Any = None) -> Any:
    """``np.linspace`` computed on the device (in float64, as numpy, then converted); array (or list)
    bounds give one sequence per element, along ``axis``, as numpy's."""
    from ._array import DeviceArray
    if isinstance(start, (DeviceArray, list, tuple)) or isinstance(stop, (DeviceArray, list, tuple)):
        from ._sequences import linspace_of_arrays
        return linspace_of_arrays(start, stop, num, endpoint, retstep, dtype, axis, device)
    return ops().linspace(start, stop, num=num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis,
                          device=device)


def nonzero(a: Any) -> tuple[DeviceArray, ...]:
    """Indices of the nonzero elements, one int64 array per dimension (compacted on the device)."""
    return ops().nonzero(_operand(a))


def take(a: Any, indices: Any, axis: Any = None, out: Any = None) -> DeviceArray:
    """Elements of ``a`` at integer ``indices`` (a device or host index array), along ``axis``."""
    return ops().take(_operand(a), indices, axis=axis, out=out)


def transpose(a: Any, axes: Any = None) -> DeviceArray:
    return _operand(a).transpose(axes)


def reshape(a: Any, shape: Any = None, order: Any = "C", *, newshape: Any = None, copy: Any = None) -> DeviceArray:
    """``np.reshape``: numpy 2's parameters (``newshape`` is numpy's older name of ``shape``)."""
    if shape is None:
        if newshape is None:
            raise TypeError("reshape() missing 1 required positional argument: 'shape'")
        shape = newshape
    elif newshape is not None:
        raise TypeError("You cannot specify 'newshape' and 'shape' arguments at the same time.")
    return _operand(a).reshape(shape, order=order, copy=copy)


def ravel(a: Any, order: Any = "C") -> DeviceArray:
    return _operand(a).ravel(order)


def copy(a: Any) -> DeviceArray:
    """A C-contiguous device copy."""
    return _operand(a).copy()
