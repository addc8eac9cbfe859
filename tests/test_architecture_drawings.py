"""docs/architecture.md draws the path of a translation and of a launch (issue 34, item 4) with
the names of the code that does each step; every dotted name and every private module named in
those drawings must exist, so a renamed step fails here instead of leaving the drawing wrong."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).parent.parent / "docs" / "architecture.md"
DRAWINGS = ("### The path of a translation", "## The launch path")
BASES = ("pygpgpu_translate", "pygpgpu_translate.target", "pygpgpu_core", "pygpgpu_core.protocols",
         "pygpgpu_core.backend")


def _drawing(heading: str) -> str:
    text = PAGE.read_text()
    after = text[text.index(heading + "\n"):]
    m = re.search(r"```text\n(.*?)```", after, re.S)
    assert m and after.index("```text") < after.index("\n#", 1), f"no drawing right under {heading!r}"
    return re.sub(r'"[^"]*"', "", m.group(1))          # quoted text (a cache key, an argument) names nothing


def _child(obj, name):
    if hasattr(obj, name):
        return getattr(obj, name)
    if hasattr(obj, "__path__"):                       # a package: the submodule
        try:
            return importlib.import_module(f"{obj.__name__}.{name}")
        except ModuleNotFoundError:
            pass
    raise AttributeError(name)


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` names something: a module path then attributes, or a name of one of the
    packages' namespaces (``_translate.render``, ``Dialect.kernel_signature``, ``Context.program``)."""
    parts = dotted.split(".")
    starts = [(".".join(parts[:k]), parts[k:]) for k in range(len(parts), 0, -1)] if dotted.startswith("pygpgpu") else []
    starts += [(base, parts) for base in BASES]
    for module, rest in starts:
        try:
            obj = importlib.import_module(module)
            for part in rest:
                obj = _child(obj, part)
            return True
        except (ImportError, AttributeError):
            continue
    return False


def _names(drawing: str) -> "tuple[set[str], set[str]]":
    dotted = set(re.findall(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", drawing))
    private = set(re.findall(r"(?<![\w.])_[a-z][a-z_]*(?![\w.(])", drawing)) - {"_pyg_n0"}
    return dotted, {p for p in private if not p.startswith("_pyg")}


@pytest.mark.parametrize("heading", DRAWINGS)
def test_every_name_in_the_drawing_is_in_the_code(heading):
    dotted, modules = _names(_drawing(heading))
    assert len(dotted) >= 8, dotted                     # the drawing names the code, it is not prose
    missing = sorted(d for d in dotted if not _resolves(d))
    missing += sorted(m for m in modules if not _resolves(m))
    assert not missing, f"{heading!r} names what the code does not have: {missing}"


def test_the_check_sees_a_name_that_is_gone():
    assert _resolves("_translate.render") and _resolves("Dialect.kernel_signature")
    assert _resolves("pygpgpu_core.targets.target") and _resolves("_memo")
    assert not _resolves("_translate.no_such_step") and not _resolves("_no_such_module")
