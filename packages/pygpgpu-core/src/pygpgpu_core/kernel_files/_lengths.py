"""Length parameters of kernel-file kernels, checked against the arrays passed with them
(``PYGPGPU_BOUNDS_CHECK=1``, the debug mode).

A handwritten kernel trusts its ``n``: told a length larger than its arrays, it reads and writes
past them, and on PoCL (host memory) that corrupts the heap and aborts the process much later.
In debug mode the launcher sees the host-side sizes of the arrays and refuses such a call:

- a length named for one pointer parameter (``n_x``, ``num_x``, ``len_x``, ``x_len``,
  ``x_length``, ``x_count`` for a parameter ``x``) must not exceed that argument's element count;
- a generic length (``n``, ``N``, ``len``, ``length``, ``count``, ``num``, ``numel``, ``nelem``,
  ``nelems``, ``n_elements``, ``num_elements``, ``nitems``, ``n_items``) must not exceed the
  element count of the largest array argument (no array of the call reaches it, so whichever it
  bounds is overrun; a smaller array indexed by it, such as a reduction's partial sums, is legal).

Sizes in bytes (``size``, ``x_size``, ``nbytes``) are not checked.
"""
from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from ..cdecl import Pointer, Scalar
from ._args import ArgumentRangeError

__all__ = ["LengthOutOfRange", "length_checks", "check_lengths", "bounds_check_enabled"]

_GENERIC = {"n", "N", "len", "length", "count", "num", "numel", "nelem", "nelems", "n_elements",
            "num_elements", "nitems", "n_items"}
_LINKED = (re.compile(r"^(?:n|num|len)_(?P<p>\w+)$"), re.compile(r"^(?P<p>\w+?)_(?:len|length|count)$"))


class LengthOutOfRange(ArgumentRangeError, IndexError):
    """A length argument exceeds the arrays passed with it (``PYGPGPU_BOUNDS_CHECK=1``)."""


def bounds_check_enabled() -> bool:
    return os.environ.get("PYGPGPU_BOUNDS_CHECK", "").strip() not in ("", "0")


def _element_size(p) -> int:
    pointee = p.type.pointee
    return max(1, getattr(pointee, "size", 1) or 1) if pointee is not None else 1


def length_checks(decl) -> list:
    """``[(index, name, [(index, name, element size)], "each" | "max", dtype)]`` for ``decl``'s lengths."""
    pointers = {p.name: p for p in decl.params
                if isinstance(p.type, Pointer) and p.type.address_space in ("global", "constant")}
    checks = []
    for p in decl.params:
        if not (isinstance(p.type, Scalar) and p.type.dtype is not None and str(p.type.dtype)[:1] in "iu"):
            continue
        linked = None
        for rx in _LINKED:
            m = rx.match(p.name)
            if m and m.group("p") in pointers:
                linked = pointers[m.group("p")]
                break
        if linked is not None:
            checks.append((p.index, p.name, [(linked.index, linked.name, _element_size(linked))], "each",
                           np.dtype(p.type.dtype)))
        elif p.name in _GENERIC and pointers:
            targets = [(q.index, q.name, _element_size(q)) for q in pointers.values()]
            checks.append((p.index, p.name, targets, "max", np.dtype(p.type.dtype)))
    return checks


def _elements(value: Any, size: int) -> "int | None":
    nbytes = getattr(value, "nbytes", None)
    if nbytes is None or value is None or not hasattr(value, "shape") and not hasattr(value, "context"):
        return None                       # not an array or buffer (LocalMemory, None): nothing to compare
    return int(nbytes) // size


def check_lengths(kernel: str, checks: list, values: list) -> None:
    """LengthOutOfRange when a length argument exceeds what the arrays passed with it hold."""
    for index, name, targets, mode, dtype in checks:
        n = values[index]
        try:
            n = int(n)
        except (TypeError, ValueError):
            continue                      # not a number: the converter reports it
        info = np.iinfo(dtype)
        if not info.min <= n <= info.max:
            continue                      # 2**40 for an int: the converter says it does not fit int
        counts: list[tuple[str, int]] = []
        for t, tname, size in targets:
            c = _elements(values[t], size)
            if c is not None:
                counts.append((tname, c))
        if not counts:
            continue
        if mode == "each":
            bad = [(tname, c) for tname, c in counts if n > c]
        else:
            largest = max(c for _, c in counts)
            bad = counts if n > largest else []
        if bad:
            what = ", ".join(f"{tname!r} ({c} elements)" for tname, c in bad)
            raise LengthOutOfRange(
                f"kernel {kernel!r}: {name}={n} is larger than the array{'s' if len(bad) > 1 else ''} passed as "
                f"{what}; the kernel would read or write past {'their' if len(bad) > 1 else 'its'} end "
                f"(checked because PYGPGPU_BOUNDS_CHECK=1). Pass the arrays' real length.")
