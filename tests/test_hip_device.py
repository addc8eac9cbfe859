"""Kernels executed on an AMD GPU through the HIP backend, compared with numpy.

Every test here needs an AMD GPU and skips, saying why, on machines without one (CI has
none: there the same kernels are only compiled, in test_hip_compile.py).
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core.errors import BackendUnavailable, ClosedError
from pygpgpu_core.protocols import LocalMemory
from conftest import skip_no_device

_spec = importlib.util.spec_from_file_location("_hip_kernels", Path(__file__).with_name("test_hip_compile.py"))
_kernels = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_kernels)
KERNELS = _kernels.KERNELS


@pytest.fixture(scope="module")
def amd():
    """The first AMD GPU, or a skip that names why there is none."""
    try:
        from pygpgpu_hip import backend

        devices = backend.devices()
    except BackendUnavailable as exc:
        skip_no_device("hip", f"needs an AMD GPU: {exc.reason}")
    return devices[0]


@pytest.fixture(scope="module")
def ctx(amd):
    return amd.context()


def test_device_description(amd):
    assert amd.selector == "hip:0"
    assert amd.arch.startswith("gfx") and ":" not in amd.arch
    assert amd.target.split(":")[0] == amd.arch
    assert amd.global_mem_size > 0 and amd.compute_units > 0 and amd.max_work_group_size >= 64
    assert amd.fp64 is True and amd.fp16 is False
    from pygpgpu_core import registry

    assert registry.get_device(f"hip:{amd.arch}").index == amd.index
    assert registry.default_backend_name() in ("cuda", "hip")


def test_vecadd_with_numpy_arrays(ctx):
    n = 1000  # not a multiple of the block size: the grid is rounded up, the kernel guards
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    b = np.random.default_rng(1).random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    kernel = ctx.program(KERNELS["vecadd"]).kernel("vecadd")
    kernel.launch((n,), None, [a, b, c, np.int32(n)])
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


@pytest.mark.parametrize("name, dtype", [("f32", np.float32), ("f64", np.float64), ("i64", np.int64)])
def test_saxpy_through_a_launcher(ctx, name, dtype):
    n = 4099
    rng = np.random.default_rng(2)
    x = (rng.random(n) * 100).astype(dtype)
    y = (rng.random(n) * 100).astype(dtype)
    a = dtype(3)
    xs, ys, out = ctx.buffer_from_host(x), ctx.buffer_from_host(y), ctx.buffer(x.nbytes)
    kernel = ctx.program(KERNELS[f"saxpy_{name}"]).kernel(f"saxpy_{name}")
    launch = kernel.launcher(["buffer", "buffer", "buffer", np.dtype(dtype), np.int64])
    for local in (None, (64,), (256,)):
        out.fill(dtype(0))
        launch((n,), local, [out, xs, ys, a, n])
        result = np.empty_like(x)
        out.read(result)
        np.testing.assert_allclose(result, a * x + y, rtol=1e-6)


def test_shared_memory_block_sum(ctx):
    n, block = 10_000, 256
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    groups = -(-n // block)
    partial = np.zeros(groups, np.float32)
    ctx.program(KERNELS["block_sum"]).kernel("block_sum").launch((n,), (block,), [x, partial, np.int32(n)])
    expected = np.add.reduceat(np.pad(x, (0, groups * block - n)), np.arange(0, groups * block, block))
    np.testing.assert_allclose(partial, expected, rtol=1e-5)


def test_dynamic_shared_memory_from_local_memory(ctx):
    n = 200
    data = np.arange(n, dtype=np.int32)
    kernel = ctx.program(KERNELS["reverse_dynamic_shared"]).kernel("reverse_dynamic_shared")
    kernel.launch((n,), (n,), [data, LocalMemory(n * 4), np.int32(n)])
    np.testing.assert_array_equal(data, np.arange(n, dtype=np.int32)[::-1])


def test_atomics(ctx):
    n, nbins = 5000, 7
    values = np.random.default_rng(4).integers(-50, 50, n).astype(np.int32)
    bins = np.zeros(nbins, np.int32)
    total = np.zeros(1, np.float32)
    largest = np.full(1, np.iinfo(np.int32).min, np.int32)
    flag = np.zeros(1, np.uint32)
    kernel = ctx.program(KERNELS["histogram_atomics"]).kernel("histogram_atomics")
    kernel.launch((n,), None, [values, bins, total, largest, flag, np.int32(n), np.int32(nbins)])
    np.testing.assert_array_equal(bins, np.bincount(values % nbins, minlength=nbins))
    assert total[0] == pytest.approx(float(values.sum()), abs=1.0)
    assert largest[0] == values.max() and flag[0] == 1


def test_two_dimensional_grid(ctx):
    rows, cols = 37, 53
    a = np.random.default_rng(5).standard_normal((rows, cols))
    out = np.zeros_like(a)
    kernel = ctx.program(KERNELS["grid2d_math"]).kernel("grid2d_math")
    kernel.launch((cols, rows), (16, 8), [a, out, np.int32(rows), np.int32(cols)])
    expected = np.sqrt(np.abs(a)) + np.sin(a) * np.exp(-a * a) + np.minimum(a, 0.5) + np.floor(a)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_buffer_fill_copy_and_offsets(ctx):
    src = ctx.buffer(64)
    src.fill(np.int32(7))
    dst = ctx.buffer(64)
    dst.copy_from(src)
    host = np.zeros(16, np.int32)
    dst.read(host)
    np.testing.assert_array_equal(host, 7)
    dst.write(np.arange(4, dtype=np.int32), offset=16)
    dst.read(host)
    np.testing.assert_array_equal(host[4:8], np.arange(4))
    with pytest.raises(ValueError, match="does not fit"):
        dst.write(np.zeros(17, np.int32))
    dst.close()
    dst.close()  # idempotent
    with pytest.raises(ClosedError):
        dst.read(host)


def test_missing_kernel_name_is_explained(ctx):
    program = ctx.program(KERNELS["vecadd"])
    with pytest.raises(KeyError, match="no kernel named 'no_such_kernel'.*kernels in it: vecadd"):
        program.kernel("no_such_kernel")


def test_too_large_local_size_is_refused(ctx):
    kernel = ctx.program(KERNELS["vecadd"]).kernel("vecadd")
    with pytest.raises(ValueError, match="at most"):
        kernel.launch((4096,), (ctx.device.max_work_group_size * 2,), [np.zeros(1, np.float32)] * 3 + [np.int32(0)])
