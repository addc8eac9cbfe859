"""Ownership of driver handles, shared by every backend: idempotent close, context managers,
a shutdown-safe finalizer.

During interpreter shutdown a driver may already be tearing itself down (PoCL and the HIP
runtime run their own atexit handlers), so finalizers then do nothing and the process exit
reclaims memory.
"""
from __future__ import annotations

import atexit
import sys
import weakref
from typing import Any

from pygpgpu_core.errors import ClosedError
from pygpgpu_core.forking import FORKED, ForkedProcessError, on_fork_child

__all__ = ["Closeable", "OwnedHandle", "finalizing", "drain_at_exit", "is_shared_context"]

_exiting = False
_drain_at_exit: "weakref.WeakSet[Any]" = weakref.WeakSet()


def _forget_parent_drains() -> None:
    _drain_at_exit.clear()          # a forked child exiting must not wait on the parent's queues


on_fork_child(_forget_parent_drains)


def drain_at_exit(obj: Any) -> None:
    """Call ``obj.synchronize()`` when the interpreter exits (for objects still alive then)."""
    _drain_at_exit.add(obj)


def _at_exit() -> None:
    # Work still in flight when Python exits races with the driver's own teardown (PoCL's
    # worker threads may still be compiling or running a kernel): let it finish first.
    global _exiting
    _exiting = True
    for obj in list(_drain_at_exit):
        try:
            obj.synchronize()
        except Exception:
            pass


atexit.register(_at_exit)


def finalizing() -> bool:
    """True once the interpreter has started to exit."""
    return _exiting or sys.is_finalizing()


def is_shared_context(obj: Any) -> bool:
    """Whether ``obj`` is the context its device shares (``device.context()``: every ``@kernel``
    call, device array and kernel file on that device uses it). A ``with`` block borrows it and
    leaves it open, on every backend; ``close()`` still closes it (the next ``device.context()``
    then makes a fresh one)."""
    device = getattr(obj, "device", None)
    return device is not None and getattr(device, "_context", None) is obj


class Closeable:
    """Mixin for objects with an idempotent ``close()``: ``with obj: ...`` closes it (except a
    device's shared context, see :func:`is_shared_context`), and so does garbage collection,
    except during interpreter shutdown. Adds no instance attributes."""

    __slots__ = ()

    def close(self) -> None:
        raise TypeError(f"{type(self).__name__} must define close()")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if not is_shared_context(self):
            self.close()

    def __del__(self) -> None:
        if finalizing():
            return
        try:
            self.close()
        except Exception:
            pass  # a finalizer must never raise; the driver reclaims the rest at exit


class OwnedHandle(Closeable):
    """Base class of objects that own one driver handle (``_handle``, an int or None).

    Subclasses implement ``_release(handle)``; ``close()`` calls it once. ``_closed_reason``
    lets a parent say why a child was closed (e.g. its Context was closed).
    """

    _handle: "int | None" = None
    _kind = "driver object"
    _closed_reason = ""

    def _release(self, handle: int) -> None:
        """Give ``handle`` back to the driver; every subclass defines it."""
        raise TypeError(f"{type(self).__name__} must define _release()")

    @property
    def handle(self) -> int:
        """The raw driver handle (``cl_mem``, ``hipModule_t``...) as an int, for interop."""
        return self._require()

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _require(self) -> int:
        h = self._handle
        if h is None:
            if self._closed_reason == FORKED:
                raise ForkedProcessError(self.__dict__.get("_forked_backend", "its backend"), f"this {self._kind}")
            raise ClosedError(f"this {self._kind}{self._closed_reason}")
        return h

    def _forget_after_fork(self, backend: str) -> None:
        """In a forked child: drop the handle without giving it back (it is the parent's)."""
        if self._handle is not None:
            self._handle = None
            self._closed_reason = FORKED
            self._forked_backend = backend

    def close(self) -> None:
        """Release the handle. Calling it again does nothing."""
        h = self._handle
        if h is None:
            return
        self._handle = None
        self._release(h)

    def _close_because(self, reason: str) -> None:
        if self._handle is not None:
            self._closed_reason = reason
            self.close()

    def __enter__(self):
        self._require()
        return self
