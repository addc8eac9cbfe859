"""C types as the device sees them: scalars, vectors, structs and pointers, with each language's layout.

What differs between OpenCL C, CUDA C++ and HIP C++ (the size of ``long``, vector widths, sizes
and alignments) is a field of the language's description (``_languages.Language``); the
functions here take a language or its name (``"opencl"``, ``"cuda"``, ``"hip"``):

- OpenCL: an n-component vector is aligned to its size; 3-component vectors occupy and
  align like 4-component ones (``float3`` is 16 bytes).
- CUDA (vector_types.h): 1/2/4-component vectors align to their size capped at 16 bytes
  (``double4`` is 32 bytes aligned 16); 3-component vectors are packed and aligned like
  their element (``float3`` is 12 bytes aligned 4).
- HIP (ROCm): like CUDA, but without the 16-byte cap (``double4`` is aligned 32).
- ``long`` is 64-bit in OpenCL; in CUDA/HIP it follows the host ABI (LP64 / LLP64).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

from ._languages import Language, language

__all__ = [
    "Scalar",
    "Vector",
    "Struct",
    "Field",
    "Pointer",
    "CType",
    "scalar_type",
    "vector_type",
    "builtin_type",
    "c_name",
]


@dataclass(frozen=True)
class Scalar:
    name: str
    """Canonical OpenCL-style spelling: ``int``, ``uint``, ``long``, ``float``, ``half`` ..."""
    dtype: str
    """numpy dtype name (``"float32"``)."""
    size: int
    align: int

    @property
    def kind(self) -> str:
        return "scalar"


@dataclass(frozen=True)
class Vector:
    base: Scalar
    n: int
    size: int
    align: int

    @property
    def kind(self) -> str:
        return "vector"

    @property
    def name(self) -> str:
        return f"{self.base.name}{self.n}"

    @property
    def stride(self) -> int:
        """Components actually stored (OpenCL pads 3 to 4)."""
        return self.size // self.base.size


@dataclass(frozen=True)
class Pointer:
    pointee: "CType | None"
    """None for ``void*``."""
    address_space: str = "global"
    """``global``, ``local``, ``constant`` or ``private`` (OpenCL); always ``global`` for CUDA/HIP."""
    const: bool = False
    """The pointee is const-qualified (or lives in ``__constant`` memory): the kernel only reads it."""
    size: int = 8
    align: int = 8

    @property
    def kind(self) -> str:
        return "pointer"


@dataclass(frozen=True)
class Field:
    name: str
    type: "CType"
    offset: int
    dims: tuple = ()
    """Array extents for ``float m[4][4]``; empty for a plain member."""


@dataclass(eq=False)
class Struct:
    name: str
    """The name users see: the typedef name, else the tag."""
    fields: list = field(default_factory=list)
    size: int = 0
    align: int = 1
    union: bool = False
    tag: str = ""
    """``struct <tag>`` name, empty for an anonymous struct."""
    anonymous: list = field(default_factory=list)
    """Field names that are unnamed nested structs/unions (their members are reached directly)."""

    @property
    def kind(self) -> str:
        return "struct"

    @property
    def c_spelling(self) -> str:
        return self.name or f"struct {self.tag}"


CType = Union[Scalar, Vector, Struct, Pointer]

# canonical name -> (numpy dtype, size); "long" is fixed up per language (Language.long_bytes)
_SCALARS = {
    "bool": ("bool", 1),
    "char": ("int8", 1),
    "uchar": ("uint8", 1),
    "short": ("int16", 2),
    "ushort": ("uint16", 2),
    "int": ("int32", 4),
    "uint": ("uint32", 4),
    "long": ("int64", 8),
    "ulong": ("uint64", 8),
    "longlong": ("int64", 8),
    "ulonglong": ("uint64", 8),
    "half": ("float16", 2),
    "float": ("float32", 4),
    "double": ("float64", 8),
    "size_t": ("uint64", 8),
    "ptrdiff_t": ("int64", 8),
    "intptr_t": ("int64", 8),
    "uintptr_t": ("uint64", 8),
}

# single-identifier spellings -> canonical scalar
_ALIASES = {
    "_Bool": "bool",
    "signed char": "char",
    "uchar": "uchar",
    "unsigned char": "uchar",
    "__half": "half",
    "int8_t": "char",
    "uint8_t": "uchar",
    "int16_t": "short",
    "uint16_t": "ushort",
    "int32_t": "int",
    "uint32_t": "uint",
    "int64_t": "longlong",
    "uint64_t": "ulonglong",
    "ssize_t": "ptrdiff_t",
}

_VECTOR_BASES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                 "longlong", "ulonglong", "half", "float", "double")
_VECTOR_RE = re.compile(r"^(?:__)?(" + "|".join(sorted(_VECTOR_BASES, key=len, reverse=True)) + r")(\d+)$")
LanguageLike = Union[str, Language]


def scalar_type(name: str, dialect: LanguageLike) -> Scalar:
    """The Scalar for a canonical or alias spelling in language ``dialect``; KeyError when unknown."""
    canon = _ALIASES.get(name, name)
    dtype, size = _SCALARS[canon]
    if canon in ("long", "ulong"):
        size = language(dialect).long_bytes
        dtype = ("int" if canon == "long" else "uint") + str(8 * size)
    return Scalar(canon, dtype, size, size)


def vector_type(base: str, n: int, dialect: LanguageLike) -> Vector:
    """An n-component vector with the language's size and alignment (see module docstring)."""
    lang = language(dialect)
    if n not in lang.vector_widths:
        raise KeyError(f"{base}{n}")
    b = scalar_type(base, lang)
    if n == 3:
        if lang.vector3_padded:
            return Vector(b, n, b.size * 4, b.size * 4)
        return Vector(b, n, b.size * 3, b.size)
    size = b.size * n
    return Vector(b, n, size, min(size, lang.vector_align_cap) if lang.vector_align_cap else size)


