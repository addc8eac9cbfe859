"""The Python names of C parameters: one rule, shared by the kernel objects and the ``.pyi`` stub.

A C parameter may be called ``in``, ``pass`` or ``lambda``, which no Python signature can
hold, or ``self``, which the stub's ``__call__(self, ...)`` already uses. Such a name gets a
trailing underscore (``in_``), more if the kernel already has a parameter of that spelling
(``in`` and ``in_`` become ``in__`` and ``in_``). Builtin names (``len``, ``max``, ``type``)
are valid parameter names and stay as written. Positional calls are unaffected.
"""
from __future__ import annotations

import keyword

__all__ = ["python_name", "python_names"]

_TAKEN = frozenset({"self"})
"""Names that are identifiers but taken by the stub's method signature."""


def python_name(c_name: str) -> str:
    """The spelling of one C name in Python, ignoring the other parameters."""
    return c_name + "_" if keyword.iskeyword(c_name) or c_name in _TAKEN else c_name


def python_names(c_names: "list[str]") -> "list[str]":
    """The Python keyword of each C parameter, in order; distinct when the C names are."""
    kept = set(c_names)
    out: list[str] = []
    for name in c_names:
        py = python_name(name)
        if py != name:
            while py in kept or py in out:
                py += "_"
        out.append(py)
    return out
