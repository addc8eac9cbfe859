"""``print(...)`` in kernels and helpers: one device ``printf`` per call, formatted like Python.

Arguments are separated by ``sep`` (a space) and followed by ``end`` (a newline), both string
constants. String literals print as they are; ints in full (``%d``, 64-bit with the dialect's
length modifier); floats as ``%g`` (six significant digits: ``1.0`` prints ``1``, ``0.1`` prints
``0.1``); bools as ``True``/``False``; vectors as ``float4(1, 2.5, 3, 4)``. An f-string
(``f"x={x:.3f}"``) passes its format specs on: fill-free alignment, sign, ``#``, ``0``, width,
precision and the types ``d x X o e E f F g G``.

Each call is one ``printf``, so the parts of one line never interleave with another work
item's; the order of lines from different work items is unspecified. A bool value selects
between two literal format strings (OpenCL's ``%s`` takes only literal strings), so a print
holds at most ``MAX_BOOLS`` of them.
"""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from . import _ir as ir
from ._types import BOOL, FLOAT32, FLOAT64, INT32, INT64, UINT32, VOID, ArrayType, Scalar, Vector, concrete

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["build_print", "MAX_BOOLS"]

MAX_BOOLS = 4
UINT64 = Scalar("uint64")
# Python's format-spec subset printf can express: [align][sign][#][0][width][.precision][type]
_SPEC = re.compile(r"^(?P<align>[<>]?)(?P<sign>[+\- ]?)(?P<alt>#?)(?P<zero>0?)(?P<width>\d*)"
                   r"(?:\.(?P<prec>\d+))?(?P<type>[dxXoeEfFgG]?)$")


def build_print(self: FunctionBuilder, node):
    """Lower ``print(...)`` at ``node`` to printf statements appended to the builder's ``pre``."""
    sep, end = " ", "\n"
    for kw in node.keywords:
        if kw.arg in ("sep", "end"):
            v = kw.value
            if isinstance(v, ast.Constant) and (v.value is None or isinstance(v.value, str)):
                if v.value is not None:
                    sep, end = (v.value, end) if kw.arg == "sep" else (sep, v.value)
                continue
            raise self.err(v, f"print({kw.arg}=...) must be a string literal in a kernel")
        raise self.err(kw.value if kw.arg else node, f"print() takes no argument {kw.arg!r} in a kernel" if kw.arg
                       else "print(**kwargs) is not supported in a kernel",
                       "print writes to the device's standard output; pass sep= and end= as literals")
    parts: list = []                 # str (literal text), ("bool", expr) or (conversion, expr)
    for k, a in enumerate(node.args):
        if k:
            parts.append(sep)
        if isinstance(a, ast.Starred):
            raise self.err(a, "print(*values) is not supported in a kernel", "name each value")
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            parts.append(a.value)
        elif isinstance(a, ast.JoinedStr):
            if not _fstring(self, a, parts):
                return None
        elif not _value(self, a, "", parts):
            return None
    parts.append(end)
    if any(isinstance(p, str) and "\0" in p for p in parts):
        # C's printf format ends at a NUL: the rest of the line, its newline too, would be lost, and
        # a %c of 0 prints nothing on some devices (PoCL), so no spelling prints it as Python does
        raise self.err(node, "print() in a kernel cannot print a NUL character ('\\0'): the device's printf "
                       "format string ends at it", "print its code instead, e.g. print(\"nul\", 0, \"end\"), or "
                       "spell it \"\\\\0\" to show the escape")
    bools = [p for p in parts if isinstance(p, tuple) and p[0] == "bool"]
    if len(bools) > MAX_BOOLS:
        raise self.err(node, f"print() in a kernel shows at most {MAX_BOOLS} bool values per call, got {len(bools)}",
                       "print int(flag) for the others, or split the line into several prints")
    parts = [("bool", self.materialize(p[1])) if isinstance(p, tuple) and p[0] == "bool" else p for p in parts]
    self.pre.append(_branches(self, parts, {}, node.lineno))
    return None


def _value(self: FunctionBuilder, a, spec, parts) -> bool:
    """Append the parts printing the value of ``a`` (with format spec ``spec``); False while its
    type is not known yet (an early inference pass)."""
    e = self.expr(a)
    if isinstance(e, ir.ArrayRef) or (isinstance(e, ir.Expr) and isinstance(e.type, ArrayType)):
        raise self.err(a, "print() cannot print a whole array in a kernel", "print its elements, e.g. print(x[i])")
    v = self.shallow(e) if isinstance(e, ir.Expr) else self.value(a)     # value() says what else is wrong
    t = v.type
    if isinstance(t, Vector):
        if spec:
            raise self.err(a, f"a format spec ({spec!r}) does not apply to a {t} vector", "format each component")
        v = self.materialize(v)
        parts.append(f"{t.name}(")
        for k in range(t.width):
            if k:
                parts.append(", ")
            parts.append(_conversion(self, self.comp(v, k), "", a))
        parts.append(")")
        return True
    if t.kind == "b" and not spec:
        parts.append(("bool", v))
        return True
    parts.append(_conversion(self, v, spec, a))
    return True


