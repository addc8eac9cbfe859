"""Runs the fenced code of one Markdown page, so that no example in README.md or docs/ can rot.

``python tests/doc_blocks.py PAGE`` runs, in order and in one namespace (as a reader types them),
every ```` ```python ```` block of PAGE, each in a fresh temporary working folder that is also on
``sys.path``. What a page may say around a block, in HTML comments that the rendered page hides:

- ``<!-- no-run: reason -->`` right before a block: the block is not run (CUDA-only code, code
  that shows an error). Keep these few; the reason is required.
- ``<!-- file: NAME -->`` right before any block: its text is written to NAME in the working
  folder (a ``.cl`` kernel file that a later block imports).
- a ```` ```text ```` block right after a python block is that block's printed output: what the
  block prints must equal it, line for line (trailing spaces ignored).

A DeprecationWarning that names pygpgpu is an error: examples use the current spellings.

Blocks are registered in ``linecache`` under ``PAGE:LINE``, so ``@kernel`` finds their source and
a traceback names the page and line. Exit status 0 when every block ran and printed what the
page shows; otherwise the first failure's traceback and the block's page line.
"""
from __future__ import annotations

import contextlib
import io
import linecache
import os
import re
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
_MARK = re.compile(r"<!--\s*(no-run|file):\s*(.*?)\s*-->\s*\Z", re.S)


@dataclass
class Block:
    line: int            # 1-based line of the opening fence
    lang: str
    body: str
    no_run: str | None   # the reason given, or None
    file: str | None     # write the body to this file instead of running it
    output: str | None   # the text block that follows, when there is one


def blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text, with the markers before it and the output after it."""
    found: list[Block] = []
    matches = list(_FENCE.finditer(text))
    for k, m in enumerate(matches):
        indent = len(m.group("indent"))
        body = "\n".join(ln[indent:] for ln in m.group("body").splitlines()) + "\n"
        before = text[matches[k - 1].end() if k else 0:m.start()]
        mark = _MARK.search(before.rstrip() + "\n" if before.strip() else "")
        no_run = file = None
        if mark and mark.group(1) == "no-run":
            no_run = mark.group(2)
        elif mark:
            file = mark.group(2)
        found.append(Block(text.count("\n", 0, m.start()) + 1, m.group("lang"), body, no_run, file, None))
    for prev, nxt, m_prev, m_next in zip(found, found[1:], matches, matches[1:]):
        if prev.lang == "python" and nxt.lang == "text" and not text[m_prev.end():m_next.start()].strip():
            prev.output = nxt.body
    return found


def _same_output(got: str, want: str) -> bool:
    def norm(s: str) -> list[str]:
        return [ln.rstrip() for ln in s.strip("\n").splitlines()]
    return norm(got) == norm(want)


def run_page(page: Path) -> int:
    """Run PAGE's blocks; 0 when all ran and printed what the page shows, else 1 (the reason on
    stderr). The working folder, sys.path and the warning filters are restored afterwards."""
    text = page.read_text(encoding="utf-8")
    namespace: dict = {"__name__": "__main__"}
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="docblocks-") as work, warnings.catch_warnings():
        # examples show current spellings: a deprecated pygpgpu name fails the page
        warnings.filterwarnings("error", category=DeprecationWarning, message=r".*\bpygpgpu\b")
        os.chdir(work)
        sys.path.insert(0, work)
        try:
            return _run_blocks(page, text, work, namespace)
        finally:
            sys.path.remove(work)
            os.chdir(here)


def _run_blocks(page: Path, text: str, work: str, namespace: dict) -> int:
    for block in blocks(text):
        where = f"{page.name}:{block.line}"
        if block.file:
            Path(work, block.file).write_text(block.body, encoding="utf-8")
            continue
        if block.lang != "python" or block.no_run is not None:
            continue
        name = f"<doc {where}>"
        lines = block.body.splitlines(True)
        linecache.cache[name] = (len(block.body), None, lines, name)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(block.body, name, "exec"), namespace)
        except BaseException:
            traceback.print_exc()
            print(f"FAILED: the python block at {where} raised", file=sys.stderr)
            return 1
        if block.output is not None and not _same_output(printed.getvalue(), block.output):
            print(f"FAILED: the python block at {where} printed\n{printed.getvalue()}\n"
                  f"where the page shows\n{block.output}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(run_page(Path(sys.argv[1]).resolve()))
