"""Interop: DLPack export/import, the CUDA Array Interface, and wrapping foreign device arrays."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import pygpgpu_core.gnp as gnp
from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError
from pygpgpu_core.gnp import _dlpack
from conftest import first_device, host_unified_opencl_device, skip_no_device


def _backend_of(device) -> str:
    return device.backend.name


def _exportable(device) -> bool:
    """CUDA/HIP device memory and host-visible OpenCL memory export; OpenCL device memory cannot."""
    return _backend_of(device) in ("cuda", "hip") or gnp.get_memory_pool(device).host_access


def test_dlpack_cpu_export_is_zero_copy_on_host_unified_devices():
    device = host_unified_opencl_device()
    before = _dlpack.live_exports()
    host = np.arange(20, dtype=np.float32).reshape(4, 5)
    g = gnp.asarray(host, device=device)
    assert g.__dlpack_device__() == (_dlpack.kDLCPU, 0)
    v = np.from_dlpack(g)
    assert v.shape == (4, 5) and v.dtype == np.float32
    np.testing.assert_array_equal(v, host)
    g.fill(5)                     # device-side write shows through the view: same memory
    np.testing.assert_array_equal(v, np.full((4, 5), 5, np.float32))
    v[0, 0] = -1                  # and host writes are seen by the device
    assert g[0, 0] == -1
    assert _dlpack.live_exports() == before + 1
    del g                         # the export keeps the array alive
    gc.collect()
    np.testing.assert_array_equal(v[1], np.full(5, 5, np.float32))
    del v
    gc.collect()
    assert _dlpack.live_exports() == before


def test_unconsumed_capsule_frees_once(device):
    g = gnp.zeros(3, np.int32, device=device)
    before = _dlpack.live_exports()
    if not _exportable(device):
        with pytest.raises(BufferError, match=r"g\.get\(\)"):
            g.__dlpack__()
        assert _dlpack.live_exports() == before
        return
    cap = g.__dlpack__()
    assert _dlpack.live_exports() == before + 1
    del cap                       # nobody consumed it: the capsule destructor releases it
    gc.collect()
    assert _dlpack.live_exports() == before


def test_dlpack_round_trip_through_import(device):
    g = gnp.asarray(np.arange(6, dtype=np.int16), device=device)
    before = _dlpack.live_exports()
    if not _exportable(device):
        with pytest.raises(BufferError):
            g.__dlpack__()
        return
    cap = g.__dlpack__()
    info, owner = _dlpack.import_capsule(cap)
    assert info.shape == (6,) and info.dtype == np.int16 and info.nbytes == 12
    assert (info.device_type, info.device_id) == g.__dlpack_device__()
    with pytest.raises(BufferError, match="consumed"):
        _dlpack.import_capsule(cap)   # a capsule is used once
    del cap
    gc.collect()
    assert _dlpack.live_exports() == before + 1  # renamed capsule: its destructor must not free
    owner.release()
    owner.release()                               # the deleter runs exactly once
    assert _dlpack.live_exports() == before


def test_versioned_capsule_when_asked(device):
    g = gnp.asarray(np.arange(4, dtype=np.uint32), device=device)
    before = _dlpack.live_exports()
    if not _exportable(device):
        with pytest.raises(BufferError):
            g.__dlpack__(max_version=(1, 0))
        return
    cap = g.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    info, owner = _dlpack.import_capsule(cap)
    assert info.shape == (4,) and info.dtype == np.uint32
    del cap
    owner.release()
    gc.collect()
    assert _dlpack.live_exports() == before
    legacy = g.__dlpack__(max_version=None)
    assert "dltensor_versioned" not in repr(legacy) and "dltensor" in repr(legacy)


def test_host_visible_pool_is_probed(device):
    pool = gnp.get_memory_pool(device)
    if getattr(device, "host_unified_memory", False) and _backend_of(device) == "opencl":
        assert pool.host_access  # PoCL: device and host see the same bytes
    else:
        assert not pool.host_access


def test_opencl_device_memory_refuses_zero_copy_export():
    try:
        device = registry.backend_devices("opencl")[0]
    except (GPGPUError, IndexError) as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc!r}")
    ctx = device.context()
    buf = ctx.buffer(16)  # plain device memory, not host-backed
    g = gnp.DeviceArray._wrap((4,), np.dtype(np.float32), device, buf, buf)
    g.fill(2.5)
    assert g.__dlpack_device__() == (_dlpack.kDLOpenCL, device.index)
    with pytest.raises(BufferError, match=r"g\.get\(\)"):
        g.__dlpack__()
    with pytest.raises(BufferError, match=r"g\.get\(\)"):
        np.from_dlpack(g)
    # asking for a host copy explicitly is fine
    np.testing.assert_array_equal(np.from_dlpack(g, device="cpu", copy=True), np.full(4, 2.5, np.float32))
    with pytest.raises(BufferError):
        g.__dlpack__(dl_device=(1, 0), copy=False)


def test_from_dlpack_host_producers_upload(device):
    host = np.arange(10, dtype=np.float64)
    gnp.reset_transfer_stats()
    g = gnp.from_dlpack(host, device=device)
    assert g.device == device
    assert gnp.transfer_stats()["h2d"] == 1
    np.testing.assert_array_equal(g.get(), host)
    assert gnp.from_dlpack(g) is g
    c = gnp.from_dlpack(g, copy=True)
    assert c is not g
    np.testing.assert_array_equal(c.get(), host)
    with pytest.raises(TypeError, match="DLPack"):
        gnp.from_dlpack([1, 2, 3])
    with pytest.raises(BufferError, match="copy"):
        gnp.from_dlpack(host, device=device, copy=False)


def test_dlpack_dtypes(device):
    # numpy reads host memory only: GPU arrays (and OpenCL device memory) must refuse it with a
    # BufferError that names g.get(), never hand it a device capsule (numpy 2.x then failed
    # with a SystemError). Asking for a host copy works everywhere.
    host_readable = _backend_of(device) not in ("cuda", "hip") and _exportable(device)
    for dt in (np.bool_, np.int8, np.uint64, np.float16, np.float64, np.complex64):
        g = gnp.asarray(np.ones(3, dt), device=device)
        if host_readable:
            back = np.from_dlpack(g)
        else:
            with pytest.raises(BufferError, match=r"g\.get\(\)"):
                np.from_dlpack(g)
            back = np.from_dlpack(g, device="cpu", copy=True)
        assert back.dtype == dt
        np.testing.assert_array_equal(back, np.ones(3, dt))
        np.testing.assert_array_equal(np.from_dlpack(g, device="cpu", copy=True), np.ones(3, dt))


class _GpuLabelled(gnp.DeviceArray):
    """A host-visible PoCL array that reports itself as CUDA device memory: exercises the export
    rules GPU arrays follow on a machine without a GPU (the memory is never read as CUDA)."""

    __slots__ = ()

    def _dl_device(self):
        return _dlpack.kDLCUDA, 0


def test_gpu_exports_refuse_host_only_consumers_and_serve_gpu_ones():
    device = host_unified_opencl_device()
    src = gnp.asarray(np.arange(6, dtype=np.float32), device=device)
    src.buffer.ptr = src._host.ctypes.data           # what a CUDA buffer exports: its address
    g = _GpuLabelled._wrap(src.shape, src.dtype, device, src.buffer, src, src._host)
    before = _dlpack.live_exports()
    with pytest.raises(BufferError, match=r"g\.get\(\)"):
        np.from_dlpack(g)                          # numpy: dl_device=None, no stream
    with pytest.raises(BufferError, match=r"g\.get\(\)"):
        np.from_dlpack(g, copy=True)
    assert _dlpack.live_exports() == before
    np.testing.assert_array_equal(np.from_dlpack(g, device="cpu"), np.arange(6, dtype=np.float32))
    # GPU consumers pass the stream they use (PyTorch, CuPy, JAX) or call it without arguments.
    for kwargs in ({"stream": 1, "max_version": (1, 0)}, {"stream": None}, {}, {"max_version": (1, 0)}):
        cap = g.__dlpack__(**kwargs)
        info, owner = _dlpack.import_capsule(cap)
        assert (info.device_type, info.device_id) == (_dlpack.kDLCUDA, 0) and info.shape == (6,)
        assert info.ptr == src._host.ctypes.data
        owner.release()
    assert _dlpack.live_exports() == before


def test_a_capsule_the_consumer_rejects_is_still_freed():
    device = host_unified_opencl_device()
    g = _GpuLabelled._wrap((4,), np.dtype(np.float32), device, None, None, np.zeros(4, np.float32))
    before = _dlpack.live_exports()

    class Producer:  # hands numpy a CUDA capsule whatever it asks for
        def __dlpack_device__(self):
            return _dlpack.kDLCUDA, 0

        def __dlpack__(self, **kwargs):
            return _dlpack.export_capsule(g._host.ctypes.data, (_dlpack.kDLCUDA, 0), (4,), g.dtype, g,
                                          versioned=True)

    # numpy drops the capsule with its own error set; the destructor must still free the export
    # (what numpy then reports is its business: a SystemError on numpy 2.4).
    with pytest.raises((BufferError, SystemError)):
        np.from_dlpack(Producer())
    gc.collect()
    assert _dlpack.live_exports() == before


def test_as_device_array(device):
    g = gnp.zeros(4, device=device)
    assert gnp.as_device_array(g) is g
    assert gnp.as_device_array(g, device) is g
    with pytest.raises(TypeError, match="asarray"):
        gnp.as_device_array(np.zeros(3))
    with pytest.raises(TypeError):
        gnp.as_device_array([1, 2])


def test_cuda_array_interface_only_on_cuda(device):
    g = gnp.zeros(5, np.float32, device=device)
    if _backend_of(device) != "cuda":
        assert not hasattr(g, "__cuda_array_interface__")
        with pytest.raises(AttributeError, match="CUDA"):
            g.__cuda_array_interface__
        return
    cai = g.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (5,) and cai["typestr"] == "<f4"
    assert cai["data"] == (g.buffer.ptr, False) and cai["strides"] is None
    assert g.__dlpack_device__() == (_dlpack.kDLCUDA, device.index)
    again = gnp.as_device_array(g.__class__._wrap(g.shape, g.dtype, g.device, g.buffer, g))
    assert again.buffer.ptr == g.buffer.ptr


def test_cuda_foreign_arrays_are_zero_copy():
    dev = first_device("cuda")
    cases = []  # (name, make source, wrap, pointer of source)
    try:
        import torch

        make = lambda: torch.arange(8, dtype=torch.float32, device="cuda")  # noqa: E731
        cases += [("torch CAI", make, lambda t: gnp.as_device_array(t, dev), lambda t: t.data_ptr()),
                  ("torch DLPack", make, gnp.from_dlpack, lambda t: t.data_ptr())]
    except ImportError:
        torch = None
    try:
        import cupy

        make = lambda: cupy.arange(8, dtype=cupy.float32)  # noqa: E731
        cases += [("CuPy CAI", make, lambda c: gnp.as_device_array(c, dev), lambda c: c.data.ptr),
                  ("CuPy DLPack", make, gnp.from_dlpack, lambda c: c.data.ptr)]
    except ImportError:
        cupy = None
    if not cases:
        pytest.skip("neither torch nor CuPy is installed next to the CUDA device")
    for name, make, wrap, pointer in cases:
        src = make()
        g = wrap(src)
        assert g.buffer.ptr == pointer(src) and not g.owns_memory, name
        np.testing.assert_array_equal(g.get(), np.arange(8, dtype=np.float32))
        g.fill(3)                                  # writes land in the foreign array
        assert float(src.sum()) == 24.0, name
        del src                                    # the wrapper keeps the memory alive
        np.testing.assert_array_equal(g.get(), np.full(8, 3, np.float32))
    # and back: torch/CuPy read our memory without a copy
    g = gnp.asarray(np.arange(4, dtype=np.float32), device=dev)
    if torch is not None:
        t = torch.from_dlpack(g)
        assert t.data_ptr() == g.buffer.ptr and t.sum().item() == 6
        t2 = torch.as_tensor(g, device="cuda")     # through __cuda_array_interface__
        assert t2.data_ptr() == g.buffer.ptr
    if cupy is not None:
        c = cupy.asarray(g)
        assert c.data.ptr == g.buffer.ptr and float(c.sum()) == 6
        c2 = cupy.from_dlpack(g)
        assert c2.data.ptr == g.buffer.ptr
