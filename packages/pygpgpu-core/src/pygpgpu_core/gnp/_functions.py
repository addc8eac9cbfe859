"""The numpy-named functions of ``pygpgpu.numpy`` (``gnp.sqrt``, ``gnp.sum``, ``gnp.sort``...).

Each one forwards to the operations provider (:mod:`._dispatch`, normally
``pygpgpu_translate.array_ops``), which runs it on the device of its array arguments; with no
translator installed they raise ``OperationsUnavailable`` saying what to install.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

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
)
ALIASES = {"abs": "absolute", "bitwise_not": "invert", "pow": "power", "bitwise_invert": "invert",
           "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift", "acos": "arccos",
           "asin": "arcsin", "atan": "arctan", "atan2": "arctan2", "acosh": "arccosh", "asinh": "arcsinh",
           "atanh": "arctanh"}

# a literal list first, so that type checkers see these names exported; the ufuncs are added below
__all__ = [
    "where", "clip", "sum", "prod", "min", "max", "amin", "amax", "mean", "var", "std", "argmin", "argmax",
    "any", "all", "cumsum", "cumprod", "sort", "argsort", "dot", "vdot", "matmul", "round", "around",
    "concatenate", "stack", "linspace", "nonzero", "take", "transpose", "reshape", "ravel", "copy",
]
__all__ += list(UFUNC_NAMES) + list(ALIASES)


def _ufunc(name: str) -> Callable[..., DeviceArray]:
    def fn(*args: Any, out: Any = None, dtype: Any = None, casting: Any = "same_kind") -> DeviceArray:
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
    return ops().clip(a, a_min, a_max, out=out, **kwargs)


def _reduction(name: str, doc: str) -> Callable[..., DeviceArray]:
    def fn(a: Any, axis: Any = None, **kwargs: Any) -> DeviceArray:
        return ops().reduce(name, a, axis=axis, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
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
    return ops().moment("var", a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)


def std(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0, keepdims: Any = False) -> DeviceArray:
    """Standard deviation: the square root of :func:`var`."""
    return ops().moment("std", a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)


def cumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> DeviceArray:
    """Inclusive prefix sums (a block scan on the device); flattened when ``axis`` is None."""
    return ops().scan("cumsum", a, axis=axis, dtype=dtype, out=out)


def cumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> DeviceArray:
    """Inclusive prefix products; flattened when ``axis`` is None."""
    return ops().scan("cumprod", a, axis=axis, dtype=dtype, out=out)


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, stable: Any = None) -> DeviceArray:
    """A sorted copy of a 1-D array (or of the flattened array with ``axis=None``); NaNs last.
    The sort is stable whatever ``kind`` says."""
    return ops().sort(a, axis=axis, kind=kind, order=order, stable=stable)


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, stable: Any = None) -> DeviceArray:
    """The indices (int64) that sort a 1-D array; stable (equal elements keep their order)."""
    return ops().argsort(a, axis=axis, kind=kind, order=order, stable=stable)


def dot(a: Any, b: Any, out: Any = None) -> DeviceArray:
    """``np.dot``: inner product of 1-D arrays (a 0-d array), matrix product of 2-D ones."""
    return ops().dot(a, b, out=out)


def vdot(a: Any, b: Any) -> DeviceArray:
    """Inner product of the flattened arrays."""
    return ops().dot(ops().copy(a).reshape(-1) if a.ndim != 1 else a,
                     ops().copy(b).reshape(-1) if b.ndim != 1 else b)


def matmul(a: Any, b: Any, out: Any = None) -> DeviceArray:
    """``np.matmul`` / ``a @ b`` for 1-D and 2-D arrays (a tiled kernel in local memory)."""
    return ops().matmul(a, b, out=out)


def around(a: Any, decimals: Any = 0, out: Any = None) -> DeviceArray:
    """Round half to even (``np.round``)."""
    return ops().around(a, decimals, out=out)


round = around


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None, casting: Any = "same_kind") -> DeviceArray:
    """Join device arrays along an existing axis (copies on the device; numpy's result type)."""
    return ops().concatenate(arrays, axis=axis, out=out, dtype=dtype, casting=casting)


def stack(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None, casting: Any = "same_kind") -> DeviceArray:
    """Join device arrays along a new axis."""
    return ops().stack(arrays, axis=axis, out=out, dtype=dtype, casting=casting)


def linspace(start: Any, stop: Any, num: Any = 50, endpoint: Any = True, retstep: Any = False, dtype: Any = None, axis: Any = 0, *, device: Any = None) -> Any:
    """``np.linspace`` computed on the device (in float64, as numpy, then converted)."""
    return ops().linspace(start, stop, num=num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis,
                          device=device)


def nonzero(a: Any) -> tuple[DeviceArray, ...]:
    """Indices of the nonzero elements, one int64 array per dimension (compacted on the device)."""
    return ops().nonzero(a)


def take(a: Any, indices: Any, axis: Any = None, out: Any = None) -> DeviceArray:
    """Elements of ``a`` at integer ``indices`` (a device or host index array), along ``axis``."""
    return ops().take(a, indices, axis=axis, out=out)


def transpose(a: Any, axes: Any = None) -> DeviceArray:
    return a.transpose(axes)


def reshape(a: Any, shape: Any, order: Any = "C") -> DeviceArray:
    return a.reshape(shape, order=order)


def ravel(a: Any, order: Any = "C") -> DeviceArray:
    return a.ravel(order)


def copy(a: Any) -> DeviceArray:
    """A C-contiguous device copy."""
    return a.copy()
