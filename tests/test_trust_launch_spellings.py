"""Numba's and Warp's launch spellings never silently process a fraction (issue 30 item 4).

A bracket here is OpenCL's ``(total work items, work items per group)``. Numba's ``k[32, 32]``
means 32 blocks of 32 threads (1024), and Warp's ``dim=(64, 32)`` a 2-D launch; the same
brackets here launch 32 and 64 work items. A kernel reading a dimension the launch lacks is an
error; a launch smaller than what the kernel guards its id against warns, naming both spellings.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from pygpgpu_core import gnp, gpu, registry
from pygpgpu_core.errors import PyGPGPUWarning
from pygpgpu_translate import kernel, stats


@kernel
def increment(a):
    i = gpu.get_global_id(0)
    if i < a.size:
        a[i] += 1


@kernel
def increment_2d(a):
    y = gpu.get_global_id(0)
    x = gpu.get_global_id(1)
    if y < a.shape[0] and x < a.shape[1]:
        a[y, x] += 1


@kernel
def scale_first(a, n, k):
    i = gpu.get_global_id(0)
    if i >= n:
        return
    a[i] = a[i] * k


@kernel
def guarded_by_local(a):
    m = a.shape[0]
    i = gpu.get_global_id(0)
    if m > i:
        a[i] = 7


@kernel
def increment_cuda_ids(a, n):
    i = gpu.get_group_id(0) * gpu.get_local_size(0) + gpu.get_local_id(0)    # Numba's cuda.grid(1), spelled out
    if i < n:
        a[i] += 1


@kernel
def sized_1d_reads_dim_1(a):
    gpu.work_size(a)
    a[gpu.get_global_id(0)] = gpu.get_global_id(1) + 1


@kernel
def add1(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + 1


def _no_warning():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error", PyGPGPUWarning)
    return ctx


def test_numba_blocks_threads_spelling_warns_naming_both_conventions(backend):
    a = np.zeros(1000, np.int32)
    with pytest.warns(PyGPGPUWarning) as got:
        increment[backend][32, 32](a)
    text = str(got[0].message)
    assert "a.size = 1000" in text and "runs only 32" in text
    assert "Numba's increment[32, 32]" in text and "increment[(1024, 32)]" in text
    assert got[0].filename == __file__                  # attributed to the caller's line
    assert a.sum() == 32                                # what was asked for ran, no more
    ctx = _no_warning()
    try:
        increment[backend][(1024, 32)](a)               # the spelling the warning gives
        increment[backend][(1000, 256)](a)              # rounded up to 1024: covers it
        increment[backend][1000](a)
    finally:
        ctx.__exit__(None, None, None)
    np.testing.assert_array_equal(a, np.r_[np.full(32, 4), np.full(968, 3)])


def test_warp_two_dimensional_spelling_is_an_error_before_anything_runs(backend):
    a = np.zeros((64, 32), np.float32)
    with pytest.raises(ValueError, match=r"reads work-item dimension 1.*has 1 dimension") as e:
        increment_2d[backend][(64, 32)](a)
    assert "increment_2d[((64, 32), None)]" in str(e.value) and "Warp" in str(e.value)
    assert not a.any()
    increment_2d[backend][((64, 32), None)](a)
    np.testing.assert_array_equal(a, 1.0)
    with pytest.raises(ValueError, match="dimension 1"):
        increment_2d[backend][64](a)


def test_a_return_guard_against_a_scalar_and_a_local_extent_warn_too(backend):
    a = np.ones(500, np.float32)
    with pytest.warns(PyGPGPUWarning, match=r"n = 500 .*runs only 256"):
        scale_first[backend][(256, 64)](a, 500, 2.0)
    np.testing.assert_array_equal(a, np.r_[np.full(256, 2.0), np.ones(244)])
    b = np.zeros(300, np.float32)
    with pytest.warns(PyGPGPUWarning, match=r"m = 300"):
        guarded_by_local[backend][100](b)
    assert b.sum() == 700


def test_cudas_spelled_out_global_id_is_a_guarded_id_too(backend):
    a = np.zeros(1000, np.int32)
    with pytest.warns(PyGPGPUWarning, match=r"n = 1000 .*runs only 64"):
        increment_cuda_ids[backend][64, 32](a, 1000)             # Numba meant 64 blocks of 32
    assert a.sum() == 64
    ctx = _no_warning()
    try:
        increment_cuda_ids[backend][(1024, 32)](a, 1000)
    finally:
        ctx.__exit__(None, None, None)
    np.testing.assert_array_equal(a, np.r_[np.full(64, 2), np.full(936, 1)])


def test_device_arrays_are_checked_the_same_way(backend):
    dev = registry.get_device(backend)
    g = gnp.zeros(1000, np.int32, device=dev)
    with pytest.warns(PyGPGPUWarning, match="a.size = 1000"):
        increment[backend][32, 32](g)
    assert int(np.asarray(g).sum()) == 32


def test_a_domain_without_the_dimension_the_kernel_reads_is_an_error(backend):
    a = np.zeros(10, np.int64)
    with pytest.raises(ValueError, match=r"dimension 1.*its domain \(gpu.work_size\) has 1"):
        sized_1d_reads_dim_1[backend](a)
    assert not a.any()


def test_a_magic_loop_launched_the_numba_way_warns(backend):
    a = np.arange(1000, dtype=np.float32)
    out = np.zeros(1000, np.float32)
    with pytest.warns(PyGPGPUWarning, match=r"range\(out.shape\[0\]\) = 1000.*add1\[\(1024, 32\)\]"):
        add1[backend][32, 32](a, out)
    ctx = _no_warning()
    try:
        add1[backend][(1024, 32)](a, out)
        add1[backend](a, out)
    finally:
        ctx.__exit__(None, None, None)
    np.testing.assert_array_equal(out, a + 1)


def test_the_checks_survive_the_generated_source_cache(tmp_path, monkeypatch, backend):
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    for attempt in range(2):                 # translated, then served from disk
        hits = stats["source_cache_hits"]
        a = np.zeros(100, np.int32)
        with pytest.warns(PyGPGPUWarning, match="a.size = 100"):
            kernel(increment.py_func)[backend][10](a)
        b = np.zeros((4, 8), np.float32)
        with pytest.raises(ValueError, match="dimension 1"):
            kernel(increment_2d.py_func)[backend][(4, 8)](b)
        assert stats["source_cache_hits"] == hits + 2 * attempt
        assert a.sum() == 10 and not b.any()
