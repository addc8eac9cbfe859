"""Copies between two devices of a CUDA-like driver (issue 36, item 1), without a GPU: the driver kit
runs for real on the simulated driver (tests/sim_driver.py: "device" memory is host memory), so
these check which driver functions a copy calls and that the bytes arrive.

- where the driver reports peer access, the destination's context is given access once and the
  copy is one ``memcpy_peer_async`` (no host copy);
- where it does not (or enabling fails, or ``PYGPGPU_PEER_COPIES=0``) the copy is staged through
  portable page-locked host memory, in chunks;
- CUDA and HIP bind the peer roles under their own names.

The same copies between two real GPUs: tests/test_multi_gpu.py (skips with fewer than two)."""
from __future__ import annotations

import logging

import numpy as np
import pytest
from sim_driver import SimBackend, SimKernel

KERNELS = {"noop": SimKernel("Q", lambda gid, p: None)}
PEER_CALLS = {"ctx_enable_peer_access", "memcpy_peer"}


@pytest.fixture
def sim(monkeypatch):
    monkeypatch.delenv("PYGPGPU_PEER_COPIES", raising=False)
    backend = SimBackend(KERNELS, devices=2)
    yield backend
    for dev in backend.devices():
        if dev._context is not None:
            dev._context.close()


def _pair(sim, data: np.ndarray):
    d0, d1 = sim.devices()
    src = d0.context().buffer_from_host(data)
    dst = d1.context().buffer(data.nbytes)
    dst.fill(b"\xee")
    sim.sim.log.clear()
    return src, dst


def _read(buf, dtype, n) -> np.ndarray:
    out = np.empty(n, dtype)
    buf.read(out)
    return out


def test_peer_access_copies_device_to_device_with_the_peer_functions(sim, caplog):
    data = np.arange(1000, dtype=np.float64)
    src, dst = _pair(sim, data)
    with caplog.at_level(logging.DEBUG, logger="pygpgpu.transfer"):
        assert dst.copy_from_device(src) == "peer"
    log = sim.sim.log
    assert log.count("device_can_access_peer") == 1 and log.count("ctx_enable_peer_access") == 1
    assert log.count("memcpy_peer") == 1
    assert not {"memcpy_dtoh", "memcpy_htod", "host_alloc"} & set(log)      # no host round trip
    np.testing.assert_array_equal(_read(dst, np.float64, 1000), data)
    np.testing.assert_array_equal(_read(src, np.float64, 1000), data)      # the source untouched
    assert any("peer to peer" in r.getMessage() for r in caplog.records)

    sim.sim.log.clear()                      # the pair's access is remembered: asked and enabled once
    assert dst.copy_from_device(src) == "peer"
    assert sim.sim.log.count("memcpy_peer") == 1
    assert "device_can_access_peer" not in sim.sim.log and "ctx_enable_peer_access" not in sim.sim.log


def test_access_enabled_earlier_counts_as_access(sim):
    sim.sim.enable_peer_status = 704          # CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED (another library did it)
    data = np.arange(32, dtype=np.float32)
    src, dst = _pair(sim, data)
    assert dst.copy_from_device(src) == "peer"
    np.testing.assert_array_equal(_read(dst, np.float32, 32), data)


def test_buffer_copy_from_another_device_takes_the_same_path(sim):
    data = np.arange(64, dtype=np.int32)
    src, dst = _pair(sim, data)
    dst.copy_from(src)
    assert "memcpy_peer" in sim.sim.log
    np.testing.assert_array_equal(_read(dst, np.int32, 64), data)


def test_offsets_copy_the_asked_range_only(sim):
    data = np.arange(100, dtype=np.int16)
    src, dst = _pair(sim, data)
    assert dst.copy_from_device(src, 20, src_offset=10, dst_offset=40) == "peer"
    got = _read(dst, np.int16, 100)
    np.testing.assert_array_equal(got[20:30], data[5:15])
    assert (got.view(np.uint8)[:40] == 0xEE).all() and (got.view(np.uint8)[60:] == 0xEE).all()
    with pytest.raises(ValueError, match="does not fit"):
        dst.copy_from_device(src, 200, src_offset=8)


