"""Ctrl-C during a long kernel (issue 13, item 8): waits run in slices, so SIGINT reaches Python
as KeyboardInterrupt while PoCL runs an endless kernel; the message says the device may still
be busy and what it may still use; the process then exits (also while the kernel still runs),
and a context whose interrupted kernel finishes later works normally again.

Each scenario runs in its own process group under a timeout; before the fix SIGINT was ignored
until the kernel ended, i.e. never."""
from __future__ import annotations

import os
import signal
import sys
import textwrap

import pytest
from conftest import host_unified_opencl_device
from isolated_run import Hung, Isolated

TIMEOUT = 120

PRELUDE = textwrap.dedent('''
    import signal, sys
    signal.signal(signal.SIGINT, signal.default_int_handler)   # even if the parent ignores SIGINT
    import numpy as np
    from pygpgpu_core import registry
    device = registry.get_device(sys.argv[1])
''')

TRANSLATED = PRELUDE + textwrap.dedent('''
    from pygpgpu import kernel

    @kernel
    def spin(flag, count):
        for i in range(flag.shape[0]):
            while flag[i] == 0:
                count[i] += 1

    spin[device.selector](np.ones(1, np.int32), np.zeros(1, np.int32))     # compiled; ends at once
    flag, count = np.zeros(1, np.int32), np.zeros(1, np.int32)
    print("spinning", flush=True)
    try:
        spin[device.selector](flag, count)
    except KeyboardInterrupt as exc:
        if sys.argv[2] == "raise":
            raise
        print("caught", exc.kernel, exc.device, flush=True)
        sys.exit(0)        # a normal exit while the kernel still runs: atexit must not wait for it
''')

LOW_LEVEL = PRELUDE + textwrap.dedent('''
    ctx = device.context()
    src = """__kernel void spin(volatile __global int* flag, __global int* count) {
        while (flag[0] == 0) { count[0] += 1; } }"""
    k = ctx.program(src).kernel("spin")
    from pygpgpu_opencl import aligned_empty
    host_flag = aligned_empty(1024, np.int32)      # aligned: the device works on this memory (zero-copy)
    host_flag[:] = 0
    flag = ctx.buffer_from_host(host_flag, zero_copy=True)
    assert flag.zero_copy
    count = ctx.buffer(4)
    count.fill(np.int32(0))
    k[(1, 1)](flag, count)
    print("spinning", flush=True)
    try:
        ctx.synchronize()
    except KeyboardInterrupt as exc:
        print("interrupted:", exc, flush=True)
        host_flag[0] = 1                           # let the kernel end: the device reads host memory
        ctx.synchronize()                          # waits for it; the context is usable again
        out = np.zeros(1, np.int32)
        count.read(out)
        ok = ctx.program("__kernel void one(__global int* x) { x[0] = 41 + 1; }").kernel("one")
        res = ctx.buffer(4)
        ok[(1, 1)](res)
        answer = np.zeros(1, np.int32)
        res.read(answer)
        print("recovered", int(out[0]) != 0, int(answer[0]), flush=True)   # it ran (count may wrap)
''')


def _interrupt(tmp_path, script, *args):
    path = tmp_path / "spin.py"
    path.write_text(script)
    env = dict(os.environ, PYGPGPU_CACHE_DIR=str(tmp_path / "cache"))
    with Isolated([sys.executable, str(path), *args], env=env, cwd=tmp_path) as proc:
        try:
            proc.expect_line("spinning", TIMEOUT)
            import time
            time.sleep(1.5)                         # the kernel is running now
            proc.send(signal.SIGINT)
            return proc.finish(TIMEOUT)
        except Hung as exc:
            pytest.fail(f"the process did not react to SIGINT: {exc}")


def _opencl_selector():
    dev = host_unified_opencl_device()      # PoCL here: kernels run on host threads, forever if told to
    return dev.selector


def test_ctrl_c_interrupts_an_endless_translated_kernel(tmp_path):
    rc, out, err = _interrupt(tmp_path, TRANSLATED, _opencl_selector(), "raise")
    assert rc in (-signal.SIGINT, 130), (rc, err[-2000:])  # exits the way an uncaught Ctrl-C does
    last = err.strip().splitlines()[-1]
    assert last.startswith("KeyboardInterrupt: interrupted after"), last
    assert "may still be running kernel 'spin'" in last and "context.synchronize()" in last


def test_caught_ctrl_c_names_the_kernel_and_the_process_exits(tmp_path):
    selector = _opencl_selector()
    rc, out, err = _interrupt(tmp_path, TRANSLATED, selector, "catch")
    assert rc == 0, err[-2000:]
    assert f"caught spin {selector}" in out


def test_interrupted_context_recovers_once_the_kernel_ends(tmp_path):
    rc, out, err = _interrupt(tmp_path, LOW_LEVEL, _opencl_selector())
    assert rc == 0, err[-2000:]
    assert "interrupted: interrupted after" in out and "kernel 'spin'" in out
    assert "recovered True 42" in out
