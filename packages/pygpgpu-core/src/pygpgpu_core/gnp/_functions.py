"""The numpy-named functions of ``pygpgpu.numpy`` (``gnp.sqrt``, ``gnp.sum``, ``gnp.sort``...).

Each one forwards to the operations provider (:mod:`._dispatch`, normally
``pygpgpu_translate.array_ops``), which runs it on the device of its array arguments; with no
translator installed they raise ``OperationsUnavailable`` saying what to install.
"""
from __future__ import annotations

from typing import Any

from ._dispatch import ops

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

__all__ = list(UFUNC_NAMES) + list(ALIASES) + [
    "where", "clip", "sum", "prod", "min", "max", "amin", "amax", "mean", "var", "std", "argmin", "argmax",
    "any", "all", "cumsum", "cumprod", "sort", "argsort", "dot", "vdot", "matmul", "round", "around",
    "concatenate", "stack", "linspace", "nonzero", "take", "transpose", "reshape", "ravel", "copy",
]


def _ufunc(name: str):
    def fn(*args, out=None, dtype=None, casting="same_kind"):
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


def where(condition: Any, x: Any = None, y: Any = None):
    """``np.where(condition, x, y)`` elementwise; ``where(condition)`` is ``nonzero(condition)``."""
    return ops().where(condition, x, y)


_NOT_GIVEN: Any = object()


def clip(a: Any, a_min: Any = _NOT_GIVEN, a_max: Any = _NOT_GIVEN, out: Any = None, *, min: Any = _NOT_GIVEN,
         max: Any = _NOT_GIVEN, **kwargs):
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


def _reduction(name: str, doc: str):
    def fn(a, axis=None, **kwargs):
        return ops().reduce(name, a, axis=axis, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


sum = _reduction("sum", "Sum over all axes or ``axis`` (pairwise-accurate; int32 sums are int64 as numpy's).")
prod = _reduction("prod", "Product over all axes or ``axis``.")
min = _reduction("min", "Smallest element (NaN if any is NaN), over all axes or ``axis``.")
max = _reduction("max", "Largest element (NaN if any is NaN), over all axes or ``axis``.")
amin = min
amax = max
mean = _reduction("mean", "Mean (float64 for integer input, as numpy).")
argmin = _reduction("argmin", "Index of the smallest element (the first one; the first NaN).")
argmax = _reduction("argmax", "Index of the largest element (the first one; the first NaN).")
any = _reduction("any", "Whether any element is nonzero.")
all = _reduction("all", "Whether every element is nonzero.")


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance: mean of squared deviations from the mean, over n - ddof."""
    return ops().moment("var", a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation: the square root of :func:`var`."""
    return ops().moment("std", a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims)


def cumsum(a, axis=None, dtype=None, out=None):
    """Inclusive prefix sums (a block scan on the device); flattened when ``axis`` is None."""
    return ops().scan("cumsum", a, axis=axis, dtype=dtype, out=out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Inclusive prefix products; flattened when ``axis`` is None."""
    return ops().scan("cumprod", a, axis=axis, dtype=dtype, out=out)


def sort(a, axis=-1, kind=None, order=None, stable=None):
    """A sorted copy of a 1-D array (or of the flattened array with ``axis=None``); NaNs last.
    The sort is stable whatever ``kind`` says."""
    return ops().sort(a, axis=axis, kind=kind, order=order, stable=stable)


def argsort(a, axis=-1, kind=None, order=None, stable=None):
    """The indices (int64) that sort a 1-D array; stable (equal elements keep their order)."""
    return ops().argsort(a, axis=axis, kind=kind, order=order, stable=stable)


def dot(a, b, out=None):
    """``np.dot``: inner product of 1-D arrays (a 0-d array), matrix product of 2-D ones."""
    return ops().dot(a, b, out=out)


def vdot(a, b):
    """Inner product of the flattened arrays."""
    return ops().dot(ops().copy(a).reshape(-1) if a.ndim != 1 else a,
                     ops().copy(b).reshape(-1) if b.ndim != 1 else b)


def matmul(a, b, out=None):
    """``np.matmul`` / ``a @ b`` for 1-D and 2-D arrays (a tiled kernel in local memory)."""
    return ops().matmul(a, b, out=out)


def around(a, decimals=0, out=None):
    """Round half to even (``np.round``)."""
    return ops().around(a, decimals, out=out)


round = around


def concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Join device arrays along an existing axis (copies on the device; numpy's result type)."""
    return ops().concatenate(arrays, axis=axis, out=out, dtype=dtype, casting=casting)


def stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    """Join device arrays along a new axis."""
    return ops().stack(arrays, axis=axis, out=out, dtype=dtype, casting=casting)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``np.linspace`` computed on the device (in float64, as numpy, then converted)."""
    return ops().linspace(start, stop, num=num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis,
                          device=device)


def nonzero(a):
    """Indices of the nonzero elements, one int64 array per dimension (compacted on the device)."""
    return ops().nonzero(a)


def take(a, indices, axis=None, out=None):
    """Elements of ``a`` at integer ``indices`` (a device or host index array), along ``axis``."""
    return ops().take(a, indices, axis=axis, out=out)


def transpose(a, axes=None):
    return a.transpose(axes)


def reshape(a, shape, order="C"):
    return a.reshape(shape, order=order)


def ravel(a, order="C"):
    return a.ravel(order)


def copy(a):
    """A C-contiguous device copy."""
    return a.copy()
