"""Processes forked after a backend was used: drop what belongs to the parent, never hang.

Driver state does not survive ``fork()``: PoCL's worker threads, CUDA's and HIP's contexts
and queues exist only in the parent, and a child that touches them waits forever. Handlers
registered here run in the child (``os.register_at_fork``): each backend that was loaded in
the parent forgets its contexts, queues, pools and pinned memory *without* releasing anything
through the driver (the parent still owns all of it) and replaces its driver library by a
stand-in whose every function raises :class:`ForkedProcessError`. So the first device use in
the child raises that error, which says to start workers with the ``spawn`` or
``forkserver`` method, instead of hanging. A backend the parent never loaded works normally
in the child.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable

from .errors import ClosedError, GPGPUError

__all__ = ["ForkedProcessError", "ForkedLibrary", "FORKED", "on_fork_child", "mark_forked", "forked_backends",
           "closed_error"]


class ForkedProcessError(ClosedError):
    """A device, context or buffer of a backend the parent process used before ``fork()``."""

    backend: str
    what: str

    def __init__(self, backend: str, what: str = "") -> None:
        self.backend = backend
        thing = what or f"the {backend} backend"
        GPGPUError.__init__(
            self,
            f"{thing} cannot be used in this process: it was forked (os.fork(), multiprocessing's 'fork' start "
            f"method) after the parent had used {backend}, and driver state (contexts, queues, worker threads) "
            f"does not survive fork. Start worker processes with multiprocessing.get_context('spawn') or "
            f"get_context('forkserver') (or concurrent.futures.ProcessPoolExecutor(mp_context=...)), or fork "
            f"before the first device use.")
        self.what = what

    def __reduce__(self) -> "tuple[type[ForkedProcessError], tuple[str, str]]":   # multiprocessing sends it back to the parent: rebuild from its parts
        return (type(self), (self.backend, self.what))


# ``obj._closed_reason`` of a driver object inherited across fork (OwnedHandle._require checks it)
FORKED = " (inherited across fork)"


class ForkedLibrary:
    """Stands in for a driver library in a forked child: every function raises ForkedProcessError."""

    def __init__(self, backend: str):
        self._backend = backend

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise ForkedProcessError(self._backend)

    def __repr__(self) -> str:
        return f"<{self._backend} driver of the parent process (unusable after fork)>"


_handlers: "list[Callable[[], None]]" = []
_dropped: "set[str]" = set()


def on_fork_child(handler: "Callable[[], None]") -> None:
    """Run ``handler`` in the child after every fork (registering the same function twice runs it once)."""
    if handler not in _handlers:
        _handlers.append(handler)


def mark_forked(backend: str) -> None:
    """Record (in the child) that ``backend``'s parent state was dropped."""
    _dropped.add(backend)


def forked_backends() -> "set[str]":
    """Backends this process inherited across fork and therefore cannot use."""
    return set(_dropped)


def closed_error(obj, what: str, backend: str) -> ClosedError:
    """The error for using closed ``obj``: ForkedProcessError when it was inherited across fork."""
    if getattr(obj, "_closed_reason", "") == FORKED:
        return ForkedProcessError(backend, what)
    return ClosedError(what)


def _after_fork_in_child() -> None:
    # Everything here must neither raise nor wait: it runs inside os.fork() in the child.
    for handler in list(_handlers):
        try:
            handler()
        except Exception:          # pragma: no cover - a handler must not break fork()
            pass


def _forget_core_state() -> None:
    """Pools of inherited contexts and the exit-time drain list: the parent's, not ours."""
    import sys

    handles = sys.modules.get("pygpgpu_core.backend.handles")
    if handles is not None:
        handles._drain_at_exit.clear()          # exiting must not wait on the parent's queues
    mempool: Any = sys.modules.get("pygpgpu_core.backend.mempool")
    if mempool is not None:
        mempool._pools.clear()                  # blocks of the parent's contexts: never freed here
        mempool._pools_lock = threading.Lock()  # it may have been held by another thread at fork


_handlers.append(_forget_core_state)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
