"""Two C forms the translator writes itself, respelled in WGSL before a wgsl-target source compiles.

Stopgaps: the translator's public target surface has no hook for either yet (docs/webgpu.md lists
what the WGSL target still needs), so the WGSL target's sources are rewritten here:

- the conditional expression ``(c ? a : b)`` (a Python ``x if c else y``, the wrap of an index whose
  sign the translator cannot prove, a ``range`` whose step is known only at run time) becomes
  ``select(b, a, c)``. ``select`` evaluates both sides: the translator's conditionals have no side
  effects on either (WGSL kernels have no pointers, atomics or print), and an out-of-range read
  on the side not taken is bounded by WGSL's robust buffer access;
- a literal of a narrow type written as a C cast, ``((f16)1.5f)``, becomes ``(f16(1.5f))``.
"""
from __future__ import annotations

import re

__all__ = ["respell", "rewrite_conditionals", "rewrite_literal_casts"]

_LITERAL_CAST = re.compile(r"\(\((f16|f32|i32|u32|bool)\)(-?[0-9][0-9a-fA-FxX.eEpP+\-]*[fhu]?)\)")

_STOPS = ";{},"


def _start(src: str, q: int) -> int:
    depth = 0
    for k in range(q - 1, -1, -1):
        ch = src[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                return k + 1
            depth -= 1
        elif ch in _STOPS and depth == 0:
            return k + 1
    return 0


def _colon(src: str, q: int) -> int:
    depth = 0
    for k in range(q + 1, len(src)):
        ch = src[k]
        depth += (ch == "(") - (ch == ")")
        if ch == "?" and depth == 0:
            raise ValueError("a conditional nested in the middle operand without brackets")
        if ch == ":" and depth == 0:
            return k
    raise ValueError("a '?' without its ':'")


def _end(src: str, c: int) -> int:
    depth = 0
    for k in range(c + 1, len(src)):
        ch = src[k]
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return k
            depth -= 1
        elif ch in _STOPS and depth == 0:
            return k
    return len(src)


def rewrite_conditionals(src: str) -> str:
    """``src`` with every ``c ? a : b`` replaced by ``select(b, a, c)`` (innermost last: each
    rewrite keeps the operands' text, and a conditional inside one is found on a later pass)."""
    while True:
        q = src.rfind("?")
        if q < 0:
            return src
        start, colon = _start(src, q), _colon(src, q)
        end = _end(src, colon)
        cond, a, b = src[start:q].strip(), src[q + 1:colon].strip(), src[colon + 1:end].strip()
        lead = src[start:q][:len(src[start:q]) - len(src[start:q].lstrip())]
        src = f"{src[:start]}{lead}select({b}, {a}, {cond}){src[end:]}"


def rewrite_literal_casts(src: str) -> str:
    """``((f16)1.5f)`` -> ``(f16(1.5f))``: WGSL converts with a call, never a C cast."""
    return _LITERAL_CAST.sub(r"(\1(\2))", src)


def respell(src: str) -> str:
    """Both rewrites, line by line (the emitter writes one statement a line), leaving the
    translator's C-only prelude lines as they are: they fail to compile anyway, and the error
    names them (``_program``)."""
    return "\n".join(line if line.startswith("static inline") else rewrite_conditionals(rewrite_literal_casts(line))
                     for line in src.split("\n"))
