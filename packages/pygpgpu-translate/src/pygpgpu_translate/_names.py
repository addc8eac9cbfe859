"""C names for Python identifiers: any name a kernel, parameter or local may have in Python
compiles on every dialect, under one C spelling.

A Python identifier keeps its spelling in C unless some dialect reserves it or pygpgpu's own
generated names could meet it; then it is mangled by appending ``_`` (after a ``u`` in front of
names starting with ``_``/``pyg_``/``pg_``). No word of the toolchains' lists ends in a single
``_``, no generated name does, and the result is re-checked against the lists, so a mangled name
meets neither. The same function names the kernel (the launcher looks it up by that name),
its parameters and its locals, on every dialect.
"""
from __future__ import annotations

import re

from . import _c_words

__all__ = ["RESERVED", "ReservedWords", "RESERVED_FAMILIES", "is_reserved", "c_identifier"]



class ReservedWords:
    """A set of words that only grows: registering a dialect adds the words its language reserves
    (``Dialect.reserved_words``), so names chosen afterwards avoid them on every dialect."""

    def __init__(self, words: "frozenset[str]"):
        self._words = set(words)

    def __contains__(self, name: object) -> bool:
        return name in self._words

    def add_words(self, words: "frozenset[str] | set[str]") -> None:
        self._words |= set(words)


RESERVED = ReservedWords(_c_words.KEYWORDS | _c_words.OPENCL_C | _c_words.CUDA | _c_words.HIP | _c_words.PYGPGPU)
"""Every identifier some registered dialect's compiler or pygpgpu's generated code reserves: the
built-in dialects' (see _c_words), then those of each dialect registered since."""

# Whole families: C reserves "_X" and "__x"; pygpgpu's temporaries (_t1), hidden arguments
# (_pyg_n0), helpers (pyg_*) and prelude (pg_*) live there; and the toolkits' namespaces grow with
# every release (cudaStream_t, CU_*, NV_IF_TARGET, hipLaunchKernelGGL, CLK_*, convert_int4_sat_rte,
# intel_sub_group_*): a name of a family is mangled even when this release does not define it.
RESERVED_FAMILIES = re.compile(r"_|pyg_|pg_|cuda[A-Z_]|cu[A-Z]|CU_|CUDA|NV_|hip[A-Z_]|HIP|convert_|CLK_|intel_")
_OWN_PREFIXES = ("_", "pyg_", "pg_")

# names pygpgpu derives from a parameter's C name: x_shape0 (array extents), v_0 (vector components)
_DERIVED = re.compile(r"[A-Za-z0-9_]*_(?:shape)?[0-9]+")


def is_reserved(name: str) -> bool:
    """Whether ``name`` cannot be used as it is as a C identifier in generated code."""
    return (name in RESERVED or RESERVED_FAMILIES.match(name) is not None or _DERIVED.fullmatch(name) is not None
            or not name.isascii())


def c_identifier(name: str) -> str:
    """The C spelling of Python identifier ``name`` (a dotted ``self.attr`` becomes ``self_attr_``)."""
    if name.isidentifier() and not is_reserved(name):
        return name
    text = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" if c == "." else f"u{ord(c):x}"
                   for c in name)
    if text.startswith(_OWN_PREFIXES):
        text = "u" + text
    text += "_"
    while text in RESERVED:
        text += "_"
    return text
