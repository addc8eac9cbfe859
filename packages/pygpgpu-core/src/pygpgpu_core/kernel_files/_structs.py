"""Host-side twins of device types: ctypes classes and numpy dtypes with the device layout.

Offsets come from :mod:`pygpgpu_core.cdecl` (the dialect's alignment rules); the ctypes
classes are packed (``_pack_ = 1``) with explicit padding members, so ``ctypes.sizeof`` and
every field offset equal the device's whatever the host ABI would have chosen. Each class
also carries ``dtype``, a numpy structured dtype of the same layout, so
``np.zeros(n, Particle.dtype)`` is an array that a ``__global Particle*`` parameter accepts;
vector members appear there as subarrays (``ps["pos"]`` has shape ``(n, 4)``).
"""
from __future__ import annotations

import ctypes
from typing import Any, ClassVar

import numpy as np

from ..cdecl import Pointer, Scalar, Struct, Vector
from ._names import python_names

__all__ = ["CVector", "CStruct", "CUnion", "scalar_ctype", "vector_ctype", "struct_ctype", "numpy_dtype", "ctype_of"]

_SCALAR_CTYPES = {
    "bool": ctypes.c_bool,
    "int8": ctypes.c_int8,
    "uint8": ctypes.c_uint8,
    "int16": ctypes.c_int16,
    "uint16": ctypes.c_uint16,
    "int32": ctypes.c_int32,
    "uint32": ctypes.c_uint32,
    "int64": ctypes.c_int64,
    "uint64": ctypes.c_uint64,
    "float16": ctypes.c_uint16,  # raw bits: ctypes has no half type
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
}
_COMPONENTS = "xyzw"


def scalar_ctype(t: Scalar) -> Any:
    return _SCALAR_CTYPES[t.dtype]


class CVector(ctypes.Structure):
    """Base of the vector types (``float4`` ...) used as struct members and by-value arguments.
    Components are ``x, y, z, w`` (or ``s0 ... sf`` beyond four); iterate to get them all."""

    _pack_ = 1
    _layout_ = "ms"
    _components_: tuple = ()
    dtype: ClassVar[np.dtype]

    def __iter__(self):
        return iter([getattr(self, c) for c in self._components_])

    def __len__(self) -> int:
        return len(self._components_)

    def __eq__(self, other: Any) -> bool:
        try:
            return list(self) == list(other)
        except TypeError:
            return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable: components are assignable

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(v) for v in self)})"


class _Record:
    """Members by position and a readable repr for generated structs and unions."""

    _members_: tuple = ()
    _keywords_: dict = {}
    """Python name -> C member name, for members named like Python keywords (``in_`` -> ``in``)."""
    __layout__: tuple = ()

    def _python_members_(self) -> "list[str]":
        renamed = {c: py for py, c in self._keywords_.items()}
        return [renamed.get(m, m) for m in self._members_]

    def __init__(self, *args: Any, **kwargs: Any):
        """Positional arguments fill the members in declaration order (padding is skipped).
        Keywords are the members' Python names: ``in_`` for a member ``in`` (as in the ``.pyi``)."""
        if len(args) > len(self._members_):
            raise TypeError(f"{type(self).__name__} has {len(self._members_)} members "
                            f"({', '.join(self._members_)}), got {len(args)} values")
        if kwargs:
            kwargs = {self._keywords_.get(k, k): v for k, v in kwargs.items()}
            for key in kwargs:
                if key.startswith("_") and key not in self._members_ or not hasattr(type(self), key):
                    raise TypeError(f"{type(self).__name__} has no member {key!r} (members: "
                                    f"{', '.join(self._python_members_())})")
        for name, value in zip(self._members_, args):
            if name in kwargs:
                raise TypeError(f"{type(self).__name__} got two values for member {name!r}")
            kwargs[name] = value
        super().__init__(**kwargs)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self._members_)})"

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, _Record) or other.__layout__ != self.__layout__:
            return NotImplemented
        return bytes(self) == bytes(other)  # type: ignore[call-overload]  # CStruct, CUnion: ctypes buffers

    __hash__ = None  # type: ignore[assignment]  # mutable: members are assignable


class CStruct(_Record, ctypes.Structure):
    """Base of the struct types generated from kernel files. ``dtype`` is the numpy twin;
    ``__layout__`` identifies the layout, so the same struct imported from two files matches."""

    _pack_ = 1
    _layout_ = "ms"
    dtype: ClassVar[np.dtype]
    __layout__: tuple = ()
    __c_name__: str = ""


class CUnion(_Record, ctypes.Union):
    """Base of the union types generated from kernel files (same helpers as CStruct)."""

    _pack_ = 1
    _layout_ = "ms"
    dtype: ClassVar[np.dtype]
    __layout__: tuple = ()
    __c_name__: str = ""


_vector_cache: dict = {}


