"""The warm call (docs/architecture.md#the-launch-path): exact-type tokens, one dict lookup, the plan;
resident arrays skip staging; anything unusual still takes the full path and stays correct."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gnp, registry
from pygpgpu_translate import _kernel, kernel, stats
from conftest import assert_code_object, assert_cubin


@kernel
def axpy(a, x, y, n):
    for i in range(y.shape[0]):
        y[i] = a * x[i] + y[i] + n


def test_warm_calls_use_the_fast_tokens_only(backend, monkeypatch):
    dev = registry.get_device(backend)
    xh = np.arange(5, dtype=np.float32)
    x = gnp.asarray(xh, device=dev)
    y = gnp.zeros(5, np.float32, device=dev)
    yn = np.zeros(5, np.float32)
    k = axpy[backend]
    k(2.0, x, y, 1)          # cold: builds the plans
    k(2.0, xh, yn, 1)
    compiles = stats["compiles"]

    def no_slow_path(*a, **kw):
        raise AssertionError("a warm call took the full signature path")
    monkeypatch.setattr(_kernel.KernelFunction, "_signature", no_slow_path)
    for a, n in ((3.0, 0), (0.5, 7), (-1.0, -3)):
        before = y.get()
        k(a, x, y, n)                       # resident: no staging at all
        np.testing.assert_allclose(y.get(), a * xh + before + n, rtol=1e-6)
        yn_before = yn.copy()
        k(a, xh, yn, n)                     # numpy in/out, same plan machinery
        np.testing.assert_allclose(yn, a * xh + yn_before + n, rtol=1e-6)
    assert stats["compiles"] == compiles


def test_unusual_arguments_fall_back_to_the_full_path(backend):
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    k = axpy[backend]
    k(np.float32(2.0), x, y, np.int32(1))            # numpy scalars
    np.testing.assert_allclose(y, 2 * x + 1)
    k(1.0, x, y, 2**40)                               # a 64-bit int: a new specialization
    np.testing.assert_allclose(y, 2 * x + 1 + x + 2**40, rtol=1e-6)
    k(a=1.0, x=x, y=y, n=0)                          # keywords
    np.testing.assert_allclose(y, 2 * x + 1 + x + 2**40 + x, rtol=1e-6)
    with pytest.raises(TypeError, match="argument 'x'"):
        k(1.0, [1.0, 2.0], y, 0)


def test_a_resident_array_of_another_context_is_refused(backend):
    dev = registry.get_device(backend)
    y = gnp.zeros(4, np.float32, device=dev)
    k = axpy[backend]
    k(1.0, y, y, 0)
    others = [d for d in registry.backend_devices(dev.backend.name) if d is not dev]
    if not others:
        pytest.skip(f"only one {backend} device here: no second device to put an array on")
    other = gnp.zeros(4, np.float32, device=others[0])
    with pytest.raises(ValueError, match="lives on"):
        k(1.0, other, y, 0)


def test_warm_kernel_sources_compile(nvrtc_compile, hiprtc_compile):
    # axpy runs against numpy in the tests above, on CUDA too where a device is present
    x = np.zeros(4, np.float32)
    src = axpy.inspect(1.0, x, x, 0, backend="cuda").source
    assert_cubin(nvrtc_compile(src), src)
    src = axpy.inspect(1.0, x, x, 0, backend="hip").source
    assert_code_object(hiprtc_compile(src, "gfx1030"), src)


@kernel
def bump3(a, b, c):
    for i in range(a.shape[0]):
        a[i] += 1.0
        b[i] += 2.0
        c[i] += 3.0


def test_numpy_arguments_wait_once_before_and_once_after_the_launch(backend, monkeypatch):
    from pygpgpu_core import mempool
    dev = registry.get_device(backend)
    ctx = dev.context()
    if not mempool.get_pool(ctx).host_access:
        pytest.skip(f"{backend}'s pool is device memory: staging copies through the driver, no host waits")
    arrays = [np.arange(8, dtype=np.float32) * k for k in range(3)]   # small and written: pooled, not aliased
    bump3[backend](*arrays)
    calls = []
    real = type(ctx).synchronize
    monkeypatch.setattr(type(ctx), "synchronize", lambda self: (calls.append(1), real(self))[1])
    bump3[backend](*arrays)
    assert len(calls) <= 2, f"{len(calls)} context waits for one launch with 3 staged arrays"
    for k, arr in enumerate(arrays):
        np.testing.assert_array_equal(arr, np.arange(8, dtype=np.float32) * k + 2 * (k + 1))
