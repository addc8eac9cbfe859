"""The device memory pool: reuse, bounds, release on context close, and no growth over 100k calls."""
from __future__ import annotations

import gc
import os
import time

import numpy as np
import pytest

import pygpgpu_core.gnp as gnp
from pygpgpu_core import mempool
from pygpgpu_core.errors import ClosedError
from conftest import skip_no_device


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_size_classes():
    assert mempool.size_class(0) == 512 and mempool.size_class(1) == 512
    assert mempool.size_class(512) == 512 and mempool.size_class(513) == 1024
    assert mempool.size_class(1 << 20) == 1 << 20
    for n in [1, 700, 5000, (1 << 20) + 1, 3_000_000, 64 << 20, (64 << 20) + 12345]:
        c = mempool.size_class(n)
        assert c >= n and c % 512 == 0
        if n >= 1 << 20:
            assert c <= n * 1.125  # at most 12.5 % waste for large blocks
    assert mempool.size_class(mempool.size_class(5000)) == mempool.size_class(5000)


def test_freed_memory_is_reused(device):
    pool = gnp.get_memory_pool(device)
    a = gnp.empty(1000, np.float32, device=device)
    buf = a.buffer
    hits = pool.hits
    del a
    b = gnp.empty(1000, np.float32, device=device)  # same size class: the same buffer comes back
    assert b.buffer is buf and pool.hits == hits + 1
    del b
    c = gnp.empty(900, np.float32, device=device)   # 3600 bytes rounds to the same 4096-byte class
    assert c.buffer is buf
    views = [c.reshape(30, 30), c.view(np.int32)]
    del c
    gc.collect()
    d = gnp.empty(1000, np.float32, device=device)
    assert d.buffer is not buf  # views keep the memory in use
    del views
    e = gnp.empty(1000, np.float32, device=device)
    assert e.buffer is buf


def test_an_array_dying_inside_the_pools_critical_section_does_not_hang(device):
    """The garbage collector may finalize an array (which gives its block back) at an allocation
    inside the pool's own critical section, on the same thread."""
    import threading

    pool = gnp.get_memory_pool(device)
    a = gnp.empty(1000, np.float32, device=device)
    buf = a.buffer
    done = threading.Event()

    def die_inside():
        nonlocal a
        with pool._lock:          # as if allocate() or release() were running here
            del a                 # its finalizer releases the block
        done.set()

    threading.Thread(target=die_inside, daemon=True).start()   # daemon: a hang must not keep pytest alive
    assert done.wait(30), "releasing a block inside the pool's critical section deadlocked"
    assert gnp.empty(1000, np.float32, device=device).buffer is buf    # the block came back to the pool


def test_used_and_cached_bytes(device):
    pool = gnp.get_memory_pool(device)
    pool.free_all_blocks()
    used = pool.used_bytes()
    arrays = [gnp.empty(n, np.uint8, device=device) for n in (100, 5000, 70000)]
    sizes = sum(mempool.size_class(n) for n in (100, 5000, 70000))
    assert pool.used_bytes() == used + sizes
    del arrays
    assert pool.used_bytes() == used and pool.free_bytes() == sizes
    assert pool.total_bytes() == used + sizes
    assert pool.free_all_blocks() == sizes
    assert pool.free_bytes() == 0 and pool.n_free_blocks() == 0
    s = pool.stats()
    assert set(s) >= {"cached_bytes", "in_use_bytes", "free_blocks", "hits", "misses", "limit_bytes"}


def test_cached_bytes_are_bounded(device):
    pool = gnp.get_memory_pool(device)
    old = pool.limit_bytes
    try:
        pool.set_limit(16 * 1024)
        arrays = [gnp.empty(512 * (i + 1), np.uint8, device=device) for i in range(20)]
        del arrays
        assert pool.free_bytes() <= 16 * 1024
        pool.set_limit(0)  # caching off: every freed block goes straight back to the driver
        assert pool.free_bytes() == 0
        a = gnp.zeros(10, device=device)
        del a
        assert pool.free_bytes() == 0
    finally:
        pool.set_limit(old)


