"""Trusting nothing on disk (issue 13): cache entries hold data, never code; planted or damaged
entries cost at most a rebuild."""
from __future__ import annotations

import json

import numpy as np

from pygpgpu_core.cache import DiskCache
from pygpgpu_translate import kernel, stats


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
