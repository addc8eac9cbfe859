"""Trusting nothing on disk (issue 13): cache entries hold data, never code; planted or damaged
entries cost at most a rebuild."""
from __future__ import annotations

import json
import os
import shutil
import stat
import warnings
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core.cache import CacheWarning, DiskCache
from pygpgpu_translate import kernel, stats


DATA = Path(__file__).parent / "kernel_files"


@kernel
def half_range(x, out):
    n = x.shape[0] // 2
    for i in range(1, n):
        out[i] = x[i] * 2.0


@kernel
def grid(img, out):
    for y, x in np.ndindex(img.shape):
        out[y, x] = img[y, x] + 1.0


def _entries(cache_root):
    return sorted(p.stem for p in (cache_root / "translate").glob("*.json"))


def _load(key):
    return json.loads(DiskCache("translate").get(key, ".json"))


def _store(key, doc):
    DiskCache("translate").put(key, json.dumps(doc).encode(), ".json")   # a valid checksum, as a planter would


def _run_half(backend):
    x = np.arange(10, dtype=np.float32)
    out = np.zeros_like(x)
    kernel(half_range.py_func)[backend](x, out)      # a fresh KernelFunction: empty in-memory caches
    expect = np.zeros_like(x)
    expect[1:5] = x[1:5] * 2
    np.testing.assert_array_equal(out, expect)


def test_planted_domain_code_is_never_run(tmp_path, monkeypatch, backend):
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    _run_half(backend)
    keys = _entries(tmp_path / "cache")
    assert keys
    marker = tmp_path / "planted-code-ran"
    planted = (f"def _pyg_domain(x, out):\n    open({str(marker)!r}, 'w').write('ran')\n"
               f"    return (len(range(1, x.shape[0] // 2)),)\n")
    for key in keys:
        doc = _load(key)
        doc["domain_src"] = planted          # where earlier versions kept the domain as source text
        _store(key, doc)
    n = stats["translations"]
    _run_half(backend)
    assert not marker.exists(), "Python source from the disk cache was executed"
    assert stats["translations"] == n + 1    # the planted entry is a miss: translated again


def test_domain_data_from_disk_is_validated(tmp_path, monkeypatch, backend):
    """The domain is data naming nodes of the kernel's own source; anything else is a miss."""
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    _run_half(backend)
    keys = _entries(tmp_path / "cache")
    good = _load(keys[0])
    plan = good["domain_plan"]
    assert set(plan) == {"setup", "dims"} and plan["setup"] and plan["dims"][0][0] == "range"
    n_before = stats["translations"]
    _run_half(backend)                       # untouched: served from disk
    assert stats["translations"] == n_before
    bad_plans = [
        "def _pyg_domain(x, out): return (1,)",                    # source text
        {"setup": plan["setup"], "dims": [["exec", plan["dims"][0][1], 0]]},  # unknown form
        {"setup": plan["setup"], "dims": [["range", [10 ** 6], 0]]},         # no such node
        {"setup": plan["setup"], "dims": [["range", [0], 0]]},               # the def itself
        {"setup": [0], "dims": plan["dims"]},                                 # not a statement of the body
        {"setup": plan["setup"], "dims": [["dim", plan["dims"][0][1][:1], 7]]},  # axis out of range
        {"setup": plan["setup"], "dims": [], },                               # no dimension
        {"setup": plan["setup"], "dims": plan["dims"], "code": "import os"},  # extra field
    ]
    for bad in bad_plans:
        for key in keys:
            _store(key, dict(good, domain_plan=bad))
        n = stats["translations"]
        _run_half(backend)
        assert stats["translations"] == n + 1, bad


def test_domains_rebuilt_from_disk_match(tmp_path, monkeypatch, backend):
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    img = np.arange(12, dtype=np.float32).reshape(3, 4)
    for attempt in range(2):                 # translated, then served from disk
        hits = stats["source_cache_hits"]
        out = np.zeros_like(img)
        kernel(grid.py_func)[backend](img, out)
        np.testing.assert_array_equal(out, img + 1)
        assert stats["source_cache_hits"] == hits + attempt


# ---- item 2: unsafe cache folders are refused -------------------------------------------------
def _cache_warnings(record):
    return [str(w.message) for w in record if issubclass(w.category, CacheWarning)]


def _tamper_c_source(cache_root):
    """Make every stored translation compute x * 3 instead of x * 2 (a planted entry)."""
    for key in _entries(cache_root):
        doc = _load(key)
        assert "2.0f" in doc["source"]
        doc["source"] = doc["source"].replace("2.0f", "3.0f")
        _store(key, doc)


