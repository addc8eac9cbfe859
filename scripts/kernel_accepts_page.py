"""Writes docs/kernel-accepts.md, "What a kernel accepts", from the translator's tables.

Every function a kernel may call is one row of ``pygpgpu_translate._builtins.BUILTINS``; this
script lists them by family with every spelling that lands on the row (``math.sqrt``,
``np.sqrt``), the number of arguments, the keywords and the row's own description, so the page
cannot drift from what the translator accepts. The statements and the refused constructs with
their hints come from the syntax gate's ``ALLOWED_NODES`` and ``REJECTED`` (``_frontend``). ``tests/test_docs.py`` fails when the committed
page differs from what this script writes.

    .venv/bin/python scripts/kernel_accepts_page.py           # rewrite the page
    .venv/bin/python scripts/kernel_accepts_page.py --check   # exit 1 when the page is stale
"""
from __future__ import annotations

import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "kernel-accepts.md"

# the short module name a user writes for each host object's module
_MODULES = {"builtins": "", "math": "math", "cmath": "cmath", "numpy": "np",
            "pygpgpu_core.gpu": "gpu", "pygpgpu_core.gpu_random": "gpu", "pygpgpu_core.funcs": "funcs"}

# (title, what it is, test on the row name), in page order; the first family that matches takes a row
_FAMILIES = [
    ("Math functions", "Float math from `math` and numpy; of Python numbers alone they are computed "
     "when translating.", lambda n: n.startswith("math.") or n in ("np.power", "np.log", "fabs", "np.rint",
                                                                      "np.round") or n.startswith(("np.floor", "np.ceil",
                                                                                                   "np.trunc", "np.is"))),
    ("numpy's operator functions", "`np.add(a, b)` is `a + b`, with the same types and rules.",
     lambda n: n.startswith("np.") and n[3:] in ("add", "subtract", "multiply", "true_divide", "floor_divide", "mod",
                                                 "left_shift", "right_shift", "bitwise_and", "bitwise_or",
                                                 "bitwise_xor", "square")),
    ("Complex numbers", "complex64 and complex128 values; see [Complex numbers](kernels.md#complex-numbers).",
     lambda n: n.startswith("cmath.") or n in ("np.real", "np.imag", "np.conjugate", "complex", "np.complex64",
                                              "np.complex128")),
    ("Conversions", "Python's `int`, `float`, `bool` and numpy's scalar types as functions.",
     lambda n: n in ("int", "float", "bool") or (n.startswith("np.") and n[3:].rstrip("_").replace("float", "int")
                                                 .replace("uint", "int").removeprefix("int").isdigit())
     or n == "np.bool"),
    ("Python builtins and numpy element-wise functions", "With Python's (or numpy's) semantics.",
     lambda n: "." not in n or n.startswith("np.")),
    ("`gpu`: work items, memory and random numbers", "Device builtins; see [`gpu`](vectors.md#gpu-device-builtins).",
     lambda n: n.startswith("gpu.")),
    ("`funcs`: vector and scalar functions", "The same functions run on the host; see "
     "[`funcs`](vectors.md#funcs-one-function-host-and-device).", lambda n: n.startswith("funcs.")),
]


def _spellings(b) -> list[str]:
    names = [b.name]
    for h in (b.host,) + tuple(b.hosts):
        module = _MODULES.get(getattr(h, "__module__", None) or "")
        name = getattr(h, "__name__", None)
        if module is None or not name:
            continue
        spelled = f"{module}.{name}" if module else name
        if spelled not in names:
            names.append(spelled)
    return names


def _doc(b) -> str:
    """The row's description; where it is the first line of the host's docstring, that whole first
    paragraph (a sentence may run over several lines), with reST's double backticks made Markdown's."""
    doc = b.doc
    host_doc = (getattr(b.host, "__doc__", None) or "").strip()
    if doc and host_doc.startswith(doc):
        doc = " ".join(ln.strip() for ln in host_doc.split("\n\n")[0].splitlines())
    return doc.replace("``", "`").replace("|", "\\|")


