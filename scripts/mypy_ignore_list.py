"""The modules mypy.ini still exempts (``ignore_errors``), measured: run mypy without the list and see
which modules have errors.

    .venv/bin/python scripts/mypy_ignore_list.py           # list them, and the exempt ones now clean
    .venv/bin/python scripts/mypy_ignore_list.py --write   # rewrite mypy.ini's list to exactly them

The list is meant to shrink: fix a module, then ``--write`` drops it. Run from the repository root.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "mypy.ini")
MARKER = "# Not yet type-clean"


def _split(text: str) -> tuple[str, str]:
    head, sep, tail = text.partition(MARKER)
    return head, sep + tail


def listed(text: str) -> set[str]:
    _, tail = _split(text)
    return {m for section in re.findall(r"^\[mypy-([^\]]+)\]", tail, re.M) for m in section.split(",")}


def modules_with_errors() -> set[str]:
    head, _ = _split(open(CONFIG, encoding="utf-8").read())
    with tempfile.NamedTemporaryFile("w", suffix=".ini", dir=ROOT, delete=False) as f:
        f.write(head)
    try:
        out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", f.name], cwd=ROOT,
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    found = set()
    for line in out.splitlines():
        if ": error:" not in line or "[import-untyped]" in line:
            continue
        path = re.sub(r"^packages/[^/]+/src/", "", line.split(":", 1)[0])
        found.add(re.sub(r"(/__init__)?\.pyi?$", "", path).replace("/", "."))
    return found


def block(modules: set[str]) -> str:
    text = (f"{MARKER}: modules being rewritten or not yet annotated. Remove a module from this list\n"
            "# once mypy passes on it (scripts/mypy_ignore_list.py measures which); the list only shrinks.\n")
    groups: dict[str, list[str]] = {}
    for m in sorted(modules):
        groups.setdefault(m.split(".")[0], []).append(m)
    for names in groups.values():
        text += f"[mypy-{','.join(names)}]\nignore_errors = True\n"
    return text


def main(argv: list[str]) -> int:
    text = open(CONFIG, encoding="utf-8").read()
    now = modules_with_errors()
    before = listed(text)
    print("modules with errors:", ", ".join(sorted(now)) or "none")
    print("exempt and now clean:", ", ".join(sorted(before - now)) or "none")
    print("with errors and not exempt:", ", ".join(sorted(now - before)) or "none")
    if "--write" in argv:
        head, _ = _split(text)
        with open(CONFIG, "w", encoding="utf-8") as f:
            f.write(head + (block(now) if now else ""))
        print(f"wrote {CONFIG}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
