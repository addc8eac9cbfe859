"""The warm path of gnp reductions (array_ops/_reduction.py: a call like an earlier one, on a plain
array, skips the checks and the layout work and only allocates and launches): repeated calls
with new data stay equal to numpy for every reduction, dtype, axis and keepdims; calls that
must not take it (views, other axes, out=, dtype=, initial=) still give numpy's answers."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu_translate.array_ops import _reduction

OPS = ["sum", "prod", "min", "max", "mean", "argmin", "argmax", "any", "all"]
DTYPES = [np.bool_, np.int32, np.int64, np.uint8, np.float32, np.float64]
CASES = [((1000,), None, False), ((1000,), None, True), ((5,), 0, False), ((64, 300), 1, False),
         ((64, 300), -1, True), ((3, 4096), None, False), ((2, 9000), 1, False)]


def sample(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -3, 4, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def check(got, want, dtype):
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if np.dtype(dtype).kind == "f" and want.dtype.kind == "f":
        tol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
        np.testing.assert_allclose(got.get(), want, rtol=tol, atol=tol * 100)
    else:
        np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", OPS)
def test_repeated_calls_stay_equal_to_numpy(device, op, dtype):
    for shape, axis, keepdims in CASES:
        if op.startswith("arg") and keepdims:
            continue
        for seed in range(3):                 # the first call takes the full path, the others the warm one
            h = sample(shape, dtype, seed)
            g = gnp.asarray(h, device=device)
            kwargs = {} if op.startswith("arg") else {"keepdims": keepdims}
            got = getattr(g, op)(axis=axis, **kwargs)
            with np.errstate(all="ignore"):
                want = getattr(h, op)(axis=axis, **kwargs)
            check(got, want, dtype)
            if seed == 0 and (axis is None or shape[-1] >= 128):       # a rows layout: remembered
                key = (op, np.dtype(dtype), shape, axis, keepdims, id(g.device))
                assert any(k[:6] == key for k in _reduction._warm), (op, shape, axis, keepdims)


def test_calls_that_must_not_take_the_warm_path(device):
    h = sample((40, 1000), np.float32, 1)
    g = gnp.asarray(h, device=device)
    row = gnp.asarray(h[3], device=device)
    check(row.sum(), h[3].sum(), np.float32)                     # remembers (1000,) float32 sum
    # a view of the same shape and dtype (starts 3000 elements into its buffer)
    check(g[3].sum(), h[3].sum(), np.float32)
    check(g[:, 7].sum(), h[:, 7].sum(), np.float32)              # strided view, 40 elements
    check(g[5, ::-1].sum(), h[5, ::-1].sum(), np.float32)
    out = gnp.asarray(np.zeros((), np.float32), device=device)
    assert row.sum(out=out) is out
    check(out, h[3].sum(), np.float32)
    check(row.sum(dtype=np.float64), h[3].sum(dtype=np.float64), np.float64)
    check(row.sum(initial=5.0), h[3].sum(initial=5.0), np.float32)
    check(row.max(where=True), h[3].max(), np.float32)
    check(row.sum(axis=(0,)), h[3].sum(axis=(0,)), np.float32)
    with pytest.raises(np.exceptions.AxisError):
        row.sum(axis=1)
    with pytest.raises(np.exceptions.AxisError):
        row.sum(axis=1)                                          # still raises the second time


def test_warm_results_are_new_arrays(device):
    """Each call gets its own result array (a warm call must not hand out a shared buffer)."""
    g = gnp.asarray(np.arange(1000, dtype=np.int64), device=device)
    first = g.sum(axis=0)
    second = g.sum(axis=0)
    assert first.buffer is not second.buffer
    g[...] = 1
    third = g.sum(axis=0)
    assert (first.get(), second.get(), third.get()) == (499500, 499500, 1000)


def test_a_swapped_layout_is_not_served_from_the_warm_path(device, monkeypatch):
    """Tests (and sweep_reduction.py) swap the rows kernel's layout; a remembered call of the other
    layout must not run instead (the GPU variant would then go untested on a CPU device)."""
    h = sample(50_000, np.float32, 9)
    g = gnp.asarray(h, device=device)
    check(g.sum(), h.sum(), np.float32)
    chunked = []
    real = _reduction._RowsPlan.__init__

    def spy(self, red, outer, r, dev, is_chunked, *rest):
        chunked.append(is_chunked)
        real(self, red, outer, r, dev, is_chunked, *rest)
    monkeypatch.setattr(_reduction, "_RowsPlan", type("Spy", (_reduction._RowsPlan,), {"__init__": spy}))
    _reduction._rows_plans.clear()
    for layout in (False, True):
        monkeypatch.setattr(_reduction, "cpu_layout", lambda d, layout=layout: layout)
        check(g.sum(), h.sum(), np.float32)
    assert chunked == [False, True]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32, np.int64])
def test_argmin_argmax_with_vector_loads(device, dtype, monkeypatch):
    """The GPU rows kernel of argmin/argmax reads 128-bit vectors with one (value, index)
    accumulator per lane: ties across lanes and segments give the first index, the first NaN
    wins, a row tail of 1..3 elements counts (run with the GPU layout on any device)."""
    monkeypatch.setattr(_reduction, "cpu_layout", lambda d: False)
    rng = np.random.default_rng(7)
    for n in (4096, 4099, 100_002, 300_001):
        h = rng.integers(0, 50, n).astype(dtype)          # many ties of the extreme values
        h[n - 1] = 60                                       # the tail holds the maximum ...
        h[n - 2] = 60                                       # ... twice: the first one counts
        g = gnp.asarray(h, device=device)
        assert int(g.argmax().get()) == int(h.argmax()) == n - 2
        assert int(g.argmin().get()) == int(h.argmin())
        if np.dtype(dtype).kind == "f":
            h2 = h.copy()
            h2[[n // 3, n // 2]] = np.nan
            g2 = gnp.asarray(h2, device=device)
            assert int(g2.argmax().get()) == int(g2.argmin().get()) == n // 3
    m = rng.integers(0, 9, (5, 8192)).astype(dtype)
    np.testing.assert_array_equal(gnp.asarray(m, device=device).argmax(axis=1).get(), m.argmax(axis=1))
    np.testing.assert_array_equal(gnp.asarray(m, device=device).argmin(axis=1).get(), m.argmin(axis=1))


def test_single_pass_rows_repeat_and_reset_their_counters(device, monkeypatch):
    """The GPU rows kernel finishes a long row in its last group (one launch; run with the GPU
    layout on any device, forced on where it would not be chosen: OpenCL keeps two passes): call
    after call, for several ops sharing the done counters, the results match numpy and every
    counter is back at 0."""
    monkeypatch.setattr(_reduction, "cpu_layout", lambda d: False)
    monkeypatch.setattr(_reduction, "_GPU_SINGLE_PASS", True)
    monkeypatch.setattr(_reduction, "_target_groups", lambda d: 24)     # 24 segments for one row
    rng = np.random.default_rng(11)
    one = rng.standard_normal(200_003).astype(np.float32)
    rows = rng.integers(-50, 50, (5, 60_000)).astype(np.int64)
    g1, g5 = gnp.asarray(one, device=device), gnp.asarray(rows, device=device)
    ran = []
    real = _reduction._launch_rows
    monkeypatch.setattr(_reduction, "_launch_rows", lambda plan, *a: ran.append(plan.single) or real(plan, *a))
    for _ in range(3):
        np.testing.assert_allclose(g1.sum().get(), one.astype(np.float64).sum(), rtol=1e-4)
        assert int(g1.argmax().get()) == int(one.argmax())
        np.testing.assert_allclose(g1.mean().get(), one.astype(np.float64).mean(), rtol=1e-4, atol=1e-6)
        np.testing.assert_array_equal(g5.sum(axis=1).get(), rows.sum(axis=1))
        np.testing.assert_array_equal(g5.argmin(axis=1).get(), rows.argmin(axis=1))
        np.testing.assert_array_equal(g5.max(axis=1).get(), rows.max(axis=1))
    assert ran and all(ran), ran
    counters = _reduction._counters[g1.buffer.context].get()
    assert not counters.any(), counters[counters != 0]


def test_single_pass_is_chosen_on_cuda_and_hip_only(device, monkeypatch):
    """One launch where the memory model publishes the partials through a fence and an atomic
    (CUDA, HIP); two on OpenCL, whose mem_fence does not order memory between groups."""
    monkeypatch.setattr(_reduction, "cpu_layout", lambda d: False)
    monkeypatch.setattr(_reduction, "_target_groups", lambda d: 24)
    monkeypatch.setattr(_reduction, "_GPU_SINGLE_PASS", None)
    _reduction._rows_plans.clear()
    h = np.arange(100_000, dtype=np.float32)
    g = gnp.asarray(h, device=device)
    np.testing.assert_allclose(g.sum().get(), h.astype(np.float64).sum(), rtol=1e-5)
    plan = _reduction._rows_plan(_reduction._reduction_for("sum", np.dtype(np.float32), None), g, 1, h.size,
                                 g.device)
    assert plan.segs > 1
    assert plan.single == (device.backend.dialect in ("cuda", "hip")), (device.backend.dialect, plan.single)
