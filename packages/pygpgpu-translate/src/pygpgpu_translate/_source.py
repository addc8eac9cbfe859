"""Getting a function's source as an AST with the line numbers of the user's file, and
turning a problem at an AST node into a SyntaxError that points there."""
from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
import linecache
import threading
import types
from typing import Literal, overload
from dataclasses import dataclass

from pygpgpu_core.errors import GPGPUError

__all__ = ["FunctionSource", "function_source", "definition_key", "parse", "syntax_error", "KernelTypeError",
           "parameter_names", "quoted_line"]


def parameter_names(args: ast.arguments) -> list[str]:
    """A function's parameters in the order its values travel here (a kernel's values, a helper's
    arguments): the positional ones, then the keyword-only ones (``def f(x, *, scale=2)``).
    ``*args`` and ``**kwargs`` are refused (_frontend)."""
    return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]


class KernelTypeError(GPGPUError, TypeError):
    """A type problem inside a kernel (conflicting assignments, bad operand types).

    ``filename`` and ``lineno`` say where, as on a SyntaxError (the message names them too)."""

    def __init__(self, message: str, filename: str = "", lineno: "int | None" = None):
        super().__init__(message)
        self.filename = filename
        self.lineno = lineno


@dataclass
class FunctionSource:
    func: object
    filename: str
    lines: list          # the file's lines, for error messages
    tree: ast.FunctionDef | ast.AsyncFunctionDef   # async defs are parsed, then rejected by the syntax gate
    text: str            # the function's own source text (cache key)
    indent: int
    digest: str

    @property
    def name(self) -> str:
        return self.tree.name


_cache: dict = {}
# CPython's AST builder keeps a process-wide recursion counter (3.11, gh-106905): two threads
# parsing at once can raise "SystemError: AST constructor recursion depth mismatch". Kernels
# first called from several threads at once parse their sources here, one at a time.
_parse_lock = threading.Lock()


@overload
def parse(text: str, mode: Literal["exec"] = "exec") -> ast.Module: ...
@overload
def parse(text: str, mode: Literal["eval"]) -> ast.Expression: ...


def parse(text: str, mode: str = "exec") -> ast.AST:
    """``ast.parse`` that is safe to call from several threads."""
    with _parse_lock:
        return ast.parse(text, mode=mode)


def function_source(func) -> FunctionSource:
    """Parse ``func`` once per code object and file; line numbers are absolute in its file.

    The source comes from the file or from ``linecache`` (notebook cells, code exec'd after
    registering its text there) through ``inspect``, else from where Python kept a text without
    a file (``python -c``, ``python - < script``, the interactive prompt: ``_source_text``)."""
    code = getattr(func, "__code__", None)
    # code objects compare equal across files (co_filename is not compared): identical functions
    # at the same line of two files must not share one entry, or #line names the wrong file
    key = (code, getattr(code, "co_filename", None))
    hit = _cache.get(key)
    if hit is not None:
        return hit
    whole = None
    try:
        lines, start = inspect.getsourcelines(func)
        filename = str(inspect.getsourcefile(func) or getattr(code, "co_filename", "<unknown>"))
    except (OSError, TypeError) as exc:
        from ._source_text import missing_source_hint, unregistered_source
        found = unregistered_source(code) if isinstance(code, types.CodeType) else None
        if found is None:
            filename = getattr(code, "co_filename", "<unknown>")
            raise GPGPUError(
                f"cannot read the source of {getattr(func, '__qualname__', func)!r} ({exc}); kernels and the helpers "
                f"they call are translated from their source text, and {missing_source_hint(filename)}"
            ) from None
        lines, start, whole = found
        filename = str(getattr(code, "co_filename", "<unknown>"))
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    first = next((ln for ln in lines if ln.strip()), "")
    indent = len(first) - len(first.lstrip())
    tree = parse(dedented)
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise GPGPUError(f"{func!r} is not defined by a def statement; lambdas cannot be kernels or helpers")
    ast.increment_lineno(tree, start - 1)
    if whole is not None:
        file_lines = [ln.rstrip("\r\n") for ln in whole]
    else:
        file_lines = _file_lines(filename, func)
        if len(file_lines) < start - 1 + len(lines):
            file_lines = [""] * (start - 1) + text.splitlines()
    src = FunctionSource(func, filename, file_lines, fdef, text, indent,
                         hashlib.sha256(text.encode()).hexdigest())
    _cache[key] = src
    return src


def _file_lines(filename: str, func) -> list:
    """The lines of ``filename`` for error messages: the file on disk, else the text linecache
    holds under that name (a notebook cell, a registered exec'd text)."""
    try:
        with open(filename, encoding="utf-8") as f:
            return f.read().splitlines()
    except (OSError, UnicodeDecodeError, ValueError):
        pass
    return [ln.rstrip("\r\n") for ln in linecache.getlines(filename, getattr(func, "__globals__", None))]


def definition_key(func) -> tuple:
    """What tells two helper definitions apart inside one translation: equal code objects from
    two files (``co_filename`` is not part of code equality) or two module namespaces read
    different globals, and two closures of one def (``make_scale(2)``, ``make_scale(3)``)
    compile in different captured values, so they are different helpers."""
    code = func.__code__
    return (code, code.co_filename, id(getattr(func, "__globals__", None)),
            id(func) if getattr(func, "__closure__", None) else None)


def syntax_error(src: FunctionSource, node, message: str, hint: str = "", kernel: str = "") -> SyntaxError:
    line = getattr(node, "lineno", src.tree.lineno)
    col = getattr(node, "col_offset", 0) + src.indent
    text = src.lines[line - 1] if 0 < line <= len(src.lines) else ""
    where = f" in {kernel or src.name!r}"
    msg = f"{message}{where}" + (f"\n  hint: {hint}" if hint else "")
    err = SyntaxError(msg, (src.filename, line, col + 1, text))
    err.hint = hint  # type: ignore[attr-defined]  # what to write instead, for tools that read it
    return err


def quoted_line(src: FunctionSource, line: int, col: "int | None" = None) -> str:
    """The user's source line under a message, with a caret under column ``col`` when known, as
    Python shows a SyntaxError (empty when the file's text is not at hand)."""
    if not 0 < line <= len(src.lines) or not src.lines[line - 1].strip():
        return ""
    text = src.lines[line - 1]
    stripped = text.lstrip()
    shown = f"\n    {stripped}"
    if col is not None:
        shown += "\n    " + " " * max(0, col + src.indent - (len(text) - len(stripped))) + "^"
    return shown
