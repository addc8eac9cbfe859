"""Capability defaults are declared once (issue 34, item 3): every optional attribute a backend
may leave out has its assumed value in ``protocols.OPTIONAL_ATTRIBUTES``, and no package reads
one with a ``getattr`` default of its own that says otherwise (a backend that leaves
``zero_copy`` out must not be trusted to alias host memory in one place and not in another)."""
from __future__ import annotations

import ast
from pathlib import Path

import pygpgpu_core
from pygpgpu_core.protocols import OPTIONAL_ATTRIBUTES, option

# the packages folder the running core comes from (packages/pygpgpu-core/src/pygpgpu_core), so
# that a copy on PYTHONPATH (scripts/mutation_check.py) is the one scanned
PACKAGES = Path(pygpgpu_core.__file__).resolve().parents[3]


def _reads(tree: ast.AST):
    """``getattr(obj, "name", default)`` calls with a literal name and a literal default."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) == 3 and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)):
            try:
                default = ast.literal_eval(node.args[2])
            except ValueError:
                continue
            yield node.lineno, node.args[1].value, default


def test_no_read_of_an_optional_attribute_contradicts_its_declared_default():
    wrong = []
    for path in sorted(PACKAGES.glob("*/src/**/*.py")):
        for line, name, default in _reads(ast.parse(path.read_text())):
            if name in OPTIONAL_ATTRIBUTES and default != OPTIONAL_ATTRIBUTES[name][1]:
                wrong.append(f"{path.relative_to(PACKAGES)}:{line}: getattr(..., {name!r}, {default!r}), declared "
                             f"{OPTIONAL_ATTRIBUTES[name][1]!r}: read it with protocols.option()")
    assert not wrong, "\n".join(wrong)


def test_the_scan_sees_a_contradicting_default():
    tree = ast.parse('getattr(buf, "zero_copy", True)\ngetattr(dev, "is_gpu", False)\n')
    reads = list(_reads(tree))
    assert [(n, d) for _, n, d in reads] == [("zero_copy", True), ("is_gpu", False)]
    assert [n for _, n, d in reads if d != OPTIONAL_ATTRIBUTES[n][1]] == ["zero_copy"]


def test_option_gives_the_declared_default_for_an_object_without_the_attribute():
    class Bare:
        pass

    for name, (_on, default, _meaning) in OPTIONAL_ATTRIBUTES.items():
        assert option(Bare(), name) == default, name
