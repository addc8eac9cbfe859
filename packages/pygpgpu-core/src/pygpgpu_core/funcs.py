"""Dual-sided vector/scalar math: the same call runs in host Python and inside ``@kernel``.

On the host every function accepts vector objects (``float4``...), Python/numpy scalars and
numpy arrays. For array inputs of the geometric functions (``dot``, ``cross``, ``length``,
``distance``, ``normalize``, ``reflect``) the **last axis holds the components**: a
``(N, 4)`` float32 array is N float4 values. The other functions work element-wise and
broadcast like numpy. Results keep the input's type: float32 in, float32 out; a vector in,
a vector of the same type out (``dot``/``length``/``distance`` return a scalar).

Inside kernels the translator's builtin registry lowers each call (what each function takes
and gives is its ``funcs.*`` row, docs/architecture.md#dialects-and-builtins): OpenCL uses its
native builtin where one exists; CUDA and HIP call a helper that the prelude library
(``pygpgpu_translate.prelude``) emits once per program, only when used.
"""
from __future__ import annotations

from typing import Any, Callable, TypeVar, overload

import numpy as np

from .vec_types import Vector

# a vector in, the same vector type out (for type checkers: funcs.normalize(float4(...)) is a float4)
_V = TypeVar("_V", bound=Vector)

__all__ = [
    "dot",
    "cross",
    "length",
    "distance",
    "normalize",
    "clamp",
    "mix",
    "step",
    "smoothstep",
    "fma",
    "sign",
    "radians",
    "degrees",
    "reflect",
    "min",
    "max",
    "abs",
]


def _unwrap(values: tuple[Any, ...], float_only: str = "") -> tuple[list[Any], type[Vector] | None]:
    """Vectors -> their component arrays; remembers the vector class for the result.
    ``float_only`` names a function defined on float vectors only (as on the device)."""
    vtype: type[Vector] | None = None
    out: list[Any] = []
    for v in values:
        if isinstance(v, Vector):
            if vtype is not None and type(v) is not vtype:
                raise TypeError(f"mixed vector types {vtype.name} and {v.name}: convert one with .convert()")
            vtype = type(v)
            out.append(v._v)
        else:
            out.append(v)
    if float_only and vtype is not None and np.issubdtype(vtype.base, np.integer):
        raise TypeError(
            f"funcs.{float_only} works on float vectors, not {vtype.name}; "
            f"convert first: funcs.{float_only}(float{vtype.width}.convert(v))"
        )
    if vtype is not None:
        # Weak Python scalars adopt the vector's base type (docs/architecture.md#type-rules).
        out = [np.asarray(x, dtype=vtype.base) if isinstance(x, (int, float)) else x for x in out]
    return out, vtype


def _rewrap(result: Any, vtype: type[Vector] | None, vector_result: bool = True) -> Any:
    if vtype is None:
        return result
    if vector_result:
        return vtype._wrap(np.asarray(result, dtype=vtype.base))
    return vtype.base(result)


def _elementwise(fn: Callable[..., Any], float_only: str = "") -> Callable[..., Any]:
    def run(*args: Any) -> Any:
        vals, vtype = _unwrap(args, float_only)
        with np.errstate(all="ignore"):
            res = fn(*vals)
        return _rewrap(res, vtype) if vtype else _scalarize(res)

    return run


