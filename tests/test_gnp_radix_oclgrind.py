"""The radix sort's sweep (one histogram launch for every digit, then one launch per digit whose
tiles find their output slots by looking back at the tiles before them) under oclgrind: no
invalid access and no data race (the look-back words are read and written by atomics alone),
and the results equal numpy's, for a sort and an argsort of a few tiles."""
from __future__ import annotations

import pytest

from conftest import run_under_oclgrind

SCRIPT = '''
import numpy as np
import pygpgpu.numpy as gnp
from pygpgpu_translate import _cpu_choices
from pygpgpu_translate.array_ops import _radix, _sort

_cpu_choices.ENABLED = False          # the tiled (GPU) radix sort, on oclgrind's CPU device too
_radix.SWEEP = True                   # the sweep (off by default until it has run on a GPU)
_sort.RADIX_MIN = 1
_radix.LOCAL_LIMIT = 14 * 1024        # small tiles: several of them, so tiles look back at others
rng = np.random.default_rng(0)
x = rng.standard_normal(2000).astype(np.float32)
x[::7] = -0.0
x[::11] = np.nan
tile = _radix.tile_size(x.dtype, False)
assert x.size > 2 * tile, tile
got = gnp.sort(gnp.asarray(x)).get()
assert np.array_equal(got, np.sort(x), equal_nan=True), got
k = (x * 3).astype(np.int16)          # repeats: the argsort must keep them in input order
assert np.array_equal(gnp.argsort(gnp.asarray(k)).get(), np.argsort(k, kind="stable"))
print("DONE")
'''


@pytest.mark.usefixtures("oclgrind_icd")
def test_the_sweep_is_clean_under_oclgrind(tmp_path):
    out, log, bad = run_under_oclgrind(tmp_path, SCRIPT)
    assert "DONE" in out
    assert not bad, log[:4000]