def _arity(b) -> str:
    low, high = b.arity
    if high is None:
        return f"{low} or more"
    return str(low) if low == high else f"{low} to {high}"


_STATEMENTS = {"Assign": "`x = ...` (also `a, b = ...`)", "AugAssign": "`x += ...`", "AnnAssign": "`x: T = ...`",
               "Expr": "a call on its own", "If": "`if` / `elif` / `else`", "While": "`while`",
               "For": "`for` (over `range`, `np.ndindex`, `enumerate`, a tuple)", "Break": "`break`",
               "Continue": "`continue`", "Return": "`return` (in helpers)", "Pass": "`pass`"}


_NEWER_PYTHONS = {"TryStar", "TypeAlias"}


def _syntax() -> list[str]:
    """The statements the syntax gate lets through, and its table of refused constructs."""
    import ast

    from pygpgpu_translate._frontend import ALLOWED_NODES, REJECTED

    statements = [_STATEMENTS.get(n.__name__, f"`{n.__name__}`") for n in ALLOWED_NODES
                  if issubclass(n, ast.stmt) and n is not ast.FunctionDef]
    out = ["## Statements", "", "A kernel or helper body may contain " + ", ".join(statements) + ", with "
           "arithmetic, comparisons, `and`/`or`/`not`, conditional expressions, calls, subscripts, attributes, "
           "numbers and tuples. [Writing kernels](kernels.md) says what each means.", "",
           "## Refused, and what to write instead", "",
           "The syntax gate stops at the first of these, at your line, with the hint below.", "",
           "| refused | write instead |", "| --- | --- |"]
    # the page must not depend on the Python that writes it: constructs of newer Pythons get a sentence
    rows = sorted(v for node, v in REJECTED.items() if node.__name__ not in _NEWER_PYTHONS)
    for problem, hint in rows:
        out.append(f"| {problem} | {hint} |")
    return out + ["", "Python 3.11's `try`/`except*` and 3.12's `type` aliases are refused too.", ""]


def render() -> str:
    from pygpgpu_translate._builtins import BUILTINS

    rows = sorted(BUILTINS.values(), key=lambda b: b.name)
    taken: set[str] = set()
    out = ["# What a kernel accepts", "",
           "<!-- generated by scripts/kernel_accepts_page.py from pygpgpu_translate's _frontend and _builtins tables: "
           "do not edit -->", "",
           "The statements a kernel or helper may contain, what it refuses, and every function it may call "
           "besides your own undecorated helpers, as the translator's own tables list them. What each means "
           "is on [Writing kernels](kernels.md), the type rules on [Types](types.md). Any other call is a "
           "`SyntaxError` or `TypeError` at your line that names what to use instead.", "",
           f"{len(rows)} builtins in all. A name written with `np.` also works with `numpy.`, and "
           "`from math import sqrt` finds the same row as `math.sqrt`.", ""]
    out += _syntax()
    for title, what, test in _FAMILIES:
        family = [b for b in rows if b.name not in taken and test(b.name)]
        if not family:
            continue
        taken.update(b.name for b in family)
        out += [f"## {title}", "", what, "", "| call | arguments | keywords | what it does |", "| --- | --- | --- | --- |"]
        for b in family:
            calls = ", ".join(f"`{s}`" for s in _spellings(b))
            keywords = ", ".join(f"`{k}`" for k in b.keywords) or ""
            out.append(f"| {calls} | {_arity(b)} | {keywords} | {_doc(b)} |")
        out.append("")
    left = [b.name for b in rows if b.name not in taken]
    if left:
        raise RuntimeError(f"builtin rows in no family of scripts/kernel_accepts_page.py: {left}; add them to one")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run {Path(__file__).name} to rewrite it", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