def _float_elementwise(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return lambda fn: _elementwise(fn, name)


def _float_result(x: Any) -> Any:
    """ints (Python or numpy) -> the kernel's default float for functions defined on floats only."""
    arr = np.asarray(x)
    if np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        return arr.astype(np.float32)
    return arr


def _as_float(args: list[Any]) -> list[Any]:
    out = []
    for a in args:
        # weak: a Python float or int adopts the other operand's type. np.float64 subclasses float
        # but is a strong float64 (what indexing a float64 array gives), so it is not weak.
        if isinstance(a, (float, int)) and not isinstance(a, (bool, np.generic)):
            out.append(a)
        else:
            out.append(_float_result(a))
    if all(isinstance(a, (float, int)) for a in out):
        out = [np.float32(a) for a in out]
    return out


def _scalarize(x: Any) -> Any:
    if isinstance(x, Vector):
        return x
    arr = np.asarray(x)
    return arr[()] if arr.ndim == 0 else arr


# -- geometric (last axis = components) ----------------------------------------------------------
def dot(a: Any, b: Any) -> Any:
    """Dot product ``sum(a * b)`` over the components; a scalar of the base type.

    For arrays the last axis holds the components (``dot`` of two ``(N, 3)`` arrays is ``(N,)``).
    Floating-point vectors only inside kernels (OpenCL's rule)."""
    (x, y), vtype = _unwrap((a, b), "dot")
    x, y = _as_float([x, y])
    with np.errstate(all="ignore"):
        res = np.sum(np.multiply(x, y), axis=-1) if np.ndim(x) or np.ndim(y) else np.multiply(x, y)
    return _rewrap(_scalarize(res), vtype, vector_result=False)


@overload
def cross(a: _V, b: _V) -> _V: ...
@overload
def cross(a: Any, b: Any) -> Any: ...


def cross(a: Any, b: Any) -> Any:
    """Cross product of 3- or 4-component vectors; for 4 components ``w`` of the result is 0."""
    (x, y), vtype = _unwrap((a, b), "cross")
    x, y = _as_float([x, y])
    x, y = np.asarray(x), np.asarray(y)
    n = x.shape[-1] if x.ndim else 0
    if n not in (3, 4) or y.shape[-1:] != x.shape[-1:]:
        raise ValueError(f"cross needs two 3- or 4-component vectors, got shapes {x.shape} and {y.shape}")
    with np.errstate(all="ignore"):
        c = np.cross(x[..., :3], y[..., :3]).astype(np.result_type(x, y), copy=False)
    if n == 4:
        c = np.concatenate([c, np.zeros(c.shape[:-1] + (1,), c.dtype)], axis=-1)
    return _rewrap(c, vtype)


def length(a: Any) -> Any:
    """Euclidean length ``sqrt(dot(a, a))`` (last axis = components for arrays)."""
    (x,), vtype = _unwrap((a,), "length")
    (x,) = _as_float([x])
    with np.errstate(all="ignore"):
        res = np.sqrt(np.sum(np.multiply(x, x), axis=-1)) if np.ndim(x) else np.abs(x)
    return _rewrap(_scalarize(res), vtype, vector_result=False)


def distance(a: Any, b: Any) -> Any:
    """``length(a - b)``."""
    (x, y), vtype = _unwrap((a, b), "distance")
    x, y = _as_float([x, y])
    with np.errstate(all="ignore"):
        d = np.subtract(x, y)
    return length(_rewrap(d, vtype) if vtype else d)


@overload
def normalize(a: _V) -> _V: ...
@overload
def normalize(a: Any) -> Any: ...


def normalize(a: Any) -> Any:
    """``a / length(a)``; a zero vector is returned unchanged (OpenCL's rule, used on every backend)."""
    (x,), vtype = _unwrap((a,), "normalize")
    (x,) = _as_float([x])
    x = np.asarray(x)
    with np.errstate(all="ignore"):
        if x.ndim == 0:
            res = np.where(x == 0, x, np.sign(x)).astype(x.dtype)
        else:
            n = np.sqrt(np.sum(x * x, axis=-1, keepdims=True))
            res = np.where(n == 0, x, x / np.where(n == 0, 1, n)).astype(x.dtype)
    return _rewrap(_scalarize(res), vtype)


@overload
def reflect(i: _V, n: _V) -> _V: ...
@overload
def reflect(i: Any, n: Any) -> Any: ...


def reflect(i: Any, n: Any) -> Any:
    """Reflection of incident ``i`` about normal ``n``: ``i - 2 * dot(n, i) * n`` (``n`` normalized)."""
    (x, y), vtype = _unwrap((i, n), "reflect")
    x, y = _as_float([x, y])
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(all="ignore"):
        d = np.sum(x * y, axis=-1, keepdims=True) if x.ndim else x * y
        res = (x - (d + d) * y).astype(np.result_type(x, y), copy=False)
    return _rewrap(_scalarize(res), vtype)


# -- element-wise ---------------------------------------------------------------------------------
@_elementwise
def _clamp(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


@overload
def clamp(x: _V, lo: Any, hi: Any) -> _V: ...
@overload
def clamp(x: Any, lo: Any, hi: Any) -> Any: ...


def clamp(x: Any, lo: Any, hi: Any) -> Any:
    """``min(max(x, lo), hi)`` component-wise; ``lo``/``hi`` may be scalars. Ints and floats."""
    return _clamp(x, lo, hi)


@_float_elementwise("mix")
def _mix(a, b, t):
    a, b, t = _as_float([a, b, t])
    return a + (b - a) * t


@overload
def mix(a: _V, b: _V, t: Any) -> _V: ...
@overload
def mix(a: Any, b: Any, t: Any) -> Any: ...


def mix(a: Any, b: Any, t: Any) -> Any:
    """Linear blend ``a + (b - a) * t``; ``t`` may be a scalar. Floats only."""
    return _mix(a, b, t)


@_float_elementwise("step")
def _step(edge, x):
    edge, x = _as_float([edge, x])
    dt = np.result_type(edge, x)
    return np.where(np.less(x, edge), 0, 1).astype(dt)


def step(edge: Any, x: Any) -> Any:
    """0.0 where ``x < edge``, else 1.0; ``edge`` may be a scalar. Floats only."""
    return _scalarize(_step(edge, x))


@_float_elementwise("smoothstep")
def _smoothstep(e0, e1, x):
    e0, e1, x = _as_float([e0, e1, x])
    dt = np.result_type(e0, e1, x)
    t = np.clip((np.subtract(x, e0)) / (np.subtract(e1, e0)), 0, 1).astype(dt)
    return (t * t * (dt.type(3) - dt.type(2) * t)).astype(dt)


def smoothstep(edge0: Any, edge1: Any, x: Any) -> Any:
    """Hermite interpolation ``t*t*(3 - 2*t)`` with ``t = clamp((x - edge0) / (edge1 - edge0), 0, 1)``.
    Undefined where ``edge0 >= edge1`` (OpenCL). Floats only."""
    return _scalarize(_smoothstep(edge0, edge1, x))


@_float_elementwise("fma")
def _fma(a, b, c):
    a, b, c = _as_float([a, b, c])
    dt = np.result_type(a, b, c)
    if dt == np.float32:
        # float64 holds the exact float32 product, so one final rounding is all that differs.
        return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(dt)
    return np.add(np.multiply(a, b), c)


def fma(a: Any, b: Any, c: Any) -> Any:
    """Fused multiply-add ``a * b + c`` (single rounding on the device). Floats only."""
    return _scalarize(_fma(a, b, c))


@_elementwise
def _sign(x):
    arr = np.asarray(x)
    if np.issubdtype(arr.dtype, np.integer):
        return np.sign(arr)
    return np.where(np.isnan(arr), 0, np.sign(arr)).astype(arr.dtype)


def sign(x: Any) -> Any:
    """1 for positive, -1 for negative, 0 for zero (and 0.0 for NaN, OpenCL's rule); floats and ints."""
    return _scalarize(_sign(x))


@_float_elementwise("radians")
def _radians(x):
    (x,) = _as_float([x])
    dt = np.asarray(x).dtype
    return (x * dt.type(np.pi / 180)).astype(dt)


def radians(degrees: Any) -> Any:
    """Degrees to radians. Floats only."""
    return _scalarize(_radians(degrees))


@_float_elementwise("degrees")
def _degrees(x):
    (x,) = _as_float([x])
    dt = np.asarray(x).dtype
    return (x * dt.type(180 / np.pi)).astype(dt)


def degrees(radians: Any) -> Any:
    """Radians to degrees. Floats only."""
    return _scalarize(_degrees(radians))


def min(a: Any, b: Any) -> Any:  # noqa: A001 - the device builtin's name
    """Component-wise minimum; either argument may be a scalar. Ints and floats."""
    return _scalarize(_elementwise(np.fmin)(a, b))


def max(a: Any, b: Any) -> Any:  # noqa: A001
    """Component-wise maximum; either argument may be a scalar. Ints and floats."""
    return _scalarize(_elementwise(np.fmax)(a, b))


def abs(x: Any) -> Any:  # noqa: A001
    """Component-wise absolute value, same type as the input (the most negative int stays negative,
    as in two's complement C)."""
    return _scalarize(_elementwise(np.abs)(x))
