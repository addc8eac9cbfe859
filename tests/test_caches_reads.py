"""Disk cache reads never block, never read without bound and never trust a file they did not
write (issue 30, item 3): only a regular file of bounded size that belongs to the current user,
as the opened descriptor says, is read; a FIFO, a symbolic link (to ``/dev/zero``, to another
entry), a file of another user or an oversized one is a miss, and the entry is rebuilt. Also
(item 9) a process writing entries while another clears the cache sees no CacheWarning."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import pytest

from pygpgpu_core import cache
from pygpgpu_core.cache import CacheWarning, DiskCache, clear_cache

KEY = "ab" * 32
PAYLOAD = b"entry payload " * 10

# A fresh process reads the planted entry (a hang or an endless read there would otherwise stop the
# test run): memory is capped, so an unbounded read fails instead of exhausting the machine.
READER = textwrap.dedent('''
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    from pygpgpu_core.cache import DiskCache
    blob = DiskCache("reads", root={root!r}).get({key!r}, ".json")
    print("miss" if blob is None else "hit")
''')


def _plant(tmp_path, kind):
    """A cache folder whose entry ``KEY`` is replaced by ``kind``; the folder's path."""
    root = tmp_path / "cache"
    store = DiskCache("reads", root=root)
    store.put(KEY, PAYLOAD, ".json")
    path = store.path(KEY, ".json")
    assert store.get(KEY, ".json") == PAYLOAD
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "link-to-dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "link-to-an-entry":
        other = "cd" * 32
        store.put(other, PAYLOAD, ".json")            # a valid entry of your own, reached by a link
        os.symlink(store.path(other, ".json"), path)
    return root


@pytest.mark.parametrize("kind", ["fifo", "link-to-dev-zero", "link-to-an-entry"])
def test_a_special_file_or_a_link_is_a_miss_without_waiting(tmp_path, kind):
    root = _plant(tmp_path, kind)
    try:
        proc = subprocess.run([sys.executable, "-c", READER.format(root=str(root), key=KEY)],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading a cache entry that is a {kind} blocked")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["miss"]


def test_a_file_of_another_user_in_your_own_cache_is_a_miss(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a file of another user needs root")
    root = tmp_path / "cache"
    store = DiskCache("reads", root=root)
    store.put(KEY, PAYLOAD, ".json")
    os.chown(store.path(KEY, ".json"), 65534, 65534)          # nobody's, with a valid checksum
    assert store.get(KEY, ".json") is None
    store.put(KEY, PAYLOAD, ".json")                          # replaced by one of your own
    assert store.get(KEY, ".json") == PAYLOAD


def test_an_entry_over_the_size_bound_is_a_miss(tmp_path, monkeypatch):
    store = DiskCache("reads", root=tmp_path / "cache")
    store.put(KEY, PAYLOAD, ".json")
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", len(PAYLOAD) // 2)
    assert store.get(KEY, ".json") is None
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 1 << 20)
    store.put(KEY, PAYLOAD, ".json")
    assert store.get(KEY, ".json") == PAYLOAD


RUN = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, {folder!r})
    import fifomod
    from pygpgpu_translate import stats
    x = np.arange(6, dtype=np.float32)
    out = np.zeros_like(x)
    fifomod.k[{backend!r}](x, out)
    print(json.dumps({{"stats": stats, "out": out.tolist()}}))
''')


def test_a_generated_source_entry_replaced_by_a_fifo_is_rebuilt(tmp_path, backend):
    (tmp_path / "fifomod.py").write_text(textwrap.dedent('''
        from pygpgpu_translate import kernel

        @kernel
        def k(x, out):
            for i in range(out.shape[0]):
                out[i] = x[i] * 2.0 + 1.0
    '''))
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(tmp_path / "cache"))

    def run():
        proc = subprocess.run([sys.executable, "-c", RUN.format(folder=str(tmp_path), backend=backend)],
                              capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    assert run()["stats"]["translations"] == 1
    entries = list((tmp_path / "cache" / "translate").glob("*.json"))
    assert entries
    for path in entries:
        path.unlink()
        os.mkfifo(path, 0o600)
    try:
        again = run()
    except subprocess.TimeoutExpired:
        pytest.fail("a FIFO in place of a generated-source entry blocked the call")
    assert again["out"] == [v * 2 + 1 for v in range(6)] and again["stats"]["translations"] == 1
    assert all(Path(p).is_file() for p in entries)            # replaced by regular entries


def test_writing_while_another_process_clears_the_cache_gives_no_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    store = DiskCache("translate")
    stop = threading.Event()

    def clear_again_and_again():
        while not stop.is_set():
            clear_cache()

    clearer = threading.Thread(target=clear_again_and_again)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        clearer.start()
        try:
            end = time.monotonic() + 2.0
            n = 0
            while time.monotonic() < end:
                store.put(f"{n:064x}", PAYLOAD, ".json")
                n += 1
        finally:
            stop.set()
            clearer.join()
    messages = [str(w.message) for w in record if issubclass(w.category, CacheWarning)]
    assert not messages, messages[:2]
    store.put(KEY, PAYLOAD, ".json")                           # and the cache is still in use
    assert store.get(KEY, ".json") == PAYLOAD


LOAD = textwrap.dedent('''
    import numpy as np
    from pygpgpu_core import kernel_files as kf
    m = kf.load({src!r})
    a = np.arange(300, dtype=np.float32)
    out = np.zeros_like(a)
    m.vecadd[(300, 64)](a, a, out, len(a))
    print("ok" if np.array_equal(out, 2 * a) else "wrong")
''')


def test_a_kernel_file_metadata_entry_replaced_by_a_fifo_is_reparsed(tmp_path):
    import shutil
    src = tmp_path / "vecadd.cl"
    shutil.copy(Path(__file__).parent / "kernel_files" / "vecadd.cl", src)
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(tmp_path / "cache"))

    def run():
        proc = subprocess.run([sys.executable, "-c", LOAD.format(src=str(src))],
                              capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout.split()

    assert run() == ["ok"]
    [meta] = (tmp_path / "__clcache__").glob("*.meta.json")
    meta.unlink()
    os.mkfifo(meta, 0o600)
    try:
        assert run() == ["ok"]
    except subprocess.TimeoutExpired:
        pytest.fail("a FIFO in place of a kernel file's metadata blocked the import")


def test_marking_an_entry_used_never_touches_what_a_link_points_at(tmp_path):
    from pygpgpu_core._cachesize import touch
    target = tmp_path / "elsewhere.txt"
    target.write_text("not a cache entry")
    os.utime(target, (1_000_000, 1_000_000))
    link = tmp_path / ("ef" * 32 + ".json")
    os.symlink(target, link)
    touch(link)                                  # an entry swapped for a link after it was read
    assert os.stat(target).st_mtime == 1_000_000
