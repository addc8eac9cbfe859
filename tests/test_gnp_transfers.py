"""The transfer counter: exactly which host<->device copies gnp (and kernel launches) make."""
from __future__ import annotations

import numpy as np
import pytest

import pygpgpu_core.gnp as gnp
from conftest import first_device, host_unified_opencl_device

SCALE_ADD = {
    "opencl": """
__kernel void scale_add(__global float* x, __global const float* y, float a, int n) {
    int i = get_global_id(0);
    if (i < n) x[i] = x[i] * a + y[i];
}""",
    "cuda": """
extern "C" __global__ void scale_add(float* x, const float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + y[i];
}""",
}
SCALE_ADD["hip"] = "#include <hip/hip_runtime.h>\n" + SCALE_ADD["cuda"]


def scale_add_kernel(device):
    """``launch(x_buf, y_buf, a, n)``: x = x * a + y, through the low-level backend API."""
    dialect = getattr(device.backend, "dialect", "opencl")
    kernel = device.context().program(SCALE_ADD[dialect]).kernel("scale_add")

    def launch(x, y, a, n):
        kernel.launch((n,), None, [x, y, np.float32(a), np.int32(n)])

    return launch


@pytest.fixture(autouse=True)
def _fresh_counter():
    gnp.reset_transfer_stats()
    yield


def test_counter_exact_for_array_operations(device):
    host = np.arange(1000, dtype=np.float32)
    g = gnp.asarray(host, device=device)
    assert gnp.transfer_stats() == {"h2d": 1, "d2h": 0, "h2d_bytes": 4000, "d2h_bytes": 0}
    g.get()
    assert gnp.transfer_stats() == {"h2d": 1, "d2h": 1, "h2d_bytes": 4000, "d2h_bytes": 4000}
    np.asarray(g)
    g[5], g[10:20]                # views: no transfer at all
    assert gnp.transfer_stats()["d2h"] == 2
    g[5].get()                    # one element only
    g[10:20].get()                # ten elements only
    s = gnp.transfer_stats()
    assert (s["d2h"], s["d2h_bytes"]) == (4, 4000 + 4000 + 4 + 40)

    gnp.reset_transfer_stats()
    z = gnp.zeros(1000, np.float32, device=device)
    z.fill(2.0)
    c = z.copy()
    c2 = gnp.full_like(c, 3)
    c2[:] = 1.5                   # scalar assignment is a device fill
    r = c.reshape(10, 100)
    assert gnp.transfer_stats() == {"h2d": 0, "d2h": 0, "h2d_bytes": 0, "d2h_bytes": 0}
    assert r.to(device) is r
    assert gnp.transfer_stats()["h2d"] == 0

    c2[:] = host                  # whole-array assignment from the host: one upload
    assert gnp.transfer_stats()["h2d"] == 1 and gnp.transfer_stats()["h2d_bytes"] == 4000
    c2[2:4] = [1, 2]              # a contiguous range: one upload of 8 bytes
    assert gnp.transfer_stats()["h2d_bytes"] == 4008


def test_reset_returns_previous_counts(device):
    gnp.asarray(np.zeros(8, np.int64), device=device)
    old = gnp.reset_transfer_stats()
    assert old["h2d"] == 1 and old["h2d_bytes"] == 64
    assert gnp.transfer_stats()["h2d"] == 0


def test_record_transfer_api():
    gnp.record_transfer("h2d", 100)
    gnp.record_transfer("d2h", 7)
    gnp.record_transfer("d2h", 1)
    assert gnp.transfer_stats() == {"h2d": 1, "d2h": 2, "h2d_bytes": 100, "d2h_bytes": 8}
    with pytest.raises(ValueError, match="h2d"):
        gnp.record_transfer("sideways", 1)


def test_repeated_kernel_calls_on_device_arrays_copy_nothing(device):
    n = 4096
    x_host = np.linspace(-1, 1, n, dtype=np.float32)
    y_host = np.full(n, 0.25, np.float32)
    launch = scale_add_kernel(device)
    x = gnp.asarray(x_host, device=device)
    y = gnp.asarray(y_host, device=device)
    gnp.reset_transfer_stats()
    for _ in range(50):
        launch(x.buffer, y.buffer, 0.5, n)
    assert gnp.transfer_stats() == {"h2d": 0, "d2h": 0, "h2d_bytes": 0, "d2h_bytes": 0}
    result = x.get()
    assert gnp.transfer_stats()["d2h"] == 1
    expected = x_host.copy()
    for _ in range(50):
        expected = expected * np.float32(0.5) + y_host
    np.testing.assert_allclose(result, expected, rtol=1e-6, atol=1e-6)


