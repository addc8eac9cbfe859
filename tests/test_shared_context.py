"""``with device.context() as c:`` borrows the device's shared context and leaves it open, the
same on every backend (issue 13, item 9); a private context is closed by its with block."""
from __future__ import annotations

import numpy as np

from pygpgpu import kernel
from pygpgpu_core import registry


@kernel
def add_one(x):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0


def test_with_block_leaves_the_shared_context_open(backend):
    dev = registry.get_device(backend)
    x = np.zeros(8, np.float32)
    add_one[backend](x)                        # the kernel's plan holds the shared context
    with dev.context() as c:
        assert c is dev.context()
        buf = c.buffer(16)
    assert not c.closed and dev.context() is c
    buf.close()
    add_one[backend](x)                        # closed contexts used to fail every later call
    np.testing.assert_array_equal(x, np.full(8, 2, np.float32))
    with dev.context():                        # twice in a row too
        pass
    add_one[backend](x)
    np.testing.assert_array_equal(x, np.full(8, 3, np.float32))


def test_with_block_closes_a_private_context(backend):
    dev = registry.get_device(backend)
    shared = dev.context()
    with type(shared)(dev) as private:
        assert private is not shared
        b = private.buffer(16)
        b.write(np.arange(4, dtype=np.float32))
    assert private.closed and not shared.closed
    x = np.zeros(4, np.float32)
    add_one[backend](x)
    np.testing.assert_array_equal(x, np.ones(4, np.float32))


def test_kernels_and_device_arrays_survive_closing_the_shared_context(backend):
    """close() on the shared context is allowed; kernels and gnp operations compiled before then
    rebuild on the fresh context instead of raising ClosedError from their dead programs."""
    import pygpgpu.numpy as gnp

    @kernel
    def add_one(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] + 1

    dev = registry.get_device(backend)
    x = np.arange(50, dtype=np.float32)
    out = np.zeros_like(x)
    add_one[backend](x, out)
    gnp.arange(4, dtype=np.float32, device=backend)        # a cached gnp kernel on this device
    dev.context().close()
    out[:] = 0
    add_one[backend](x, out)
    np.testing.assert_array_equal(out, x + 1)
    add_one[backend](x, out)                               # the rebuilt plan takes the warm path
    np.testing.assert_array_equal(out, x + 1)
    np.testing.assert_array_equal(gnp.arange(4, dtype=np.float32, device=backend).get(), np.arange(4, dtype=np.float32))


@kernel
def scale_two(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0


def test_threads_that_meet_a_closed_shared_context_at_once_both_rebuild(backend):
    """Two threads calling a kernel whose plan died with the closed shared context (k.split over
    one device twice does this): each rebuilds, whichever of them drops the dead plan first."""
    import threading

    dev = registry.get_device(backend)
    xs = [np.ones(8, np.float32) for _ in range(2)]
    k = scale_two[backend]
    k(xs[0])
    dev.context().close()
    # the plans of this device (the kernel's other backends, run earlier in the session, keep theirs)
    (plan,) = [plan for key, plan in k._kf._plans.items() if key[0] == id(dev)]
    barrier = threading.Barrier(2)
    run = plan.run

    def run_together(*args, **kwargs):        # both threads inside the dead plan's run at once
        barrier.wait(timeout=30)
        return run(*args, **kwargs)

    plan.run = run_together
    errors: list = []

    def call(x):
        try:
            k(x)
        except BaseException as exc:          # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=call, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    np.testing.assert_array_equal(xs[0], np.full(8, 4, np.float32))
    np.testing.assert_array_equal(xs[1], np.full(8, 2, np.float32))