# multi-word C spellings (words sorted) -> canonical scalar
_MULTIWORD = {
    ("unsigned",): "uint",
    ("signed",): "int",
    ("int", "signed"): "int",
    ("int", "unsigned"): "uint",
    ("char", "signed"): "char",
    ("char", "unsigned"): "uchar",
    ("short",): "short",
    ("int", "short"): "short",
    ("short", "signed"): "short",
    ("int", "short", "signed"): "short",
    ("short", "unsigned"): "ushort",
    ("int", "short", "unsigned"): "ushort",
    ("long",): "long",
    ("int", "long"): "long",
    ("long", "signed"): "long",
    ("int", "long", "signed"): "long",
    ("long", "unsigned"): "ulong",
    ("int", "long", "unsigned"): "ulong",
    ("long", "long"): "longlong",
    ("int", "long", "long"): "longlong",
    ("long", "long", "signed"): "longlong",
    ("int", "long", "long", "signed"): "longlong",
    ("long", "long", "unsigned"): "ulonglong",
    ("int", "long", "long", "unsigned"): "ulonglong",
}

TYPE_WORDS = frozenset({"unsigned", "signed", "short", "long", "int", "char", "float", "double",
                        "void", "bool", "_Bool", "half"})
"""Keywords that combine into one builtin type (``unsigned long long int``)."""


def builtin_type(words: "list[str]", dialect: LanguageLike) -> "Scalar | Vector | None":
    """Resolve a builtin spelling (one identifier like ``float4``/``uint`` or keywords like
    ``unsigned int``); None when it is not a builtin (a typedef or struct name)."""
    if len(words) > 1 or words[0] in ("unsigned", "signed", "short", "long"):
        canon = _MULTIWORD.get(tuple(sorted(words)))
        return scalar_type(canon, dialect) if canon else None
    word = words[0]
    if word == "void":
        return None
    try:
        return scalar_type(word, dialect)
    except KeyError:
        pass
    m = _VECTOR_RE.match(word)
    if m:
        base, n = m.group(1), int(m.group(2))
        try:
            return vector_type(base, n, dialect)
        except KeyError:
            return None
    if word == "__half2":
        return vector_type("half", 2, dialect)
    return None


def c_name(t: "CType | None") -> str:
    """A readable C spelling of a type (for prototypes in messages and stubs)."""
    if t is None:
        return "void"
    if isinstance(t, Pointer):
        return f"{'const ' if t.const else ''}{c_name(t.pointee)}*"
    if isinstance(t, Struct):
        return t.c_spelling
    return t.name