def test_stage_numpy_copies_only_what_access_needs(device):
    n = 1000
    launch = scale_add_kernel(device)
    x_host = np.arange(n, dtype=np.float32)
    y_host = np.ones(n, np.float32)
    expected = x_host * 2 + y_host
    x = gnp.stage_numpy(x_host, device, read=True, write=True)
    y = gnp.stage_numpy(y_host, device, read=True, write=False)
    launch(x.buffer, y.buffer, 2.0, n)
    x.finish()
    y.finish()
    x.finish()  # idempotent
    np.testing.assert_array_equal(x_host, expected)
    s = gnp.transfer_stats()
    # x and y go up, only x comes back -- except where the kernel worked in the numpy memory
    # itself (zero-copy on host-unified devices), which copies nothing
    assert s["h2d"] == (not x.zero_copy) + (not y.zero_copy)
    assert s["d2h"] == (not x.zero_copy)

    gnp.reset_transfer_stats()
    out = np.zeros(n, np.float32) + 7  # write-only and fully overwritten: no upload
    src = np.arange(n, dtype=np.float32)
    staged_out = gnp.stage_numpy(out, device, read=False, write=True, overwrite=True)
    staged_src = gnp.stage_numpy(src, device, read=True, write=False)
    gnp.zeros(1, device=device)  # unrelated allocation in between
    launch(staged_out.buffer, staged_src.buffer, 0.0, n)  # out = out*0 + src
    staged_out.finish()
    staged_src.finish()
    s = gnp.transfer_stats()
    assert s["h2d"] == (not staged_src.zero_copy) and s["d2h"] == (not staged_out.zero_copy)
    np.testing.assert_array_equal(out, src)


def test_stage_numpy_zero_copy_on_host_unified_devices():
    from pygpgpu_opencl import aligned_empty

    device = host_unified_opencl_device()
    n = 1 << 18  # 1 MiB: written arrays this large are aliased (ALIAS_WRITTEN_MIN)
    x = aligned_empty(n, np.float32)
    x[:] = np.arange(n)
    y = aligned_empty(n, np.float32)
    y[:] = 1
    launch = scale_add_kernel(device)
    sx = gnp.stage_numpy(x, device, read=True, write=True)
    sy = gnp.stage_numpy(y, device, read=True, write=False)
    assert sx.zero_copy and sy.zero_copy
    launch(sx.buffer, sy.buffer, 3.0, n)
    sx.finish()
    sy.finish()
    np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32) * 3 + 1)
    assert gnp.transfer_stats() == {"h2d": 0, "d2h": 0, "h2d_bytes": 0, "d2h_bytes": 0}


def test_stage_numpy_rejects_bad_arrays(device):
    with pytest.raises(ValueError, match="C-contiguous"):
        gnp.stage_numpy(np.zeros((4, 4), np.float32)[:, ::2], device)
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gnp.stage_numpy(ro, device, write=True)
    gnp.stage_numpy(ro, device, read=True, write=False).finish()


def test_cross_context_move_counts_one_each_way():
    from pygpgpu_opencl import Context

    device = first_device("opencl")
    g = gnp.asarray(np.arange(256, dtype=np.int32), device=device)
    with Context(device) as other:
        gnp.reset_transfer_stats()
        g.to(other)
        assert gnp.transfer_stats() == {"h2d": 1, "d2h": 1, "h2d_bytes": 1024, "d2h_bytes": 1024}


def test_translated_kernel_on_device_arrays_copies_nothing(backend):
    """@kernel calls take gnp arrays' buffers directly: a loop of calls makes zero transfers."""
    from pygpgpu_translate import kernel

    @kernel
    def axpy_inplace(x, y, a):
        for i in range(x.shape[0]):
            x[i] = x[i] * a + y[i]

    n = 3000
    x_host = np.linspace(0, 1, n, dtype=np.float32)
    y_host = np.full(n, 0.5, np.float32)
    x = gnp.asarray(x_host, device=backend)
    y = gnp.asarray(y_host, device=backend)
    k = axpy_inplace[backend]
    k(x, y, np.float32(0.5))      # first call compiles
    gnp.reset_transfer_stats()
    for _ in range(100):
        k(x, y, np.float32(0.5))
    assert gnp.transfer_stats() == {"h2d": 0, "d2h": 0, "h2d_bytes": 0, "d2h_bytes": 0}
    expected = x_host.copy()
    for _ in range(101):
        expected = expected * np.float32(0.5) + y_host
    np.testing.assert_allclose(x.get(), expected, rtol=1e-5, atol=1e-6)
    assert gnp.transfer_stats()["d2h"] == 1


def _offset_view(n: int, dtype, offset: int) -> np.ndarray:
    """``n`` elements of ``dtype`` starting ``offset`` bytes past a 4096-byte boundary."""
    from pygpgpu_opencl import aligned_empty

    dtype = np.dtype(dtype)
    raw = aligned_empty(n * dtype.itemsize + offset, np.uint8)
    return raw[offset:offset + n * dtype.itemsize].view(dtype)


