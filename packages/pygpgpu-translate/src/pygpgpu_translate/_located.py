"""A dialect's refusal of what its language cannot express, placed at the user's line.

A dialect (WGSL) raises :class:`KernelTypeError` without a place from deep in the emitter or the
prelude (``float64 type``, ``print() in kernels``): it knows the construct, not where the user
wrote it. The emitter knows the statement it was writing, the prelude which call asked for the
piece; they add the file and line here, in the words of the translator's other type errors
(``kernel 'k', file.py:12: ...`` and the line quoted)."""
from __future__ import annotations

import linecache

from . import _ir as ir
from ._source import KernelTypeError

__all__ = ["locate", "first_line", "call_line"]


def locate(exc: KernelTypeError, filename: str, line: int, kernel_name: str) -> KernelTypeError:
    """``exc`` (unchanged if it has a place already) naming ``filename:line``, with the line quoted."""
    if exc.lineno is not None or not line:
        return exc
    text = linecache.getline(filename, line).strip()
    quoted = f"\n    {text}" if text else ""
    exc.args = (f"kernel {kernel_name!r}, {filename}:{line}: {exc.args[0] if exc.args else exc}{quoted}",
                *exc.args[1:])
    exc.filename, exc.lineno = filename, line
    return exc


def _statements(body: list):
    for s in body:
        yield s
        for inner in ("body", "orelse"):
            yield from _statements(getattr(s, inner, None) or [])


def first_line(fn: ir.Function, name: str) -> int:
    """The line of the first assignment to local ``name`` in ``fn`` (its ``def`` line if none)."""
    for s in _statements(fn.body):
        if isinstance(s, ir.Assign) and getattr(s.target, "name", None) == name and s.line:
            return s.line
    return fn.line


def _calls(node, function: str) -> bool:
    """Whether expression or statement ``node`` calls prelude function ``function``."""
    if isinstance(node, ir.Call) and node.fn == function:
        return True
    fields = getattr(node, "__dataclass_fields__", {})
    for f in fields:
        if f in ("body", "orelse"):
            continue
        v = getattr(node, f)
        for item in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(item, ir.Expr) and _calls(item, function):
                return True
    return False


def call_line(functions: "list[ir.Function]", function: str) -> "tuple[ir.Function, int] | None":
    """The first statement (and its function) that calls prelude function ``function``."""
    for fn in functions:
        for s in _statements(fn.body):
            if s.line and _calls(s, function):
                return fn, s.line
    return None
