"""OpenCL waits in slices (``pygpgpu_core.waiting``), so that Ctrl-C reaches Python during a long kernel.

``clFinish`` and blocking transfers wait inside the driver, where Python cannot run its SIGINT
handler. On the main thread every wait polls an event's status instead; Ctrl-C raises
KeyboardInterrupt naming the last kernel launched on the queue and its arguments
(``waiting.still_busy``). Host memory the device may still write is kept alive (never freed
under the kernel) until the command is seen complete.

While an interrupted command still runs, waits that happen as the interrupt unwinds (cleanup in
``finally`` blocks) and at interpreter exit do not wait for it: the process exits while the
device is still busy (PoCL's worker threads end with the process). A later wait from user code
waits again (and Ctrl-C interrupts it again).
"""
from __future__ import annotations

import ctypes
import os
import sys
import time
from ctypes import c_int32, c_void_p

from pygpgpu_core.backend.handles import finalizing
from pygpgpu_core.waiting import on_main_thread, poll, still_busy

from . import _constants as C
from ._library import lib
from ._status import check

__all__ = ["wait", "wait_keeping", "settle", "busy", "keep_alive", "enqueue", "enqueue_launch", "track", "launch_events"]


class _Interrupted:
    __slots__ = ("event", "keep")

    def __init__(self, event: int, keep: list):
        self.event = event
        self.keep = keep          # host memory the device may still use: alive until it completes


def _status(cl, event: int) -> int:
    value = c_int32(1)
    check(cl.clGetEventInfo(event, C.CL_EVENT_COMMAND_EXECUTION_STATUS, ctypes.sizeof(value),
                            ctypes.byref(value), None), "clGetEventInfo")
    return value.value


def enqueue(context, call, *args) -> int:
    """Run ``call(*args, &event)`` (a ``clEnqueue*`` whose last parameter is its event) and keep
    that event as the queue's last command, atomically: a wait for the whole queue then waits
    for this event (in-order queue: every earlier command is done when it is) instead of
    enqueueing a marker, which costs PoCL a round trip through its scheduler. Returns the
    status. Every enqueue on a context's queue goes through here (or :func:`track`)."""
    event = c_void_p()
    with context._enqueue_lock:
        status = call(*args, ctypes.byref(event))
        if status == 0:
            track(context, event.value)
    return status


def enqueue_launch(context, call, *args) -> int:
    """:func:`enqueue` for a kernel launch: without launch events (:func:`launch_events`) the
    call gets no event and marks the queue untracked, so a wait enqueues a marker first."""
    if context.launch_events:
        return enqueue(context, call, *args)
    with context._enqueue_lock:
        status = call(*args, None)
        if status == 0:
            context._untracked = True
    return status


def track(context, event: "int | None") -> None:
    """Make ``event`` (owned by the caller until now; None: no command) the queue's last command; call it holding
    ``context._enqueue_lock`` together with the enqueue that made it."""
    previous = context._last_event
    context._last_event = event
    if event:
        context._untracked = False    # in order: done only after the untracked launches before it
    if previous:
        lib().clReleaseEvent(previous)


def launch_events(device) -> bool:
    """Whether kernel launches on ``device`` ask the driver for an event (the queue's last command
    is then known without a marker). ``PYGPGPU_OPENCL_LAUNCH_EVENTS=0`` / ``1`` decides; by
    default every platform but NVIDIA's does. NVIDIA's OpenCL spends 1.3-2 us more on a launch
    that returns an event (benchmarks/launch_floor.c on the H200: 4.1-5.5 us without, 5.4-7.6 us
    with). PoCL keeps them: there a wait for an event costs less than a marker's round trip
    through its scheduler. (PoCL 5.0's abort with two devices in one process, once blamed on
    launches without events, is a bug of its kernel cache that events only made rarer:
    ``Device.own_build_options`` avoids it.)"""
    setting = os.environ.get("PYGPGPU_OPENCL_LAUNCH_EVENTS", "").strip()
    if setting in ("0", "1"):
        return setting == "1"
    platform = getattr(device, "platform", None)
    return "nvidia" not in (getattr(platform, "vendor", "") or "").lower()


def _mark_untracked(context, queue: int) -> None:
    """Launches went in without events since the last tracked command: enqueue a marker (done when
    every earlier command is) and make it the queue's last command. Holds the enqueue lock."""
    cl = lib()
    event = c_void_p()
    if cl.clEnqueueMarkerWithWaitList is not None:
        check(cl.clEnqueueMarkerWithWaitList(queue, 0, None, ctypes.byref(event)), "clEnqueueMarkerWithWaitList")
    else:                                   # OpenCL 1.1
        check(cl.clEnqueueMarker(queue, ctypes.byref(event)), "clEnqueueMarker")
    track(context, event.value)


