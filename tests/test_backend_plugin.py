"""The example backend plug-in of docs/writing-a-backend.md (tests/backend_example): found through
its entry point, named in brackets and selectors, translated for its dialect, and running kernels
through its own Context, Program and Kernel classes (their counters prove the path)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import skip_no_device
from pygpgpu import kernel
from pygpgpu_core import registry
from pygpgpu_core.protocols import Backend, Context, Device, Kernel, Program

EXAMPLE = Path(__file__).parent / "backend_example"


@pytest.fixture
def relay(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    registry.reset_registry()
    try:
        registry.backend_devices("opencl")
    except Exception as exc:
        skip_no_device("opencl", f"the relay example runs over OpenCL: {exc}")
    import pygpgpu_relay_backend
    yield pygpgpu_relay_backend.backend
    registry.reset_registry()


@kernel
def saxpy(x, y, out, alpha):
    for i in range(out.shape[0]):
        out[i] = x[i] * alpha + y[i]


def test_the_plugin_is_discovered_and_implements_the_protocols(relay):
    assert "relay" in registry.backend_names()
    assert registry.get_backend("relay") is relay
    assert isinstance(relay, Backend)
    devices = registry.backend_devices("relay")
    assert devices and all(isinstance(d, Device) for d in devices)
    assert "relay:0" in registry.available_devices()
    assert registry.get_device("relay:0") is devices[0]
    ctx = devices[0].context()
    assert isinstance(ctx, Context) and ctx is devices[0].context()
    program = ctx.program("__kernel void nop(__global float *x) { }")
    assert isinstance(program, Program) and isinstance(program.kernel("nop"), Kernel)
    assert relay.version().startswith("relay 0.1 over ")


def test_kernels_run_through_the_plugin(relay):
    x = np.arange(1000, dtype=np.float32)
    y = np.ones_like(x)
    out = np.zeros_like(x)
    before = relay.launches
    saxpy["relay"](x, y, out, 2.0)
    np.testing.assert_array_equal(out, x * 2 + 1)
    saxpy["relay:0"][(1000, 100)](x, y, out, 3.0)              # the warm path: the plan's launcher
    np.testing.assert_array_equal(out, x * 3 + 1)
    assert relay.launches == before + 2
    assert registry.get_device("relay:0").context().programs >= 1


def test_the_translator_writes_the_plugins_dialect(relay):
    x = np.zeros(8, np.float32)
    info = saxpy.inspect(x, x, x, 1.0, backend="relay")
    assert info.dialect == relay.dialect == "opencl"
    assert "__kernel" in info.source


def test_the_low_level_api_runs_on_the_plugin(relay):
    ctx = registry.get_device("relay:0").context()
    prog = ctx.program("__kernel void twice(__global float *a) { size_t i = get_global_id(0); a[i] *= 2.0f; }")
    host = np.arange(64, dtype=np.float32)
    buf = ctx.buffer_from_host(host)
    before = relay.launches
    prog.kernel("twice")[(64, 16)](buf)
    got = np.empty_like(host)
    buf.read(got)
    np.testing.assert_array_equal(got, np.arange(64, dtype=np.float32) * 2)
    assert relay.launches == before + 1


def test_device_arrays_live_in_the_plugins_memory(relay):
    import pygpgpu.numpy as gnp

    device = registry.get_device("relay:0")
    x = np.arange(500, dtype=np.float32)
    g = gnp.asarray(x, device=device)
    out = gnp.zeros(500, dtype=np.float32, device=device)
    assert g.buffer.context is device.context() and type(g.buffer).__name__ == "RelayBuffer"
    before = relay.launches
    saxpy["relay"](g, g, out, 2.0)
    np.testing.assert_array_equal(out.get(), x * 3)
    assert relay.launches == before + 1


def test_the_plugin_follows_a_closed_opencl_shared_context(relay):
    """The relay's context wraps the OpenCL device's shared one. Someone closing that (allowed:
    the OpenCL device then makes a fresh one) must not leave the relay on the dead context:
    its device gives a new context over the fresh one, and kernels built before rebuild there."""
    device = registry.get_device("relay:0")
    x = np.arange(100, dtype=np.float32)
    y = np.ones_like(x)
    out = np.zeros_like(x)
    saxpy["relay"](x, y, out, 2.0)
    old = device.context()
    registry.backend_devices("opencl")[0].context().close()   # relay:0 relays to opencl:0
    assert old.closed
    fresh = device.context()
    assert fresh is not old and not fresh.closed and device.context() is fresh
    saxpy["relay"](x, y, out, 3.0)                       # its plan was built on the closed context
    np.testing.assert_array_equal(out, x * 3 + 1)
    late = kernel(saxpy.py_func)                         # a kernel first built after the close
    late["relay"](x, y, out, 4.0)
    np.testing.assert_array_equal(out, x * 4 + 1)
