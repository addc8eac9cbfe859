"""Launches whose numpy arguments are all small travel as one batch: one upload, one download, one
wait (gnp._staging.SmallBatch), with the read/write analysis deciding what goes each way."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gnp, gpu, registry
from pygpgpu_core import mempool
from pygpgpu_core.gnp import _staging
from pygpgpu_translate import kernel
from conftest import first_device, host_unified_opencl_device


@kernel
def mixed(x, w, out, evens, acc):
    # x: read (float64), w: read (int16), out: written everywhere (int32),
    # evens: half written (the odd elements must survive), acc: read and written (float32)
    for i in range(out.shape[0]):
        out[i] = int(x[i] * 2.0) + w[i]
        acc[i] = acc[i] * 0.5 + float(w[i])
        if i % 2 == 0:
            evens[i] = x[i] + 0.25


def _mixed_inputs(n, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-50, 50, n)
    w = rng.integers(-100, 100, n).astype(np.int16)
    out = np.full(n, -7, np.int32)
    evens = np.full(n, 3.5, np.float64)
    acc = rng.uniform(0, 1, n).astype(np.float32)
    return x, w, out, evens, acc


def _mixed_expected(x, w, out, evens, acc):
    out, evens, acc = out.copy(), evens.copy(), acc.copy()
    out[:] = (x * 2.0).astype(np.int32) + w
    acc[:] = acc * np.float32(0.5) + w.astype(np.float32)
    evens[0::2] = x[0::2] + 0.25
    return out, evens, acc


def _check_mixed(k, n, seed=0):
    x, w, out, evens, acc = _mixed_inputs(n, seed)
    want = _mixed_expected(x, w, out, evens, acc)
    k(x, w, out, evens, acc)
    np.testing.assert_array_equal(out, want[0])
    np.testing.assert_array_equal(evens, want[1])
    np.testing.assert_allclose(acc, want[2], rtol=1e-6)


@pytest.mark.parametrize("n", [1, 3, 100, 1000])
def test_mixed_small_arguments_are_correct(backend, n):
    _check_mixed(mixed[backend], n, seed=n)


def test_small_call_makes_one_upload_and_one_download(backend):
    k = mixed[backend]
    _check_mixed(k, 64)                                   # compiles
    x, w, out, evens, acc = _mixed_inputs(64, 1)
    gnp.reset_transfer_stats()
    k(x, w, out, evens, acc)
    s = gnp.transfer_stats()
    assert (s["h2d"], s["d2h"]) == (1, 1)
    # up: x, w, evens and acc (out is fully overwritten); down: out, evens, acc
    assert s["h2d_bytes"] >= x.nbytes + w.nbytes + evens.nbytes + acc.nbytes
    assert s["d2h_bytes"] >= out.nbytes + evens.nbytes + acc.nbytes


@kernel
def copy_plus_one(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] + 1.0


@kernel
def total(x, result):
    for i in range(x.shape[0]):
        result[0] += 0.0 * x[i]


@kernel
def fill_seven(out):
    for i in range(out.shape[0]):
        out[i] = 7.0


def test_each_direction_only_when_the_analysis_needs_it(backend):
    x = np.arange(50, dtype=np.float32)
    out = np.zeros(50, np.float32)
    fill_seven[backend](out)
    gnp.reset_transfer_stats()
    out[:] = 0
    fill_seven[backend](out)                              # write-only, fully overwritten
    assert gnp.transfer_stats()["h2d"] == 0 and gnp.transfer_stats()["d2h"] == 1
    np.testing.assert_array_equal(out, np.full(50, 7.0, np.float32))
    copy_plus_one[backend](x, out)
    gnp.reset_transfer_stats()
    copy_plus_one[backend](x, out)                        # x up, out down
    assert (gnp.transfer_stats()["h2d"], gnp.transfer_stats()["d2h"]) == (1, 1)
    np.testing.assert_array_equal(out, x + 1)


def test_non_contiguous_and_misaligned_inputs(backend):
    raw = np.zeros(4 * 400 + 8, np.uint8)
    for offset in (0, 4, 8):
        x = raw[offset:offset + 4 * 400].view(np.float32)  # 4 or 8 bytes off any wider boundary
        x[:] = np.arange(400)
        out = np.zeros(200, np.float32)
        copy_plus_one[backend](x[::2], out)                # strided and misaligned: staged
        np.testing.assert_array_equal(out, np.arange(0, 400, 2, dtype=np.float32) + 1)
        out64 = raw[offset:offset + 8 * 100].view(np.float64) if offset % 8 == 0 else np.zeros(100)
        src = np.linspace(0, 1, 100)
        copy_plus_one[backend](src, out64)
        np.testing.assert_array_equal(out64, src + 1)


def test_two_d_and_vector_shaped_arguments(backend):
    @kernel
    def rows(m, out):
        for i in range(m.shape[0]):
            for j in range(m.shape[1]):
                out[i, j] = m[i, j] * 3.0

    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros((3, 4), np.float32)
    rows[backend](m, out)
    np.testing.assert_array_equal(out, m * 3)
    m2 = np.arange(10, dtype=np.float32).reshape(2, 5).T   # another shape, and a transposed input
    out2 = np.zeros((5, 2), np.float32)
    rows[backend](m2, out2)
    np.testing.assert_array_equal(out2, m2 * 3)


def test_empty_and_one_element_arrays(backend):
    out = np.zeros(0, np.float32)
    copy_plus_one[backend](np.zeros(0, np.float32), out)   # nothing to do: returns at once
    one = np.zeros(1, np.float32)
    copy_plus_one[backend](np.full(1, 41.0, np.float32), one)
    assert one.tolist() == [42.0]


def test_a_large_argument_takes_the_per_array_path(backend):
    n = _staging.SMALL_ARRAY_MAX // 4 + 16                 # just over the limit
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    copy_plus_one[backend](x, out)
    np.testing.assert_array_equal(out, x + 1)
    small = np.zeros(10, np.float32)
    _check_mixed(mixed[backend], 10)
    copy_plus_one[backend](x[:10], small)
    np.testing.assert_array_equal(small, x[:10] + 1)


def test_device_arrays_mix_with_small_numpy_arrays(backend):
    x = gnp.asarray(np.arange(30, dtype=np.float32), device=backend)
    out = np.zeros(30, np.float32)
    gnp.reset_transfer_stats()
    copy_plus_one[backend](x, out)
    np.testing.assert_array_equal(out, np.arange(30, dtype=np.float32) + 1)
    s = gnp.transfer_stats()
    assert (s["h2d"], s["d2h"]) == (0, 1)                  # only the numpy output comes back


def test_many_layouts_reuse_memory(backend, device):
    k = mixed[backend]
    sizes = [1, 7, 64, 300, 2, 900]                        # more layouts than a plan keeps
    for n in sizes:
        _check_mixed(k, n, seed=n)
    pool = mempool.get_pool(device.context())
    before = pool.in_use_bytes
    for rep in range(5):
        for n in sizes:
            _check_mixed(k, n, seed=rep * 10 + n)
    assert pool.in_use_bytes <= before                     # batches are reused or given back


def test_tiny_batches_live_in_host_mapped_memory_where_offered(backend, device):
    """CUDA: batches up to MAPPED_BATCH_MAX are host memory the kernel uses in place (no copy
    commands), larger ones a pooled device block and a staging area; results agree either way."""
    ctx = device.context()
    tiny = _staging.SmallBatch(ctx, ((4, _staging.UPLOAD), (4, _staging.DOWNLOAD)))
    big = _staging.SmallBatch(ctx, ((_staging.MAPPED_BATCH_MAX, _staging.UPLOAD), (4, _staging.DOWNLOAD)))
    try:
        if hasattr(ctx, "host_mapped"):
            assert tiny.direct and tiny.block is None
            assert big.block is not None and not big.direct
        for n in (1, 100, 3000):                           # 1 and 100 fit a mapped batch, 3000 does not
            _check_mixed(mixed[backend], n, seed=n)
    finally:
        tiny.close()
        big.close()
        tiny.close()                                       # idempotent


@kernel
def stream_add(x, y, out):
    for i in range(out.shape[0]):
        out[i] = x[i] + y[i] * 2.0


@kernel
def stream_mixed(x, w, out, hist):
    for i in range(out.shape[0]):
        s = 0.0
        for k in range(3):
            s += w[k]                       # w read three times per work item: not streamed
        out[i] = x[i] * s + x[(i + 1) % x.shape[0]]   # x also read at a neighbour's index
        gpu.atomic_add(hist, 0, 1)          # an atomic: stays in device memory


@kernel
def stream_grid(img, out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = img[y, x] * 2.0 + img[y, 0]    # img also read at column 0: not streamed


@kernel
def stream_grid_own(img, out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = img[y, x] * 2.0


def _plan(k, backend):
    """``k``'s one plan on ``backend``'s device (these module-level kernels also run on the other test backends)."""
    dev = registry.get_device(backend)
    (plan,) = [p for p in k._plans.values() if p.device is dev]
    return plan


def _batch(k, backend, nbytes):
    """The cached small batch of ``k``'s plan on ``backend`` whose first argument has ``nbytes``."""
    found = [b for b in _plan(k, backend).small_cache._free.values() if b.key[0][0][0] == nbytes]
    assert len(found) == 1
    return found[0]


