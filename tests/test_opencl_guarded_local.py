"""``@kernel`` launches on an OpenCL GPU choose their group shape (``Device.guarded_local_size``)
when the call gives none: the global size is rounded up to whole groups and the kernel's domain
guard skips the extra work items. PoCL (a CPU) keeps the runtime's pick, so here the GPU choice
is forced on PoCL's device and every size, prime ones included, must still compute exactly
what numpy does, in 1, 2 and 3 dimensions, wide (several elements a work item) or not.
"""
from __future__ import annotations

import numpy as np
import pytest
from pygpgpu_core import gpu, registry
from pygpgpu_core.errors import GPGPUError, PyGPGPUWarning

from conftest import skip_no_device


@pytest.fixture
def opencl_device():
    try:
        return registry.get_device("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")


def test_a_gpu_gets_256_work_items_a_group_and_a_cpu_none(opencl_device, monkeypatch):
    from pygpgpu_opencl import _constants as C

    device = opencl_device
    monkeypatch.setattr(device, "type", C.CL_DEVICE_TYPE_GPU)
    assert device.guarded_local_size(1, 1024) == (256,)
    assert device.guarded_local_size(2, 1024) == (32, 8)
    assert device.guarded_local_size(3, 1024) == (8, 8, 4)
    assert device.guarded_local_size(1, 64) == (64,)           # the kernel's own limit
    assert device.guarded_local_size(2, 64) == (16, 4)
    monkeypatch.setattr(device, "type", C.CL_DEVICE_TYPE_CPU)
    assert device.guarded_local_size(1, 1024) is None


def add_one(x):
    for i in range(x.shape[0]):
        x[i] += 1.0


def scale2d(a, out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = 2.0 * a[y, x] + y - x


def sum3d(a, out):
    for z, y, x in np.ndindex(a.shape):
        out[z, y, x] = a[z, y, x] + z * 100 + y * 10 + x


def fill_index(x):
    gpu.work_size(x)
    i = gpu.get_global_id(0)
    x[i] = i


@pytest.mark.parametrize("n", [1, 3, 7, 255, 257, 1021, 100003])
def test_forced_groups_compute_every_size_exactly(opencl_device, monkeypatch, n):
    from pygpgpu_core import gnp
    from pygpgpu_translate import kernel

    chosen: list = []
    real = type(opencl_device).guarded_local_size

    def gpu_like(self, ndim, max_group):
        shape = (64,) if ndim == 1 else (8, 4) if ndim == 2 else (4, 2, 2)
        chosen.append(shape)
        return shape

    monkeypatch.setattr(type(opencl_device), "guarded_local_size", gpu_like)
    try:
        x = np.arange(n, dtype=np.float32)
        k = kernel(add_one)["opencl"]
        k(x)                                                      # numpy in and out
        np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32) + 1)
        g = gnp.asarray(np.zeros(n, np.float32), device=opencl_device)
        k(g)
        k(g)                                                      # the memo's repeat
        np.testing.assert_array_equal(np.asarray(g), 2.0)
        idx = np.full(n, -1, np.int32)
        kernel(fill_index)["opencl"](idx)
        np.testing.assert_array_equal(idx, np.arange(n, dtype=np.int32))
        rows, cols = n % 37 + 1, n % 11 + 2
        a = np.random.default_rng(n).random((rows, cols)).astype(np.float32)
        out = np.zeros_like(a)
        kernel(scale2d)["opencl"](a, out)
        yy, xx = np.indices(a.shape)
        np.testing.assert_allclose(out, 2.0 * a + yy - xx, rtol=1e-6, atol=1e-5)
        b = np.zeros((n % 5 + 1, n % 7 + 1, n % 3 + 2), np.float32)
        out3 = np.full_like(b, -1)
        kernel(sum3d)["opencl"](b, out3)
        zz, yy, xx = np.indices(b.shape)
        np.testing.assert_array_equal(out3, zz * 100 + yy * 10 + xx)
    finally:
        monkeypatch.setattr(type(opencl_device), "guarded_local_size", real)
    assert {len(s) for s in chosen} == {1, 2, 3}, chosen          # every launch asked for a group shape


def test_a_bracket_work_size_keeps_the_runtime_pick(opencl_device, monkeypatch):
    """k[n](...) reaches exactly n work items: no group shape is chosen for it."""
    from pygpgpu_translate import kernel

    def gpu_like(self, ndim, max_group):
        return (64,)

    monkeypatch.setattr(type(opencl_device), "guarded_local_size", gpu_like)
    x = np.zeros(1000, np.float32)
    with pytest.warns(PyGPGPUWarning, match="runs only 100"):      # a part of the domain: never silent
        kernel(add_one)["opencl"][100](x)
    np.testing.assert_array_equal(x[:100], 1.0)
    np.testing.assert_array_equal(x[100:], 0.0)
