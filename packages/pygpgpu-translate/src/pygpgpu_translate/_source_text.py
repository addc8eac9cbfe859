"""The source text of a function defined where there is no .py file.

``inspect`` reads a function's source from its file, or from ``linecache`` where Python or a
tool registered the text: IPython and Jupyter cells, the Python 3.13+ REPL, code that
``exec(compile(text, name, "exec"))`` ran after putting ``text`` into ``linecache.cache[name]``.
Three places keep the text without registering it, and are read here:

- ``python -c "..."``: the command is in ``sys.orig_argv`` (Python 3.10+);
- ``python - < script.py``: standard input is still the script file, read again from its start
  (a pipe is consumed and gone: that case is reported, not guessed);
- the interactive prompt before Python 3.13 (``<stdin>``): the lines typed are in readline's
  history.

A candidate text is accepted only when compiling it yields a code object equal to the
function's own (same bytecode, constants, names and line table), so text that merely looks
alike, or a history line typed twice, is never taken for the source.
"""
from __future__ import annotations

import ast
import os
import stat
import sys
import types

__all__ = ["unregistered_source", "missing_source_hint"]


def unregistered_source(code: types.CodeType) -> "tuple[list[str], int, list[str]] | None":
    """``(the def's lines, its first line number, every line of the text)`` for ``code`` from a
    text Python kept outside linecache, or None when there is none."""
    for text in _candidates(code.co_filename):
        found = _block_defining(text, code)
        if found is not None:
            return found
    return None


def missing_source_hint(filename: str) -> str:
    """What to do when no source could be found for a function of ``filename``."""
    if filename == "<stdin>" and _stdin_kind() == "pipe":
        return ("the script was read from a pipe, whose text Python does not keep; run it from a file "
                "(python script.py, or python - < script.py)")
    if filename.startswith("<") and filename.endswith(">"):
        return (f"its text ({filename}) was not kept: before exec(), compile the text with a file name and register "
                "it in linecache: linecache.cache[name] = (len(text), None, text.splitlines(True), name); "
                "exec(compile(text, name, 'exec')), or define the function in a .py file")
    return f"the file {filename!r} cannot be read; define the function in a .py file that exists"


# ---- where the text may be --------------------------------------------------------------------
def _candidates(filename: str):
    if filename == "<string>":
        command = _command_text()
        if command is not None:
            yield command
    elif filename == "<stdin>":
        kind = _stdin_kind()
        if kind == "file":
            text = _stdin_file_text()
            if text is not None:
                yield text
        elif kind == "tty":
            yield from _history_blocks()


def _command_text() -> "str | None":
    """The program of ``python -c PROGRAM`` (also ``-cPROGRAM``, ``-Ic PROGRAM``), from the
    interpreter's own command line."""
    argv = list(getattr(sys, "orig_argv", None) or [])
    k = 1
    while k < len(argv):
        arg = argv[k]
        if arg == "--check-hash-based-pycs":
            k += 2
            continue
        if arg in ("-", "--") or not arg.startswith("-"):
            return None                    # a script or standard input: no -c program
        if arg.startswith("--"):
            k += 1
            continue
        letters = arg[1:]
        for j, ch in enumerate(letters):
            if ch == "c":
                rest = letters[j + 1:]
                if rest:
                    return rest
                return argv[k + 1] if k + 1 < len(argv) else None
            if ch == "m":
                return None
            if ch in "WX":                 # -W and -X take a value: the rest, or the next argument
                if j + 1 == len(letters):
                    k += 1
                break
        k += 1
    return None


def _stdin_kind() -> str:
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return "none"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "pipe"
    return "tty" if os.isatty(0) else "other"


def _stdin_file_text() -> "str | None":
    """The whole file standard input is redirected from, read without moving its position."""
    try:
        size = os.fstat(0).st_size
        if size > 64 << 20:
            return None
        data = os.pread(0, size, 0)
    except OSError:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _history_blocks():
    """Statements typed at the interactive prompt, newest first: each starts at a line with no
    indentation and runs to the line before a later unindented one (or one of the next few, so
    that a decorator and its def, or if/else, stay together)."""
    try:
        import readline
    except ImportError:
        return
    n = readline.get_current_history_length()
    items = [readline.get_history_item(i) or "" for i in range(max(1, n - 2000), n + 1)]
    starts = [k for k, line in enumerate(items) if line.strip() and not line[0].isspace()]
    for a in reversed(range(len(starts))):
        for b in range(a + 1, min(a + 4, len(starts)) + 1):
            end = starts[b] if b < len(starts) else len(items)
            yield "".join(line + "\n" for line in items[starts[a]:end])


# ---- the block that defines the code ----------------------------------------------------------
def _block_defining(text: str, code: types.CodeType):
    try:
        whole = compile(text, code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    if not _contains(whole, code):
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    lines = text.splitlines(True)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            if start == code.co_firstlineno and node.end_lineno is not None:
                return lines[start - 1:node.end_lineno], start, lines
    return None


def _contains(outer: types.CodeType, code: types.CodeType) -> bool:
    todo = [outer]
    while todo:
        c = todo.pop()
        if c == code:
            return True
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return False