def test_streamed_arrays_are_found_by_the_translator(backend):
    n = 64
    x, y, out = np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    stream_add[backend](x, y, out)
    assert set(_plan(stream_add, backend).t.streamed) == {"x", "y", "out"}
    np.testing.assert_array_equal(out, 3.0)
    w, hist = np.ones(3, np.float32), np.zeros(1, np.int32)
    stream_mixed[backend](x, w, out, hist)
    assert _plan(stream_mixed, backend).t.streamed == ["out"]
    np.testing.assert_array_equal(out, 4.0)
    assert hist[0] == n
    img = np.arange(12, dtype=np.float32).reshape(3, 4)
    res = np.zeros_like(img)
    stream_grid[backend](img, res)
    np.testing.assert_array_equal(res, img * 2 + img[:, :1])
    assert _plan(stream_grid, backend).t.streamed == ["out"]
    stream_grid_own[backend](img, res)
    np.testing.assert_array_equal(res, img * 2)
    assert _plan(stream_grid_own, backend).t.streamed == ["img", "out"]


def test_streamed_launches_keep_larger_batches_host_mapped(backend, device):
    """CUDA: a kernel touching each element once keeps batches up to STREAMED_MAPPED_MAX in
    host-mapped memory; one that rereads its arrays only up to MAPPED_BATCH_MAX."""
    n = 4096                                               # 3 x 16 KiB: over MAPPED_BATCH_MAX
    x, y, out = np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    stream_add[backend](x, y, out)
    np.testing.assert_array_equal(out, x + 2)
    w, hist = np.ones(3, np.float32), np.zeros(1, np.int32)
    stream_mixed[backend](x, w, out, hist)
    np.testing.assert_array_equal(out, x * 3 + np.roll(x, -1))
    streamed, mixed = _batch(stream_add, backend, x.nbytes), _batch(stream_mixed, backend, x.nbytes)
    assert streamed.key[1] == _staging.STREAMED_MAPPED_MAX and mixed.key[1] is None
    if hasattr(device.context(), "host_mapped"):
        assert streamed.block is None and streamed.direct                # host-mapped
        assert mixed.block is not None                                   # copied to the device


