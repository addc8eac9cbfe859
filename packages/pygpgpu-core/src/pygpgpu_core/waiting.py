"""Waiting for a device in slices, so that Ctrl-C reaches Python during a long kernel.

A driver's blocking wait (``clFinish``, ``cuStreamSynchronize``, ``hipStreamSynchronize``) runs
in C, where Python cannot run its SIGINT handler: an endless kernel could only be stopped with
SIGKILL. On the main thread (the only one Python delivers signals to) backends instead poll the
queue's status: first spinning briefly (yielding the CPU), so short commands keep their blocking
latency, then sleeping a sixteenth of the time waited so far (50 us to 1 ms), so a wait
overshoots the device by about 6 % (plus the OS's wake-up latency) and a long kernel costs the
host ~1000 cheap wake-ups a second. Ctrl-C raises ``KeyboardInterrupt`` out of the sleep; backends then raise
:func:`still_busy` (a plain KeyboardInterrupt, so an uncaught Ctrl-C still ends the process the
usual way, by SIGINT) saying that the device may still be running the kernel and what it may
still use.
"""
from __future__ import annotations

import numbers
import os
import threading
import time
from typing import Callable

__all__ = ["on_main_thread", "poll", "still_busy", "describe"]

SPIN_SECONDS = 100e-6
SHORTEST_SLEEP = 50e-6
LONGEST_SLEEP = 1e-3
_yield = getattr(os, "sched_yield", lambda: time.sleep(0))
_main = threading.main_thread()


def on_main_thread() -> bool:
    """Whether a wait here can be interrupted by Ctrl-C (elsewhere backends wait in the driver)."""
    return threading.current_thread() is _main


def poll(done: Callable[[], bool], spin: float = SPIN_SECONDS) -> None:
    """Return once ``done()`` is true; KeyboardInterrupt (Ctrl-C) propagates from the spin and
    the sleeps. ``spin``: seconds of yielding spin first (a GPU backend, whose kernels do not
    run on the host's cores, may spin longer than PoCL, whose kernels need them)."""
    if done():
        return
    start = time.perf_counter()
    spin_until = start + spin
    while time.perf_counter() < spin_until:
        _yield()
        if done():
            return
    while not done():
        elapsed = time.perf_counter() - start
        time.sleep(min(max(elapsed * 0.0625, SHORTEST_SLEEP), LONGEST_SLEEP))


def describe(value) -> str:
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{type(value).__name__}{tuple(shape)} {dtype}"
    nbytes = getattr(value, "nbytes", None)
    if nbytes is not None:
        return f"{type(value).__name__} of {nbytes} bytes"
    return type(value).__name__


def _is_memory(value) -> bool:
    """An array or buffer (what a kernel may still read and write), not a scalar, a numpy
    scalar, a vector value or dynamic local memory passed by value."""
    if isinstance(value, numbers.Number) or type(value).__name__ == "LocalMemory":
        return False
    return hasattr(value, "nbytes") or hasattr(value, "shape")


def still_busy(device: str, kernel: "str | None", arguments: tuple, waited: float) -> KeyboardInterrupt:
    """The KeyboardInterrupt for Ctrl-C during a wait: ``device`` (its selector), ``kernel`` (the
    last kernel launched on the queue, or None when unknown) and ``arguments`` (the objects passed
    to it) say what is unsafe to read or reuse until ``context.synchronize()`` returns; they are
    also attributes of the exception."""
    what = f"kernel {kernel!r}" if kernel else "the kernels queued on it"
    objects = [describe(a) for a in arguments if _is_memory(a)]
    passed = f"the arrays and buffers passed to it ({', '.join(objects)})" if objects else \
        "the arrays and buffers passed to them"
    exc = KeyboardInterrupt(
        f"interrupted after {waited:.1f} s waiting for {device}: the device may still be running {what}. "
        f"Until context.synchronize() returns, do not read or reuse {passed}: it may still read and write "
        f"them (they are kept alive until it finishes). An endless kernel only stops with the process.")
    # Attributes of this instance: a plain KeyboardInterrupt, whose type declares none of them.
    for name, value in (("device", device), ("kernel", kernel), ("arguments", tuple(arguments))):
        setattr(exc, name, value)
    return exc
