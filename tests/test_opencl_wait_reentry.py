"""A finalizer that waits for the OpenCL queue may run in the middle of an enqueue on the same
thread: the garbage collector runs ``__del__`` methods at whatever allocation triggers it, and a
released buffer or program settles the queue before letting its memory go. The enqueue holds
the context's enqueue lock, so the wait inside the finalizer must be able to take it again
(seen as a hang of test_trust_debug's threads test in CI)."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError

from conftest import skip_no_device


def _opencl_context():
    try:
        return registry.get_device("opencl").context()
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")


def test_a_wait_inside_an_enqueue_on_the_same_thread_does_not_hang():
    from pygpgpu_opencl import _wait
    from pygpgpu_opencl._library import lib

    ctx = _opencl_context()
    buf = ctx.buffer(64)
    buf.write(np.arange(16, dtype=np.float32))      # a command the nested wait waits for
    out = np.zeros(16, np.float32)
    queue = ctx.queue_handle()

    def read_after_a_finalizer(*args):
        _wait.settle(ctx, queue)                     # what a released buffer's __del__ does
        return lib().clEnqueueReadBuffer(*args)

    done = threading.Event()
    results: list = []

    def read():
        try:
            results.append(_wait.enqueue(ctx, read_after_a_finalizer, queue, buf._handle, 0, 0, out.nbytes,
                                         out.ctypes.data, 0, None))
        except BaseException as exc:   # noqa: BLE001 - reported below
            results.append(exc)
        finally:
            done.set()

    threading.Thread(target=read, daemon=True).start()   # daemon: a hang must not keep pytest alive
    if not done.wait(30):
        pytest.fail("a queue wait inside an enqueue on the same thread deadlocked on the enqueue lock")
    assert results == [0], results
    ctx.synchronize()
    np.testing.assert_array_equal(out, np.arange(16, dtype=np.float32))
