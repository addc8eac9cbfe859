"""C's conditional expression in WGSL: ``(c ? a : b)`` becomes ``select(b, a, c)``.

A stopgap: the translator writes ``?:`` itself (a Python ``x if c else y``, the wrap of an index
whose sign it cannot prove, a ``range`` with a step known only at run time), and its public target
surface has no hook to spell it otherwise yet (docs/webgpu.md). The WGSL target's sources are
rewritten here before they are compiled. ``select`` evaluates both sides: the translator's
conditionals have no side effects on either (WGSL kernels have no pointers, atomics or print),
and an out-of-range read on the side not taken is bounded by WGSL's robust buffer access."""
from __future__ import annotations

__all__ = ["rewrite_conditionals"]

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