def test_plain_numpy_arrays_are_used_in_place_on_host_unified_devices():
    device = host_unified_opencl_device()
    launch = scale_add_kernel(device)
    n = gnp.ALIAS_WRITTEN_MIN // 4
    # np.arange's own memory (usually 16- or 64-byte aligned, not 128) and views 4 bytes off any
    # wider boundary: float* only needs 4-byte alignment, so all of them are aliased.
    for x in (np.arange(n, dtype=np.float32), _offset_view(n, np.float32, 4), _offset_view(n, np.float32, 132)):
        x[:] = np.arange(n)
        y = np.full(n, 0.5, np.float32)[::-1].copy()
        gnp.reset_transfer_stats()
        sx = gnp.stage_numpy(x, device, read=True, write=True)
        sy = gnp.stage_numpy(y, device, read=True, write=False)
        assert sx.zero_copy and sy.zero_copy, x.ctypes.data % 128
        launch(sx.buffer, sy.buffer, 3.0, n)
        sx.finish()
        sy.finish()
        np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32) * 3 + 0.5)
        assert gnp.transfer_stats()["h2d"] == gnp.transfer_stats()["d2h"] == 0


VEC4 = """
__kernel void bump(__global float4* v, int n) {
    int i = get_global_id(0);
    if (i < n) v[i] = v[i] * 2.0f + (float4)(1.0f, 2.0f, 3.0f, 4.0f);
}"""


@pytest.mark.parametrize("offset, aliased", [(4, False), (16, True), (0, True)])
def test_vector_arrays_alias_only_at_their_natural_alignment(offset, aliased):
    from pygpgpu_core.vec_types import float4

    device = host_unified_opencl_device()
    kernel = device.context().program(VEC4).kernel("bump")
    n = gnp.ALIAS_WRITTEN_MIN // 16
    v = _offset_view(n, float4.dtype, offset)
    flat = v.view(np.float32).reshape(n, 4)
    flat[:] = np.arange(4 * n, dtype=np.float32).reshape(n, 4)
    expected = flat * 2 + np.array([1, 2, 3, 4], np.float32)
    gnp.reset_transfer_stats()
    staged = gnp.stage_numpy(v, device, read=True, write=True)
    assert staged.zero_copy is aliased  # float4* needs 16 bytes: 4 bytes off is copied instead
    kernel.launch((n,), None, [staged.buffer, np.int32(n)])
    staged.finish()
    np.testing.assert_array_equal(flat, expected)
    s = gnp.transfer_stats()
    assert (s["h2d"], s["d2h"]) == ((0, 0) if aliased else (1, 1))


def test_explicit_alignment_overrides_the_element_type():
    device = host_unified_opencl_device()
    launch = scale_add_kernel(device)
    n = gnp.ALIAS_WRITTEN_MIN // 4
    x = _offset_view(n, np.float32, 4)
    x[:] = np.arange(n)
    y = np.ones(n, np.float32)
    # A caller whose kernel reads the array as float4* says so: 4 bytes off is then copied.
    sx = gnp.stage_numpy(x, device, read=True, write=True, align=16)
    sy = gnp.stage_numpy(y, device, read=True, write=False, align=4)
    assert not sx.zero_copy and sy.zero_copy
    launch(sx.buffer, sy.buffer, 2.0, n)
    sx.finish()
    sy.finish()
    np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32) * 2 + 1)
    assert gnp.natural_alignment(np.dtype(np.float64)) == 8
    from pygpgpu_core.vec_types import double16, float3

    assert gnp.natural_alignment(float3.dtype) == 16 and gnp.natural_alignment(double16.dtype) == 128


def test_small_written_arrays_take_the_pool_and_read_only_ones_alias():
    device = host_unified_opencl_device()
    launch = scale_add_kernel(device)
    n = 1000  # 4 KB: a memcpy each way costs less than the map/unmap an alias needs
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    sx = gnp.stage_numpy(x, device, read=True, write=True)
    sy = gnp.stage_numpy(y, device, read=True, write=False)
    assert not sx.zero_copy and sy.zero_copy
    launch(sx.buffer, sy.buffer, 2.0, n)
    sx.finish()
    sy.finish()
    np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32) * 2 + 1)
    assert gnp.transfer_stats()["h2d"] == gnp.transfer_stats()["d2h"] == 1


def test_repeated_large_numpy_calls_see_every_change(backend):
    """The same 4 MiB numpy arrays through many calls (CUDA page-locks them on their second
    transfer): every call reads the current host contents and writes back into the same arrays."""
    from pygpgpu_translate import kernel

    @kernel
    def saxpy_into(x, y, out, a):
        for i in range(out.shape[0]):
            out[i] = a * x[i] + y[i]

    k = saxpy_into[backend]
    n = 1 << 20
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    view = out[: n // 2]                                   # a view keeps the owner registered
    for step in range(5):
        x[step] = -step
        y[-1] = step
        k(x, y, out, 2.0)
        np.testing.assert_array_equal(out, 2.0 * x + y)
        assert view[step] == 2.0 * x[step] + y[step]
    ys = [np.full(n, v, np.float32) for v in range(3)]      # new arrays each call: never stale
    for v, yv in enumerate(ys):
        k(x, yv, out, 1.0)
        np.testing.assert_array_equal(out, x + v)
