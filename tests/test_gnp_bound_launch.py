"""Bound launches (array_ops/_codegen.BoundLaunch): a warm elementwise call or reduction of a shape
seen before launches through the plan's packer and the backend's launcher directly, skipping the
launch path's per-call work (the fixed cost of a small gnp call, issue 33 item 2). Checked: such
calls stay equal to numpy with new data, new scalars and several shapes; they really skip the
launch path; and what the skipped path protected (read-only outputs, closed contexts, numpy's
refusal of a scalar the dtype cannot hold) still holds."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu_translate._kernel import KernelFunction
from pygpgpu_translate.array_ops import _codegen, _elementwise, _reduction


def _no_launch_path(monkeypatch):
    def refuse(self, *args, **kwargs):
        raise AssertionError(f"the launch path ran for {self.__name__}")
    monkeypatch.setattr(KernelFunction, "_launch", refuse)


@pytest.mark.parametrize("shape", [(1000,), (7, 33)])
def test_warm_elementwise_calls_skip_the_launch_path(device, monkeypatch, shape):
    rng = np.random.default_rng(0)
    hs = [rng.random(shape, dtype=np.float32) for _ in range(6)]
    gs = [gnp.asarray(h, device=device) for h in hs]
    for _ in range(2):                       # the full path, then the bind
        gs[0] + gs[1]
        gs[0] * 2.0
        gnp.add(gs[0], gs[1], out=gnp.empty(shape, np.float32, device=device))
    f32 = np.dtype(np.float32)
    keys = [("add", (f32, f32), None), ("multiply", (f32, float), None), ("add", (f32, f32), f32)]
    entries = [e for k, e in _elementwise._fast.items() if k[:3] in keys and e[5] is device.context()]
    assert len(entries) == 3 and all(isinstance(e[3].get(shape), _codegen.BoundLaunch) for e in entries)
    _no_launch_path(monkeypatch)
    for k in range(4):                       # new operands, new scalars: the bound launches
        np.testing.assert_array_equal((gs[k] + gs[k + 1]).get(), hs[k] + hs[k + 1])
        np.testing.assert_array_equal((gs[k] * float(k + 3)).get(), hs[k] * np.float32(k + 3))
        out = gnp.empty(shape, np.float32, device=device)
        assert gnp.add(gs[k], gs[k + 2], out=out) is out
        np.testing.assert_array_equal(out.get(), hs[k] + hs[k + 2])


def test_int_scalars_and_other_shapes_stay_equal_to_numpy(device):
    rng = np.random.default_rng(1)
    for n in (1000, 1000, 1000, 17, 17, 17, 4096):
        h = rng.integers(-50, 50, n).astype(np.int32)
        g = gnp.asarray(h, device=device)
        for s in (5, -7, 2**31 - 1):
            np.testing.assert_array_equal((g + s).get(), h + np.int32(s))
        with pytest.raises(OverflowError):   # numpy's refusal, every call (the bound launch skips no check)
            g + 2**40


def test_warm_reductions_skip_the_launch_path(device, monkeypatch):
    rng = np.random.default_rng(2)
    hs = [rng.standard_normal(1000).astype(np.float32) for _ in range(4)]
    gs = [gnp.asarray(h, device=device) for h in hs]
    for _ in range(3):
        gs[0].sum()
        gs[0].max()
    _no_launch_path(monkeypatch)
    for h, g in zip(hs, gs):
        np.testing.assert_allclose(float(g.sum().get()), float(h.sum()), rtol=1e-5)
        assert float(g.max().get()) == float(h.max())
    assert any(w.bounds for w in _reduction._warm.values() if w.device is device)


def test_a_read_only_output_is_refused_after_warm_calls(device):
    a = gnp.arange(100, dtype=np.float32, device=device)
    out = gnp.zeros(100, np.float32, device=device)
    for _ in range(3):
        gnp.add(a, a, out=out)
    ro = gnp.zeros(100, np.float32, device=device)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gnp.add(a, a, out=ro)
    np.testing.assert_array_equal(ro.get(), np.zeros(100, np.float32))


def test_a_closed_context_after_warm_calls_says_so(device):
    ctx = device.context()
    a = gnp.arange(64, dtype=np.float32, device=device)
    for _ in range(3):
        a + a
        a.sum()
    ctx.close()
    try:
        with pytest.raises(Exception, match="closed"):
            a + a
        b = gnp.arange(64, dtype=np.float32, device=device)      # on the fresh shared context
        for _ in range(3):
            np.testing.assert_array_equal((b + b).get(), 2 * np.arange(64, dtype=np.float32))
            assert float(b.sum().get()) == float(np.arange(64).sum())
    finally:
        device.context()


def test_kernel_file_programs_are_rebuilt_after_the_shared_context_closes(device):
    """gnp's float16 conversions run from a kernel file whose program and plan are kept per device:
    after the shared context closes they are made again in the next one (they raised ClosedError
    for every later float16 call of the process)."""
    h = np.arange(8, dtype=np.float16)
    np.testing.assert_array_equal((gnp.asarray(h, device=device) + 1).get(), h + 1)
    device.context().close()
    g = gnp.asarray(h, device=device)                              # on the fresh shared context
    np.testing.assert_array_equal((g + 1).get(), h + 1)
    np.testing.assert_array_equal(g.astype(np.float32).get(), h.astype(np.float32))
