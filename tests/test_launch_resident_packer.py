"""The warm path with resident gnp arrays packs the launch arguments with a function generated per
plan (LaunchPlan._resident_packer, issue 17 item 1): it must give exactly what the general packer
gives for every kind of argument (buffers, shapes, Python and numpy scalars, vector components,
domain bounds, the debug mode's error buffer), fall back when an array is not resident, and the
kernels must compute what numpy computes."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gnp, registry
from pygpgpu_core.vec_types import float4
from pygpgpu_translate import kernel


@kernel
def axpb(x, out, a, b, flag):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + b if flag else x[i]


@kernel
def rows_and_vector(m, out, v):
    for y, c in np.ndindex(out.shape):
        out[y, c] = m[y, c] * v.x + v.w + m.shape[1]


@kernel
def from_two(x, out):
    for i in range(2, out.shape[0]):
        out[i] = x[i] + x[i - 2]


axpb_debug = kernel(debug=True)(axpb.py_func)


def _same(a, b):
    assert len(a) == len(b)
    for p, q in zip(a, b):
        assert type(p) is type(q) and (p is q or p == q), (p, q)


def _plan_on(kf, dev):
    """``kf``'s one plan on ``dev`` (a module-level kernel also has plans on the other test backends)."""
    (plan,) = [p for p in kf._plans.values() if p.device is dev]
    return plan


def _check_packers(kf, values):
    plan = _plan_on(kf, values[0].device)      # the first argument is a gnp array on the launch's device
    domain = plan.domain_fn(*values[: plan._n_call_params])
    fast = plan._resident_packer(values, domain)
    assert fast is not None
    _same(fast, plan._packed(values, None, domain))


@pytest.mark.parametrize("a, b, flag", [(2.0, 1, True), (np.float32(2.5), np.int32(-3), np.bool_(True)),
                                        (np.float64(0.5), np.int64(7), False)])
def test_scalars_of_every_kind(backend, a, b, flag):
    dev = registry.get_device(backend)
    x = np.arange(100, dtype=np.float32)
    gx, gout = gnp.asarray(x, device=dev), gnp.zeros(100, np.float32, device=dev)
    kf = kernel(axpb.py_func)
    kf[backend](gx, gout, a, b, flag)
    want = np.zeros_like(x)
    axpb.py_func(x, want, np.float32(a), np.float32(b), bool(flag))
    np.testing.assert_allclose(np.asarray(gout), want, rtol=1e-6)
    _check_packers(kf, (gx, gout, a, b, flag))


def test_shapes_vector_components_and_2d_domain(backend):
    dev = registry.get_device(backend)
    m = np.arange(24, dtype=np.float32).reshape(4, 6)
    gm, gout = gnp.asarray(m, device=dev), gnp.zeros((4, 6), np.float32, device=dev)
    v = float4(2, 0, 0, 0.5)
    kf = kernel(rows_and_vector.py_func)
    kf[backend](gm, gout, v)
    np.testing.assert_allclose(np.asarray(gout), m * 2 + 0.5 + 6)
    _check_packers(kf, (gm, gout, v))


def test_range_domain_from_two(backend):
    dev = registry.get_device(backend)
    x = np.arange(10, dtype=np.float32)
    gx, gout = gnp.asarray(x, device=dev), gnp.zeros(10, np.float32, device=dev)
    kf = kernel(from_two.py_func)
    kf[backend](gx, gout)
    want = np.zeros_like(x)
    from_two.py_func(x, want)
    np.testing.assert_array_equal(np.asarray(gout), want)
    _check_packers(kf, (gx, gout))


def test_debug_mode_error_buffer(backend):
    dev = registry.get_device(backend)
    x = np.arange(16, dtype=np.float32)
    gx, gout = gnp.asarray(x, device=dev), gnp.zeros(16, np.float32, device=dev)
    axpb_debug[backend](gx, gout, 3.0, 1.0, True)
    np.testing.assert_allclose(np.asarray(gout), 3 * x + 1)
    plan = _plan_on(axpb_debug, dev)
    assert plan.error_buffer is not None
    _check_packers(axpb_debug, (gx, gout, 3.0, 1.0, True))


def test_a_numpy_array_among_resident_ones_takes_the_staging_path(backend):
    dev = registry.get_device(backend)
    x = np.arange(50, dtype=np.float32)
    gx = gnp.asarray(x, device=dev)
    out = np.zeros(50, np.float32)             # host array: the packer says "not resident"
    kf = kernel(axpb.py_func)
    kf[backend](gx, out, 2.0, 0.0, True)
    np.testing.assert_array_equal(out, 2 * x)
    plan = _plan_on(kf, dev)
    assert plan._resident_packer((gx, out, 2.0, 0.0, True), (50,)) is None
    others = [d for d in registry.backend_devices(dev.backend.name) if d is not dev]
    if others:                                 # an array on another device is not resident here either
        assert plan._resident_packer((gnp.asarray(x, device=others[0]), gx, 2.0, 0.0, True), (50,)) is None
