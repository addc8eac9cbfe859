"""The native OpenCL launcher (``RepeatLauncher`` in backend/_native_launch.c, ``native.wrap_repeat``).

Built here into a temporary folder (``native_module``) and run on this machine's OpenCL device:
a launch whose arguments and work size are the objects of the last one is repeated in C; every
other call goes to the generated Python launcher. The counts, the geometry handed to the driver,
the queue's last command, the errors and the threads must be what the Python launcher gives.
"""
from __future__ import annotations

import threading
from ctypes import CFUNCTYPE, POINTER, c_int32, c_size_t, c_uint32, c_void_p

import numpy as np
import pytest
from pygpgpu_core import registry
from pygpgpu_core.backend import native
from pygpgpu_core.errors import ClosedError, DriverError, GPGPUError
from pygpgpu_core.forking import ForkedProcessError

from conftest import skip_no_device

SOURCE = "__kernel void add(__global float* x, int n, float step) {\n" \
         "    int i = get_global_id(0);\n    if (i < n) x[i] += step;\n}\n"
KINDS = ["buffer", np.int32, np.float32]


@pytest.fixture
def built(native_module, monkeypatch):
    """Kernel launchers made while this is active are native (the module built for the test)."""
    monkeypatch.delenv("PYGPGPU_NATIVE", raising=False)
    monkeypatch.setattr(native, "_loaded", [native_module])
    return native_module


@pytest.fixture
def context(events_context):
    return events_context


def _kernel(context):
    return context.program(SOURCE, name="add").kernel("add")


def _values(buf, n):
    out = np.empty(n, np.float32)
    buf.read(out)
    return out


def test_repeats_and_changes_count_as_the_python_launcher_counts(built, context):
    fn = _kernel(context).launcher(KINDS)
    assert type(fn).__name__ == "RepeatLauncher" and type(fn.python).__name__ == "function"
    assert fn.source == fn.python.source
    n = 100
    a, b = (context.buffer_from_host(np.zeros(n, np.float32)) for _ in range(2))
    expected = {id(a): np.zeros(n, np.float32), id(b): np.zeros(n, np.float32)}
    # (global, local, args, how many of 5 calls the C part repeats): the first call of each row
    # changes something (the Python launcher sets it), later ones repeat; a list work size always
    # goes to Python (it compares as a tuple copy there), equal new tuples repeat
    steps = [((n,), None, (a, n, 1.0), 4), ((n,), None, (a, n, 1.0), 5), ((n,), (10,), (a, n, 1.0), 4),
             ((n,), (10,), [a, n, 1.0], 5), ((n,), (10,), (b, n, 2.0), 4), ([n], (10,), (b, n, 2.0), 0),
             ("new", (10,), (b, n, 2.0), 5), ((50,), None, (b, 50, 3.0), 4), ((n,), (10,), (a, n, 0.5), 4)]
    for g, local, args, repeats in steps:
        before = fn.repeats
        for _ in range(5):
            fn(tuple([n]) if g == "new" else g, local, args)
            buf, count, step = args
            expected[id(buf)][:count] += step
        assert fn.repeats - before == repeats, (g, local, args)
    context.synchronize()
    np.testing.assert_array_equal(_values(a, n), expected[id(a)])
    np.testing.assert_array_equal(_values(b, n), expected[id(b)])


def test_a_repeat_is_the_queues_last_command(built, context):
    fn = _kernel(context).launcher(KINDS)
    buf = context.buffer_from_host(np.zeros(4, np.float32))
    args = (buf, 4, 1.0)
    fn((4,), None, args)
    before = context._last_event
    context._untracked = False
    fn((4,), None, args)           # a repeat
    assert context._last_launch == ("add", args)
    if context.launch_events:
        assert context._last_event not in (None, before)     # its own event, the previous released
    else:
        assert context._untracked is True
    context.synchronize()
    np.testing.assert_array_equal(_values(buf, 4), np.full(4, 2, np.float32))


def test_a_closed_buffer_kernel_or_context_raises_as_the_python_launcher_does(built, context):
    kernel = _kernel(context)
    fn, py = kernel.launcher(KINDS), kernel.launcher(KINDS, native=False)
    buf = context.buffer(16)
    args = (buf, 4, 1.0)
    fn((4,), None, args)
    buf.close()
    with pytest.raises(ClosedError) as native_error:
        fn((4,), None, args)
    with pytest.raises(ClosedError) as python_error:
        py((4,), None, args)
    assert str(native_error.value) == str(python_error.value)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        fn((4,), None, args[:2])
    other = context.buffer(16)
    fn((4,), None, (other, 4, 1.0))
    kernel.program.close()
    with pytest.raises(ClosedError):
        fn((4,), None, (other, 4, 1.0))


