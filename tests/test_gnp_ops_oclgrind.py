"""pygpgpu.numpy's kernels under oclgrind: the local-memory code (block reductions, scans, the
bitonic and radix sorts, tiled matmul) must have no invalid access and no data race. PoCL runs
the work items of a group one after another between barriers, so a missing barrier passes
there and fails on a GPU; oclgrind checks every access.

Runs in a subprocess with oclgrind as the only OpenCL platform (as test_translate_oclgrind does),
with exact-size buffers so one element past the end is an invalid access.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import os
    os.environ["PYGPGPU_CLBLAST"] = "0"                # our tiled matmul is under test, not CLBlast's
    import numpy as np
    from pygpgpu_core import mempool
    mempool.size_class = lambda n: max(int(n), 4)
    import pygpgpu.numpy as gnp
    from pygpgpu_translate.array_ops import _reduction, _sort

    rng = np.random.default_rng(0)
    x = rng.standard_normal(5000).astype(np.float32)
    m = rng.standard_normal((40, 300)).astype(np.float32)
    gx, gm = gnp.asarray(x), gnp.asarray(m)

    def same(got, want, tol=1e-4):
        got = got.get()
        assert got.shape == np.shape(want) and np.allclose(got, want, rtol=tol, atol=tol, equal_nan=True), (got, want)

    for layout in (True, False):                       # the CPU and the GPU rows-reduction variants
        _reduction.cpu_layout = lambda device, layout=layout: layout
        same(gx.sum(), x.astype(np.float64).sum())
        same(gm.max(axis=1), m.max(axis=1))
        same(gm.argmin(axis=1), m.argmin(axis=1))
        same(gnp.asarray(rng.random(70000).astype(np.float32)).argmax() >= 0, True)
    same(gm.sum(axis=0), m.sum(axis=0))                # the columns kernel, chunked
    same(gm.argmax(axis=0), m.argmax(axis=0))
    same(gx.cumsum(), np.cumsum(x.astype(np.float64)))  # three tiles: totals, their scan, the carry
    same(gm.cumprod(axis=1)[:, :5], np.cumprod(m, axis=1)[:, :5])
    same(gnp.sort(gx[:700]), np.sort(x[:700]))         # bitonic: local stages and global steps
    same(gnp.argsort(gm, axis=0), np.argsort(m, axis=0, kind="stable"))
    _sort.RADIX_MIN = 1
    same(gnp.sort(gx), np.sort(x))                     # radix: histogram, scan, scatter
    same(gnp.argsort(gnp.asarray((x * 10).astype(np.int64))), np.argsort((x * 10).astype(np.int64), kind="stable"))
    same(gm[:20, :30] @ gm[:30, :17], m[:20, :30] @ m[:30, :17])
    same(gm[::3, 1::7] * 2 + gx[:43], m[::3, 1::7] * 2 + x[:43])
    same(gm[gm > 1.5], m[m > 1.5])
    print("DONE")
''')


@pytest.mark.usefixtures("oclgrind_icd")
def test_gnp_kernels_are_clean_under_oclgrind(tmp_path, oclgrind_icd):
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    (vendors / "oclgrind.icd").write_text(f"{oclgrind_icd}\n")
    log = tmp_path / "oclgrind.log"
    env = dict(os.environ, OCL_ICD_VENDORS=str(vendors), OCLGRIND_LOG=str(log), OCLGRIND_DATA_RACES="1",
               PYGPGPU_CACHE_DIR=str(tmp_path / "cache"), PYGPGPU_BACKEND="opencl")
    script = tmp_path / "gnp_under_oclgrind.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0 and "DONE" in proc.stdout, proc.stderr[-4000:]
    text = log.read_text() if log.exists() else ""
    bad = [ln for ln in text.splitlines() if "Invalid" in ln or "data race" in ln.lower()]
    assert not bad, text[:4000]
