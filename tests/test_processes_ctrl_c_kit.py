"""Ctrl-C during a long kernel on CUDA and HIP (issue 13, item 8): the driver kit's waits poll
the stream (and the staging events) in slices on the main thread, so SIGINT raises
KeyboardInterrupt while a kernel runs; the message says the device may still be busy and what
it may still use; nothing frees memory or blocks under the running kernel (frees wait until
the stream is seen idle, closing the context gives it up without a driver call, cleanup while
the interrupt unwinds and the process exit never wait for it).

Without a GPU this runs on the simulated driver (sim_driver.py), whose ``hold(stream)`` stands
in for a kernel that does not end: queries say "not ready" and the driver's blocking waits
block with SIGINT held back, as a wait inside C does. Before the fix every wait here was such
a blocking wait. With a CUDA (or HIP) device, real endless kernels are interrupted in a
subprocess, as tests/test_processes_ctrl_c.py does on PoCL."""
from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from conftest import first_device
from isolated_run import Hung, Isolated
from sim_driver import SimBackend, SimKernel, array_at

from pygpgpu_core.errors import ClosedError

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 120


def _double(gid, a, b, out, n):
    i = gid[0]
    if i < n:
        array_at(out, np.float32, n)[i] = array_at(a, np.float32, n)[i] + array_at(b, np.float32, n)[i]


@pytest.fixture
def sim(monkeypatch):
    monkeypatch.setenv("PYGPGPU_SIM_STAGING_THRESHOLD", str(64 << 10))
    monkeypatch.setenv("PYGPGPU_SIM_STAGING_CHUNK", str(16 << 10))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    backend = SimBackend({"vecadd": SimKernel("Q Q Q i", _double)})
    yield backend
    for stream in list(backend.sim.held):
        backend.sim.release(stream)
    for dev in backend.devices():
        if dev._context is not None:
            dev._context.close()
    signal.signal(signal.SIGINT, previous)


@pytest.fixture
def ctx(sim):
    return sim.devices()[0].context()


@contextlib.contextmanager
def ctrl_c_after(seconds: float, how: str = "signal"):
    """SIGINT for the main thread from a timer thread: a real signal, or _thread.interrupt_main()
    (which only marks it, so a wait blocked in C does not even wake up)."""
    def fire():
        if how == "signal":
            signal.raise_signal(signal.SIGINT)
        else:
            _thread.interrupt_main()

    timer = threading.Timer(seconds, fire)
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()


def _running_vecadd(ctx, sim, n=256):
    """(kernel, a, out): vecadd(a, a, out) launched on a stream that stays busy (at most 20 s)."""
    k = ctx.program("vecadd").kernel("vecadd")
    a = ctx.buffer_from_host(np.arange(n, dtype=np.float32))
    out = ctx.buffer(a.nbytes)
    sim.sim.hold(ctx.queue.handle, limit=20)
    k[(n,)](a, a, out, np.int32(n))
    return k, a, out


def _assert_still_busy(exc, kernel="vecadd", device="sim:0"):
    text = str(exc)
    assert text.startswith("interrupted after") and f"waiting for {device}" in text, text
    if kernel is None:
        assert "may still be running the kernels queued on it" in text, text
    else:
        assert f"may still be running kernel {kernel!r}" in text, text
    assert "Until context.synchronize() returns, do not read or reuse" in text, text
    assert exc.kernel == kernel and exc.device == device


@pytest.mark.parametrize("how", ["signal", "interrupt_main"])
def test_ctrl_c_interrupts_a_wait_for_a_kernel_that_does_not_end(ctx, sim, how):
    n = 256
    k, a, out = _running_vecadd(ctx, sim, n)
    sim.sim.log.clear()
    with ctrl_c_after(0.3, how), pytest.raises(KeyboardInterrupt) as info:
        ctx.synchronize()
    _assert_still_busy(info.value)
    assert any(x is a for x in info.value.arguments) and any(x is out for x in info.value.arguments)
    assert "(SimBuffer of 1024 bytes, SimBuffer of 1024 bytes, SimBuffer of 1024 bytes)" in str(info.value)
    assert "stream_synchronize" not in sim.sim.log            # never waited inside the driver
    with ctrl_c_after(0.3, how), pytest.raises(KeyboardInterrupt, match="interrupted after"):
        ctx.synchronize()                                     # still running: a later wait waits again
    sim.sim.release(ctx.queue.handle)                         # the kernel ends
    ctx.synchronize()
    host = np.empty(n, np.float32)
    out.read(host)
    np.testing.assert_array_equal(host, 2 * np.arange(n, dtype=np.float32))
    k[(n,)](out, out, out, np.int32(n))                       # the context works as before
    out.read(host)
    np.testing.assert_array_equal(host, 4 * np.arange(n, dtype=np.float32))


