"""gnp.sort / gnp.argsort of long 1-D arrays: the radix sort (8-bit digits; ``sort`` moves the keys
alone and turns them back into values) against numpy on every dtype it takes, at tile edges, with
every float special value (``sort`` gives back each input bit pattern), heavy duplicates and
presorted input, small local memory (other tile sizes), and its number of passes."""
from __future__ import annotations

import types

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu_core import registry

from pygpgpu_translate import _cpu_choices
from pygpgpu_translate.array_ops import _radix, _sort

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float32, np.float64]


@pytest.fixture(autouse=True, scope="module")
def tiled_sort_on_cpus_too():
    """CPU devices sort with the chunked radix sort (_radix_cpu, tests/test_gnp_radix_cpu.py);
    these tests run the tiled one there as on a GPU."""
    was, _cpu_choices.ENABLED = _cpu_choices.ENABLED, False
    yield
    _cpu_choices.ENABLED = was


@pytest.fixture
def radix_always(monkeypatch):
    """Every 1-D sort takes the radix sort, however short."""
    monkeypatch.setattr(_sort, "RADIX_MIN", 1)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}")


def specials(dtype) -> np.ndarray:
    """Every kind of float: NaNs of both signs with payloads, infinities, zeros of both signs,
    subnormals, the extremes."""
    dt = np.dtype(dtype)
    fi = np.finfo(dt)
    u = f"u{dt.itemsize}"
    nan_bits = [0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFF800001, 0x7F800001] if dt.itemsize == 4 else [
        0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000000000001, 0xFFF0000000000001, 0x7FF0000000000001]
    nans = np.array(nan_bits, dtype=u).view(dt)
    numbers = np.array([np.inf, -np.inf, 0.0, -0.0, fi.smallest_subnormal, -fi.smallest_subnormal, fi.max,
                        -fi.max, fi.tiny, -fi.tiny, 1.0, -1.0], dtype=dt)
    return np.concatenate([nans, numbers])


