"""gnp.sort of long 1-D arrays on CPU devices (issue 33, item 5): the chunked radix sort of
``array_ops._radix_cpu`` (one work item per contiguous chunk), checked against numpy bit for bit
on every dtype, NaN payloads and -0.0 included, at chunk edges; GPU devices and
``PYGPGPU_CPU_TUNING=0`` keep the tiled radix sort of ``_radix``."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

from conftest import skip_no_device
from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError
from pygpgpu_translate import _cpu_choices
from pygpgpu_translate.array_ops import _radix, _radix_cpu, _sort
from test_gnp_radix import DTYPES, check_argsort, check_sort, values


@pytest.fixture(scope="module")
def cpu():
    try:
        devices = registry.backend_devices("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")
    for dev in devices:
        if dev.is_cpu:
            return dev
    skip_no_device("opencl", f"no OpenCL CPU device among {[d.selector for d in devices]}")


@pytest.fixture
def launched(monkeypatch):
    """Every 1-D sort takes a radix sort, however short; the names of the kernels it launched."""
    monkeypatch.setattr(_sort, "RADIX_MIN", 1)
    names: list = []
    for module in (_radix, _radix_cpu):
        real = module.launch
        monkeypatch.setattr(module, "launch", lambda k, *rest, real=real: (names.append(k.__name__), real(k, *rest)))
    return names


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_at_chunk_edges(cpu, launched, dtype):
    dt = np.dtype(dtype)
    for n in (1, 2, 777, _radix_cpu.MIN_CHUNK, _radix_cpu.MIN_CHUNK + 1, 3 * _radix_cpu.MIN_CHUNK + 5):
        a = values(dt, n, n)
        launched.clear()
        check_sort(gnp.sort(gnp.asarray(a, device=cpu)), a)
        passes = dt.itemsize
        assert launched.count(f"gnp_radix_cpu_hist_{dt.name}") == passes, launched
        assert launched.count(f"gnp_radix_cpu_scatter_{dt.name}") == passes, launched


def test_long_float32_with_duplicates_and_sorted_runs(cpu):
    n = 1_000_003
    a = values(np.float32, n, 7)
    a[: n // 3] = np.sort(a[: n // 3])                      # a sorted run, then reversed one
    a[n // 3: 2 * n // 3] = np.sort(a[n // 3: 2 * n // 3])[::-1]
    check_sort(gnp.sort(gnp.asarray(a, device=cpu)), a)


def test_argsort_keeps_the_tiled_sort(cpu, launched):
    a = values(np.float32, 5000, 3)
    check_argsort(gnp.argsort(gnp.asarray(a, device=cpu)), a)
    assert launched and not any("radix_cpu" in name for name in launched)


def test_switched_off_takes_the_tiled_sort(cpu, launched, monkeypatch):
    monkeypatch.setattr(_cpu_choices, "ENABLED", False)
    a = values(np.int32, 5000, 4)
    check_sort(gnp.sort(gnp.asarray(a, device=cpu)), a)
    # the tiled sort: its sweep (one histogram of every digit) or its three-step passes
    assert any(name.startswith(("gnp_radix_allhist_sort_int32", "gnp_radix_hist_sort_int32")) for name in launched), launched
    assert not any("radix_cpu" in name for name in launched)


@pytest.mark.parametrize("n", [1, 5, _radix_cpu.MIN_CHUNK, _radix_cpu.MIN_CHUNK + 1, 10**6 + 3, 2**31 - 9000])
@pytest.mark.parametrize("units", [1, 2, 16, 128])
def test_chunks_cover_every_element_once(n, units):
    T, chunk = _radix_cpu.chunks(n, units)
    assert 1 <= T <= max(1, units * _radix_cpu.CHUNKS_PER_UNIT)
    assert (T - 1) * chunk < n <= T * chunk            # no empty chunk, none missing
    assert T == 1 or chunk >= _radix_cpu.MIN_CHUNK // 2
