"""The driver kit's launcher through ``cuLaunchKernelEx`` (CUDA 12.0+, the optional ``launch_ex``
role): the grid, block, shared bytes and stream go in a preallocated ``CUlaunchConfig``
(``backend.launcher.LaunchConfig``) refilled when the geometry or the shared bytes change. Run on
the simulated driver (sim_driver.py), given a ``launch_ex`` that reads the struct as the driver
does and runs the launch; the real driver is exercised by the CUDA tests on the GPU machine
(test_cuda_device.py and every CUDA kernel test)."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from pygpgpu_core.backend.launcher import LaunchConfig
from pygpgpu_core.protocols import LocalMemory
from sim_driver import SimBackend, SimKernel, array_at, check_failed_launch_and_closed_program, \
    check_vecadd_geometries


def _vecadd(gid, a, b, out, n):
    i = gid[0]
    if i < n:
        array_at(out, np.float32, n)[i] = array_at(a, np.float32, n)[i] + array_at(b, np.float32, n)[i]


def _uses_shared(gid, out):
    array_at(out, np.int32, 1)[0] += 1


KERNELS = {"vecadd": SimKernel("Q Q Q i", _vecadd), "uses_shared": SimKernel("Q", _uses_shared, max_threads=64)}


@pytest.fixture
def sim():
    backend = SimBackend(KERNELS)
    driver = backend.sim
    driver.ex_configs = []

    def launch_ex(config_ref, func, params, extra):
        c = config_ref._obj                     # what cuLaunchKernelEx reads through its pointer
        assert isinstance(c, LaunchConfig) and c.numAttrs == 0 and not c.attrs
        driver.ex_configs.append((c.hStream, c.sharedMemBytes))
        return driver.launch(func, c.gridDimX, c.gridDimY, c.gridDimZ, c.blockDimX, c.blockDimY, c.blockDimZ,
                             c.sharedMemBytes, ctypes.c_void_p(c.hStream), params, extra)

    def unused_launch(*args):
        raise AssertionError("cuLaunchKernel called where cuLaunchKernelEx is offered")

    calls = backend.driver.calls
    calls.launch_ex = calls.launch_ex_unchecked = launch_ex
    calls.launch_unchecked = unused_launch
    yield backend
    for dev in backend.devices():
        if dev._context is not None:
            dev._context.close()


def test_the_config_layout_is_cudas():
    """CUlaunchConfig of cuda.h: seven unsigned ints, the stream at 32, attrs at 40, numAttrs at 48."""
    offsets = {name: getattr(LaunchConfig, name).offset for name, _t in LaunchConfig._fields_}
    assert offsets == {"gridDimX": 0, "gridDimY": 4, "gridDimZ": 8, "blockDimX": 12, "blockDimY": 16,
                       "blockDimZ": 20, "sharedMemBytes": 24, "hStream": 32, "attrs": 40, "numAttrs": 48}
    assert ctypes.sizeof(LaunchConfig) == 56


def test_launches_through_the_config_follow_each_geometry(sim):
    ctx = sim.devices()[0].context()
    k = ctx.program("vecadd").kernel("vecadd")
    launch = k.launcher(["buffer", "buffer", "buffer", np.int32])
    assert "driver_launch_ex" in launch.source
    check_vecadd_geometries(sim, k, launch)
    stream, shared = sim.sim.ex_configs[-1]
    assert stream == ctx.queue.handle.value and shared == 0


def test_shared_bytes_follow_the_local_memory_arguments(sim):
    ctx = sim.devices()[0].context()
    k = ctx.program("uses_shared").kernel("uses_shared")
    launch = k.launcher(["buffer", "local", "local"])
    flag = ctx.buffer(4)
    flag.fill(np.int32(0).tobytes())
    for first, second in ((1000, 24), (1000, 24), (16, 16), (1000, 24)):
        launch(1, 1, (flag, LocalMemory(first), LocalMemory(second)))   # the same geometry each time
        assert sim.sim.launches[-1][2] == first + second and sim.sim.ex_configs[-1][1] == first + second
    got = np.zeros(1, np.int32)
    flag.read(got)
    assert got[0] == 4


def test_errors_and_a_closed_program(sim):
    ctx = sim.devices()[0].context()
    prog = ctx.program("vecadd")
    launch = prog.vecadd.launcher(["buffer", "buffer", "buffer", np.int32])
    check_failed_launch_and_closed_program(sim, launch, prog, ctx.buffer(16))