def values(dtype, n: int, seed: int) -> np.ndarray:
    """``n`` values over the whole range of ``dtype`` (every key byte varies), with repeats."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    else:
        a = (rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)).astype(dt)
        sp = specials(dt)
        where = rng.integers(0, n, max(n // 7, 1))
        a[where] = sp[rng.integers(0, sp.size, where.size)]
    a[rng.integers(0, n, n // 5)] = a[0]                     # repeats: argsort must keep their order
    return a


def check_sort(got, a: np.ndarray) -> None:
    want = np.sort(a)
    assert isinstance(got, gnp.ndarray) and got.dtype == a.dtype and got.shape == a.shape
    got = got.get()
    np.testing.assert_array_equal(got, want)                # by value; NaNs where numpy has them
    if a.dtype.kind == "f":
        # every input bit pattern comes back (NaN payloads, -0.0), and numbers match numpy bitwise
        np.testing.assert_array_equal(np.sort(_bits(got)), np.sort(_bits(a)))
        exact = ~np.isnan(want) & (want != 0)
        np.testing.assert_array_equal(_bits(got)[exact], _bits(want)[exact])


def check_argsort(got, a: np.ndarray) -> None:
    assert isinstance(got, gnp.ndarray) and got.dtype == np.int64 and got.shape == a.shape
    np.testing.assert_array_equal(got.get(), np.argsort(a, kind="stable"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_at_tile_edges(backend, radix_always, dtype):
    device = registry.get_device(backend)
    for argsort in (False, True):
        tile = _radix.tile_size(np.dtype(dtype), argsort, device)
        for n in (1, 2, tile - 1, tile, tile + 1, 3 * tile + 17):
            a = values(dtype, n, n)
            g = gnp.asarray(a, device=backend)
            if argsort:
                check_argsort(gnp.argsort(g), a)
            else:
                check_sort(gnp.sort(g), a)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.float32, np.int64, np.float64])
def test_duplicates_and_presorted_input(backend, radix_always, dtype):
    """One value everywhere (every element in one digit run, one histogram counter), two values
    alternating, ascending, descending, and -0.0 mixed with 0.0 (equal: argsort keeps their order)."""
    dt = np.dtype(dtype)
    n = 3 * _radix.tile_size(dt, True, registry.get_device(backend)) + 5
    base = values(dtype, n, 1)
    cases = [np.full(n, base[3]), np.where(np.arange(n) % 2 == 0, base[1], base[2]).astype(dt),
             np.sort(base), np.sort(base)[::-1].copy()]
    if dt.kind == "f":
        cases.append(np.where(np.arange(n) % 3 == 0, -0.0, 0.0).astype(dt))
        cases.append(np.where(np.arange(n) % 2 == 0, np.nan, -np.array(np.nan, dt)).astype(dt))
    for a in cases:
        g = gnp.asarray(a, device=backend)
        check_sort(gnp.sort(g), a)
        check_argsort(gnp.argsort(g), a)


def test_many_tiles_and_in_place(backend):
    """Long enough to take the radix sort without help: 50+ tiles, a multi-block scan of the counts."""
    a = values(np.float32, 200_003, 5)
    g = gnp.asarray(a, device=backend)
    check_sort(gnp.sort(g), a)
    check_argsort(gnp.argsort(g), a)
    check_sort(gnp.sort(g[3:-2]), a[3:-2])                   # a contiguous view with an offset
    check_argsort(gnp.argsort(g[3:-2]), a[3:-2])
    h = gnp.asarray(values(np.int16, 40_000, 6), device=backend)
    want = np.sort(h.get())
    h.sort()
    np.testing.assert_array_equal(h.get(), want)


@pytest.mark.parametrize("limit", [14 * 1024, 20 * 1024])
def test_smaller_local_memory_gives_smaller_tiles(backend, radix_always, monkeypatch, limit):
    """Fewer elements per work item (1 to 9, most not powers of two) where less local memory is used."""
    monkeypatch.setattr(_radix, "LOCAL_LIMIT", limit)
    device = registry.get_device(backend)
    for dtype in (np.float32, np.int64):
        for argsort in (False, True):
            tile = _radix.tile_size(np.dtype(dtype), argsort, device)
            assert 0 < tile < 16 * _radix.GROUP
            a = values(dtype, 2 * tile + 3, tile)
            g = gnp.asarray(a, device=backend)
            if argsort:
                check_argsort(gnp.argsort(g), a)
            else:
                check_sort(gnp.sort(g), a)


def test_devices_with_little_local_memory_take_the_bitonic_sort():
    small = types.SimpleNamespace(local_mem_size=8 * 1024)
    enough = types.SimpleNamespace(local_mem_size=32 * 1024)
    for dtype in DTYPES:
        assert not _radix.radix_supported(np.dtype(dtype), 100_000, small)
        assert _radix.radix_supported(np.dtype(dtype), 100_000, enough)
    assert not _radix.radix_supported(np.dtype(np.float16), 100_000, enough)
    assert not _radix.radix_supported(np.dtype(np.complex64), 100_000, enough)


@pytest.mark.parametrize("sweep", [True, False], ids=["sweep", "three-step"])
@pytest.mark.parametrize("dtype, passes", [(np.int8, 1), (np.bool_, 1), (np.uint16, 2), (np.float32, 4),
                                           (np.int64, 8)])
def test_one_pass_per_byte(backend, radix_always, monkeypatch, dtype, passes, sweep):
    """8-bit digits, a pass per byte of the values: the sweep reads the values once for every
    digit's histogram, then takes one launch per digit (its look-back finds the tiles' slots);
    the three-step passes (the sweep off, or n >= 2**30) a histogram, scan and scatter each."""
    monkeypatch.setattr(_radix, "SWEEP", sweep)
    launched = []
    real = _radix.launch
    monkeypatch.setattr(_radix, "launch", lambda k, *rest: (launched.append(k.__name__), real(k, *rest)))
    a = values(dtype, 5000, 2)
    g = gnp.asarray(a, device=backend)
    for op, check in ((gnp.sort, check_sort), (gnp.argsort, check_argsort)):
        launched.clear()
        check(op(g), a)
        if sweep:
            assert launched == [launched[0]] + [launched[1]] * passes, launched
            assert "radix_allhist" in launched[0] and "radix_sweep" in launched[1], launched
        else:
            assert sum("radix_hist" in name for name in launched) == passes, launched
            assert sum("radix_scatter" in name for name in launched) == passes, launched


def test_cpu_devices_keep_the_three_step_passes(backend, radix_always, monkeypatch):
    """A CPU device's argsort takes the three-step passes: PoCL runs a group's work items one after
    another, so the sweep's look-back would wait on the tiles before it in turn."""
    device = registry.get_device(backend)
    monkeypatch.setattr(_cpu_choices, "ENABLED", True)
    if not _cpu_choices.on_cpu(device):
        pytest.skip(f"{backend} is not a CPU device")
    launched = []
    real = _radix.launch
    monkeypatch.setattr(_radix, "launch", lambda k, *rest: (launched.append(k.__name__), real(k, *rest)))
    a = values(np.float32, 5000, 3)
    check_argsort(gnp.argsort(gnp.asarray(a, device=backend)), a)
    assert sum("radix_scatter" in name for name in launched) == 4 and not any("sweep" in n for n in launched), launched