@pytest.mark.parametrize("why", ["no peer path", "enabling fails", "PYGPGPU_PEER_COPIES=0"])
def test_without_peer_access_the_copy_is_staged_through_portable_pinned_memory(sim, monkeypatch, why, caplog):
    monkeypatch.setenv("PYGPGPU_SIM_STAGING_CHUNK", str(1 << 20))
    if why == "no peer path":
        sim.sim.peer = False
    elif why == "enabling fails":
        sim.sim.enable_peer_status = 711          # CUDA_ERROR_TOO_MANY_PEERS
    else:
        monkeypatch.setenv("PYGPGPU_PEER_COPIES", "0")
    data = np.random.default_rng(1).standard_normal(700_000)   # 5.6 MB: several 1 MiB chunks
    src, dst = _pair(sim, data)
    sim.sim.host_alloc_flags.clear()
    with caplog.at_level(logging.DEBUG, logger="pygpgpu.transfer"):
        assert dst.copy_from_device(src) == "staged"
    log = sim.sim.log
    assert "memcpy_peer" not in log
    chunks = -(-data.nbytes // (1 << 20))
    assert log.count("memcpy_dtoh") == chunks and log.count("memcpy_htod") == chunks
    assert sim.sim.host_alloc_flags == [1, 1]      # two portable page-locked chunks, used in turn
    np.testing.assert_array_equal(_read(dst, np.float64, data.size), data)
    np.testing.assert_array_equal(_read(src, np.float64, data.size), data)
    assert any("staged through page-locked host memory" in r.getMessage() for r in caplog.records)


def test_staged_copies_reuse_their_page_locked_chunks_until_the_context_closes(sim, monkeypatch):
    monkeypatch.setenv("PYGPGPU_SIM_STAGING_CHUNK", str(1 << 20))
    sim.sim.peer = False
    data = np.arange(600_000, dtype=np.float32)                # 2.4 MB: three 1 MiB chunks
    src, dst = _pair(sim, data)
    assert dst.copy_from_device(src) == "staged"
    assert sim.sim.log.count("host_alloc") == 2
    sim.sim.log.clear()
    dst.fill(b"\0")
    assert dst.copy_from_device(src) == "staged"               # page-locking costs: done once
    assert "host_alloc" not in sim.sim.log
    np.testing.assert_array_equal(_read(dst, np.float32, data.size), data)
    chunks = set(src.context._peer_chunks)
    assert len(chunks) == 2 and all(b.ptr in sim.sim.memory for b in chunks)
    src.context.close()                                         # freed with the source's context
    assert all(b.ptr == 0 for b in chunks)


def test_one_device_copies_within_its_context(sim):
    d0 = sim.devices()[0]
    a = d0.context().buffer_from_host(np.arange(8, dtype=np.int64))
    b = d0.context().buffer(64)
    sim.sim.log.clear()
    assert b.copy_from_device(a) == "device"
    assert sim.sim.log.count("memcpy_dtod") == 1 and "memcpy_peer" not in sim.sim.log
    np.testing.assert_array_equal(_read(b, np.int64, 8), np.arange(8))


def test_another_backend_goes_through_a_numpy_array():
    one, two = SimBackend(KERNELS), SimBackend(KERNELS)
    a = one.devices()[0].context().buffer_from_host(np.arange(16, dtype=np.int32))
    b = two.devices()[0].context().buffer(64)
    assert b.copy_from_device(a) == "host"
    np.testing.assert_array_equal(_read(b, np.int32, 16), np.arange(16))


def test_cuda_and_hip_bind_the_peer_functions_under_their_names():
    from pygpgpu_cuda._driver import FUNCTIONS as CUDA
    from pygpgpu_hip._driver import FUNCTIONS as HIP

    names = ("device_can_access_peer", "ctx_enable_peer_access", "memcpy_peer_async")
    assert [CUDA[r].symbol for r in names] == ["cuDeviceCanAccessPeer", "cuCtxEnablePeerAccess", "cuMemcpyPeerAsync"]
    assert [HIP[r].symbol for r in names] == ["hipDeviceCanAccessPeer", "hipDeviceEnablePeerAccess", "hipMemcpyPeerAsync"]
    assert all(CUDA[r].optional and HIP[r].optional for r in names)     # an old driver stages instead