def _last(context, queue: int) -> "int | None":
    """A reference of our own to the queue's last command, or None when nothing was queued
    since the last completed whole-queue wait."""
    with context._enqueue_lock:
        if context._untracked:
            _mark_untracked(context, queue)
        event = context._last_event
        if event:
            check(lib().clRetainEvent(event), "clRetainEvent")
        return event or None


def _done_with(context, event: int) -> None:
    """``event`` completed: the queue is idle up to it (forget it unless a later one came)."""
    with context._enqueue_lock:
        if context._last_event == event:
            context._last_event = None
            lib().clReleaseEvent(event)


def busy(context) -> bool:
    """Whether an interrupted command may still be running on ``context``'s queue (clears the
    mark, and lets go of the memory it kept, once the command has completed)."""
    state = context.__dict__.get("_interrupted")
    if state is None:
        return False
    cl = lib()
    try:
        running = _status(cl, state.event) > C.CL_COMPLETE
    except Exception:             # a failed command is over too
        running = False
    if running:
        return True
    context._interrupted = None
    cl.clReleaseEvent(state.event)
    return False


def keep_alive(context, *objects) -> None:
    """Keep host memory the device may still use alive until the interrupted command completes."""
    state = context.__dict__.get("_interrupted")
    if state is not None:
        state.keep.extend(o for o in objects if o is not None)


def wait(context, queue: int) -> None:
    """Wait until every command enqueued on ``context``'s queue has completed. On the main thread
    Ctrl-C interrupts the wait (see ``waiting.still_busy``)."""
    cl = lib()
    if context.__dict__.get("_interrupted") is not None and on_main_thread() and busy(context) and (
            finalizing() or isinstance(sys.exc_info()[1], KeyboardInterrupt)):
        return                    # at exit, or cleanup while Ctrl-C unwinds: never wait for the runaway
    event = _last(context, queue)
    if event is None:
        return                    # nothing queued since the last completed wait
    if not on_main_thread():      # Python delivers signals to the main thread only
        try:
            check(cl.clWaitForEvents(1, ctypes.byref(c_void_p(event))), "clWaitForEvents")
            _done_with(context, event)
        finally:
            cl.clReleaseEvent(event)
        return
    start = time.perf_counter()
    status = [1]

    def done() -> bool:
        status[0] = _status(cl, event)
        return status[0] <= C.CL_COMPLETE

    try:
        check(cl.clFlush(queue), "clFlush")
        poll(done)
    except KeyboardInterrupt:
        _interrupt(context, event, time.perf_counter() - start)   # keeps our reference
        raise AssertionError("unreachable") from None      # pragma: no cover
    except BaseException:
        cl.clReleaseEvent(event)
        raise
    if status[0] < 0:         # the command failed: the driver reports why through the queue
        cl.clReleaseEvent(event)
        check(cl.clFinish(queue), "clFinish")
        check(status[0], "a queued command")
    _done_with(context, event)
    cl.clReleaseEvent(event)


def wait_keeping(context, queue: int, keep: tuple = ()) -> None:
    """:func:`wait`, keeping the host memory ``keep`` alive when the device may still use it
    afterwards (the wait was interrupted, or skipped for an interrupted command)."""
    try:
        wait(context, queue)
    except KeyboardInterrupt:
        keep_alive(context, *keep)
        raise
    if context.__dict__.get("_interrupted") is not None and busy(context):
        keep_alive(context, *keep)


def settle(context, queue: int, keep: tuple = ()) -> None:
    """Before host memory the device may use is let go (releasing a buffer, cleaning up a
    launch): wait for the queue, unless an interrupted command still runs, then keep ``keep``
    alive instead of waiting (releases run in finalizers and cleanup, which must not block)."""
    if context.__dict__.get("_interrupted") is not None and busy(context):
        keep_alive(context, *keep)
        return
    wait_keeping(context, queue, keep)


def _interrupt(context, event: int, waited: float):
    previous = context.__dict__.get("_interrupted")
    keep = list(previous.keep) if previous is not None else []
    if previous is not None:
        lib().clReleaseEvent(previous.event)
    kernel, arguments = context.__dict__.get("_last_launch") or (None, ())
    keep.extend(arguments)
    context._interrupted = _Interrupted(event, keep)
    raise still_busy(context.device.selector, kernel, tuple(arguments), waited) from None
