"""Reading C sources: comment removal, directive lines, tokens, and ``#include "x.h"`` resolution.

Two views of the same files are produced. The *token stream* (comments removed, local
includes inlined, ``#if 0`` blocks dropped, every token tagged with file:line) feeds the
declaration parser. The *compile source* is the file's text unchanged except that each
local ``#include "x.h"`` is replaced by the header's text between ``#line`` markers, so the
backends' content-keyed caches see header edits and compiler messages keep their file:line.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Token", "strip_comments", "logical_lines", "tokenize", "resolve_include", "expand_includes",
           "line_marker", "INCLUDE_RE"]


@dataclass(frozen=True)
class Token:
    text: str
    file: str
    line: int
    kind: str = "op"
    """``id``, ``num``, ``str``, ``chr`` or ``op``."""

    def __repr__(self) -> str:
        return f"Token({self.text!r} @ {os.path.basename(self.file)}:{self.line})"


_COMMENT_OR_LITERAL = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
    re.S,
)


def strip_comments(text: str) -> str:
    """Replace comments by spaces, keeping every newline so line numbers do not move."""

    def blank(m: "re.Match[str]") -> str:
        s = m.group(0)
        if s.startswith("/*"):
            return " " + "\n" * s.count("\n")
        if s.startswith("//"):
            return " "
        return s

    return _COMMENT_OR_LITERAL.sub(blank, text)


def logical_lines(text: str):
    """Yield ``(first_line_number, text)`` after joining backslash-continued lines."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i]
        yield start + 1, line
        # keep numbering by emitting nothing for swallowed continuation lines
        i += 1


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<str>"(?:\\.|[^"\\])*")
  | (?P<chr>'(?:\\.|[^'\\])*')
  | (?P<op>::|->|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||\+\+|--|\.\.\.|\#\#|[-+*/%&|^~!<>=?:;,.(){}\[\]\#@\\`$])
    """,
    re.X,
)


def tokenize(line: str, file: str, lineno: int) -> "list[Token]":
    out = []
    pos = 0
    while pos < len(line):
        m = _TOKEN_RE.match(line, pos)
        if m is None:  # a stray byte (e.g. non-ASCII): keep it as an operator token
            out.append(Token(line[pos], file, lineno, "op"))
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup or "op"       # every alternative of the pattern is a named group
        if kind != "ws":
            out.append(Token(m.group(0), file, lineno, kind))
    return out


INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
_PRAGMA_ONCE_RE = re.compile(r"^\s*#\s*pragma\s+once\b")


def resolve_include(name: str, including_file: str) -> "str | None":
    """``#include "name"`` relative to the including file's folder; None if it is not there."""
    path = Path(including_file).parent / name
    return str(path.resolve()) if path.is_file() else None


def line_marker(line: int, path: str) -> str:
    """``#line <line> "<path>"``, the path escaped as a C string literal."""
    quoted = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'#line {line} "{quoted}"'


_LINE_MARKER_RE = re.compile(r'^\s*#\s*line\s+(\d+)\s+"((?:[^"\\]|\\.)*)"')
# a compiler that names the program text instead of honouring #line (NVIDIA's OpenCL: "<kernel>:4:12:")
_UNNAMED_PLACE_RE = re.compile(r"<kernel>:(\d+):")


def name_log_places(log: str, compiled: str) -> str:
    """``log`` with places in the compiled text (``<kernel>:4:``) named by the file and line the
    text's ``#line`` markers give them (``blur.cl:3:``), for compilers that ignore the markers."""
    places: list = [None]           # compiled line k (1-based) -> (path, line) or None
    current = None
    for text_line in compiled.split("\n"):
        m = _LINE_MARKER_RE.match(text_line)
        places.append(current)
        if m:
            current = (m.group(2).replace('\\"', '"').replace("\\\\", "\\"), int(m.group(1)))
        elif current is not None:
            current = (current[0], current[1] + 1)

    def named(m: "re.Match[str]") -> str:
        k = int(m.group(1))
        place = places[k] if 0 < k < len(places) else None
        return f"{place[0]}:{place[1]}:" if place else m.group(0)

    return _UNNAMED_PLACE_RE.sub(named, log)


def expand_includes(path: str, text: str, seen_once: "set[str] | None" = None, stack: tuple = ()) -> str:
    """The text to compile: local includes inlined between ``#line`` markers (see module doc)."""
    seen_once = set() if seen_once is None else seen_once
    stripped = strip_comments(text).split("\n")
    original = text.split("\n")
    if any(_PRAGMA_ONCE_RE.match(s) for s in stripped):
        seen_once.add(path)
    out = []
    for i, line in enumerate(original):
        code = stripped[i] if i < len(stripped) else line
        if _PRAGMA_ONCE_RE.match(code):
            out.append("")  # meaningless once inlined; compilers warn about it in a main file
            continue
        m = INCLUDE_RE.match(code)
        target = resolve_include(m.group(1), path) if m else None
        if target is None:
            out.append(line)
            continue
        if target in stack or target in seen_once:
            out.append("")  # recursion or #pragma once: a real preprocessor would include nothing
            continue
        inner = Path(target).read_text(encoding="utf-8", errors="replace")
        out.append(line_marker(1, target))
        out.append(expand_includes(target, inner, seen_once, stack + (path,)))
        out.append(line_marker(i + 2, path))
    return "\n".join(out)
