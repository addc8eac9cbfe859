"""Getting a function's source as an AST with the line numbers of the user's file, and
turning a problem at an AST node into a SyntaxError that points there."""
from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
import threading
from typing import Literal, overload
from dataclasses import dataclass

from pygpgpu_core.errors import GPGPUError

__all__ = ["FunctionSource", "function_source", "parse", "syntax_error", "KernelTypeError"]


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
    """Parse ``func`` once per code object; line numbers are absolute in its file."""
    code = getattr(func, "__code__", None)
    hit = _cache.get(code)
    if hit is not None:
        return hit
    try:
        lines, start = inspect.getsourcelines(func)
        filename = str(inspect.getsourcefile(func) or getattr(code, "co_filename", "<unknown>"))
    except (OSError, TypeError) as exc:
        raise GPGPUError(
            f"cannot read the source of {getattr(func, '__qualname__', func)!r} ({exc}); kernels and the helpers "
            "they call must be defined in a .py file, not in an interactive prompt or exec()"
        ) from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    first = next((ln for ln in lines if ln.strip()), "")
    indent = len(first) - len(first.lstrip())
    tree = parse(dedented)
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise GPGPUError(f"{func!r} is not defined by a def statement; lambdas cannot be kernels or helpers")
    ast.increment_lineno(tree, start - 1)
    try:
        with open(filename, encoding="utf-8") as f:
            file_lines = f.read().splitlines()
    except OSError:
        file_lines = [""] * (start - 1) + text.splitlines()
    src = FunctionSource(func, filename, file_lines, fdef, text, indent,
                         hashlib.sha256(text.encode()).hexdigest())
    _cache[code] = src
    return src


def syntax_error(src: FunctionSource, node, message: str, hint: str = "", kernel: str = "") -> SyntaxError:
    line = getattr(node, "lineno", src.tree.lineno)
    col = getattr(node, "col_offset", 0) + src.indent
    text = src.lines[line - 1] if 0 < line <= len(src.lines) else ""
    where = f" in {kernel or src.name!r}"
    msg = f"{message}{where}" + (f"\n  hint: {hint}" if hint else "")
    err = SyntaxError(msg, (src.filename, line, col + 1, text))
    err.hint = hint  # type: ignore[attr-defined]  # what to write instead, for tools that read it
    return err