def test_reading_results_waits_for_the_kernel_in_slices_before_the_copy(ctx, sim):
    n = 256
    _, a, out = _running_vecadd(ctx, sim, n)
    sim.sim.log.clear()
    host = np.zeros(n, np.float32)
    with ctrl_c_after(0.3), pytest.raises(KeyboardInterrupt) as info:
        out.read(host)          # pageable memory: the driver's copy would block until the kernel ends
    _assert_still_busy(info.value)
    assert "memcpy_dtoh" not in sim.sim.log and "stream_synchronize" not in sim.sim.log
    with ctrl_c_after(0.3), pytest.raises(KeyboardInterrupt, match="may still be running kernel 'vecadd'"):
        out.read_async(host)    # read_async into pageable memory blocks as well
    assert "memcpy_dtoh" not in sim.sim.log
    sim.sim.release(ctx.queue.handle)
    out.read(host)
    np.testing.assert_array_equal(host, 2 * np.arange(n, dtype=np.float32))


def test_a_launch_with_numpy_arrays_frees_nothing_under_the_interrupted_kernel(ctx, sim):
    n = 256
    k = ctx.program("vecadd").kernel("vecadd")
    a, out = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    sim.sim.hold_next_launch = 20
    sim.sim.log.clear()
    with ctrl_c_after(0.3), pytest.raises(KeyboardInterrupt) as info:
        k.launch((n,), None, [a, a, out, n])    # copies the arrays in, launches, waits to copy back
    _assert_still_busy(info.value)
    assert sum(type(x).__name__ == "SimBuffer" for x in info.value.arguments) == 3
    assert "mem_free" not in sim.sim.log        # the temporaries' frees wait for the kernel
    assert "memcpy_dtoh" not in sim.sim.log and not out.any()
    sim.sim.release(ctx.queue.handle)
    ctx.synchronize()                           # sees the stream idle: the deferred frees run
    assert sim.sim.log.count("mem_free") == 2    # `a` passed twice is one buffer
    k.launch((n,), None, [a, a, out, n])
    np.testing.assert_array_equal(out, 2 * a)


def test_a_large_staged_copy_polls_its_events(ctx, sim):
    host = np.random.default_rng(1).random(100_000).astype(np.float32)   # staged: 16 KiB chunks
    buf = ctx.buffer_from_host(host)
    sim.sim.hold(ctx.queue.handle, limit=20)   # e.g. work another library queued on the stream
    sim.sim.log.clear()
    back = np.zeros_like(host)
    with ctrl_c_after(0.3), pytest.raises(KeyboardInterrupt) as info:
        buf.read(back)
    _assert_still_busy(info.value, kernel=None)
    assert "event_query" in sim.sim.log and "event_synchronize" not in sim.sim.log
    sim.sim.release(ctx.queue.handle)
    buf.read(back)
    np.testing.assert_array_equal(back, host)


def test_cleanup_while_ctrl_c_unwinds_and_closing_the_context_never_wait(ctx, sim):
    n = 256
    k, a, out = _running_vecadd(ctx, sim, n)
    host = np.zeros(n, np.float32)
    sim.sim.log.clear()
    with ctrl_c_after(0.3), pytest.raises(KeyboardInterrupt, match="interrupted after"):
        try:
            ctx.synchronize()
        finally:
            ctx.synchronize()       # cleanup while the interrupt unwinds: returns at once
            with pytest.raises(KeyboardInterrupt, match="may still be running kernel 'vecadd'"):
                out.read(host)      # a copy there would block in the driver: the interrupt again
    a.close()
    out.close()
    ctx.close()                     # gives the context up: every free could wait for the kernel
    for call in ("stream_synchronize", "event_synchronize", "mem_free", "stream_destroy"):
        assert call not in sim.sim.log, call
    assert not sim.sim.modules == {}                     # the module stays loaded
    with pytest.raises(ClosedError):
        k[(n,)](out, out, out, np.int32(n))
    fresh = sim.devices()[0].context()                   # a new context (and stream) works meanwhile
    assert fresh is not ctx
    k2 = fresh.program("vecadd").kernel("vecadd")
    b = fresh.buffer_from_host(np.ones(n, np.float32))
    k2[(n,)](b, b, b, np.int32(n))
    b.read(host)
    np.testing.assert_array_equal(host, 2)