def test_a_forked_childs_kernel_raises_forked_process_error(built, context):
    kernel = _kernel(context)
    fn = kernel.launcher(KINDS)
    buf = context.buffer(16)
    fn((4,), None, (buf, 4, 1.0))
    context.synchronize()
    kernel._forget_after_fork("opencl")         # what a forked child's kernel looks like
    with pytest.raises(ForkedProcessError):
        fn((4,), None, (buf, 4, 1.0))


ENQUEUE = CFUNCTYPE(c_int32, c_void_p, c_void_p, c_uint32, c_void_p, POINTER(c_size_t), POINTER(c_size_t), c_uint32,
                    c_void_p, POINTER(c_void_p))


def test_the_driver_gets_the_geometry_and_its_refusal_is_the_python_launchers_error(built, context):
    """A stand-in enqueue (C function pointer) records what a repeat hands the driver, then refuses."""
    from pygpgpu_opencl._library import lib

    kernel = _kernel(context)
    py = kernel.launcher(KINDS, native=False)
    calls: list = []
    refuse = [0]

    def enqueue(queue, handle, dims, offset, gws, lws, nwait, wait, event):
        calls.append((queue, handle, dims, offset, [gws[d] for d in range(dims)],
                      None if not lws else [lws[d] for d in range(dims)], nwait, wait, bool(event)))
        if event:
            event[0] = None
        return refuse[0]

    stand_in = ENQUEUE(enqueue)
    fn = native.wrap_repeat(py, kernel, [True, False, False], stand_in, lib().clReleaseEvent, module=built)
    buf = context.buffer(64)
    args = (buf, 10, 1.0)
    for g, local in (((10,), (5,)), ((10, 3), None), ((7,), None)):
        fn(g, local, args)                  # changed: the Python launcher, the real driver
        fn(g, local, args)                  # a repeat: the stand-in
        queue, handle, dims, offset, gws, lws, nwait, wait, has_event = calls.pop()
        work = kernel._work
        assert (queue, handle) == (context._queue_handle, kernel._handle) and not calls
        assert dims == work.dims and gws == list(work.gws)[:dims] and offset is None and (nwait, wait) == (0, None)
        assert lws == (None if work.lws is None else list(work.lws)[:dims])
        assert has_event is context.launch_events
    context.synchronize()
    refuse[0] = -54                         # CL_INVALID_WORK_GROUP_SIZE
    with pytest.raises(DriverError) as native_error:
        fn((7,), None, args)
    with pytest.raises(DriverError) as python_error:
        py.failed(-54)
    assert str(native_error.value) == str(python_error.value) and "clEnqueueNDRangeKernel('add'" in str(
        native_error.value)


def test_threads_launching_one_kernel_with_their_own_buffers(built, context):
    """The C repeat takes the kernel's lock as the Python launcher does: a repeat never runs with
    another thread's arguments set halfway."""
    fn = _kernel(context).launcher(KINDS)
    n, launches = 64, 300
    bufs = [context.buffer_from_host(np.zeros(n, np.float32)) for _ in range(4)]
    errors: list = []

    def work(buf, step):
        try:
            for _ in range(launches):
                fn((n,), None, (buf, n, step))
        except BaseException as exc:        # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(buf, float(i + 1))) for i, buf in enumerate(bufs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    context.synchronize()
    for i, buf in enumerate(bufs):
        np.testing.assert_array_equal(_values(buf, n), np.full(n, launches * (i + 1), np.float32))


def test_switched_off_or_not_built_the_launcher_is_the_python_one(built, context, monkeypatch):
    kernel = _kernel(context)
    monkeypatch.setenv("PYGPGPU_NATIVE", "0")
    assert type(kernel.launcher(KINDS)).__name__ == "function"
    monkeypatch.delenv("PYGPGPU_NATIVE")
    monkeypatch.setattr(native, "_loaded", [None])
    assert type(kernel.launcher(KINDS)).__name__ == "function"
    assert native.wrap_repeat(kernel.launcher(KINDS), kernel, [True, False, False], None, None, module=built) \
        .__class__.__name__ == "function"      # not ctypes functions: no native launcher


def test_kernel_calls_on_resident_arrays_repeat_natively(built):
    from pygpgpu import kernel
    from pygpgpu_core import gnp

    @kernel
    def scale_add(x, alpha):
        for i in range(x.shape[0]):
            x[i] = x[i] * alpha + 1.0

    try:
        device = registry.get_device("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")
    x = gnp.asarray(np.zeros(33, np.float32), device=device)
    host = np.zeros(33, np.float32)
    k = scale_add["opencl"]
    for alpha in (1.0, 1.0, 1.0, 2.0, 2.0, 0.5, 1.0):
        k(x, alpha)
        host = host * np.float32(alpha) + np.float32(1.0)
    (plan,) = [p for key, p in k._kf._plans.items() if key[0] == id(device)]
    assert type(plan.launcher).__name__ == "RepeatLauncher"
    assert plan.launcher.repeats == 3           # the second and third alpha 1.0 and the second 2.0
    np.testing.assert_allclose(np.asarray(x), host, rtol=1e-6)
