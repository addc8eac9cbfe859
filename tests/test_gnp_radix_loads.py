"""The radix sort's kernels keep their global loads in flight together (NVRTC PTX, no GPU needed).

A histogram that loaded each element under ``if i < n`` and counted it before the next load got
PTX alternating ``ld.global`` and ``atom.shared`` behind branches: one load in flight per work
item, ~4x under the H200's bandwidth. Now every load of the keys comes before the first atomic;
the scatter's tile load runs its unrolled copies without branches."""
from __future__ import annotations

import re

import numpy as np
import pytest
from pygpgpu_translate.array_ops import _radix

CASES = [(np.float32, False), (np.float64, False), (np.int32, True), (np.uint8, False)]


def _ptx(nvrtc_compile, dtype, argsort: bool, which: str) -> list:
    """The PTX instruction lines of the histogram or scatter kernel of ``dtype``."""
    dtype = np.dtype(dtype)
    kt = _radix._key_type(dtype)
    items = _radix._items(kt, argsort)
    hist, scatter = _radix._kernels(dtype, argsort, items)
    n = 3 * _radix.GROUP * items + 5                  # a partial last tile
    G = -(-n // (_radix.GROUP * items))
    src, keys, cnt = np.zeros(n, _radix._bits_type(dtype)), np.zeros(n, kt), np.zeros(_radix.RADIX * G, np.int32)
    if which == "hist":
        source = hist.inspect(src, keys, cnt, cnt.copy(), n, 0, G, 1, backend="cuda").source
    else:
        arrays = (src, keys, keys.copy()) + ((np.zeros(n, np.int32), np.zeros(n, np.int32)) if argsort else ())
        source = scatter.inspect(*arrays, cnt, cnt.copy(), cnt.copy(), n, 0, G, 1, 0, items, backend="cuda").source
    ptx = nvrtc_compile(str(source), "compute_90").rstrip(b"\0").decode()
    return [line.strip() for line in ptx.splitlines()]


@pytest.mark.parametrize("dtype, argsort", CASES)
def test_histogram_loads_all_keys_before_counting(nvrtc_compile, dtype, argsort):
    lines = _ptx(nvrtc_compile, dtype, argsort, "hist")
    loads = [i for i, s in enumerate(lines) if s.startswith("ld.global")]
    atomics = [i for i, s in enumerate(lines) if s.startswith("atom.shared")]
    items = _radix._items(_radix._key_type(np.dtype(dtype)), argsort)
    assert len(loads) == 2 * items                 # the first pass's values, the others' keys
    assert len(atomics) == items
    assert max(loads) < min(atomics)
    # each source's loads in one straight run, no branch among them
    for run in (loads[:items], loads[items:]):
        assert not any("bra" in s for s in lines[run[0]:run[-1]])


@pytest.mark.parametrize("dtype, argsort", CASES)
def test_scatter_tile_loads_run_without_branches(nvrtc_compile, dtype, argsort):
    lines = _ptx(nvrtc_compile, dtype, argsort, "scatter")
    first_barrier = next(i for i, s in enumerate(lines) if s.startswith("bar.sync"))
    runs, loads = [], 0                  # loads per branch-free stretch before the first barrier
    for s in lines[:first_barrier]:
        if s.startswith("ld.global"):
            loads += 1
        elif re.match(r"(@!?%p\d+ )?bra(\.uni)?\s", s):
            runs.append(loads)
            loads = 0
    runs.append(loads)
    # the tile's loop from the values (first pass) and from the keys, each unrolled (NVRTC: 4
    # copies) with its loads in one stretch; a load under `if p < valid` made a run of 1 each
    assert sum(r >= 4 for r in runs[1:]) >= 2, runs


def _sweep_ptx(nvrtc_compile, dtype, argsort: bool) -> list:
    """The PTX instruction lines of the sweep kernel of ``dtype`` (one pass of the look-back sort)."""
    dtype = np.dtype(dtype)
    kt = _radix._key_type(dtype)
    items = _radix._items(kt, argsort)
    npass = dtype.itemsize
    hist, sweep = _radix._sweep_pair(dtype, argsort, items)
    n = 3 * _radix.GROUP * items + 5
    G = -(-n // (_radix.GROUP * items))
    src, keys = np.zeros(n, _radix._bits_type(dtype)), np.zeros(n, kt)
    counts, status = np.zeros(npass * _radix.RADIX + npass, np.uint32), np.zeros(npass * G * _radix.RADIX, np.uint32)
    arrays = (src, keys, keys.copy()) + ((np.zeros(n, np.int32), np.zeros(n, np.int32)) if argsort else ())
    assert nvrtc_compile(str(hist.inspect(src, counts, status, n, G, backend="cuda").source), "compute_90")
    source = sweep.inspect(*arrays, counts, status, n, 0, G, 1, 0, items, 0, backend="cuda").source
    ptx = nvrtc_compile(str(source), "compute_90").rstrip(b"\0").decode()
    return [line.strip() for line in ptx.splitlines()]


@pytest.mark.parametrize("dtype, argsort", CASES + [(np.int64, True)])
def test_sweep_loads_run_without_branches_and_looks_back_with_atomics(nvrtc_compile, dtype, argsort):
    """The sweep's tile loads (between the barrier that hands out the tile number and the next)
    keep the scatter's branch-free unrolled runs; its look-back reads and publishes through
    global atomics only (no plain load of the look-back words, no fence needed)."""
    lines = _sweep_ptx(nvrtc_compile, dtype, argsort)
    barriers = [i for i, s in enumerate(lines) if s.startswith("bar.sync")]
    runs, loads = [], 0
    for s in lines[barriers[0]:barriers[1]]:
        if s.startswith("ld.global"):
            loads += 1
        elif re.match(r"(@!?%p\d+ )?bra(\.uni)?\s", s):
            runs.append(loads)
            loads = 0
    runs.append(loads)
    assert sum(r >= 4 for r in runs) >= 2, runs
    atomics = [s for s in lines if s.startswith(("atom.global", "red.global"))]
    assert len(atomics) >= 4, atomics    # the tile number, publishing, the look-back's reads, the upgrade


@pytest.mark.parametrize("dtype, argsort", [(np.float32, False), (np.int64, True)])
def test_sweep_kernels_compile_for_hip(hiprtc_compile, dtype, argsort):
    """The sweep's two kernels translated for HIP build with hiprtc (global atomics, the look-back loop)."""
    dtype = np.dtype(dtype)
    kt = _radix._key_type(dtype)
    items = _radix._items(kt, argsort)
    npass = dtype.itemsize
    hist, sweep = _radix._sweep_pair(dtype, argsort, items)
    n = 3 * _radix.GROUP * items + 5
    G = -(-n // (_radix.GROUP * items))
    src, keys = np.zeros(n, _radix._bits_type(dtype)), np.zeros(n, kt)
    counts, status = np.zeros(npass * _radix.RADIX + npass, np.uint32), np.zeros(npass * G * _radix.RADIX, np.uint32)
    arrays = (src, keys, keys.copy()) + ((np.zeros(n, np.int32), np.zeros(n, np.int32)) if argsort else ())
    for source in (hist.inspect(src, counts, status, n, G, backend="hip").source,
                   sweep.inspect(*arrays, counts, status, n, 0, G, 1, 0, items, 0, backend="hip").source):
        assert hiprtc_compile(str(source), "gfx90a")
