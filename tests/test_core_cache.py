import os
import stat

from pygpgpu_core.cache import DiskCache, atomic_write, cache_dir, cache_key


def test_cache_dir_is_private_and_overridable(tmp_path, monkeypatch):
    target = tmp_path / "c"
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(target))
    assert cache_dir() == target
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o700


def test_key_separates_parts_and_changes_with_every_input():
    assert cache_key("ab", "c") != cache_key("a", "bc")
    base = cache_key("src", "sm_90", 13.0, None)
    assert base == cache_key("src", "sm_90", 13.0, None)
    assert base != cache_key("src", "sm_89", 13.0, None)
    assert base != cache_key("src2", "sm_90", 13.0, None)


def test_roundtrip_and_corrupt_entry_is_dropped(tmp_path):
    cache = DiskCache("unit", root=tmp_path)
    key = cache_key("x")
    assert cache.get(key) is None
    cache.put(key, b"binary payload")
    assert cache.get(key) == b"binary payload"
    path = cache.path(key)
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    assert cache.get(key) is None  # checksum mismatch: never trusted
    assert not path.exists()  # and removed so the caller rebuilds
    path.write_bytes(b"short")
    assert cache.get(key) is None


def test_atomic_write_leaves_no_temp_files(tmp_path):
    atomic_write(tmp_path / "a.bin", b"1")
    atomic_write(tmp_path / "a.bin", b"2")
    assert (tmp_path / "a.bin").read_bytes() == b"2"
    assert [p.name for p in tmp_path.iterdir()] == ["a.bin"]


def test_unwritable_cache_only_costs_a_rebuild(tmp_path):
    root = tmp_path / "ro"
    root.mkdir()
    cache = DiskCache("ns", root=root)
    (root / "ns").write_text("a file where the folder should be")
    cache.put("k", b"data")  # must not raise
    assert cache.get("k") is None


def test_a_relative_cache_dir_is_resolved_once(tmp_path, monkeypatch):
    """PYGPGPU_CACHE_DIR=relcache names a folder of the working folder the process had when it
    first read the variable: it stays there after os.chdir (it moved with the working folder, so
    one process used two caches) and is reported absolute."""
    from pygpgpu_core.cache import cache_info

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", f"relcache-{os.getpid()}")
    first = cache_dir()
    assert first == tmp_path / "a" / f"relcache-{os.getpid()}"
    monkeypatch.chdir(tmp_path / "b")
    assert cache_dir() == first and cache_info()["path"] == str(first)
    assert not (tmp_path / "b" / f"relcache-{os.getpid()}").exists()
