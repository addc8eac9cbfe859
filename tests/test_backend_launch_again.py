"""``launch.again(global, local, args)`` of the driver kit's launcher (backend/launcher.py): the
configured kernels' memo passes the same packed-arguments object again, and while the argument
storage and the launch configuration still hold that object's packing only the driver calls run.
Anything that may have changed the storage (another launch, a failed pack), a closed buffer or
program, another work size: it packs again, or raises as launch() does. Run on the simulated
driver (sim_driver.py) with both launch calls (cuLaunchKernel, cuLaunchKernelEx); on the GPU
machine the memo tests (test_launch_memo.py) run it on CUDA."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from pygpgpu_core.errors import ClosedError
from sim_driver import SimBackend, SimKernel, array_at


def _vecadd(gid, a, b, out, n):
    i = gid[0]
    if i < n:
        array_at(out, np.float32, n)[i] = array_at(a, np.float32, n)[i] + array_at(b, np.float32, n)[i]


KERNELS = {"vecadd": SimKernel("Q Q Q i", _vecadd)}


@pytest.fixture(params=["cuLaunchKernel", "cuLaunchKernelEx"])
def sim(request):
    backend = SimBackend(KERNELS)
    driver = backend.sim
    if request.param == "cuLaunchKernelEx":
        def launch_ex(config_ref, func, params, extra):
            c = config_ref._obj
            return driver.launch(func, c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ,
                                 c.sharedMemBytes, ctypes.c_void_p(c.hStream), params, extra)
        calls = backend.driver.calls
        calls.launch_ex = calls.launch_ex_unchecked = launch_ex
    yield backend
    for dev in backend.devices():
        if dev._context is not None:
            dev._context.close()


class _Setup:
    def __init__(self, sim, n=100):
        self.ctx = ctx = sim.devices()[0].context()
        self.program = ctx.program("vecadd")
        self.launch = self.program.vecadd.launcher(["buffer", "buffer", "buffer", np.int32])
        self.packs = 0
        real = self.launch.__globals__["pack_into"]

        def counting(*a):
            self.packs += 1
            return real(*a)

        self.launch.__globals__["pack_into"] = counting
        self.n = n
        self.a = ctx.buffer_from_host(np.arange(n, dtype=np.float32))
        self.b = ctx.buffer_from_host(np.full(n, 10, np.float32))
        self.out = ctx.buffer(4 * n)
        self.out2 = ctx.buffer(4 * n)
        self.sim = sim.sim

    def result(self, buf):
        got = np.empty(self.n, np.float32)
        buf.read(got)
        return got


def test_the_same_object_again_launches_without_packing(sim):
    s = _Setup(sim)
    args = [s.a, s.b, s.out, s.n]
    size = (s.n,)
    s.launch.again(size, None, args)
    assert s.packs == 1
    for _ in range(3):
        s.launch.again(size, None, args)
    assert s.packs == 1 and len(s.sim.launches) == 4
    assert s.ctx._last_launch == ("vecadd", args)   # what a wait polls for and Ctrl-C names
    np.testing.assert_array_equal(s.result(s.out), np.arange(s.n) + 10)


def test_another_launch_in_between_makes_it_pack_again(sim):
    s = _Setup(sim)
    first, second = [s.a, s.b, s.out, s.n], [s.b, s.b, s.out2, s.n]
    size = (s.n,)
    for _ in range(2):
        s.launch.again(size, None, first)
        s.launch(size, None, second)             # the storage now holds the second's packing
    assert s.packs == 4
    s.out.fill(np.float32(0).tobytes())
    s.launch.again(size, None, first)
    assert s.packs == 5
    np.testing.assert_array_equal(s.result(s.out), np.arange(s.n) + 10)
    np.testing.assert_array_equal(s.result(s.out2), 20.0)


def test_another_work_size_object_packs_again_and_launches_its_geometry(sim):
    s = _Setup(sim)
    args = [s.a, s.b, s.out, s.n]
    s.launch.again((s.n,), None, args)
    s.launch.again((s.n,), (32,), args)          # not the kept objects: packs, then the new geometry
    assert s.packs == 2
    assert s.sim.launches[-1][:2] == ((4, 1, 1), (32, 1, 1))
    s.launch.again((s.n,), (32,), args)


def test_a_failed_pack_forgets_the_kept_packing(sim):
    s = _Setup(sim)
    args = [s.a, s.b, s.out, s.n]
    size = (s.n,)
    s.launch.again(size, None, args)
    with pytest.raises((TypeError, ValueError, OverflowError)):
        s.launch(size, None, [s.b, s.b, s.out2, 2**40])     # packs part of the storage, then fails
    s.out.fill(np.float32(0).tobytes())
    before = s.packs
    s.launch.again(size, None, args)
    assert s.packs == before + 1
    np.testing.assert_array_equal(s.result(s.out), np.arange(s.n) + 10)


def test_a_closed_buffer_or_program_raises_instead_of_launching(sim):
    s = _Setup(sim)
    args = [s.a, s.b, s.out, s.n]
    size = (s.n,)
    s.launch.again(size, None, args)
    launches = len(s.sim.launches)
    s.b.close()
    with pytest.raises(ClosedError):
        s.launch.again(size, None, args)
    assert len(s.sim.launches) == launches
    args = [s.a, s.a, s.out, s.n]
    s.launch.again(size, None, args)
    s.program.close()
    with pytest.raises(ClosedError, match="program of kernel 'vecadd'"):
        s.launch.again(size, None, args)
    assert len(s.sim.launches) == launches + 1