def test_a_group_or_world_writable_cache_folder_is_not_used(tmp_path, monkeypatch, backend):
    shared = tmp_path / "shared"
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(shared))
    _run_half(backend)                            # a private folder: entries are written
    _tamper_c_source(shared)                      # as someone else could in a shared folder
    os.chmod(shared, 0o1777)                      # the shared /tmp-style folder
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _run_half(backend)                        # correct: the planted entry is never read
        _run_half(backend)
    messages = _cache_warnings(record)
    assert len(messages) == 1, messages
    assert str(shared) in messages[0] and "others may write" in messages[0] and "chmod 700" in messages[0]


def test_a_cache_folder_of_another_user_is_not_used(tmp_path, monkeypatch, backend):
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o755)
        os.chown(theirs, 65534, 65534)            # nobody
    else:
        theirs = Path("/")                        # root's: never ours
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(theirs))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _run_half(backend)
    messages = _cache_warnings(record)
    assert len(messages) == 1 and "belongs to user id" in messages[0], messages
    assert not (theirs / "translate").exists() or theirs == Path("/")


def test_folders_the_library_creates_are_private_at_every_level(tmp_path, monkeypatch, backend):
    monkeypatch.delenv("PYGPGPU_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x" / "y"))
    _run_half(backend)
    for folder in (tmp_path / "x", tmp_path / "x" / "y", tmp_path / "x" / "y" / "pygpgpu",
                   tmp_path / "x" / "y" / "pygpgpu" / "translate"):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder


def test_an_unsafe_clcache_folder_is_not_used(tmp_path, monkeypatch):
    from pygpgpu_core import kernel_files as kf

    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "user-cache"))
    src = tmp_path / "proj" / "vecadd.cl"
    src.parent.mkdir()
    shutil.copy(DATA / "vecadd.cl", src)
    beside = src.parent / "__clcache__"
    beside.mkdir()
    os.chmod(beside, 0o777)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        m = kf.load(src)
        _run_vecadd(m)
    assert any(str(beside) in w for w in _cache_warnings(record))
    assert list(beside.iterdir()) == []           # nothing read or written there
    assert list((tmp_path / "user-cache" / "kernel_files").glob("*/__clcache__/vecadd_cl.meta.json"))



def test_the_warning_for_an_unsafe_clcache_points_at_the_import_line(tmp_path, monkeypatch):
    """The warning raised while ``import vecadd`` runs names that line: Python's warnings skip
    importlib's bootstrap frames themselves, so counting them too overshot to ``sys:1``."""
    import importlib
    import sys

    from pygpgpu_core import kernel_files as kf

    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "user-cache"))
    proj = tmp_path / "proj"
    proj.mkdir()
    name = f"vecadd_{os.getpid()}_{id(tmp_path)}"
    shutil.copy(DATA / "vecadd.cl", proj / f"{name}.cl")
    (proj / "__clcache__").mkdir()
    os.chmod(proj / "__clcache__", 0o777)
    monkeypatch.syspath_prepend(str(proj))
    had = "cl" in kf.installed()
    kf.install("cl")
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            importlib.import_module(name); line = sys._getframe().f_lineno  # noqa: E702
    finally:
        sys.modules.pop(name, None)
        if not had:
            kf.uninstall("cl")
    [w] = [w for w in record if issubclass(w.category, CacheWarning)]
    assert (w.filename, w.lineno) == (__file__, line)

# ---- item 3: an unusable cache never breaks a call ----------------------------------------------
def _run_vecadd(module):
    a = np.arange(300, dtype=np.float32)
    out = np.zeros_like(a)
    module.vecadd[(300, 64)](a, a, out, len(a))
    np.testing.assert_array_equal(out, 2 * a)


@pytest.mark.parametrize("setting", ["cache-dir-is-a-file", "home-is-a-file", "xdg-unusable"])
def test_an_unusable_cache_warns_once_and_every_call_works(tmp_path, monkeypatch, backend, setting):
    from pygpgpu_core import kernel_files as kf

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.delenv("PYGPGPU_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    if setting == "cache-dir-is-a-file":
        monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(blocker))
    elif setting == "home-is-a-file":
        monkeypatch.setenv("HOME", str(blocker))
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "sub"))
    src = tmp_path / "vecadd.cl"
    shutil.copy(DATA / "vecadd.cl", src)
    (tmp_path / "__clcache__").write_text("a file where the folder beside the source would go")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for _ in range(2):
            _run_half(backend)
            _run_vecadd(kf.load(src))
    messages = _cache_warnings(record)
    assert len(messages) == 1, messages
    assert "running without the disk cache" in messages[0]


def test_a_relative_xdg_cache_home_is_ignored(tmp_path, monkeypatch, backend):
    monkeypatch.delenv("PYGPGPU_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    _run_half(backend)
    assert (tmp_path / "home" / ".cache" / "pygpgpu" / "translate").is_dir()
    assert not (tmp_path / "relative").exists()
