"""The 50 OpenCL-style vector types (``float4``, ``int3``, ``uchar16``, ...) as host classes.

Ten base types (char, uchar, short, ushort, int, uint, long, ulong, float, double) times
five widths (2, 3, 4, 8, 16). A vector is a small value object holding its components
in a numpy array of the base type; arithmetic follows OpenCL C vector semantics with
the Python choices the translator also makes (``//`` and ``%`` floor).

Layouts (see docs/vectors.md):

* ``T.dtype`` is the OpenCL layout: a structured numpy dtype with fields ``x, y, z, w``
  (widths 2-4) or ``s0 ... sF`` (widths 8, 16). 3-wide types occupy four slots, so
  ``float3.dtype.itemsize == 16`` — the size of ``float3`` in OpenCL C.
* ``T.dtype_packed`` is the CUDA/HIP layout: identical except that 3-wide types are
  packed, ``float3.dtype_packed.itemsize == 12`` like CUDA's and HIP's ``float3``.
* ``vector_dtype(base, width, layout="opencl" | "packed")`` returns either one.

``np.zeros(n, float4.dtype)`` is an array of vectors; ``float4.from_numpy(arr[i])`` turns
one element into a ``float4`` and ``v.to_numpy()`` does the reverse. ``np.asarray(v)``
gives the plain ``(width,)`` array of the base type.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np

__all__ = [
    "BASE_TYPES",
    "WIDTHS",
    "VECTOR_TYPES",
    "Vector",
    "vector_type",
    "vector_dtype",
    "vector_type_of_dtype",
    "comparison_type",
    "NUMPY_SCALAR_CLASHES",
]

BASE_TYPES: dict[str, type] = {
    "char": np.int8,
    "uchar": np.uint8,
    "short": np.int16,
    "ushort": np.uint16,
    "int": np.int32,
    "uint": np.uint32,
    "long": np.int64,
    "ulong": np.uint64,
    "float": np.float32,
    "double": np.float64,
}
"""OpenCL C scalar name -> numpy scalar type. ``long`` is always 64-bit, as in OpenCL."""

WIDTHS: tuple[int, ...] = (2, 3, 4, 8, 16)

_XYZW = "xyzw"
_HEX = "0123456789abcdef"
_SIGNED_OF_SIZE = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
_SCALAR_NAME = {np.dtype(t): n for n, t in BASE_TYPES.items()}


def _field_names(width: int) -> list[str]:
    return list(_XYZW[:width]) if width <= 4 else [f"s{_HEX[i].upper() if i > 9 else i}" for i in range(width)]


# the slots a 3-wide vector takes per layout: OpenCL C pads it to four, CUDA/HIP pack it
_VEC3_SLOTS = {"opencl": 4, "packed": 3}


def vector_dtype(base: Any, width: int, layout: str = "opencl") -> np.dtype:
    """The numpy dtype of one ``base`` x ``width`` vector.

    ``layout="opencl"`` pads 3-wide vectors to four slots (``float3``: 16 bytes), as OpenCL C
    does; ``layout="packed"`` keeps them at three (``float3``: 12 bytes), as CUDA and HIP do.
    Other widths are identical in both layouts. Fields are ``x, y, z, w`` up to width 4 and
    ``s0 ... sF`` for 8 and 16 (the names PyOpenCL uses, so arrays interoperate).
    """
    base = np.dtype(base)
    if base not in _SCALAR_NAME:
        raise TypeError(f"vector base type must be one of {sorted(BASE_TYPES)}, got {base}")
    if width not in WIDTHS:
        raise ValueError(f"vector width must be one of {WIDTHS}, got {width}")
    vec3_slots = _VEC3_SLOTS.get(layout)
    if vec3_slots is None:
        raise ValueError(f"layout must be 'opencl' or 'packed', got {layout!r}")
    slots = vec3_slots if width == 3 else width
    names = _field_names(width)
    return np.dtype(
        {
            "names": names,
            "formats": [base] * width,
            "offsets": [i * base.itemsize for i in range(width)],
            "itemsize": slots * base.itemsize,
        }
    )


def comparison_type(base: Any) -> type:
    """Element type of a comparison result: the signed integer of the same size (OpenCL rule)."""
    return _SIGNED_OF_SIZE[np.dtype(base).itemsize]


_SWIZZLE_XYZW = re.compile(r"^[xyzw]{1,16}$")
_SWIZZLE_S = re.compile(r"^[sS][0-9a-fA-F]{1,16}$")
_SPECIAL = ("lo", "hi", "even", "odd")


class Vector:
    """Base class of the 50 vector types; use the concrete classes (``float4(...)``).

    Construction, as in OpenCL C vector literals::

        float4(1.0, 2.0, 3.0, 4.0)     # one value per component
        float4(1.0)                    # broadcast
        float4(float2(1, 2), 3.0, 4.0) # smaller vectors and scalars, in order
        float4([1, 2, 3, 4])           # a sequence / 1-D array of exactly 4 values

    Vectors of another base type are converted component by component as
    ``float4.convert(int4_value)`` converts them (floats truncate toward zero, ints wrap), the
    same inside kernels: ``float4(uchar4_value)``, ``float4(int2_value, 1.0, 2.0)``.
    """

    __slots__ = ("_v",)

    # Filled in per concrete class.
    name: str = "vector"
    base: type = np.float32
    width: int = 0
    dtype: np.dtype
    dtype_packed: np.dtype
    scalar_name: str = ""
    fields: tuple[str, ...] = ()

    def __init__(self, *args: Any):
        cls = type(self)
        if len(args) == 1 and not isinstance(args[0], Vector) and np.ndim(args[0]) == 0 and not _is_record(args[0]):
            value = _to_base_scalar(args[0], cls.base, cls.name)
            object.__setattr__(self, "_v", np.full(cls.width, value, dtype=cls.base))
            return
        if len(args) == 1 and _is_record(args[0]):
            object.__setattr__(self, "_v", cls._from_record(args[0]))
            return
        parts: list[Any] = []
        for arg in args:
            if isinstance(arg, Vector):
                # another base type converts as T.convert does (floats truncate, ints wrap): the rule
                # kernels apply to float3(uchar3_value) too
                parts.extend((arg._v if arg.base is cls.base else _cast_array(arg._v, cls.base)).tolist())
            elif np.ndim(arg) == 1:
                parts.extend(np.asarray(arg).tolist())
            elif np.ndim(arg) == 0:
                parts.append(arg)
            else:
                raise TypeError(f"{cls.name}(...) cannot take a {np.ndim(arg)}-D array; pass one vector's components")
        if len(parts) != cls.width:
            raise TypeError(
                f"{cls.name}(...) needs {cls.width} components in total (or one scalar to broadcast), "
                f"got {len(parts)}"
            )
        object.__setattr__(self, "_v", np.array([_to_base_scalar(p, cls.base, cls.name) for p in parts], dtype=cls.base))

    # -- conversion -------------------------------------------------------------------
    @classmethod
    def convert(cls, value: Any) -> "Vector":
        """Component-wise conversion from any vector/sequence of the same width (like
        OpenCL's ``convert_float4``: floats -> ints truncate toward zero, ints wrap)."""
        arr = np.asarray(value._v if isinstance(value, Vector) else value)
        if arr.shape != (cls.width,):
            raise TypeError(f"{cls.name}.convert needs {cls.width} components, got shape {arr.shape}")
        return cls._wrap(_cast_array(arr, cls.base))

    @classmethod
    def from_numpy(cls, value: Any) -> "Vector":
        """A vector from one element of an array of ``cls.dtype`` / ``cls.dtype_packed``
        (a ``np.void`` record or 0-d structured array) or from a ``(width,)`` array."""
        if _is_record(value):
            return cls._wrap(cls._from_record(value))
        return cls(np.asarray(value))

    @classmethod
    def _from_record(cls, rec: Any) -> np.ndarray:
        names = getattr(getattr(rec, "dtype", None), "names", None)
        if not names or tuple(names) != cls.fields:
            raise TypeError(f"{cls.name}.from_numpy: record has fields {names}, expected {cls.fields}")
        return np.array([rec[f] for f in cls.fields], dtype=cls.base)

    def to_numpy(self, layout: str = "opencl") -> np.ndarray:
        """This vector as a 0-d array of ``vector_dtype(base, width, layout)``."""
        out = np.zeros((), vector_dtype(self.base, self.width, layout))
        for f, c in zip(self.fields, self._v):
            out[f] = c
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self._v.copy()
        return arr if dtype is None else arr.astype(dtype)

    def tolist(self) -> list:
        return self._v.tolist()

    @classmethod
    def _wrap(cls, arr: np.ndarray) -> "Vector":
        obj = object.__new__(cls)
        object.__setattr__(obj, "_v", arr.astype(cls.base, copy=False))
        return obj

    # -- components and swizzles ------------------------------------------------------
    def __len__(self) -> int:
        return self.width

    def __iter__(self):
        return iter(self._v.copy())

    def __getitem__(self, i: int):
        return self._v[i]

    def __getattr__(self, attr: str):
        idx = self._swizzle_indices(attr)
        if idx is None:
            raise AttributeError(f"{type(self).name} has no attribute {attr!r}")
        if len(idx) == 1:
            return self._v[idx[0]]
        return vector_type(self.base, len(idx))._wrap(self._v[list(idx)])

    def __setattr__(self, attr: str, value: Any) -> None:
        idx = self._swizzle_indices(attr)
        if idx is None:
            raise AttributeError(f"{type(self).name} has no attribute {attr!r}")
        if len(set(idx)) != len(idx):
            raise AttributeError(f"the swizzle .{attr} names a component twice and cannot be assigned")
        if isinstance(value, Vector):
            if value.width != len(idx):
                raise ValueError(f"cannot assign a {value.name} to .{attr} ({len(idx)} components)")
            values = [_to_base_scalar(c, self.base, self.name) for c in value._v]
        else:                      # one number to every component named, as kernels do
            values = [_to_base_scalar(value, self.base, self.name)] * len(idx)
        for i, c in zip(idx, values):
            self._v[i] = c

    def _component_name(self, i: int) -> str:
        return _XYZW[i] if self.width <= 4 else f"s{_HEX[i]}"

    @classmethod
    def _swizzle_indices(cls, attr: str) -> tuple[int, ...] | None:
        w = cls.width
        if attr in _SPECIAL:
            if w == 3 and attr in ("hi", "odd"):
                raise AttributeError(
                    f"{cls.name}.{attr} reads the padding slot, which OpenCL leaves undefined; "
                    f"use .z / .y explicitly"
                )
            n = 4 if w == 3 else w
            half = n // 2
            return {
                "lo": tuple(range(half)),
                "hi": tuple(range(half, n)),
                "even": tuple(range(0, n, 2)),
                "odd": tuple(range(1, n, 2)),
            }[attr]
        if _SWIZZLE_XYZW.match(attr) and w <= 4:
            idx = tuple(_XYZW.index(c) for c in attr)
        elif _SWIZZLE_S.match(attr):
            idx = tuple(int(c, 16) for c in attr[1:])
        else:
            return None
        if any(i >= w for i in idx):
            raise AttributeError(f"{cls.name}.{attr}: component out of range for width {w}")
        if len(idx) not in (1, 2, 3, 4, 8, 16):
            raise AttributeError(f"{cls.name}.{attr}: a swizzle must select 1, 2, 3, 4, 8 or 16 components")
        return idx

    # -- arithmetic -------------------------------------------------------------------
    def _operand(self, other: Any, op: str) -> np.ndarray | None:
        if isinstance(other, Vector):
            if type(other) is not type(self):
                raise TypeError(
                    f"{self.name} {op} {other.name}: OpenCL needs both vectors of the same type; convert one "
                    f"with {self.name}.convert(...)"
                )
            return other._v
        if isinstance(other, (bool, int, float, np.integer, np.floating)):
            if np.issubdtype(self.base, np.integer) and isinstance(other, (float, np.floating)):
                raise TypeError(
                    f"{self.name} {op} float: an integer vector does not take a float operand implicitly; "
                    f"use float{self.width}.convert(v) {op} ... or int(...)"
                )
            return np.array(_to_base_scalar(other, self.base, self.name), dtype=self.base)
        return None

    def _is_int(self) -> bool:
        return bool(np.issubdtype(self.base, np.integer))

    def _binary(self, other: Any, op: str, fn, reverse: bool = False, int_only: bool = False):
        if int_only and not self._is_int():
            raise TypeError(f"operator {op} needs an integer vector, not {self.name}")
        o = self._operand(other, op)
        if o is None:
            return NotImplemented
        a, b = (o, self._v) if reverse else (self._v, o)
        with np.errstate(all="ignore"):
            return type(self)._wrap(np.asarray(fn(a, b)))

    def __add__(self, o): return self._binary(o, "+", np.add)
    def __radd__(self, o): return self._binary(o, "+", np.add, True)
    def __sub__(self, o): return self._binary(o, "-", np.subtract)
    def __rsub__(self, o): return self._binary(o, "-", np.subtract, True)
    def __mul__(self, o): return self._binary(o, "*", np.multiply)
    def __rmul__(self, o): return self._binary(o, "*", np.multiply, True)

    def __truediv__(self, o):
        self._no_int_truediv()
        return self._binary(o, "/", np.divide)

    def __rtruediv__(self, o):
        self._no_int_truediv()
        return self._binary(o, "/", np.divide, True)

    def _no_int_truediv(self):
        if self._is_int():
            raise TypeError(
                f"{self.name} / ...: '/' is true division in PyGPGPU kernels; use // for floor division "
                f"of integer vectors, or convert to float{self.width} first"
            )

    def __floordiv__(self, o): return self._binary(o, "//", _floordiv)
    def __rfloordiv__(self, o): return self._binary(o, "//", _floordiv, True)
    def __mod__(self, o): return self._binary(o, "%", _mod)
    def __rmod__(self, o): return self._binary(o, "%", _mod, True)
    def __and__(self, o): return self._binary(o, "&", np.bitwise_and, int_only=True)
    def __rand__(self, o): return self._binary(o, "&", np.bitwise_and, True, True)
    def __or__(self, o): return self._binary(o, "|", np.bitwise_or, int_only=True)
    def __ror__(self, o): return self._binary(o, "|", np.bitwise_or, True, True)
    def __xor__(self, o): return self._binary(o, "^", np.bitwise_xor, int_only=True)
    def __rxor__(self, o): return self._binary(o, "^", np.bitwise_xor, True, True)
    def __lshift__(self, o): return self._binary(o, "<<", _shl, int_only=True)
    def __rlshift__(self, o): return self._binary(o, "<<", _shl, True, True)
    def __rshift__(self, o): return self._binary(o, ">>", _shr, int_only=True)
    def __rrshift__(self, o): return self._binary(o, ">>", _shr, True, True)

    def __neg__(self):
        with np.errstate(all="ignore"):
            return type(self)._wrap(np.negative(self._v))

    def __pos__(self):
        return type(self)._wrap(self._v.copy())

    def __invert__(self):
        if not self._is_int():
            raise TypeError(f"operator ~ needs an integer vector, not {self.name}")
        return type(self)._wrap(np.invert(self._v))

    def __abs__(self):
        with np.errstate(all="ignore"):
            return type(self)._wrap(np.abs(self._v))

    # -- comparisons ------------------------------------------------------------------
    def _compare(self, other: Any, op: str, fn):
        o = self._operand(other, op)
        if o is None:
            return NotImplemented
        ctype = vector_type(comparison_type(self.base), self.width)
        return ctype._wrap(np.where(fn(self._v, o), -1, 0).astype(ctype.base))

    def __lt__(self, o): return self._compare(o, "<", np.less)
    def __le__(self, o): return self._compare(o, "<=", np.less_equal)
    def __gt__(self, o): return self._compare(o, ">", np.greater)
    def __ge__(self, o): return self._compare(o, ">=", np.greater_equal)

    def __eq__(self, other: Any) -> bool:
        """Exact value equality (same type, same components) -> bool, for host code.
        Inside kernels use ``funcs``-style component-wise comparisons instead."""
        return type(other) is type(self) and bool(np.array_equal(self._v, other._v))

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # components are assignable (v.x = ...)

    def eq(self, other: Any) -> "Vector":
        """Component-wise ``==``: -1 where equal, 0 elsewhere (OpenCL's ``a == b``)."""
        return self._compare(other, "==", np.equal)

    def ne(self, other: Any) -> "Vector":
        """Component-wise ``!=``: -1 where different, 0 elsewhere (OpenCL's ``a != b``)."""
        return self._compare(other, "!=", np.not_equal)

    def __bool__(self) -> bool:
        raise TypeError(
            f"the truth value of a {self.name} is ambiguous; compare components, or use "
            f"any()/all() on the comparison result's components"
        )

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy scalars on the left (``np.float32(2) * v``) use the vector operators, so the
        result stays a vector of this type; other ufuncs (``np.sqrt(v)``) apply component-wise
        and return a vector when every other operand is a scalar."""
        if method != "__call__" or kwargs.get("out") is not None:
            return NotImplemented
        names = _UFUNC_OPERATORS.get(ufunc)
        if names is not None and len(inputs) == 2:
            a, b = inputs
            res = getattr(a, names[0])(b) if isinstance(a, Vector) else getattr(b, names[1])(a)
            if res is not NotImplemented:
                return res
        arrays = [x._v if isinstance(x, Vector) else x for x in inputs]
        with np.errstate(all="ignore"):
            result = ufunc(*arrays, **kwargs)
        if any(not isinstance(x, Vector) and np.ndim(x) for x in inputs):
            return result
        return _wrap_result(result, self.width)

    def __repr__(self) -> str:
        return f"{self.name}({', '.join(repr(c.item()) for c in self._v)})"

    def __copy__(self):
        return type(self)._wrap(self._v.copy())

    def __reduce__(self):
        return (type(self), tuple(self._v.tolist()))


_UFUNC_OPERATORS = {
    np.add: ("__add__", "__radd__"),
    np.subtract: ("__sub__", "__rsub__"),
    np.multiply: ("__mul__", "__rmul__"),
    np.true_divide: ("__truediv__", "__rtruediv__"),
    np.floor_divide: ("__floordiv__", "__rfloordiv__"),
    np.remainder: ("__mod__", "__rmod__"),
    np.bitwise_and: ("__and__", "__rand__"),
    np.bitwise_or: ("__or__", "__ror__"),
    np.bitwise_xor: ("__xor__", "__rxor__"),
    np.left_shift: ("__lshift__", "__rlshift__"),
    np.right_shift: ("__rshift__", "__rrshift__"),
    np.less: ("__lt__", "__gt__"),
    np.less_equal: ("__le__", "__ge__"),
    np.greater: ("__gt__", "__lt__"),
    np.greater_equal: ("__ge__", "__le__"),
}


def _wrap_result(result: Any, width: int) -> Any:
    if isinstance(result, tuple):
        return tuple(_wrap_result(r, width) for r in result)
    arr = np.asarray(result)
    if arr.shape == (width,) and arr.dtype in _SCALAR_NAME:
        return vector_type(arr.dtype, width)._wrap(arr)
    return result


def _is_record(value: Any) -> bool:
    dt = getattr(value, "dtype", None)
    return dt is not None and dt.names is not None and np.ndim(value) == 0


def _to_base_scalar(value: Any, base: type, name: str):
    """Convert one component the way C does on assignment: ints wrap, floats truncate."""
    if isinstance(value, Vector):
        raise TypeError(f"{name}: expected a scalar component, got a {value.name}")
    if np.issubdtype(base, np.integer):
        if isinstance(value, (float, np.floating)):
            if not np.isfinite(value):
                raise ValueError(f"{name}: cannot convert {value} to an integer component")
            value = int(value)
        bits = np.dtype(base).itemsize * 8
        return np.array(int(value) & ((1 << bits) - 1), dtype=f"u{bits // 8}").view(base)[()]
    return base(value)


def _cast_array(arr: np.ndarray, base: type) -> np.ndarray:
    if np.issubdtype(base, np.integer) and np.issubdtype(arr.dtype, np.floating):
        arr = np.trunc(arr).astype(np.int64)
    with np.errstate(all="ignore"):
        return arr.astype(base)


def _floordiv(a, b):
    """Python floor division; integer division by zero yields 0 (the device helpers do too)."""
    if np.issubdtype(np.result_type(a, b), np.integer):
        b = np.asarray(b)
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.floor_divide(a, safe))
    return np.floor_divide(a, b)


def _mod(a, b):
    """Python modulo (result has the divisor's sign); integer modulo by zero yields 0."""
    if np.issubdtype(np.result_type(a, b), np.integer):
        b = np.asarray(b)
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.mod(a, safe))
    return np.mod(a, b)


def _shift_mask(a, b):
    bits = np.asarray(a).dtype.itemsize * 8
    return np.bitwise_and(np.asarray(b).astype(np.asarray(a).dtype), bits - 1)


def _shl(a, b):
    """OpenCL shifts use the count modulo the bit width (CUDA/HIP helpers mask the same way)."""
    return np.left_shift(a, _shift_mask(a, b))


def _shr(a, b):
    return np.right_shift(a, _shift_mask(a, b))


VECTOR_TYPES: dict[str, type[Vector]] = {}
"""``"float4" -> float4`` for all 50 types."""


def _make_class(scalar: str, base: type, width: int) -> type[Vector]:
    name = f"{scalar}{width}"
    doc = (
        f"OpenCL ``{name}``: {width} x {np.dtype(base).name}. ``{name}.dtype`` is the OpenCL layout "
        f"({vector_dtype(base, width).itemsize} bytes), ``{name}.dtype_packed`` the CUDA/HIP layout "
        f"({vector_dtype(base, width, 'packed').itemsize} bytes).\n\n" + (Vector.__doc__ or "")
    )
    return type(
        name,
        (Vector,),
        {
            "__slots__": (),
            "__doc__": doc,
            "__module__": __name__,
            "name": name,
            "base": base,
            "width": width,
            "scalar_name": scalar,
            "dtype": vector_dtype(base, width, "opencl"),
            "dtype_packed": vector_dtype(base, width, "packed"),
            "fields": tuple(_field_names(width)),
        },
    )


for _scalar, _base in BASE_TYPES.items():
    for _w in WIDTHS:
        _cls = _make_class(_scalar, _base, _w)
        VECTOR_TYPES[_cls.name] = _cls
        globals()[_cls.name] = _cls
del _scalar, _base, _w, _cls

__all__ += list(VECTOR_TYPES)

NUMPY_SCALAR_CLASHES: tuple[str, ...] = tuple(
    n for n in VECTOR_TYPES if isinstance(getattr(np, n, None), type) and issubclass(getattr(np, n), np.generic))
"""The vector names numpy also has as scalar types (``int8``: 8 ints here, one byte there); the top
level of ``pygpgpu`` offers them only with a DeprecationWarning, ``pygpgpu.vec`` has them all."""


def vector_type(base: Any, width: int) -> type[Vector]:
    """The vector class for a base (numpy dtype/type or OpenCL name such as ``"float"``) and width."""
    if isinstance(base, str) and base in BASE_TYPES:
        scalar = base
    else:
        try:
            scalar = _SCALAR_NAME[np.dtype(base)]
        except (KeyError, TypeError):
            raise TypeError(f"no vector type has base {base!r}; bases: {sorted(BASE_TYPES)}") from None
    cls = VECTOR_TYPES.get(f"{scalar}{width}")
    if cls is None:
        raise ValueError(f"no vector type {scalar}{width}: widths are {WIDTHS}")
    return cls


def vector_type_of_dtype(dtype: Any) -> tuple[type[Vector], str] | None:
    """``(vector class, layout)`` if ``dtype`` is one of the vector dtypes (either layout), else None.
    A 3-wide dtype that matches both layouts cannot happen (16 vs 12 bytes)."""
    dtype = np.dtype(dtype)
    if dtype.names is None:
        return None
    for cls in VECTOR_TYPES.values():
        if dtype == cls.dtype:
            return cls, "opencl"
        if dtype == cls.dtype_packed:
            return cls, "packed"
    return None
