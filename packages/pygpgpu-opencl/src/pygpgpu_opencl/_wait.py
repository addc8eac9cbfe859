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
import sys
import time
from ctypes import c_int32, c_void_p

from pygpgpu_core.handles import finalizing
from pygpgpu_core.waiting import on_main_thread, poll, still_busy

from . import _constants as C
from ._library import lib
from ._status import check

__all__ = ["wait", "wait_keeping", "settle", "busy", "keep_alive"]


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


def _marker(cl, queue: int) -> int:
    event = c_void_p()
    if cl.clEnqueueMarkerWithWaitList is not None:
        check(cl.clEnqueueMarkerWithWaitList(queue, 0, None, ctypes.byref(event)), "clEnqueueMarkerWithWaitList")
    else:
        check(cl.clEnqueueMarker(queue, ctypes.byref(event)), "clEnqueueMarker")
    return event.value


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


def wait(context, queue: int, event: "int | None" = None) -> None:
    """Wait until ``event`` (default: everything enqueued on ``queue``) has completed; releases
    ``event``. On the main thread Ctrl-C interrupts the wait (see :func:`still_busy`)."""
    cl = lib()
    if not on_main_thread():      # Python delivers signals to the main thread only
        if event is None:
            check(cl.clFinish(queue), "clFinish")
            return
        try:
            check(cl.clWaitForEvents(1, ctypes.byref(c_void_p(event))), "clWaitForEvents")
        finally:
            cl.clReleaseEvent(event)
        return
    if context.__dict__.get("_interrupted") is not None and busy(context) and (
            finalizing() or isinstance(sys.exc_info()[1], KeyboardInterrupt)):
        if event is not None:     # at exit, or cleanup while Ctrl-C unwinds: never wait for the runaway
            cl.clReleaseEvent(event)
        return
    if event is None:
        event = _marker(cl, queue)
    start = time.perf_counter()
    status = [1]

    def done() -> bool:
        status[0] = _status(cl, event)
        return status[0] <= C.CL_COMPLETE

    try:
        check(cl.clFlush(queue), "clFlush")
        poll(done)
    except KeyboardInterrupt:
        _interrupt(context, event, time.perf_counter() - start)
        raise AssertionError("unreachable") from None      # pragma: no cover
    except BaseException:
        cl.clReleaseEvent(event)
        raise
    cl.clReleaseEvent(event)
    if status[0] < 0:         # the command failed: the driver reports why through the queue
        check(cl.clFinish(queue), "clFinish")
        check(status[0], "a queued command")


def wait_keeping(context, queue: int, event: "int | None" = None, keep: tuple = ()) -> None:
    """:func:`wait`, keeping the host memory ``keep`` alive when the device may still use it
    afterwards (the wait was interrupted, or skipped for an interrupted command)."""
    try:
        wait(context, queue, event)
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
    wait_keeping(context, queue, None, keep)


def _interrupt(context, event: int, waited: float):
    previous = context.__dict__.get("_interrupted")
    keep = list(previous.keep) if previous is not None else []
    if previous is not None:
        lib().clReleaseEvent(previous.event)
    kernel, arguments = context.__dict__.get("_last_launch") or (None, ())
    keep.extend(arguments)
    context._interrupted = _Interrupted(event, keep)
    raise still_busy(context.device.selector, kernel, tuple(arguments), waited) from None
