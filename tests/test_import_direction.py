"""Core and its driver kit (``pygpgpu_core.backend``) import one way (issue 34, item 3): the kit
builds on core, and core outside the kit neither imports the kit nor looks it up by name. What
both use (the disk cache, the memory pool, the host-alias check) lives in core."""
from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).parent.parent / "packages" / "pygpgpu-core" / "src" / "pygpgpu_core"
KIT = "pygpgpu_core.backend"


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(CORE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, text: "str | None" = None):
    """``(line, module)`` of every import in ``path``, relative ones resolved, and of every string
    that is a module path of the kit (a ``sys.modules`` look-up)."""
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            yield node.lineno, base
            for alias in node.names:                    # from .. import backend
                yield node.lineno, f"{base}.{alias.name}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(KIT):
            yield node.lineno, node.value


def _in_kit(name: str) -> bool:
    return name == KIT or name.startswith(KIT + ".")


def _into_kit(paths) -> "list[str]":
    return [f"{p.relative_to(CORE)}:{line}: {name}" for p in paths for line, name in _imports(p) if _in_kit(name)]


def test_core_outside_the_kit_imports_nothing_of_it():
    outside = [p for p in sorted(CORE.rglob("*.py")) if "backend" not in p.relative_to(CORE).parts]
    assert len(outside) > 40
    found = _into_kit(outside)
    assert not found, "core imports its driver kit (move what both use into core):\n" + "\n".join(found)


def test_the_kit_builds_on_core():
    inside = sorted((CORE / "backend").rglob("*.py"))
    used = {name for p in inside for _line, name in _imports(p)}
    assert {"pygpgpu_core.errors", "pygpgpu_core.forking"} <= used
    assert "pygpgpu_core.mempool" in used or any(n.startswith("pygpgpu_core.mempool") for n in used)


def test_the_scan_sees_each_kind_of_import():
    probe = CORE / "gnp" / "_probe.py"          # resolved as a module of core's gnp; never written
    text = ("from ..backend import mempool\nfrom ..backend.cache import x\nimport pygpgpu_core.backend.args\n"
            "from .. import backend\nm = sys.modules.get('pygpgpu_core.backend.handles')\nfrom ..errors import E\n")
    found = list(_imports(probe, text))
    assert sorted({line for line, name in found if _in_kit(name)}) == [1, 2, 3, 4, 5]
    assert (6, "pygpgpu_core.errors") in found and (2, "pygpgpu_core.backend.cache") in found


def test_a_forked_child_forgets_the_kits_drain_list():
    """Core's fork handler no longer reaches into the kit by name: the kit registers its own."""
    import os

    from pygpgpu_core.backend import handles

    class Queue:
        pass

    q = Queue()
    handles._drain_at_exit.add(q)
    try:
        pid = os.fork()
        if pid == 0:                                    # the child: the parent's queues are not ours
            os._exit(0 if len(handles._drain_at_exit) == 0 else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert q in set(handles._drain_at_exit)          # the parent keeps its own
    finally:
        handles._drain_at_exit.discard(q)
