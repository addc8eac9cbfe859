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
import sys
import threading
import warnings
from typing import Any, Callable, Iterable

from .errors import ClosedError, GPGPUError

__all__ = ["ForkedProcessError", "ForkedLibrary", "ForkedDeviceArray", "ForkWarning", "on_fork_report_use", "FORKED", "on_fork_child", "mark_forked", "forked_backends",
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


class ForkedDeviceArray:
    """A device array unpickled in a process forked after its backend was used (a task argument
    of a ``fork`` pool): its shape and dtype are there, any other use raises ForkedProcessError,
    and sent back to another process it pickles as the device array it was."""

    def __init__(self, backend: str, host: Any, selector: str):
        self._backend, self._host, self._selector = backend, host, selector
        self.shape, self.dtype = host.shape, host.dtype

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise ForkedProcessError(self._backend, f"a device array on {self._selector}")

    def _unusable(self, *args: Any, **kwargs: Any):
        raise ForkedProcessError(self._backend, f"a device array on {self._selector}")

    __hash__ = object.__hash__

    def __reduce__(self):
        from .pickling import array_from_host

        return array_from_host, (self._host, self._selector)

    def __repr__(self) -> str:
        return f"<device array on {self._selector} of the parent process (unusable after fork)>"


# operators and numpy's protocols are looked up on the type, past __getattr__: each raises too
for _stem in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
              "rshift"):
    for _spelling in ("__{}__", "__r{}__", "__i{}__"):
        setattr(ForkedDeviceArray, _spelling.format(_stem), ForkedDeviceArray._unusable)
for _stem in ("eq", "ne", "lt", "le", "gt", "ge", "neg", "pos", "abs", "invert", "getitem", "setitem", "len", "iter",
              "bool", "float", "int", "index", "array", "array_ufunc", "array_function"):
    setattr(ForkedDeviceArray, f"__{_stem}__", ForkedDeviceArray._unusable)
del _stem, _spelling


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
    """Pools of inherited contexts: the parent's, not ours (the driver kit forgets its own state
    through :func:`on_fork_child`: core names nothing of the kit)."""
    import sys

    mempool: Any = sys.modules.get("pygpgpu_core.mempool")
    if mempool is not None:
        mempool._pools.clear()                  # blocks of the parent's contexts: never freed here
        mempool._pools_lock = threading.Lock()  # it may have been held by another thread at fork


class ForkWarning(RuntimeWarning):
    """A multiprocessing worker is being forked after a backend was used: it cannot use that backend."""


_use_probes: "list[Callable[[], Iterable[str]]]" = []


def on_fork_report_use(probe: "Callable[[], Iterable[str]]") -> None:
    """Register ``probe()``: the backends whose driver this process has loaded (what a forked child
    cannot use). It runs in the parent just before a multiprocessing worker is forked."""
    if probe not in _use_probes:
        _use_probes.append(probe)


_MACHINERY = (f"{os.sep}multiprocessing{os.sep}", f"{os.sep}concurrent{os.sep}futures{os.sep}",
              f"{os.sep}threading.py", __file__)


def _pool_fork_caller() -> Any:
    """When this fork starts a multiprocessing worker (its ``popen_fork`` is on the stack): the
    first frame of the code that asked for the pool (``ProcessPoolExecutor.submit``, ``Pool()``),
    or the fork's own frame when a pool's thread forks; None for any other fork."""
    frame: Any = sys._getframe(1)
    launcher = None
    while frame is not None:
        name = frame.f_code.co_filename
        if launcher is None:
            if name.endswith(f"multiprocessing{os.sep}popen_fork.py"):
                launcher = frame
        elif not any(part in name for part in _MACHINERY):
            return frame
        frame = frame.f_back
    return launcher


def _warn_before_pool_fork() -> None:
    """A worker that fails outside a task (its pool's initializer, or while reading its task) dies,
    and a ProcessPoolExecutor then tells the parent only "BrokenProcessPool"; the
    ForkedProcessError that says why is on the child's stderr. So the parent says it here, once
    per place that starts a pool, before the fork. Runs inside os.fork(): it must not raise."""
    try:
        used = sorted({name for probe in _use_probes for name in probe()})
        if not used:
            return
        caller = _pool_fork_caller()
        if caller is None:
            return
        names = " and ".join(used)
        warnings.warn_explicit(
            f"starting multiprocessing worker processes with the 'fork' method after this process used {names}: "
            f"the workers cannot use {names} (ForkedProcessError there; a ProcessPoolExecutor whose worker fails in "
            f"its initializer or while receiving device arrays reports only BrokenProcessPool). Start them with "
            f"multiprocessing.get_context('spawn') or get_context('forkserver') (ProcessPoolExecutor(mp_context=...)"
            f"), or start the pool before the first device use.",
            ForkWarning, caller.f_code.co_filename, caller.f_lineno, module=caller.f_globals.get("__name__"),
            registry=caller.f_globals.setdefault("__warningregistry__", {}), module_globals=caller.f_globals)
    except Exception:            # pragma: no cover - a warning filter set to "error" must not break fork()
        pass


_handlers.append(_forget_core_state)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_warn_before_pool_fork, after_in_child=_after_fork_in_child)