def _conversion(self: FunctionBuilder, v, spec, node):
    """``(ir.PrintfConversion, C argument)`` of scalar ``v`` under Python format spec ``spec``."""
    m = _SPEC.match(spec)
    if m is None:
        raise self.err(node, f"format spec {spec!r} has no printf equivalent in a kernel",
                       "use [<|>][+| ][#][0][width][.precision][d x X o e E f F g G]")
    df = self.prog.default_float
    t = concrete(v.type, df)
    kind = m["type"]
    flags = ("-" if m["align"] == "<" else "") + (m["sign"] if m["sign"] != "-" else "") + m["alt"] + m["zero"]
    head = "%" + flags + m["width"] + (f".{m['prec']}" if m["prec"] is not None else "")
    if kind in "dxXo" and kind and not (t.is_int or t.kind == "b"):
        raise self.type_err(node, f"format type {kind!r} needs an integer, got {t}; convert with int(...)")
    if t.is_float or kind in "eEfFgG" and kind:
        # %lg for doubles: C ignores the l, but PoCL's printf reads a plain %g argument as a float
        if t.name == "float64":
            return (ir.PrintfConversion(head, "l" + (kind or "g")), self.convert(v, FLOAT64))
        return (ir.PrintfConversion(head, kind or "g"), self.convert(v, FLOAT32))
    if t.kind == "b":
        t = INT32
    wide = t.bits == 64
    ct = (UINT64 if wide else UINT32) if t.kind == "u" else (INT64 if wide else INT32)
    conv = kind or ("u" if t.kind == "u" else "d")
    if conv == "d" and t.kind == "u":
        conv = "u"
    return (ir.PrintfConversion(head, conv, wide), self.convert(v, ct))     # the dialect spells the 64-bit length


def _fstring(self: FunctionBuilder, node, parts) -> bool:
    for piece in node.values:
        if isinstance(piece, ast.Constant):
            parts.append(piece.value)
            continue
        spec = ""
        if piece.format_spec is not None:
            fs = piece.format_spec
            if not all(isinstance(x, ast.Constant) for x in fs.values):
                raise self.err(fs, "a format spec computed at run time is not supported in a kernel",
                               "write the spec as a literal, e.g. {x:.3f}")
            spec = "".join(x.value for x in fs.values)
        if not _value(self, piece.value, spec, parts):
            return False
    return True


def _branches(self: FunctionBuilder, parts, chosen: dict, line: int):
    """One printf, or an if/else on the next bool choosing between two literal formats."""
    for p in parts:
        if isinstance(p, tuple) and p[0] == "bool" and id(p) not in chosen:
            cond = p[1]
            yes = _branches(self, parts, {**chosen, id(p): "True"}, line)
            no = _branches(self, parts, {**chosen, id(p): "False"}, line)
            return ir.If(cond if cond.type == BOOL else ir.Bin("!=", cond, ir.Const(0, INT32), BOOL), [yes], [no], line)
    fmt: list = []
    args: list = []
    for p in parts:
        if isinstance(p, str):
            fmt.append(p)
        elif p[0] == "bool":
            fmt.append(chosen[id(p)])
        else:
            fmt.append(p[0])
            args.append(p[1])
    return ir.ExprStmt(ir.Printf(fmt, args, VOID), line)     # the dialect writes the printf (Dialect.printf_call)


def is_print_call(node) -> bool:
    """``print(...)`` as the syntax gate sees it (by name: the builder checks the object)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"


def print_gate_children(node) -> list:
    """The children of a ``print(...)`` call the syntax gate checks as usual: everything except
    its string literals, f-string text and literal ``sep``/``end`` (which only print may hold)."""
    out = [node.func]
    for a in node.args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            continue
        if isinstance(a, ast.JoinedStr):
            for piece in a.values:
                if isinstance(piece, ast.FormattedValue):
                    out.append(piece.value)
                    if isinstance(piece.format_spec, ast.JoinedStr):     # the only form a format spec takes
                        out.extend(x.value for x in piece.format_spec.values if isinstance(x, ast.FormattedValue))
            continue
        out.append(a)
    for kw in node.keywords:
        if kw.arg in ("sep", "end") and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            continue
        out.append(kw)
    return out