def test_pool_released_when_context_closes():
    from pygpgpu_core import registry
    from pygpgpu_core.errors import GPGPUError

    try:
        device = registry.backend_devices("opencl")[0]  # private contexts are an OpenCL feature
    except (GPGPUError, IndexError) as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc!r}")
    from pygpgpu_opencl import Context

    ctx = Context(device)
    a = gnp.ones(100, np.float32, device=ctx)
    b = gnp.zeros(100, np.float32, device=ctx)
    pool = gnp.get_memory_pool(ctx)
    del b
    assert pool.free_bytes() > 0
    cached = [blk for bin_ in pool._bins.values() for blk in bin_]
    assert cached
    ctx.close()                        # Context.close() empties and forgets the pool first
    assert pool.closed and pool.free_bytes() == 0
    assert all(blk.buffer is None for blk in cached)  # freed by the pool, not by the context
    assert not any(p is pool for p in mempool.pools())
    with pytest.raises(ClosedError):
        gnp.empty(10, device=ctx)
    with pytest.raises(ClosedError):
        a.get()                        # its buffer went with the context: a clear error
    del a                              # an array outliving its context dies quietly
    gc.collect()
    ctx.close()                        # a second close does nothing

    ctx2 = Context(device)             # a fresh context gets a fresh pool that works
    c = gnp.arange(10, dtype=np.float32, device=ctx2)
    np.testing.assert_array_equal(c.get(), np.arange(10, dtype=np.float32))
    assert gnp.get_memory_pool(ctx2) is not pool
    ctx2.close()
    with pytest.raises(ClosedError):
        gnp.get_memory_pool(ctx2)


INCREMENT = {
    "opencl": "__kernel void inc(__global float* x, int n) { int i = get_global_id(0); if (i < n) x[i] += 1.0f; }",
    "cuda": 'extern "C" __global__ void inc(float* x, int n) '
            "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }",
}
INCREMENT["hip"] = "#include <hip/hip_runtime.h>\n" + INCREMENT["cuda"]


def test_no_growth_over_100k_calls(device):
    """100k allocate/free cycles and 20k kernel launches on pooled arrays: the pool serves every
    request from its cache, and neither the pool nor the process grows."""
    kernel = device.context().program(INCREMENT[device.backend.dialect]).kernel("inc")
    pool = gnp.get_memory_pool(device)
    sizes = (256, 1000, 4096, 100_000)

    def cycle(count):
        for i in range(count):
            a = gnp.empty(sizes[i & 3], np.float32, device=device)
            b = gnp.zeros(sizes[(i + 1) & 3], np.float32, device=device) if i % 16 == 0 else None
            del a, b

    def launches(x, count):
        n = np.int32(x.size)
        for _ in range(count):
            kernel.launch((x.size,), None, [x.buffer, n])
        x.synchronize()

    x = gnp.zeros(4096, np.float32, device=device)
    cycle(2000)                   # warm-up: the pool and the allocator reach their steady state
    launches(x, 500)
    gc.collect()
    stats0, rss0, misses0 = pool.stats(), _rss_bytes(), pool.misses
    start = time.perf_counter()
    cycle(100_000)
    launches(x, 20_000)
    elapsed = time.perf_counter() - start
    gc.collect()
    stats1, rss1 = pool.stats(), _rss_bytes()

    assert pool.misses == misses0, "every allocation after warm-up must come from the cache"
    assert stats1["in_use_bytes"] == stats0["in_use_bytes"]
    assert stats1["cached_bytes"] == stats0["cached_bytes"]
    assert stats1["free_blocks"] == stats0["free_blocks"]
    assert rss1 - rss0 < 8 << 20, f"process grew by {(rss1 - rss0) >> 20} MiB over 100k calls"
    np.testing.assert_array_equal(x.get(), np.full(4096, 20_500, np.float32))
    assert elapsed < 30, f"100k allocations + 20k launches took {elapsed:.1f} s"


def test_no_growth_over_translated_kernel_calls(backend):
    """10k @kernel calls on gnp arrays plus numpy scalars: nothing accumulates per call."""
    from pygpgpu_translate import kernel

    @kernel
    def bump(x, step):
        for i in range(x.shape[0]):
            x[i] = x[i] + step

    x = gnp.zeros(1000, np.float32, device=backend)
    k = bump[backend]
    for _ in range(200):          # warm-up: compile, caches, allocator steady state
        k(x, np.float32(1))
    x.synchronize()
    pool = gnp.get_memory_pool(backend)
    gc.collect()
    stats0, rss0 = pool.stats(), _rss_bytes()
    gnp.reset_transfer_stats()
    for _ in range(10_000):
        k(x, np.float32(1))
    x.synchronize()
    gc.collect()
    stats1, rss1 = pool.stats(), _rss_bytes()
    assert gnp.transfer_stats()["h2d"] == 0 and gnp.transfer_stats()["d2h"] == 0
    assert (stats1["in_use_bytes"], stats1["cached_bytes"]) == (stats0["in_use_bytes"], stats0["cached_bytes"])
    assert rss1 - rss0 < 8 << 20, f"process grew by {(rss1 - rss0) >> 20} MiB over 10k kernel calls"
    np.testing.assert_array_equal(x.get(), np.full(1000, 10_200, np.float32))
