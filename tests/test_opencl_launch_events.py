"""OpenCL launches with and without an event of their own (``PYGPGPU_OPENCL_LAUNCH_EVENTS``).

Without launch events a kernel launch only marks the queue untracked, and a wait for the whole
queue enqueues a marker first: the results, the order of commands and "nothing to wait for"
must be the same either way, through the low-level launcher, ``Kernel.launch`` and ``@kernel``.
"""
from __future__ import annotations

import numpy as np
import pytest
from pygpgpu_core import registry
from pygpgpu_core.errors import GPGPUError

from conftest import skip_no_device

SOURCE = "__kernel void add_one(__global float* x, int n) {\n" \
         "    int i = get_global_id(0);\n    if (i < n) x[i] += 1.0f;\n}\n"


@pytest.fixture
def context(events_context):
    return events_context


def test_the_setting_is_read_when_a_context_is_made(monkeypatch):
    from pygpgpu_opencl._wait import launch_events

    class Platform:
        vendor = "NVIDIA Corporation"

    class Device:
        platform = Platform()

    monkeypatch.delenv("PYGPGPU_OPENCL_LAUNCH_EVENTS", raising=False)
    assert launch_events(Device()) is False  # NVIDIA's: a wait enqueues a marker instead
    Platform.vendor = "The pocl project"
    assert launch_events(Device()) is True
    monkeypatch.setenv("PYGPGPU_OPENCL_LAUNCH_EVENTS", "0")
    assert launch_events(None) is False
    monkeypatch.setenv("PYGPGPU_OPENCL_LAUNCH_EVENTS", "1")
    assert launch_events(None) is True


def test_launches_then_reads_see_every_launch(context):
    kernel = context.program(SOURCE, name="add_one").kernel("add_one")
    fn = kernel.launcher(["buffer", np.int32])
    n = 1000
    buf = context.buffer_from_host(np.zeros(n, np.float32))
    for _ in range(7):
        fn((n,), None, (buf, n))
    kernel.launch((n,), None, (buf, n))
    assert context._untracked is (not context.launch_events)
    out = np.empty(n, np.float32)
    buf.read(out)                            # a read after launches is ordered after them
    np.testing.assert_array_equal(out, 8.0)
    assert not context._untracked            # the read's event covers the launches before it
    context.synchronize()
    assert not context._untracked            # the wait's marker is the queue's last command now
    context.synchronize()                    # nothing queued since: returns at once


def test_a_wait_after_launches_waits_for_all_of_them(context):
    fn = context.program(SOURCE, name="add_one").kernel("add_one").launcher(["buffer", np.int32])
    n = 1 << 16
    host = np.zeros(n, np.float32)
    buf = context.buffer_from_host(host)
    for _ in range(50):
        fn((n,), (64,), (buf, n))
    context.synchronize()
    assert context._last_event is None       # the completed wait forgot the queue's last command
    np.testing.assert_array_equal(buf.read(np.empty(n, np.float32)), 50.0)


AT_KERNEL = """
import numpy as np
from pygpgpu_core import gnp, registry
from pygpgpu_translate import kernel

def scale(x, a):
    for i in range(x.shape[0]):
        x[i] = x[i] * a

dev = registry.get_device("opencl")
assert dev.context().launch_events is False
x = gnp.asarray(np.arange(1000, dtype=np.float32), device=dev)
k = kernel(scale)["opencl"]
for _ in range(3):
    k(x, 2.0)
h = np.arange(1000, dtype=np.float32)
k(h, 3.0)                                    # numpy in and out: read back after the launch
np.testing.assert_array_equal(np.asarray(x), np.arange(1000, dtype=np.float32) * 8)
np.testing.assert_array_equal(h, np.arange(1000, dtype=np.float32) * 3)
print("ok")
"""


def test_at_kernel_without_launch_events():
    """The shared context of a process started with the setting off: @kernel calls, resident
    arrays and numpy arrays read back."""
    import os
    import subprocess
    import sys

    try:
        registry.get_device("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")
    env = dict(os.environ, PYGPGPU_OPENCL_LAUNCH_EVENTS="0", PYGPGPU_BACKEND="opencl")
    run = subprocess.run([sys.executable, "-c", AT_KERNEL], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr
