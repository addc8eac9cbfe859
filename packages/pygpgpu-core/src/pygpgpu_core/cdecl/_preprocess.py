"""The small part of the C preprocessor the declaration parser needs.

It inlines local ``#include "x.h"`` files (recording them for cache invalidation), collects
object-like ``#define`` bodies and expands them in declarations, and follows conditional
compilation (``#if``/``#ifdef``/``#elif``/``#else`` with ``defined``, with the compiler's
predefined macros) so it sees the declarations the device compiler will see. ``#pragma pack``
changes struct layouts, so it becomes a token the parser applies in order (``kind="pragma"``,
text ``pack:set:N``, ``pack:push``, ``pack:push:N``, ``pack:pop`` or ``pack:reset``); a form it
cannot model is a CDeclError. Other pragmas and every other directive are the compiler's
business: the source is passed to it unchanged.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ._common import CDeclError
from ._constexpr import NotConstant, evaluate
from ._languages import OPENCL_C, Language, language
from ._source import INCLUDE_RE, Token, logical_lines, resolve_include, strip_comments, tokenize

__all__ = ["Macro", "Preprocessed", "preprocess", "expand_macros"]

_DIRECTIVE_RE = re.compile(r"^\s*#\s*(\w*)(.*)$")
_DEFINE_RE = re.compile(r"^\s*([A-Za-z_]\w*)(\()?(.*)$")
_PACK_RE = re.compile(r"^pack\b\s*(?:\((.*)\))?\s*$")
_PACK_SIZES = (1, 2, 4, 8, 16)


@dataclass
class Macro:
    name: str
    body: "list[Token]"
    function_like: bool
    file: str
    line: int


@dataclass
class Preprocessed:
    tokens: "list[Token]" = field(default_factory=list)
    macros: "dict[str, Macro]" = field(default_factory=dict)
    includes: "list[str]" = field(default_factory=list)
    """Resolved paths of every local header reached, in first-seen order."""
    main_defines: "list[str]" = field(default_factory=list)
    """Object-like macro names in definition order (main file and headers)."""


def preprocess(path: str, text: "str | None" = None, dialect: "str | Language" = OPENCL_C,
               defines: "Iterable[tuple[str, str | None]]" = ()) -> Preprocessed:
    """``dialect``: the file's language; what its compiler predefines is defined first
    (``Language.predefined``), so ``#ifdef __OPENCL_VERSION__`` in a header shared with host
    code selects the branch the device compiler will. ``defines``: what the build options
    define (``(name, body)``) or undefine (``(name, None)``), applied next, in order."""
    lang = language(dialect)
    out = Preprocessed()
    for name, value in lang.predefined.items():
        out.macros[name] = Macro(name, tokenize(value, "<predefined>", 0), False, "<predefined>", 0)
    for name, body in defines:          # like #define/#undef lines before the file's first line
        out.macros.pop(name, None)
        if name in out.main_defines:
            out.main_defines.remove(name)
        if body is not None:
            out.macros[name] = Macro(name, tokenize(body, "<options>", 0), False, "<options>", 0)
            out.main_defines.append(name)
    _process_file(str(Path(path).resolve()), text, out, stack=(), once=set(), dialect=lang)
    return out


def _condition(kind: str, rest: str, macros: "dict[str, Macro]", dialect: Language) -> bool:
    """Whether an #if/#ifdef/#ifndef/#elif branch is taken. Unknown names are 0, as in C; an
    expression that cannot be evaluated (a function-like macro) counts as taken, so the code
    stays visible rather than silently vanishing."""
    words = rest.split()
    if kind in ("ifdef", "ifndef"):
        defined = bool(words) and words[0] in macros
        return defined if kind == "ifdef" else not defined
    toks = tokenize(rest, "<if>", 0)
    resolved: list[Token] = []
    i = 0
    while i < len(toks):
        if toks[i].text == "defined":
            if i + 1 < len(toks) and toks[i + 1].text == "(":
                name, i = (toks[i + 2].text if i + 2 < len(toks) else ""), i + 4
            else:
                name, i = (toks[i + 1].text if i + 1 < len(toks) else ""), i + 2
            resolved.append(Token("1" if name in macros else "0", "<if>", 0, "num"))
        else:
            resolved.append(toks[i])
            i += 1
    try:
        return bool(evaluate(expand_macros(resolved, macros), lambda name: 0, dialect))
    except (NotConstant, RecursionError, IndexError):
        return True


def _process_file(path: str, text: "str | None", out: Preprocessed, stack: tuple, once: set, dialect: Language) -> None:
    if text is None:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    frames: list[list[bool]] = []  # per open #if: [enclosing branch active, this branch active, a branch taken]
    for lineno, line in logical_lines(strip_comments(text)):
        active = not frames or frames[-1][1]
        m = _DIRECTIVE_RE.match(line)
        if m is None:
            if active:
                out.tokens.extend(tokenize(line, path, lineno))
            continue
        name, rest = m.group(1), m.group(2).strip()
        if name in ("if", "ifdef", "ifndef"):
            taken = active and _condition(name, rest, out.macros, dialect)
            frames.append([active, taken, taken])
            continue
        if name in ("elif", "else", "endif"):
            if not frames:
                continue  # unbalanced: the compiler will say so
            frame = frames[-1]
            if name == "endif":
                frames.pop()
            elif name == "else":
                frame[1] = frame[0] and not frame[2]
                frame[2] = True
            else:
                frame[1] = frame[0] and not frame[2] and _condition("if", rest, out.macros, dialect)
                frame[2] = frame[2] or frame[1]
            continue
        if not active:
            continue
        if name == "pragma" and rest.split()[:1] == ["once"]:
            once.add(path)
        elif name == "pragma" and re.match(r"pack\b", rest):
            op = _pack_operation(rest, path, lineno)
            if op is not None:
                out.tokens.append(Token(op, path, lineno, "pragma"))
        elif name == "include":
            inc = INCLUDE_RE.match(line)
            target = resolve_include(inc.group(1), path) if inc else None
            if target is None:
                continue  # a system or not-found header: the compiler resolves it
            if target not in out.includes:
                out.includes.append(target)
            if target in stack or target == path or target in once:
                continue
            _process_file(target, None, out, stack + (path,), once, dialect)
        elif name == "define":
            d = _DEFINE_RE.match(rest)
            if d is None:
                continue
            macro_name, paren = d.group(1), d.group(2)
            function_like = paren is not None  # "#define F(x)": "(" touches the name
            body = [] if function_like else tokenize(d.group(3), path, lineno)
            out.macros[macro_name] = Macro(macro_name, body, function_like, path, lineno)
            if not function_like:
                if macro_name in out.main_defines:
                    out.main_defines.remove(macro_name)
                out.main_defines.append(macro_name)
        elif name == "undef":
            undefined = rest.split()[:1]
            if undefined:
                out.macros.pop(undefined[0], None)
                if undefined[0] in out.main_defines:
                    out.main_defines.remove(undefined[0])


def _pack_operation(rest: str, path: str, line: int) -> "str | None":
    """``#pragma pack(...)`` as a pragma token's text, None for ``pack(show)``; CDeclError for
    forms whose layout effect is not modelled (named stack entries, sizes other than 1-16)."""
    m = _PACK_RE.match(rest)
    args = [a.strip() for a in (m.group(1) or "").split(",")] if m else None
    if args == [""]:
        args = []

    def size(text: str) -> int:
        try:
            n = int(text, 0)
        except ValueError:
            n = 0
        if n not in _PACK_SIZES:
            raise CDeclError(f"#pragma {rest}: the packing must be one of {', '.join(map(str, _PACK_SIZES))}",
                             path, line)
        return n

    if args is None:
        raise CDeclError(f"#pragma {rest} is not understood; write #pragma pack(push, N) ... #pragma pack(pop)",
                         path, line)
    if not args:
        return "pack:reset"
    if args == ["show"]:
        return None
    if args == ["push"]:
        return "pack:push"
    if args == ["pop"]:
        return "pack:pop"
    if len(args) == 2 and args[0] == "push":
        return f"pack:push:{size(args[1])}"
    if len(args) == 1:
        return f"pack:set:{size(args[0])}"
    raise CDeclError(f"#pragma {rest}: named pack stack entries are not supported; use #pragma pack(push, N) "
                     f"and #pragma pack(pop)", path, line)


def expand_macros(tokens: "list[Token]", macros: "dict[str, Macro]") -> "list[Token]":
    """Expand object-like macros (recursively, never a macro inside its own expansion).
    Function-like macros are left in place; the parser skips them in declaration heads."""
    out: list[Token] = []
    _expand_into(tokens, macros, out, frozenset())
    return out


def _expand_into(tokens, macros, out, active) -> None:
    for tok in tokens:
        macro = macros.get(tok.text) if tok.kind == "id" else None
        if macro is None or macro.function_like or tok.text in active:
            out.append(tok)
            continue
        body = [Token(b.text, tok.file, tok.line, b.kind) for b in macro.body]
        _expand_into(body, macros, out, active | {tok.text})
