"""The cache folder comes from platformdirs (declared by pygpgpu-core, pinned in the constraints file)
unless PYGPGPU_CACHE_DIR names one; kernels then cache their builds there."""
from __future__ import annotations

import re
import types
from importlib.metadata import version
from pathlib import Path

import numpy as np
import platformdirs

from pygpgpu_core import _cachedir
from pygpgpu_translate import kernel

ROOT = Path(__file__).resolve().parents[1]


def test_the_folder_is_what_platformdirs_says(monkeypatch, tmp_path):
    monkeypatch.delenv("PYGPGPU_CACHE_DIR", raising=False)
    asked = []

    class Dirs:
        def __init__(self, appname, appauthor=None):
            asked.append((appname, appauthor))
            self.user_cache_dir = str(tmp_path / "from-platformdirs")

    monkeypatch.setattr(platformdirs, "PlatformDirs", Dirs)
    monkeypatch.setattr(_cachedir, "sys", types.SimpleNamespace(platform="linux"))
    assert _cachedir.default_location()[0] == tmp_path / "from-platformdirs"
    assert asked == [("pygpgpu", False)]


def test_the_folder_matches_platformdirs_user_cache_dir_here(monkeypatch, tmp_path):
    monkeypatch.delenv("PYGPGPU_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for xdg in (None, str(tmp_path / "xdg")):
        if xdg is None:
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", xdg)
        assert _cachedir.default_location()[0] == Path(platformdirs.user_cache_dir("pygpgpu", appauthor=False))


def test_platformdirs_is_a_dependency_and_pinned_at_the_installed_version():
    pyproject = (ROOT / "packages/pygpgpu-core/pyproject.toml").read_text()
    deps = re.search(r"^dependencies = \[(.*)\]$", pyproject, re.M)
    assert deps and '"platformdirs>=' in deps.group(1), deps
    pins = (ROOT / "requirements/constraints.txt").read_text().splitlines()
    assert f"platformdirs=={version('platformdirs')}" in pins


def test_kernels_cache_their_builds_in_the_platformdirs_folder(monkeypatch, tmp_path, backend):
    monkeypatch.delenv("PYGPGPU_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = Path(platformdirs.user_cache_dir("pygpgpu", appauthor=False))

    @kernel
    def twice(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * 2

    x = np.arange(6, dtype=np.float32)
    out = np.zeros_like(x)
    twice[backend](x, out)
    want = np.empty_like(x)
    twice.py_func(x, want)
    np.testing.assert_array_equal(out, want)
    assert folder.is_dir() and any(p.is_file() for p in folder.rglob("*")), folder
