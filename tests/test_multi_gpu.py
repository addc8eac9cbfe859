"""Several GPUs of one driver (issue 36, items 1-4): run on a machine with at least two CUDA (or HIP)
devices, skip with the reason on any other (``PYGPGPU_REQUIRE_MULTI_GPU=1`` makes that skip a
failure, for the run on the multi-GPU machine that must not pass by skipping).

Against numpy and the one-device result: ``g.to(other_gpu)`` for several dtypes and views, peer to
peer where the driver reports access (no host transfer counted) and staged otherwise, also forced
with ``PYGPGPU_PEER_COPIES=0``; a copy made right after a kernel (no wait in between) sees what the
kernel wrote, and the kernel queued on the source right after the copy does not change the copy;
``k.split`` of n-body, stencil and saxpy over every GPU; the Dask example with one worker per GPU.
The same code paths without a GPU: tests/test_multi_copy_driver.py (simulated driver) and
tests/test_multi_copy_opencl.py, tests/test_multi_split.py, tests/test_multi_dask.py (PoCL)."""
from __future__ import annotations

import os
import sys
from ctypes import byref, c_int
from pathlib import Path

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu import kernel
from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError

ROOT = Path(__file__).resolve().parents[1]


def _gpus() -> list:
    """The devices of the first CUDA-like backend with two or more, else skip saying what is here."""
    seen = []
    for name in ("cuda", "hip"):
        try:
            devices = registry.backend_devices(name)
        except GPGPUError as exc:
            seen.append(f"{name}: {str(exc).splitlines()[0]}")
            continue
        if len(devices) >= 2:
            return list(devices)
        seen.append(f"{name}: {len(devices)} device")
    reason = ("needs two or more CUDA or HIP GPUs (run on a multi-GPU machine, e.g. the device tool's "
              "nvidia-h100-x2); here " + "; ".join(seen))
    if os.environ.get("PYGPGPU_REQUIRE_MULTI_GPU", "").strip() not in ("", "0"):
        pytest.fail(reason + " (PYGPGPU_REQUIRE_MULTI_GPU is set)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def gpus():
    return _gpus()


@kernel
def fill_with(out, value):
    for i in range(out.shape[0]):
        out[i] = value


def _peer_reported(a, b) -> bool:
    """What the driver says: can device ``b`` read ``a``'s memory (the copy into ``b`` pulls)?"""
    calls = b.context().calls
    if not calls.has("device_can_access_peer"):
        return False
    can = c_int(0)
    calls.check(calls.device_can_access_peer(byref(can), b.ordinal, a.ordinal), calls.device_can_access_peer)
    return bool(can.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8, np.complex64, np.bool_])
def test_to_another_gpu_copies_the_values_and_leaves_the_source(gpus, dtype):
    a, b = gpus[:2]
    rng = np.random.default_rng(1)
    host = (rng.standard_normal(1_000_003) * 100).astype(dtype)
    g = gnp.asarray(host, device=a.selector)
    gnp.reset_transfer_stats()
    moved = g.to(b.selector)
    stats = gnp.transfer_stats()
    assert moved.device is b and moved.dtype == host.dtype
    np.testing.assert_array_equal(moved.get(), host)
    np.testing.assert_array_equal(g.get(), host)
    if _peer_reported(a, b):                     # device to device: no host copy at all
        assert stats["h2d"] == 0 and stats["d2h"] == 0, stats
    else:                                        # staged: one download and one upload
        assert stats["h2d"] == 1 and stats["d2h"] == 1, stats


def test_views_and_the_staged_path(gpus, monkeypatch):
    a, b = gpus[:2]
    host = np.arange(6 * 7 * 8, dtype=np.float32).reshape(6, 7, 8)
    g = gnp.asarray(host, device=a.selector)
    for view, want in ((g[2:5], host[2:5]), (g[:, 3], host[:, 3]), (g[::-1, :, ::3], host[::-1, :, ::3]), (g.T, host.T)):
        np.testing.assert_array_equal(view.to(b.selector).get(), want)
        np.testing.assert_array_equal(gnp.asarray(view, device=b.selector).get(), want)
    monkeypatch.setenv("PYGPGPU_PEER_COPIES", "0")
    gnp.reset_transfer_stats()
    moved = g.to(b.selector)
    assert gnp.transfer_stats()["d2h"] == 1
    np.testing.assert_array_equal(moved.get(), host)


def test_copies_are_ordered_after_and_before_the_kernels_around_them(gpus):
    a, b = gpus[:2]
    n = 1 << 24
    g = gnp.empty(n, np.float32, device=a.selector)
    fill_with[a.selector](g, np.float32(3.0))           # queued, not waited for
    moved = g.to(b.selector)                            # must read 3.0, not what was there before
    fill_with[a.selector](g, np.float32(5.0))           # must not reach the copy
    assert float(moved.get().min()) == 3.0 == float(moved.get().max())
    assert float(g.get().min()) == 5.0
    back = moved.to(a.selector)
    assert float(back.get().max()) == 3.0


def test_split_over_every_gpu_matches_one_gpu(gpus):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_split as bs
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    selectors = [d.selector for d in gpus]
    for name, k, args, outputs, _n in bs._cases({"nbody": 4096, "stencil": 1 << 20, "saxpy": 1 << 20, "heavy": 1 << 14}):
        k[selectors[0]](*args)
        want = [o.copy() for o in outputs]
        for o in outputs:
            o[...] = np.nan
        k.split(selectors)(*args)
        for got, w in zip(outputs, want):
            np.testing.assert_array_equal(got, w, err_msg=name)


def test_dask_one_worker_per_gpu(gpus):
    pytest.importorskip("distributed", reason="distributed is not installed (pip install distributed)")
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import dask_multi_device
    finally:
        sys.path.remove(str(ROOT / "examples"))
    selectors = [d.selector for d in gpus]
    result = dask_multi_device.main(selectors, gib=0.25, chunk_mib=16)
    assert result["devices"] == sorted(selectors)
    assert sum(result["blocks"]) == result["numblocks"] and all(k > 0 for k in result["blocks"])
