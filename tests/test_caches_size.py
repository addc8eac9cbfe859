"""The disk cache is bounded and can be cleared (issue 13, item 6): ``PYGPGPU_CACHE_MAX`` with
least-recently-used eviction, ``pygpgpu.clear_cache()`` / ``cache_info()``, and the platform's
cache folder on macOS and Windows (platformdirs conventions)."""
from __future__ import annotations

import os
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

import pygpgpu
from pygpgpu_core import _cachedir
from pygpgpu_core.cache import CacheWarning, DiskCache, cache_info, cache_key, clear_cache
from pygpgpu_translate import kernel, stats

KB = 1024


def K(name):
    return cache_key(name)          # entries are named by their key, as every cache names them


def _put_aged(cache, key, nbytes, age):
    cache.put(K(key), os.urandom(nbytes))
    t = 1_700_000_000 + age
    os.utime(cache.path(K(key)), (t, t))


def _total(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def test_size_cap_evicts_least_recently_used_entries(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(root))
    monkeypatch.setenv("PYGPGPU_CACHE_MAX", "100K")
    cache = DiskCache("unit")
    (root / "unit").mkdir(parents=True)
    foreign = root / "unit" / "notes.txt"    # not named like an entry: never the library's to delete
    foreign.write_bytes(os.urandom(5 * KB))
    os.utime(foreign, (1_600_000_000, 1_600_000_000))
    for i in range(9):                       # 9 x 10 KiB: under the bound
        _put_aged(cache, f"k{i}", 10 * KB, age=i)
    assert all(cache.path(K(f"k{i}")).exists() for i in range(9))
    assert cache.get(K("k0")) is not None    # a hit: k0 is now the most recently used
    cache.put(K("big"), os.urandom(30 * KB))  # over 100 KiB: trimmed to 90 % of it
    assert _total(root) - 5 * KB <= 90 * KB
    assert cache.path(K("k0")).exists() and cache.path(K("big")).exists()
    assert not cache.path(K("k1")).exists() and not cache.path(K("k2")).exists()   # the oldest went first
    assert cache.path(K("k8")).exists() and foreign.exists()


def test_no_bound_and_a_bad_bound(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(root))
    monkeypatch.setenv("PYGPGPU_CACHE_MAX", "0")
    cache = DiskCache("unit")
    for i in range(12):
        cache.put(K(f"k{i}"), os.urandom(20 * KB))
    assert _total(root) > 200 * KB           # 0: never trimmed
    monkeypatch.setenv("PYGPGPU_CACHE_MAX", "lots")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert cache_info()["limit"] == 512 << 20
    assert [w for w in record if issubclass(w.category, CacheWarning) and "PYGPGPU_CACHE_MAX" in str(w.message)]


@kernel
def plus_two(x):
    for i in range(x.shape[0]):
        x[i] = x[i] + 2.0


def test_clear_cache_empties_it_and_kernels_rebuild(tmp_path, monkeypatch, backend):
    root = tmp_path / "cache"
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(root))
    x = np.zeros(4, np.float32)
    kernel(plus_two.py_func)[backend](x)
    info = pygpgpu.cache_info()
    assert info["path"] == str(root) and info["bytes"] > 0 and info["entries"] >= 1
    assert "translate" in info["namespaces"] and info["limit"] == 512 << 20
    translate_bytes = info["namespaces"]["translate"]["bytes"]
    assert clear_cache("translate") == translate_bytes
    assert pygpgpu.cache_info()["namespaces"].get("translate", {"entries": 0})["entries"] == 0
    freed = pygpgpu.clear_cache()
    assert freed == info["bytes"] - translate_bytes
    assert _total(root) == 0 and root.is_dir()
    n = stats["translations"]
    kernel(plus_two.py_func)[backend](x)     # nothing cached: translated and built again
    assert stats["translations"] == n + 1
    np.testing.assert_array_equal(x, np.full(4, 4, np.float32))
    with pytest.raises(ValueError):
        clear_cache("../elsewhere")


def test_a_cache_folder_set_to_home_is_never_emptied(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "cuda").mkdir(parents=True)
    precious = home / "cuda" / ("0" * 64 + ".bin")     # even a file named like an entry
    precious.write_bytes(b"not a cache entry")
    os.chmod(home, 0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(home))  # by mistake
    monkeypatch.setenv("PYGPGPU_CACHE_MAX", "1K")
    DiskCache("cuda").put(cache_key("x"), os.urandom(4 * KB))   # over the bound: not trimmed there
    assert precious.exists()
    with pytest.raises(ValueError, match="home folder"):
        clear_cache()
    assert precious.exists()


@pytest.mark.parametrize("platform, env, expected", [
    ("darwin", {"HOME": "/Users/ada"}, "/Users/ada/Library/Caches/pygpgpu"),
    # platformdirs asks the Windows shell for Local AppData; off Windows its documented override stands in
    ("win32", {"WIN_PD_OVERRIDE_LOCAL_APPDATA": "C:/Users/ada/AppData/Local"}, "C:/Users/ada/AppData/Local/pygpgpu/Cache"),
    ("linux", {"HOME": "/home/ada", "XDG_CACHE_HOME": "/var/cache/ada"}, "/var/cache/ada/pygpgpu"),
    ("linux", {"HOME": "/home/ada"}, "/home/ada/.cache/pygpgpu"),
])
def test_platform_cache_locations(monkeypatch, platform, env, expected):
    monkeypatch.delenv("PYGPGPU_CACHE_DIR", raising=False)
    for name in ("XDG_CACHE_HOME", "LOCALAPPDATA", "WIN_PD_OVERRIDE_LOCAL_APPDATA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(_cachedir, "sys", types.SimpleNamespace(platform=platform))
    assert _cachedir.default_location()[0].as_posix() == expected