def test_staging_area_path_on_a_host_unified_device(monkeypatch):
    """The path CUDA takes (staging area, queued copies, one wait), run on PoCL by turning off
    the in-place fill of host-visible memory."""
    device = host_unified_opencl_device()
    monkeypatch.setattr(_staging, "SMALL_BATCH_DIRECT", False)

    @kernel
    def mixed_staged(x, w, out, evens, acc):
        for i in range(out.shape[0]):
            out[i] = int(x[i] * 2.0) + w[i]
            acc[i] = acc[i] * 0.5 + float(w[i])
            if i % 2 == 0:
                evens[i] = x[i] + 0.25

    k = mixed_staged[device.selector]
    for n in (1, 5, 200):
        _check_mixed(k, n, seed=n)
    x, w, out, evens, acc = _mixed_inputs(33)
    gnp.reset_transfer_stats()
    k(x, w, out, evens, acc)
    s = gnp.transfer_stats()
    assert (s["h2d"], s["d2h"]) == (1, 1)
    # the whole staged ranges cross, gaps to the 256-byte slot boundaries included
    def slot(a):
        return -(-a.nbytes // 256) * 256

    assert s["h2d_bytes"] == slot(x) + slot(w) + slot(evens) + slot(acc)
    assert s["d2h_bytes"] == slot(evens) + slot(acc) + slot(out)
    want = _mixed_expected(*_mixed_inputs(33))
    np.testing.assert_array_equal(out, want[0])


def test_opencl_sub_buffer_views_and_queued_copies():
    device = first_device("opencl")
    ctx = device.context()
    align = device.mem_base_addr_align
    buf = ctx.buffer(4 * align)
    view = buf.view(align, 2 * align)
    assert view.nbytes == 2 * align
    data = np.arange(2 * align // 4, dtype=np.float32)
    view.write_async(data)
    back = np.zeros(4 * align // 4, np.float32)
    buf.read_async(back)
    ctx.synchronize()
    np.testing.assert_array_equal(back[align // 4: 3 * align // 4], data)
    if align > 1:
        with pytest.raises(ValueError, match="multiple of"):
            buf.view(align // 2, 4)
    with pytest.raises(ValueError, match="non-empty range"):
        buf.view(0, 5 * align)
    view.close()
    view.close()                                          # idempotent
    buf.close()
def test_read_only_numpy_arguments_into_device_outputs(backend):
    """Nothing comes back, so the call does not wait; reusing the batch right away must still
    not overwrite inputs a queued launch has yet to read."""
    outs = [gnp.zeros(40, np.float32, device=backend) for _ in range(6)]
    srcs = [np.full(40, float(k), np.float32) for k in range(6)]
    copy_plus_one[backend](srcs[0], outs[0])
    gnp.reset_transfer_stats()
    for src, out in zip(srcs, outs):
        copy_plus_one[backend](src, out)
    assert gnp.transfer_stats()["h2d"] == 6 and gnp.transfer_stats()["d2h"] == 0
    for k, out in enumerate(outs):
        np.testing.assert_array_equal(out.get(), np.full(40, k + 1.0, np.float32))
