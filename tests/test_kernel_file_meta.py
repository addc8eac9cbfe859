"""Kernel-file metadata is keyed by content (issue 13, item 5): an edit that keeps the file's
size and mtime must not reuse the declarations parsed from the old text."""
from __future__ import annotations

import os

import numpy as np
import pytest

from pygpgpu_core import kernel_files as kf

FLOAT = """__kernel void twice(__global float* x, const int n)
{
    int i = get_global_id(0);
    if (i < n) x[i] = x[i] * 2;
}
"""
INT = FLOAT.replace("float* x", "int*   x")


def _edit_keeping_size_and_mtime(path, text):
    st = os.stat(path)
    assert len(text.encode()) == st.st_size
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_same_size_and_mtime_edit_is_reparsed(tmp_path, monkeypatch):
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "twice.cl"
    src.write_text(FLOAT)
    m = kf.load(src)
    assert "float* x" in m.twice.prototype
    _edit_keeping_size_and_mtime(src, INT)
    m = kf.load(src)
    assert "int* x" in m.twice.prototype


def test_edited_parameter_type_runs_with_the_new_type(tmp_path, monkeypatch):
    from conftest import first_device
    first_device("opencl")
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "twice.cl"
    src.write_text(FLOAT)
    x = np.arange(100, dtype=np.float32)
    kf.load(src).twice[(100, 64)](x, len(x))
    np.testing.assert_array_equal(x, 2 * np.arange(100, dtype=np.float32))
    _edit_keeping_size_and_mtime(src, INT)
    m = kf.load(src)
    xi = np.arange(100, dtype=np.int32)
    m.twice[(100, 64)](xi, len(xi))
    np.testing.assert_array_equal(xi, 2 * np.arange(100, dtype=np.int32))
    with pytest.raises(TypeError):           # float bits into an int* parameter: refused
        m.twice[(100, 64)](np.arange(100, dtype=np.float32), 100)


def test_unchanged_file_uses_the_metadata_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "twice.cl"
    src.write_text(FLOAT)
    kf.load(src)
    meta = tmp_path / "__clcache__" / "twice_cl.meta.json"
    before = meta.stat().st_mtime_ns
    kf.load(src)                              # a hit: not rewritten
    assert meta.stat().st_mtime_ns == before


def _parsed_with(doc: dict, **changes) -> str:
    import json
    parsed = json.loads(doc["parsed"])
    parsed.update(changes)
    return json.dumps(parsed)


@pytest.mark.parametrize("damage", [
    lambda doc: [1, 2],                                     # valid JSON, not an object
    lambda doc: {**doc, "stamps": [1, 2]},
    lambda doc: {**doc, "parsed": _parsed_with(doc, kernels=[7])},
    lambda doc: {**doc, "parsed": _parsed_with(doc, exports=[["S", 99]])},
    lambda doc: {**doc, "parsed": "[]"},
], ids=["list", "stamps-list", "kernel-int", "struct-index", "parsed-list"])
def test_metadata_of_another_shape_is_reparsed(tmp_path, monkeypatch, damage):
    """A meta.json that parses as JSON but is not what the library writes (another tool, a
    bad disk, a hand edit) is a miss like a truncated one, not an AttributeError at import."""
    import json
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "twice.cl"
    src.write_text(FLOAT)
    kf.load(src)
    meta = tmp_path / "__clcache__" / "twice_cl.meta.json"
    meta.write_text(json.dumps(damage(json.loads(meta.read_text()))))
    assert kf.load(src).__kernels__ == ["twice"]
    assert json.loads(meta.read_text())["stamps"]           # rewritten from the fresh parse
