"""The WebGPU backend's runtime (pygpgpu-webgpu, a plug-in through the pygpgpu.backends entry
point): devices from adapters, storage buffers and their copies, WGSL programs, launches with
workgroup counts, the adapter limits. Runs on lavapipe in CI; compared with numpy."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import registry
from pygpgpu_core.errors import BackendUnavailable, CompileError

from webgpu_support import webgpu_device

SAXPY = """
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> alpha: f32;

@compute @workgroup_size(64)
fn saxpy(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= arrayLength(&out)) { return; }
    out[i] = alpha * x[i] + y[i];
}
"""


@pytest.fixture(scope="module")
def dev():
    return webgpu_device()


@pytest.fixture(scope="module")
def ctx(dev):
    return dev.context()


def test_registered_through_the_entry_point_and_selected_by_name(dev):
    assert "webgpu" in registry.backend_names()
    assert dev.selector == "webgpu:0" and registry.select_device("webgpu") is dev
    assert dev.max_work_group_size >= 256 and dev.fp64 is False
    assert "wgpu-py" in registry.get_backend("webgpu").version()


def test_saxpy_through_the_low_level_api(ctx):
    n = 1000                                           # not a multiple of the workgroup: the shader guards
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    bx, by, bo = ctx.buffer_from_host(x), ctx.buffer_from_host(y), ctx.buffer(4 * n)
    program = ctx.program(SAXPY)
    program.kernel("saxpy")[(n,)](bx, by, bo, 2.5)
    out = np.empty(n, np.float32)
    bo.read(out)
    np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=1e-6)


def test_synchronize_waits_for_every_launch(ctx):
    n = 1 << 16
    x = np.ones(n, np.float32)
    bx, bo = ctx.buffer_from_host(x), ctx.buffer(4 * n)
    launch = ctx.program(SAXPY).kernel("saxpy").launcher(["buffer", "buffer", "buffer", np.float32])
    for _ in range(20):
        launch((n,), None, [bx, bx, bo, 1.0])
    ctx.synchronize()
    ctx.queue.synchronize()
    out = np.empty(n, np.float32)
    bo.read(out)
    np.testing.assert_array_equal(out, np.full(n, 2, np.float32))


def test_warm_launcher_rewrites_the_uniform_and_keeps_bind_groups_by_buffer(ctx):
    n = 130
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 3, np.float32)
    bx, by, bo = ctx.buffer_from_host(x), ctx.buffer_from_host(y), ctx.buffer(4 * n)
    kernel = ctx.program(SAXPY).kernel("saxpy")
    launch = kernel.launcher(["buffer", "buffer", "buffer", np.float32])
    out = np.empty(n, np.float32)
    for alpha in (1.0, -2.0, -2.0, 0.5):
        launch((n,), None, [bx, by, bo, alpha])
        bo.read(out)
        np.testing.assert_array_equal(out, np.float32(alpha) * x + y)
    launch((n,), (64,), [by, bx, bo, 1.0])            # other buffers: another bind group; (64,) is the declared size
    bo.read(out)
    np.testing.assert_array_equal(out, y + x)


def test_two_dimensional_dispatch_several_groups_and_a_vector_uniform(ctx):
    source = """
    struct Shape { w: u32, h: u32 }
    @group(0) @binding(0) var<storage, read_write> img: array<f32>;
    @group(1) @binding(0) var<uniform> shape: vec2<u32>;
    @group(1) @binding(1) var<uniform> scale: vec4<f32>;
    @compute @workgroup_size(8, 4)
    fn fill(@builtin(global_invocation_id) g: vec3<u32>) {
        if (g.x >= shape.x || g.y >= shape.y) { return; }
        img[g.y * shape.x + g.x] = f32(g.x) * scale.x + f32(g.y) * scale.w;
    }
    """
    w, h = 37, 19
    buf = ctx.buffer(4 * w * h)
    kernel = ctx.program(source).kernel("fill")
    assert [b.name for b in kernel.params] == ["img", "shape", "scale"]
    kernel[((w, h), (8, 4))](buf, np.array([w, h], np.uint32), np.array([1, 0, 0, 100], np.float32))
    out = np.empty((h, w), np.float32)
    buf.read(out)
    yy, xx = np.mgrid[0:h, 0:w]
    np.testing.assert_array_equal(out, xx + 100 * yy)


def test_workgroup_memory_barriers_and_atomics(ctx):
    source = """
    @group(0) @binding(0) var<storage, read> x: array<u32>;
    @group(0) @binding(1) var<storage, read_write> total: atomic<u32>;
    var<workgroup> part: array<u32, 64>;
    @compute @workgroup_size(64)
    fn sum(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {
        part[l] = select(0u, x[g.x], g.x < arrayLength(&x));
        workgroupBarrier();
        for (var s = 32u; s > 0u; s = s / 2u) {
            if (l < s) { part[l] = part[l] + part[l + s]; }
            workgroupBarrier();
        }
        if (l == 0u) { atomicAdd(&total, part[0]); }
    }
    """
    x = np.arange(1000, dtype=np.uint32) * 3
    bx, bt = ctx.buffer_from_host(x), ctx.buffer(4)
    bt.fill(np.uint32(0))
    ctx.program(source).kernel("sum")[(1000,)](bx, bt)
    total = np.empty(1, np.uint32)
    bt.read(total)
    assert int(total[0]) == int(x.sum())


def test_unaligned_reads_writes_copies_and_fills_match_numpy(ctx):
    rng = np.random.default_rng(5)
    host = rng.integers(0, 256, 23, dtype=np.uint8)
    buf = ctx.buffer_from_host(host)
    patch = np.array([7, 8, 9], np.uint8)
    buf.write(patch, 5)                          # neither offset nor size a multiple of 4
    host[5:8] = patch
    got = np.empty(23, np.uint8)
    buf.read(got)
    np.testing.assert_array_equal(got, host)
    part = np.empty(6, np.uint8)
    buf.read(part, 3)
    np.testing.assert_array_equal(part, host[3:9])
    dst = ctx.buffer_from_host(np.full(23, 200, np.uint8))
    dst.copy_from(buf, 10)                       # 8 bytes on the device, 2 through the host, the rest kept
    dst.read(got)
    np.testing.assert_array_equal(got, np.concatenate([host[:10], np.full(13, 200, np.uint8)]))
    words = ctx.buffer(24)
    words.fill(np.float32(1.5))
    f = np.empty(6, np.float32)
    words.read(f)
    np.testing.assert_array_equal(f, np.full(6, 1.5, np.float32))
    words.fill(np.float32(0))
    words.read(f)
    np.testing.assert_array_equal(f, np.zeros(6, np.float32))
    with pytest.raises(ValueError, match="outside the buffer of 23 bytes"):
        buf.read(np.empty(4, np.uint8), 20)


def test_storage_buffer_past_the_adapters_binding_limit_is_a_clear_error(ctx, dev):
    from pygpgpu_webgpu._limits import LimitExceeded
    limit = dev.limits.max_storage_buffer_binding_size
    with pytest.raises(LimitExceeded, match="maxStorageBufferBindingSize") as err:
        ctx.buffer(limit + 4)
    assert dev.selector in str(err.value) and "Split the data" in str(err.value)


def test_too_many_workgroups_and_a_wrong_local_size_are_refused(ctx, dev):
    from pygpgpu_webgpu._limits import LimitExceeded
    kernel = ctx.program(SAXPY).kernel("saxpy")
    b = ctx.buffer(16)
    too_many = (dev.limits.max_compute_workgroups_per_dimension + 1) * 64
    with pytest.raises(LimitExceeded, match="maxComputeWorkgroupsPerDimension"):
        kernel[(too_many,)](b, b, b, 1.0)
    with pytest.raises(ValueError, match=r"declares @workgroup_size\(64,\)"):
        kernel[(64, 32)](b, b, b, 1.0)


def test_a_wgsl_error_is_a_compile_error_with_the_compilers_message(ctx):
    with pytest.raises(CompileError) as err:
        ctx.program("@compute @workgroup_size(1) fn broken() { let x: f32 = undefined_name; }")
    assert "undefined_name" in str(err.value) and "webgpu:0" in str(err.value)


def test_build_options_are_refused_saying_where_constants_go(ctx):
    with pytest.raises(ValueError, match="const N"):
        ctx.program(SAXPY, ["-DN=4"])


def test_device_arrays_live_on_the_webgpu_device(dev):
    import pygpgpu.numpy as gnp
    x = np.linspace(0, 1, 77, dtype=np.float32)
    g = gnp.asarray(x, device="webgpu")
    assert g.device is dev
    np.testing.assert_array_equal(np.asarray(g), x)
    np.testing.assert_array_equal(np.asarray(g.copy()), x)


def test_no_adapter_is_backend_unavailable_naming_the_vulkan_packages(monkeypatch):
    pytest.importorskip("pygpgpu_webgpu")
    import pygpgpu_webgpu
    from pygpgpu_webgpu import _backend

    class NoAdapters:
        def enumerate_adapters_sync(self):
            return []

    class FakeWgpu:
        gpu = NoAdapters()

    monkeypatch.setattr(_backend, "wgpu", lambda: FakeWgpu())
    with pytest.raises(BackendUnavailable, match="mesa-vulkan-drivers libvulkan1"):
        pygpgpu_webgpu.WebGPUBackend().devices()


def test_every_object_meets_the_backend_protocols(dev, ctx):
    from pygpgpu_core import protocols
    buf = ctx.buffer(16)
    program = ctx.program(SAXPY)
    for obj, proto in ((registry.get_backend("webgpu"), protocols.Backend), (dev, protocols.Device),
                       (ctx, protocols.Context), (ctx.queue, protocols.Queue), (buf, protocols.Buffer),
                       (program, protocols.Program), (program.kernel("saxpy"), protocols.Kernel)):
        assert isinstance(obj, proto), (obj, proto.__name__)
    assert protocols.option(dev, "is_cpu") is (dev.adapter_type == "CPU")


def test_a_buffer_wgpu_released_behind_our_back_is_closed_and_never_pooled_again(dev):
    """When a device array dies in a garbage cycle the collector may run wgpu's own finalizer
    (which releases the native buffer) before the array's pooled block comes back: such a block
    must not be handed out again (the shared suite then failed writing to it, or wgpu-native
    aborted creating a bind group with it)."""
    import pygpgpu.numpy as gnp
    from pygpgpu_core import mempool

    pool = mempool.get_pool(dev.context())
    block = pool.allocate(4096)
    assert not block.buffer.closed
    block.buffer.gpu._release()           # what wgpu's __del__ does to the native buffer
    assert block.buffer.closed
    pool.release(block)
    again = pool.allocate(4096)
    assert again.buffer is not block.buffer and not again.buffer.closed
    pool.release(again)
    a = np.arange(1024, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(gnp.asarray(a, device=dev.selector) * np.float32(2)), a * 2)
