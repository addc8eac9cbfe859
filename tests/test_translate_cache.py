"""Cache keys: a changed helper, global constant or dtype recompiles; nothing changed recompiles
nothing, in one process and across processes (the on-disk source cache)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

from pygpgpu_translate import kernel, stats

FACTOR = 2.0


def helper_a(v):
    return v + 1.0


def helper_b(v):
    return v + 100.0


current_helper = helper_a


@kernel
def uses_global_and_helper(x, out):
    for i in range(out.shape[0]):
        out[i] = current_helper(x[i]) * FACTOR


def test_nothing_changed_means_no_new_translation_or_build(backend):
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    uses_global_and_helper[backend](x, out)
    before = dict(stats)
    for _ in range(3):
        uses_global_and_helper[backend](x, out)
    assert stats["translations"] == before["translations"]
    assert stats["compiles"] == before["compiles"]
    np.testing.assert_array_equal(out, (x + 1) * 2)


def test_rebinding_a_global_constant_or_helper_recompiles(backend):
    global FACTOR, current_helper
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    uses_global_and_helper[backend](x, out)
    try:
        FACTOR = 3.0
        n = stats["translations"]
        uses_global_and_helper[backend](x, out)
        assert stats["translations"] == n + 1
        np.testing.assert_array_equal(out, (x + 1) * 3)
        current_helper = helper_b
        uses_global_and_helper[backend](x, out)
        assert stats["translations"] == n + 2
        np.testing.assert_array_equal(out, (x + 100) * 3)
    finally:
        FACTOR = 2.0
        current_helper = helper_a
    uses_global_and_helper[backend](x, out)
    np.testing.assert_array_equal(out, (x + 1) * 2)


def test_a_new_dtype_is_a_new_specialization(backend):
    n = stats["translations"]
    x = np.arange(8, dtype=np.float32)
    uses_global_and_helper[backend](x, np.zeros_like(x))
    x64 = np.arange(8, dtype=np.int32)
    out = np.zeros(8, np.float32)
    uses_global_and_helper[backend](x64, out)
    assert stats["translations"] >= n + 1
    np.testing.assert_array_equal(out, (x64 + 1) * 2)
    a = uses_global_and_helper.inspect(x, x, backend=backend).signature
    b = uses_global_and_helper.inspect(x64, x, backend=backend).signature
    assert a != b


SCRIPT = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, {folder!r})
    import cachemod
    from pygpgpu_translate import stats
    x = np.arange(6, dtype=np.float32)
    out = np.zeros_like(x)
    cachemod.k[{backend!r}](x, out)
    print(json.dumps({{"stats": stats, "out": out.tolist()}}))
''')

MODULE = textwrap.dedent('''
    import os
    from pygpgpu_translate import kernel
    SCALE = {scale}

    def helper(v):
        return v * {mult}

    @kernel
    def k(x, out):
        for i in range(out.shape[0]):
            out[i] = helper(x[i]) + SCALE
''')


def _run(tmp_path, backend, scale, mult, cache_dir):
    (tmp_path / "cachemod.py").write_text(MODULE.format(scale=scale, mult=mult))
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(cache_dir))
    env.pop("PYGPGPU_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(folder=str(tmp_path), backend=backend)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_across_processes_source_cache(tmp_path, backend):
    cache = tmp_path / "cache"
    first = _run(tmp_path, backend, 1.0, 2.0, cache)
    assert first["stats"]["translations"] == 1
    assert first["out"] == [v * 2 + 1 for v in range(6)]
    again = _run(tmp_path, backend, 1.0, 2.0, cache)           # nothing changed: no translation
    assert again["stats"]["translations"] == 0 and again["stats"]["source_cache_hits"] == 1
    assert again["out"] == first["out"]
    const = _run(tmp_path, backend, 5.0, 2.0, cache)           # a global constant changed
    assert const["stats"]["translations"] == 1
    assert const["out"] == [v * 2 + 5 for v in range(6)]
    helper = _run(tmp_path, backend, 5.0, 3.0, cache)          # a helper's source changed
    assert helper["stats"]["translations"] == 1
    assert helper["out"] == [v * 3 + 5 for v in range(6)]


def test_corrupt_disk_entry_is_retranslated(tmp_path, backend):
    cache = tmp_path / "cache"
    _run(tmp_path, backend, 1.0, 2.0, cache)
    entries = list((cache / "translate").glob("*.json"))
    assert entries
    for e in entries:
        e.write_bytes(e.read_bytes()[:-10] + b"corrupted!")
    again = _run(tmp_path, backend, 1.0, 2.0, cache)
    assert again["stats"]["translations"] == 1
    assert again["out"] == [v * 2 + 1 for v in range(6)]


def _fresh_kernel():
    """A new KernelFunction around the same Python function: empty in-memory caches, same disk key."""
    return kernel(uses_global_and_helper.py_func)


def test_changed_translator_code_is_a_cache_miss(tmp_path, monkeypatch, backend):
    from pygpgpu_translate import _translate
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    _fresh_kernel()[backend](x, out)
    n, hits = stats["translations"], stats["source_cache_hits"]
    _fresh_kernel()[backend](x, out)                     # same translator code: served from disk
    assert stats["translations"] == n and stats["source_cache_hits"] == hits + 1
    assert len(_translate.code_fingerprint()) == 32
    monkeypatch.setattr(_translate, "code_fingerprint", lambda: "an edited translator")
    out[:] = 0
    _fresh_kernel()[backend](x, out)                     # edited translator: translated again
    assert stats["translations"] == n + 1 and stats["source_cache_hits"] == hits + 1
    np.testing.assert_array_equal(out, (x + 1) * 2)


def test_malformed_disk_entry_is_a_miss_not_a_crash(tmp_path, monkeypatch, backend):
    """Entries with a valid checksum but an older or foreign layout (the 'too many values to
    unpack' crash) are retranslated."""
    from pygpgpu_core.cache import DiskCache
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    _fresh_kernel()[backend](x, out)
    keys = [e.stem for e in (tmp_path / "translate").glob("*.json")]
    assert keys
    good = json.loads(DiskCache("translate").get(keys[0], ".json"))
    bad_entries = [b"[1, 2, 3]", b"not json", json.dumps(dict(good, covers=[["x", 0, 1]])).encode(),
                   json.dumps(dict(good, layout=[["buffer", "x", "extra", 1]])).encode(),
                   json.dumps({k: v for k, v in good.items() if k != "deps"}).encode()]
    for bad in bad_entries:
        for key in keys:
            DiskCache("translate").put(key, bad, ".json")
        n = stats["translations"]
        out[:] = 0
        _fresh_kernel()[backend](x, out)
        assert stats["translations"] == n + 1, bad
        np.testing.assert_array_equal(out, (x + 1) * 2)