def test_waits_off_the_main_thread_block_in_the_driver(ctx, sim):
    _running_vecadd(ctx, sim)
    sim.sim.log.clear()
    waiter = threading.Thread(target=ctx.synchronize)
    waiter.start()
    time.sleep(0.3)
    assert waiter.is_alive() and "stream_synchronize" in sim.sim.log   # Ctrl-C cannot reach it anyway
    sim.sim.release(ctx.queue.handle)
    waiter.join(10)
    assert not waiter.is_alive()


# -- whole processes: an uncaught or caught Ctrl-C ends the process without waiting ------------
SIM_SCRIPT = textwrap.dedent('''
    import signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)   # even if the parent ignores SIGINT
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from sim_driver import SimBackend, SimKernel
    backend = SimBackend({"vecadd": SimKernel("Q Q Q i", lambda gid, a, b, out, n: None)})
    ctx = backend.devices()[0].context()
    k = ctx.program("vecadd").kernel("vecadd")
    a = ctx.buffer_from_host(np.zeros(16, np.float32))
    pinned = ctx.pinned_empty(16, np.float32)
    backend.sim.hold(ctx.queue.handle, limit=3600)       # a kernel that does not end
    k[(16,)](a, a, a, np.int32(16))
    print("spinning", flush=True)
    try:
        a.read_async(pinned)
        ctx.synchronize()
    except KeyboardInterrupt as exc:
        if sys.argv[2] == "raise":
            raise
        print("caught", exc.kernel, exc.device, flush=True)
        del pinned
        a.close()
        ctx.close()
        sys.exit(0)        # a normal exit while the kernel still runs: nothing may wait for it
''')


def _interrupt(tmp_path, script, *args, **env_extra):
    path = tmp_path / "spin.py"
    path.write_text(script)
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(tmp_path / "cache"), **env_extra)
    with Isolated([sys.executable, str(path), *args], env=env, cwd=tmp_path) as proc:
        try:
            proc.expect_line("spinning", TIMEOUT)
            time.sleep(1.5)                         # the kernel is running now
            proc.send(signal.SIGINT)
            return proc.finish(TIMEOUT)
        except Hung as exc:
            pytest.fail(f"the process did not react to SIGINT: {exc}")


def test_uncaught_ctrl_c_ends_the_process_while_the_simulated_kernel_runs(tmp_path):
    rc, out, err = _interrupt(tmp_path, SIM_SCRIPT, HERE, "raise")
    assert rc in (-signal.SIGINT, 130), (rc, err[-2000:])  # exits the way an uncaught Ctrl-C does
    last = err.strip().splitlines()[-1]
    assert last.startswith("KeyboardInterrupt: interrupted after"), last
    assert "may still be running kernel 'vecadd'" in last


def test_caught_ctrl_c_then_exit_does_not_wait_for_the_simulated_kernel(tmp_path):
    rc, out, err = _interrupt(tmp_path, SIM_SCRIPT, HERE, "catch")
    assert rc == 0, err[-2000:]
    assert "caught vecadd sim:0" in out


# -- a real GPU: endless kernels on CUDA (and HIP where there is one) --------------------------
PRELUDE = textwrap.dedent('''
    import signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import numpy as np
    from pygpgpu_core import registry
    device = registry.get_device(sys.argv[1])
''')

SPIN_KERNEL = textwrap.dedent('''
    from pygpgpu import gpu, kernel

    @kernel
    def spin(flag, count):
        for i in range(flag.shape[0]):
            while gpu.atomic_add(flag, i, 0) == 0:    # an atomic read: the compiler keeps the loop
                count[i] += 1
''')

SPIN_SOURCE = '''extern "C" __global__ void spin(volatile int* flag, int* count) {
    while (flag[0] == 0) { atomicAdd(count, 1); } }'''
ONE_SOURCE = 'extern "C" __global__ void one(int* x) { x[0] = 41 + 1; }'