def vector_ctype(v: Vector) -> type:
    key = (v.base.name, v.base.dtype, v.n, v.size, v.align)
    cls = _vector_cache.get(key)
    if cls is None:
        names = list(_COMPONENTS[:v.n]) if v.n <= 4 else [f"s{i:x}" for i in range(v.n)]
        base = scalar_ctype(v.base)
        fields = [(n, base) for n in names]
        pad = v.size - v.base.size * v.n
        if pad:
            fields.append(("_pad", ctypes.c_uint8 * pad))
        cls = type(v.name, (CVector,), {"_pack_": 1, "_layout_": "ms", "_fields_": fields,
                                        "_components_": tuple(names), "__module__": __name__,
                                        "dtype": numpy_dtype(v)})
        _vector_cache[key] = cls
    return cls


def ctype_of(t: Any) -> Any:
    """The ctypes type holding one value of device type ``t`` (pointers as 64-bit integers)."""
    if isinstance(t, Scalar):
        return scalar_ctype(t)
    if isinstance(t, Vector):
        return vector_ctype(t)
    if isinstance(t, Pointer):
        return ctypes.c_uint64
    return struct_ctype(t)


_struct_cache: dict = {}


def layout_signature(s: Struct) -> tuple:
    def sig(t):
        if isinstance(t, Struct):
            return ("struct", t.size, t.align, tuple((f.name, f.offset, f.dims, sig(f.type)) for f in t.fields))
        if isinstance(t, Pointer):
            return ("ptr",)
        return (t.kind, t.name, t.size)

    return sig(s)


def struct_ctype(s: Struct) -> type:
    """A CStruct subclass for ``s`` (cached per layout object)."""
    cls = _struct_cache.get(id(s))
    if cls is not None and cls.__struct__ is s:
        return cls
    fields: list = []
    anonymous = []
    pos = 0
    pad_no = 0
    members = sorted(s.fields, key=lambda f: f.offset) if not s.union else s.fields
    for f in members:
        ctype = ctype_of(f.type)
        for d in reversed(f.dims):
            ctype = ctype * d
        if not s.union and f.offset > pos:
            fields.append((f"_pad{pad_no}", ctypes.c_uint8 * (f.offset - pos)))
            pad_no += 1
        fields.append((f.name, ctype))
        if f.name in s.anonymous:
            anonymous.append(f.name)
        pos = f.offset + ctypes.sizeof(ctype)
    if s.union:
        pos = max((ctypes.sizeof(c) for _, c in fields), default=0)
    if s.size > pos:    # a union's members all start at 0: its padding member spans the whole size
        fields.append((f"_pad{pad_no}", ctypes.c_uint8 * (s.size if s.union else s.size - pos)))
    base = (CUnion,) if s.union else (CStruct,)
    ns = {"_pack_": 1, "_layout_": "ms", "_fields_": fields, "__module__": __name__,
          "__struct__": s, "__layout__": layout_signature(s), "__c_name__": s.c_spelling,
          "_members_": tuple(f.name for f in s.fields)}
    keywords = {py: c for py, c in zip(python_names([f.name for f in s.fields]), (f.name for f in s.fields))
                if py != c}
    ns["_keywords_"] = keywords
    for py, c in keywords.items():     # s.in_ reads and writes member "in", as the .pyi says
        ns[py] = _member_alias(c)
    if anonymous:
        ns["_anonymous_"] = anonymous
    ns["dtype"] = numpy_dtype(s)
    cls = type(s.name or s.tag or "anonymous", base, ns)
    if ctypes.sizeof(cls) != s.size:  # a layout bug must never reach a kernel
        raise AssertionError(f"ctypes layout of {s.name} is {ctypes.sizeof(cls)} bytes, device layout {s.size}")
    _struct_cache[id(s)] = cls
    return cls


def _member_alias(member: str) -> property:
    def get(self: Any) -> Any:
        return getattr(self, member)

    def set_(self: Any, value: Any) -> None:
        setattr(self, member, value)

    return property(get, set_, doc=f"member {member!r} (a Python keyword, so spelled with a trailing underscore)")


def numpy_dtype(t: Any) -> np.dtype:
    """The numpy dtype of one device value (structured for structs and vectors)."""
    if isinstance(t, Scalar):
        return np.dtype(t.dtype)
    if isinstance(t, Pointer):
        return np.dtype(np.uint64)
    if isinstance(t, Vector):
        names = list(_COMPONENTS[:t.n]) if t.n <= 4 else [f"s{i:x}" for i in range(t.n)]
        base = np.dtype(t.base.dtype)
        return np.dtype({"names": names, "formats": [base] * t.n,
                         "offsets": [i * base.itemsize for i in range(t.n)], "itemsize": t.size})
    names, formats, offsets = [], [], []
    for f in t.fields:
        if isinstance(f.type, Vector):  # members as plain subarrays: ps["pos"] is an (n, 4) float array
            fmt = np.dtype((np.dtype(f.type.base.dtype), (f.type.n,)))
        else:
            fmt = numpy_dtype(f.type)
        if f.dims:
            fmt = np.dtype((fmt, tuple(f.dims)))
        names.append(f.name)
        formats.append(fmt)
        offsets.append(f.offset)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": t.size})
