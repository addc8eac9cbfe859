"""Waiting for a kit context's stream in slices (``pygpgpu_core.waiting``), so that Ctrl-C
reaches Python during a long kernel on CUDA and HIP.

``cuStreamSynchronize`` / ``hipStreamSynchronize``, the event waits of staged copies and a copy
into or out of pageable host memory all wait inside the driver, where Python cannot run its
SIGINT handler: an endless kernel could only be stopped with SIGKILL. On the main thread (the
only one Python delivers signals to) every wait here polls ``stream_query`` / ``event_query``
instead: a yielding spin of up to a millisecond, so short kernels keep their latency, then
sleeps; and a copy
that the driver would run only after the kernels before it (a pageable copy blocks the host
until then) is issued once those kernels are seen complete. Ctrl-C raises the
``KeyboardInterrupt`` of ``waiting.still_busy``, naming the last kernel launched on the
context's stream and its arguments (kept alive until the stream is seen idle).

While an interrupted kernel still runs nothing here blocks on it behind the user's back: frees
that the driver performs synchronously (``cuMemFree``, ``cuMemFreeHost``, ``cuModuleUnload``,
``cuMemHostUnregister`` and their HIP twins wait for the device) are deferred until the stream is
seen idle; closing the context lets go of it without a driver call; waits that happen as the
interrupt unwinds (cleanup in ``finally`` blocks) or at interpreter exit return at once, and a
copy in those places raises the interrupt again instead of blocking. A later wait from user
code waits again (and Ctrl-C interrupts it again). Off the main thread the driver's own
blocking waits are used.
"""
from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Callable

from ...waiting import on_main_thread, poll, still_busy
from ..handles import finalizing

if TYPE_CHECKING:
    from .context import DriverContext

__all__ = ["NOT_READY", "wait", "wait_event", "wait_before_copy", "busy", "defer", "Interrupted"]

NOT_READY = 600     # CUDA_ERROR_NOT_READY = hipErrorNotReady: the stream or event still has work
# The yielding spin before the sleeps. The GPU runs the kernel, so spinning costs it nothing (the
# drivers' own blocking waits spin by default too) and a kernel of up to a millisecond is seen
# complete within a query or two; longer ones pay the sleeps' overshoot (a sixteenth of the
# time waited plus the OS's wake-up latency). benchmarks/bench_kit_waits.py measures it.
SPIN_SECONDS = 1e-3


class Interrupted:
    """What a context whose wait was interrupted keeps until its stream is seen idle."""

    __slots__ = ("keep", "deferred", "since")

    def __init__(self, since: float):
        self.keep: list = []        # the interrupted kernel's arguments: alive while it may use them
        self.deferred: "list[tuple[Callable[..., Any], tuple]]" = []   # frees that would wait for it
        self.since = since          # when the interrupted wait began


def _poll(context: "DriverContext", query: Callable[[Any], int], handle: Any) -> int:
    """Poll ``query(handle)`` until it is not NOT_READY; its status. Ctrl-C: the interrupt."""
    start = time.perf_counter()
    status = NOT_READY

    def done() -> bool:
        nonlocal status
        status = query(handle)
        return status != NOT_READY

    try:
        poll(done, SPIN_SECONDS)
    except KeyboardInterrupt:
        _interrupt(context, start)
    return status


def _unwinding() -> bool:
    """At interpreter exit, or running cleanup while a KeyboardInterrupt propagates."""
    return finalizing() or isinstance(sys.exc_info()[1], KeyboardInterrupt)


def wait(context: "DriverContext", current: bool = False) -> bool:
    """Wait until everything queued on ``context``'s stream has completed (Ctrl-C interrupts the
    wait on the main thread). False, without waiting, where an interrupted kernel still runs
    and the process is exiting or unwinding the interrupt: cleanup must not wait for it.
    ``current``: the caller has just made the context current."""
    calls = context.calls
    stream = context.queue.handle
    launch = context._last_launch
    if not on_main_thread():        # Python delivers signals to the main thread only
        if not current:
            context.make_current()
        calls.check(calls.stream_synchronize(stream), calls.stream_synchronize)
    else:
        if context._interrupted is not None and busy(context) and _unwinding():
            return False
        if not current:
            context.make_current()
        status = calls.stream_query(stream)
        if status == NOT_READY:
            status = _poll(context, calls.stream_query, stream)
        if status:
            calls.check(status, calls.stream_query)   # a kernel's fault is reported here, as by a synchronize
        # The stream is idle, so this returns at once; CUDA flushes device printf output at a
        # synchronize (a query does not), and the README promises it when a launch is waited for.
        calls.check(calls.stream_synchronize(stream), calls.stream_synchronize)
    if launch is not None and context._last_launch is launch:
        context._last_launch = None     # seen complete (a later launch, from another thread, stays recorded)
    return True


def wait_before_copy(context: "DriverContext") -> None:
    """Before a copy that may block the host until the kernels queued before it have run (a
    pageable copy does), with the context current: wait for them in slices. Raises the
    interrupt again, rather than block, where an interrupted kernel still runs during
    unwinding or exit."""
    if (context._last_launch is not None or context._interrupted is not None) and not wait(context, True):
        _interrupt(context, context._interrupted.since)    # type: ignore[union-attr]  # wait() said it is set


def wait_event(context: "DriverContext", event: Any) -> None:
    """Wait until ``event`` (recorded on the context's stream) has completed; in slices on the
    main thread."""
    calls = context.calls
    if not on_main_thread():
        calls.check(calls.event_synchronize(event), calls.event_synchronize)
        return
    status = calls.event_query(event)
    if status == NOT_READY:
        status = _poll(context, calls.event_query, event)
    if status:
        calls.check(status, calls.event_query)


def busy(context: "DriverContext") -> bool:
    """Whether an interrupted kernel may still be running on ``context``'s stream. Once the
    stream is seen idle the mark is cleared and the deferred frees run."""
    state = context._interrupted
    if state is None:
        return False
    if context.closed:              # given up (or inherited across fork): no driver call
        return False
    calls = context.calls
    try:
        context.make_current()
        running = calls.stream_query(context.queue.handle) == NOT_READY
    except Exception:               # noqa: BLE001 - a lost context: the kernel is over too
        running = False
    if running:
        return True
    context._interrupted = None
    for free, args in state.deferred:
        try:
            free(*args)
        except Exception:           # noqa: BLE001 - as an immediate free, a failure cannot be acted on
            pass
    return False


def defer(context: "DriverContext", free: Callable[..., Any], *args: Any) -> bool:
    """Where an interrupted kernel still runs: keep ``free(*args)`` (a driver free that would wait
    for it) for when the stream is seen idle, and say True; else False (free now)."""
    if busy(context):
        context._interrupted.deferred.append((free, args))   # type: ignore[union-attr]  # busy: it is set
        return True
    return False


def _interrupt(context: "DriverContext", start: float) -> None:
    kernel, arguments = context._last_launch or (None, ())
    state = context._interrupted
    if state is None:
        state = context._interrupted = Interrupted(start)
    state.keep.extend(arguments)
    raise still_busy(context.device.selector, kernel, tuple(arguments), time.perf_counter() - start) from None
