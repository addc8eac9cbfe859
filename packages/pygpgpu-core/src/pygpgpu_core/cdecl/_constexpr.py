"""Evaluation of C constant expressions in ``#define`` values, enum values and array extents.

Integer arithmetic follows C: ``/`` and ``%`` truncate toward zero, unsigned suffixes and
casts wrap. Anything else (function-like macros, unknown names, strings) is "not a
constant" and the caller simply does not export it.
"""
from __future__ import annotations

import re
from typing import Callable

from ._languages import OPENCL_C, Language
from ._source import Token
from ._types import TYPE_WORDS, Scalar, builtin_type

__all__ = ["NotConstant", "evaluate", "parse_number"]


class NotConstant(Exception):
    pass


_INT_RE = re.compile(r"^(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)([uUlL]*)$")
_FLOAT_RE = re.compile(r"^((?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F.]+[pP][+-]?\d+)([fFlLhH]?)$")


def parse_number(text: str) -> "int | float":
    m = _INT_RE.match(text)
    if m:
        digits = m.group(1)
        if digits[:2] in ("0x", "0X"):
            return int(digits, 16)
        if digits[:2] in ("0b", "0B"):
            return int(digits[2:], 2)
        if len(digits) > 1 and digits[0] == "0":
            return int(digits, 8)
        return int(digits)
    m = _FLOAT_RE.match(text)
    if m and any(c in text for c in ".eEpP"):
        body = m.group(1)
        return float.fromhex(body) if body[:2] in ("0x", "0X") else float(body)
    raise NotConstant(text)


_CHAR_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "v": 11}


def _char_value(text: str) -> int:
    body = text[1:-1]
    if len(body) == 1:
        return ord(body)
    if len(body) == 2 and body[0] == "\\" and body[1] in _CHAR_ESCAPES:
        return _CHAR_ESCAPES[body[1]]
    if body.startswith("\\x"):
        return int(body[2:], 16)
    raise NotConstant(text)


def _wrap(value: "int | float", t: Scalar) -> "int | float":
    if t.dtype.startswith("float"):
        return float(value)
    if t.dtype == "bool":
        return int(bool(value))
    value = int(value)
    bits = 8 * t.size
    value &= (1 << bits) - 1
    if t.dtype.startswith("int") and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


_BINARY = [
    ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("<<", ">>"), ("+", "-"),
    ("*", "/", "%"),
]


def _apply(op: str, a, b):
    if op in ("/", "%"):
        if b == 0:
            raise NotConstant("division by zero")
        if isinstance(a, int) and isinstance(b, int):
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return q if op == "/" else a - q * b
        if op == "%":
            raise NotConstant("% on floats")
        return a / b
    if op in ("<<", ">>", "&", "|", "^") and not (isinstance(a, int) and isinstance(b, int)):
        raise NotConstant("bit operation on floats")
    return {
        "||": lambda: int(bool(a) or bool(b)), "&&": lambda: int(bool(a) and bool(b)),
        "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
        "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b), ">": lambda: int(a > b),
        "<=": lambda: int(a <= b), ">=": lambda: int(a >= b), "<<": lambda: a << b, ">>": lambda: a >> b,
        "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
    }[op]()


class _Evaluator:
    def __init__(self, tokens: "list[Token]", lookup: Callable[[str], "int | float"], dialect: "str | Language"):
        self.toks = tokens
        self.pos = 0
        self.lookup = lookup
        self.dialect = dialect

    def peek(self) -> "str | None":
        return self.toks[self.pos].text if self.pos < len(self.toks) else None

    def take(self) -> Token:
        if self.pos >= len(self.toks):
            raise NotConstant("unexpected end")
        self.pos += 1
        return self.toks[self.pos - 1]

    def expr(self):
        cond = self.binary(0)
        if self.peek() == "?":
            self.take()
            a = self.expr()
            if self.take().text != ":":
                raise NotConstant("?:")
            b = self.expr()
            return a if cond else b
        return cond

    def binary(self, level: int):
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in _BINARY[level]:
            op = self.take().text
            left = _apply(op, left, self.binary(level + 1))
        return left

    def _cast_type(self) -> "Scalar | None":
        """``(uint)`` / ``(unsigned long)`` at the cursor, consumed; None (cursor kept) otherwise."""
        start = self.pos
        words = []
        self.pos += 1
        while self.peek() is not None and self.peek() not in (")",):
            tok = self.take()
            if tok.kind != "id":
                self.pos = start
                return None
            words.append(tok.text)
        if not words or self.peek() != ")":
            self.pos = start
            return None
        words = [w for w in words if w not in ("const", "__const", "__const__")]
        t = builtin_type(words, self.dialect) if words and (len(words) > 1 or words[0] in TYPE_WORDS or
                                                            not self._is_macro(words[0])) else None
        if not isinstance(t, Scalar):
            self.pos = start
            return None
        self.take()
        return t

    def _is_macro(self, name: str) -> bool:
        try:
            self.lookup(name)
            return True
        except NotConstant:
            return False

    def unary(self):
        tok = self.peek()
        if tok in ("-", "+", "~", "!"):
            self.take()
            v = self.unary()
            if tok == "-":
                return -v
            if tok == "+":
                return v
            if tok == "~":
                if not isinstance(v, int):
                    raise NotConstant("~ on float")
                return ~v
            return int(not v)
        if tok == "(":
            cast = self._cast_type()
            if cast is not None:
                return _wrap(self.unary(), cast)
            self.take()
            v = self.expr()
            if self.take().text != ")":
                raise NotConstant("unbalanced parentheses")
            return v
        t = self.take()
        if t.kind == "num":
            value = parse_number(t.text)
            if isinstance(value, int) and re.search(r"[uU]", t.text):
                bits = 64 if re.search(r"[lL]", t.text) or value >= 1 << 32 else 32
                value &= (1 << bits) - 1
            return value
        if t.kind == "chr":
            return _char_value(t.text)
        if t.kind == "id":
            if t.text in ("true", "false"):
                return int(t.text == "true")
            return self.lookup(t.text)
        raise NotConstant(t.text)


def evaluate(tokens: "list[Token]", lookup: Callable[[str], "int | float"],
             dialect: "str | Language" = OPENCL_C) -> "int | float":
    """The value of a constant expression; raises NotConstant."""
    if not tokens:
        raise NotConstant("empty")
    ev = _Evaluator(tokens, lookup, dialect)
    value = ev.expr()
    if ev.pos != len(tokens):
        raise NotConstant("trailing tokens")
    return value
