"""The kernels of gnp's sort-based statistics under oclgrind: the binary searches, interp, the
atomic bin counts and the per-bin sums read and write only inside their buffers (exact-size
buffers, so one element past the end is an invalid access), with values outside the bins and
NaNs in the data. A run with a planted past-the-end count is the control."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    from pygpgpu_core import mempool
    mempool.size_class = lambda n: max(int(n), 4)
    import pygpgpu.numpy as gnp
    from pygpgpu_translate.array_ops import _stats

    if sys.argv[1] == "planted":       # the control: counts one past the last bin
        _stats._BIN_COUNTS = _stats._BIN_COUNTS.replace("b < length", "b <= length")

    rng = np.random.default_rng(0)
    x = rng.standard_normal(300)
    x[::17] = np.nan
    k = rng.integers(0, 40, size=300)
    w = rng.random(300)
    gx, gk, gw = gnp.asarray(x), gnp.asarray(k), gnp.asarray(w)

    def same(got, want):
        got = got.get()
        assert got.shape == np.shape(want) and np.allclose(got, want, equal_nan=True), (got, want)

    xn = np.nan_to_num(x)
    same(gnp.histogram(gnp.asarray(xn), 7, range=(-1, 1))[0], np.histogram(xn, 7, range=(-1, 1))[0])
    if sys.argv[1] == "clean":
        same(gnp.bincount(gk), np.bincount(k))
        same(gnp.bincount(gk, weights=gw, minlength=50), np.bincount(k, weights=w, minlength=50))
        same(gnp.histogram(gnp.asarray(xn), 7, range=(-1, 1), weights=gw)[0],
             np.histogram(xn, 7, range=(-1, 1), weights=w)[0])
        s = np.sort(x)
        same(gnp.searchsorted(gnp.asarray(s), gx, side="right"), np.searchsorted(s, x, side="right"))
        same(gnp.isin(gk, gk[:9]), np.isin(k, k[:9]))
        xp = np.sort(rng.standard_normal(25))
        same(gnp.interp(gx, gnp.asarray(xp), gnp.asarray(xp ** 2)), np.interp(x, xp, xp ** 2))
        same(gnp.nanmedian(gnp.asarray(x.reshape(20, 15)), axis=1), np.nanmedian(x.reshape(20, 15), axis=1))
    print("DONE")
''')


def _run(tmp_path, oclgrind_icd, mode):
    vendors = tmp_path / f"vendors-{mode}"
    vendors.mkdir()
    (vendors / "oclgrind.icd").write_text(f"{oclgrind_icd}\n")
    log = tmp_path / f"oclgrind-{mode}.log"
    env = dict(os.environ, OCL_ICD_VENDORS=str(vendors), OCLGRIND_LOG=str(log), OCLGRIND_DATA_RACES="1",
               PYGPGPU_CACHE_DIR=str(tmp_path / f"cache-{mode}"), PYGPGPU_BACKEND="opencl")
    script = tmp_path / "gnp_stats_under_oclgrind.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script), mode], env=env, capture_output=True, text=True, timeout=1500)
    text = log.read_text() if log.exists() else ""
    return proc, [ln for ln in text.splitlines() if "Invalid" in ln or "data race" in ln.lower()], text


@pytest.mark.usefixtures("oclgrind_icd")
def test_stats_kernels_are_clean_under_oclgrind(tmp_path, oclgrind_icd):
    proc, bad, text = _run(tmp_path, oclgrind_icd, "clean")
    assert proc.returncode == 0 and "DONE" in proc.stdout, proc.stderr[-4000:]
    assert not bad, text[:4000]
    _proc, planted_bad, _text = _run(tmp_path, oclgrind_icd, "planted")
    assert planted_bad, "the planted past-the-end count was not reported: the check sees nothing"
