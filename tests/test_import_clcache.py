"""Compiled programs of imported .cl files kept in ``__clcache__/`` and loaded back without compiling."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import kernel_files as kf
from pygpgpu_core.cache import DiskCache

SOURCE = """#include "affine.h"
// {token}
__kernel void affine(__global const float* x, __global float* out, int n)
{{
    int i = get_global_id(0);
    if (i < n) out[i] = x[i] * SCALE + OFFSET;
}}
"""
HEADER = "#define SCALE 2.0f\n#define OFFSET 1.0f\n"
N = 64


@pytest.fixture
def kfile(tmp_path, cl_device) -> Path:
    # A fresh token per test: neither PoCL's kernel cache nor ours has seen this source.
    (tmp_path / "affine.h").write_text(HEADER)
    path = tmp_path / "affine.cl"
    path.write_text(SOURCE.format(token=uuid.uuid4().hex))
    return path


def _run(path: Path):
    """Import ``path`` afresh (a new module and program table) and run its kernel once."""
    module = kf.load(path)
    x = np.arange(N, dtype=np.float32)
    out = np.zeros_like(x)
    module.affine(x, out, N)
    return module, out


def _stats(module) -> dict:
    return dict(module.__kernel_file__.programs.stats)


def _binaries(path: Path) -> list[Path]:
    return sorted((path.parent / "__clcache__").glob(f"{path.stem}_cl.*.bin"))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    st = os.stat(path)  # a later mtime even on a coarse clock, so the metadata cache notices too
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_binary_kept_beside_the_source_and_loaded_back(kfile):
    first, out = _run(kfile)
    np.testing.assert_array_equal(out, np.arange(N, dtype=np.float32) * 2 + 1)
    assert _stats(first) == {"binary_loads": 0, "builds": 1}
    [stored] = _binaries(kfile)
    assert "opencl-" in stored.name

    second, out2 = _run(kfile)
    assert _stats(second) == {"binary_loads": 1, "builds": 0}
    [(_, program)] = second.__kernel_file__.programs._programs.values()
    assert program.from_binary
    np.testing.assert_array_equal(out2, out)


_SECOND_PROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from pygpgpu_core import kernel_files as kf
    module = kf.load(sys.argv[1])
    state = module.__kernel_file__
    device = state.device(None)
    program = state.programs.program(device)
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    module.affine(x, out, 64)
    print(json.dumps({"stats": state.programs.stats,
                      "from_binary": program.from_binary, "from_cache": program.from_cache,
                      "correct": bool((out == x * 2 + 1).all())}))
    """
)


def _import_in_subprocess(path: Path, scratch: Path, tag: str) -> dict:
    # Fresh PoCL kernel cache and fresh PyGPGPU cache: only __clcache__ can spare the compile.
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(scratch / f"cache-{tag}"), POCL_CACHE_DIR=str(scratch / f"pocl-{tag}"))
    proc = subprocess.run([sys.executable, "-c", _SECOND_PROCESS, str(path)], capture_output=True, text=True,
                          env=env, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_second_process_loads_the_binary_without_compiling(kfile, tmp_path):
    cold = _import_in_subprocess(kfile, tmp_path, "cold")
    warm = _import_in_subprocess(kfile, tmp_path, "warm")
    assert cold["correct"] and warm["correct"]
    assert cold["stats"] == {"binary_loads": 0, "builds": 1} and not cold["from_binary"]
    assert warm["stats"] == {"binary_loads": 1, "builds": 0} and warm["from_binary"]
    assert not warm["from_cache"]  # the backend's own disk cache was empty in that process


def test_editing_the_source_invalidates_the_binary(kfile):
    _run(kfile)
    [old] = _binaries(kfile)
    _edit(kfile, "x[i] * SCALE", "x[i] * SCALE * 3.0f")
    module, out = _run(kfile)
    assert _stats(module) == {"binary_loads": 0, "builds": 1}
    np.testing.assert_array_equal(out, np.arange(N, dtype=np.float32) * 6 + 1)
    [new] = _binaries(kfile)  # the stale binary of this file and device was replaced
    assert new != old and not old.exists()
    again, out2 = _run(kfile)
    assert _stats(again) == {"binary_loads": 1, "builds": 0}
    np.testing.assert_array_equal(out2, out)


def test_editing_an_included_header_invalidates_the_binary(kfile):
    _run(kfile)
    _edit(kfile.parent / "affine.h", "#define OFFSET 1.0f", "#define OFFSET 5.0f")
    module, out = _run(kfile)
    assert _stats(module) == {"binary_loads": 0, "builds": 1}
    np.testing.assert_array_equal(out, np.arange(N, dtype=np.float32) * 2 + 5)
    assert len(_binaries(kfile)) == 1
    again, _ = _run(kfile)
    assert _stats(again) == {"binary_loads": 1, "builds": 0}


def test_a_corrupt_binary_file_is_rebuilt(kfile):
    _run(kfile)
    [path] = _binaries(kfile)
    blob = bytearray(path.read_bytes())
    blob[len(blob) // 2] ^= 0xFF  # damaged on disk: the checksum catches it before the driver sees it
    path.write_bytes(bytes(blob))
    module, out = _run(kfile)
    assert _stats(module) == {"binary_loads": 0, "builds": 1}
    np.testing.assert_array_equal(out, np.arange(N, dtype=np.float32) * 2 + 1)
    again, _ = _run(kfile)  # the rebuild stored a good binary again
    assert _stats(again) == {"binary_loads": 1, "builds": 0}


def test_a_binary_the_driver_rejects_is_rebuilt_and_replaced(kfile):
    _run(kfile)
    [path] = _binaries(kfile)
    # A well-formed entry (valid checksum) whose payload no driver accepts, as a binary from
    # another driver version with the same key would be.
    junk = b"not an OpenCL program binary" * 8
    DiskCache(path.parent.name, root=path.parent.parent).put(path.name[: -len(".bin")], junk)
    module, out = _run(kfile)
    assert _stats(module) == {"binary_loads": 0, "builds": 1}
    np.testing.assert_array_equal(out, np.arange(N, dtype=np.float32) * 2 + 1)
    assert DiskCache(path.parent.name, root=path.parent.parent).get(path.name[: -len(".bin")]) != junk
    again, _ = _run(kfile)
    assert _stats(again) == {"binary_loads": 1, "builds": 0}