TRANSLATED = PRELUDE + SPIN_KERNEL + textwrap.dedent('''
    spin[device.selector](np.ones(1, np.int32), np.zeros(1, np.int32))     # compiled; ends at once
    flag, count = np.zeros(1, np.int32), np.zeros(1, np.int32)
    print("spinning", flush=True)
    try:
        spin[device.selector](flag, count)
    except KeyboardInterrupt as exc:
        if sys.argv[2] == "raise":
            raise
        print("caught", exc.kernel, exc.device, flush=True)
        sys.exit(0)        # a normal exit while the kernel still runs: nothing may wait for it
''')

LOW_LEVEL = PRELUDE + f"SPIN_SOURCE, ONE_SOURCE = {SPIN_SOURCE!r}, {ONE_SOURCE!r}\n" + textwrap.dedent('''
    ctx = device.context()
    k = ctx.program(SPIN_SOURCE).kernel("spin")
    host_flag, flag = ctx.host_mapped(4)            # host memory the kernel reads in place
    host_flag.view(np.int32)[0] = 0
    count = ctx.buffer(4)
    count.fill(np.int32(0))
    k[(1, 1)](flag, count)
    print("spinning", flush=True)
    try:
        ctx.synchronize()
    except KeyboardInterrupt as exc:
        print("interrupted:", exc, flush=True)
        host_flag.view(np.int32)[0] = 1             # let the kernel end
        ctx.synchronize()                           # waits for it; the context is usable again
        out = np.zeros(1, np.int32)
        count.read(out)
        ok = ctx.program(ONE_SOURCE).kernel("one")
        res = ctx.buffer(4)
        ok[(1, 1)](res)
        answer = np.zeros(1, np.int32)
        res.read(answer)
        print("recovered", int(out[0]) != 0, int(answer[0]), flush=True)
''')

GPU_BACKENDS = ["cuda", "hip"]


def test_the_endless_gpu_kernels_compile_for_cuda_and_hip(tmp_path, nvrtc_compile, hiprtc_compile):
    """What the GPU tests below run, compiled here without a GPU: the translated spin keeps its
    loop around an atomic read (a plain load in a loop without side effects may be assumed to
    end), the hand-written one reads its flag as volatile."""
    import importlib.util

    from conftest import assert_code_object, assert_cubin
    (tmp_path / "spin_kernel.py").write_text(SPIN_KERNEL)
    spec = importlib.util.spec_from_file_location("spin_kernel", tmp_path / "spin_kernel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    flag, count = np.zeros(1, np.int32), np.zeros(1, np.int32)
    for backend_name, build, check, arch in (("cuda", nvrtc_compile, assert_cubin, "sm_90"),
                                             ("hip", hiprtc_compile, assert_code_object, "gfx1030")):
        source = module.spin.inspect(flag, count, backend=backend_name).source
        assert "while (pg_atomic_add_int(" in source, source
        check(build(source, arch), source)
        for raw in (SPIN_SOURCE, ONE_SOURCE):
            check(build(raw, arch), raw)


@pytest.mark.parametrize("backend_name", GPU_BACKENDS)
def test_ctrl_c_ends_a_process_running_an_endless_gpu_kernel(tmp_path, backend_name):
    selector = first_device(backend_name).selector
    # 4-byte arrays: one batch in host-mapped memory the kernel reads in place
    rc, out, err = _interrupt(tmp_path, TRANSLATED, selector, "raise")
    assert rc in (-signal.SIGINT, 130), (rc, err[-2000:])
    last = err.strip().splitlines()[-1]
    assert last.startswith("KeyboardInterrupt: interrupted after"), last
    assert "may still be running kernel 'spin'" in last and "context.synchronize()" in last


@pytest.mark.parametrize("backend_name", GPU_BACKENDS)
def test_caught_ctrl_c_names_the_gpu_kernel_and_the_process_exits(tmp_path, backend_name):
    selector = first_device(backend_name).selector
    # each array staged on its own (device memory, copied back after the launch)
    rc, out, err = _interrupt(tmp_path, TRANSLATED, selector, "catch", PYGPGPU_SMALL_ARRAY_MAX="-1")
    assert rc == 0, err[-2000:]
    assert f"caught spin {selector}" in out


@pytest.mark.parametrize("backend_name", GPU_BACKENDS)
def test_interrupted_gpu_context_recovers_once_the_kernel_ends(tmp_path, backend_name):
    selector = first_device(backend_name).selector
    rc, out, err = _interrupt(tmp_path, LOW_LEVEL, selector)
    assert rc == 0, err[-2000:]
    assert "interrupted: interrupted after" in out and "kernel 'spin'" in out
    assert "recovered True 42" in out
