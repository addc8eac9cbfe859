"""``multiprocessing`` pools that call kernels (issue 19, item 2): spawn and forkserver.

The parent uses its device before the pool starts (the usual order in a program). Workers
get kernels by reference (module-level) and by value (made inside the test), device arrays
(data + selector) and devices (selector), run kernels on their own default device and send
results back; everything is compared with numpy. Every wait has a timeout, so a hang fails
instead of blocking CI. ``fork`` after first use is the caches-and-processes issue's (13) part.
"""
from __future__ import annotations

import importlib.util
import multiprocessing as mp

import _mp_kernels as mk
import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu import kernel
from pygpgpu_core import registry

TIMEOUT = 180     # seconds for any one answer from the pool (start-up included)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_pool_workers_call_kernels(method):
    if method not in mp.get_all_start_methods():
        pytest.skip(f"start method {method!r} does not exist on this platform")
    x = np.linspace(-3, 3, 40_000, dtype=np.float32)
    first = np.empty_like(x)
    mk.scale(x, first, 2.0)                         # the parent's device is in use before the pool starts
    want = mk.scale_host(x, 2.0)

    @kernel
    def local_cube(x, out, add):                    # not importable: travels by value (cloudpickle)
        for i in range(out.shape[0]):
            out[i] = x[i] * x[i] * x[i] + add

    pool = mp.get_context(method).Pool(2)
    try:
        blocks = np.array_split(x, 6)
        got = pool.map_async(mk.scale_block, blocks).get(timeout=TIMEOUT)
        np.testing.assert_allclose(np.concatenate(got), want, rtol=1e-6, atol=1e-6)

        got = pool.apply_async(mk.run_kernel, (mk.scale, x, 2.0)).get(timeout=TIMEOUT)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

        if importlib.util.find_spec("cloudpickle") is not None:     # by value needs cloudpickle
            got = pool.apply_async(mk.run_kernel, (local_cube, x, 1.0)).get(timeout=TIMEOUT)
            np.testing.assert_allclose(got, x * x * x + np.float32(1.0), rtol=1e-5, atol=1e-5)

        g = gnp.asarray(x)                          # a device array goes to a worker and comes back
        back = pool.apply_async(mk.on_device_array, (g,)).get(timeout=TIMEOUT)
        assert isinstance(back, gnp.DeviceArray) and back.device is g.device
        np.testing.assert_allclose(back.get(), want, rtol=1e-6, atol=1e-6)

        dev = registry.get_device(None)
        assert pool.apply_async(mk.describe_device, (dev,)).get(timeout=TIMEOUT) == dev.selector
    finally:
        pool.terminate()
        pool.join()
    again = np.empty_like(x)
    mk.scale(x, again, 2.0)                         # the parent still works after its pool is gone
    np.testing.assert_array_equal(again, first)
