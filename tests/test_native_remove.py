"""``pygpgpu build-native --remove`` deletes the launcher ``build-native`` compiled beside the package
source (pip uninstall leaves it: it is not in the install's record), and only that."""
from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

from pygpgpu.cli import main
from pygpgpu_core.backend import native

from conftest import skip_no_compiler


def _fake_install(tmp_path, monkeypatch):
    source = tmp_path / "_native_launch.c"
    source.write_text(native.SOURCE.read_text())
    monkeypatch.setattr(native, "SOURCE", source)
    built = tmp_path / f"_native_launch{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    other_python = tmp_path / "_native_launch.cpython-310-x86_64-linux-gnu.so"
    partial = tmp_path / f"{built.name}.4242.tmp"          # an interrupted build
    neighbour = tmp_path / "native.py"
    for path in (built, other_python, partial, neighbour):
        path.write_bytes(b"x")
    return source, [built, other_python, partial], neighbour


def test_remove_deletes_every_built_launcher_and_nothing_else(tmp_path, monkeypatch):
    source, built, neighbour = _fake_install(tmp_path, monkeypatch)
    removed = native.remove()
    assert sorted(removed) == sorted(built)
    assert not any(p.exists() for p in built)
    assert source.exists() and neighbour.exists()
    assert native.remove() == []


def test_the_command_line_removes_it(tmp_path, monkeypatch, capsys):
    _source, built, _neighbour = _fake_install(tmp_path, monkeypatch)
    assert main(["build-native", "--remove"]) == 0
    text = capsys.readouterr().out
    assert all(f"removed {p}" in text for p in built) and not any(p.exists() for p in built)
    assert main(["build-native", "--remove"]) == 0
    assert "nothing to remove" in capsys.readouterr().out


def test_a_really_built_launcher_is_removed(tmp_path, monkeypatch):
    if not Path(sysconfig.get_paths()["include"], "Python.h").is_file() or not shutil.which("cc"):
        skip_no_compiler("a C compiler with Python's headers", "no cc, or no Python.h")
    source = tmp_path / "_native_launch.c"
    source.write_text(native.SOURCE.read_text())
    monkeypatch.setattr(native, "SOURCE", source)
    monkeypatch.setattr(native, "_loaded", [])
    built = native.build(tmp_path)
    assert built.is_file() and built.parent == tmp_path
    assert native.remove() == [built]
    assert not built.exists() and source.exists()
