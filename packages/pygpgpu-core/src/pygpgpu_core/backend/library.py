"""A vendor library loaded on first use, and its call table.

A backend describes its library once: where to look (an override variable, then candidate
names or paths), what to tell the user when it is missing, and the functions it needs, each
under the *role* name the backend's code (and the driver kit) calls it by, e.g.
``"mem_alloc": Function("cuMemAlloc_v2", (POINTER(c_uint64), c_size_t))``. Nothing is loaded
until the first call of the :class:`LazyLibrary`; ``import`` of a backend stays free of vendor
libraries, and a machine without them gets :class:`~pygpgpu_core.errors.BackendUnavailable`
naming what to install.

In a process forked after a driver library was loaded, the library is replaced by a stand-in
whose every function raises :class:`~pygpgpu_core.forking.ForkedProcessError`, and every
context made from it forgets its handles (see :mod:`pygpgpu_core.forking`).
"""
from __future__ import annotations

import ctypes
import os
import threading
import weakref
from ctypes import c_int
from typing import TYPE_CHECKING, Any, Callable, Mapping, NamedTuple, Sequence

from ..errors import BackendUnavailable
from ..forking import ForkedLibrary, mark_forked, on_fork_child, on_fork_report_use

if TYPE_CHECKING:
    from .errors import ErrorTable

__all__ = ["Function", "Calls", "LazyLibrary"]


class Function(NamedTuple):
    """One vendor function of a call table."""

    symbol: "str | None"
    """The exported symbol (``"cuMemAlloc_v2"``; error messages drop a ``_v2`` suffix); None: a
    function this library does not offer (optional ones only), bound as None."""
    argtypes: "tuple | None" = None
    """ctypes argument types; None leaves them unset."""
    restype: Any = c_int
    optional: bool = False
    """Missing from older libraries: bound as None instead of failing the load."""
    fast: bool = False
    """Also bound as ``<role>_unchecked``, a separate function object without argtypes: ctypes then
    skips a ``from_param`` per argument, 1-2 us of a 6-8 us CUDA launch. For ready-made ctypes
    handles and small ints only (the launch path)."""


class Calls:
    """The bound call table of a loaded library: ``calls.<role>(...)`` calls the vendor function,
    ``calls.check(status, calls.<role>)`` raises the backend's error for a failed status."""

    def __init__(self, backend: str, lib: ctypes.CDLL, path: str, errors: "ErrorTable | None"):
        self.backend = backend
        self.lib = lib
        self.path = path
        self.errors = errors

    def has(self, role: str) -> bool:
        """Whether the library has this (optional) function."""
        return getattr(self, role, None) is not None

    def check(self, status: int, call: Any, hint: str = "") -> None:
        """Nothing for status 0; else the backend's DriverError (ContextLost for a fatal status).
        ``call`` names the failed call: a bound function or a string."""
        if status:
            assert self.errors is not None, f"{self.backend}: this library has no error table"
            self.errors.raise_for(status, call, hint, self)

    def __repr__(self) -> str:
        return f"<{self.backend} library {self.path}>"

    if TYPE_CHECKING:  # the roles of the backend's call table, bound when the library loads
        def __getattr__(self, role: str) -> Any: ...


_fork_unsafe: "weakref.WeakSet[LazyLibrary]" = weakref.WeakSet()


class LazyLibrary:
    """A vendor library, loaded and prototyped by the first call (thread-safe); ``lib()`` then
    returns the same :class:`Calls` every time.

    ``candidates()`` lists names or paths to try in order (it may raise BackendUnavailable
    itself, e.g. when a locator package is missing); ``env`` names a variable whose value, when
    set, is the only candidate. ``hint`` (text, or a function returning it) says how to install
    the library. ``prepare(path)`` runs before an absolute path is loaded; ``fallback(tried)``
    may return a library when no candidate loads. ``fork_unsafe``: a driver whose state does
    not survive fork (not a compiler). A failure is remembered: later calls raise it again
    without searching (``reset()`` forgets it).
    """

    def __init__(self, backend: str, what: str, functions: Mapping[str, Function], *,
                 candidates: Callable[[], Sequence[str]], hint: "str | Callable[[], str]", env: "str | None" = None,
                 errors: "ErrorTable | None" = None, too_old: str = "", prepare: "Callable[[str], None] | None" = None,
                 fallback: "Callable[[list[str]], ctypes.CDLL] | None" = None, fork_unsafe: bool = False):
        self.backend = backend
        self.what = what
        self.functions = dict(functions)
        self.errors = errors
        self._candidates = candidates
        self._hint = hint
        self.env = env
        self._too_old = too_old
        self._prepare = prepare
        self._fallback = fallback
        self._lock = threading.Lock()
        self._calls: "Calls | None" = None
        self._failure: "BackendUnavailable | None" = None
        self._forked: "ForkedLibrary | None" = None
        if fork_unsafe:
            _fork_unsafe.add(self)

    # -- state --------------------------------------------------------------------------------
    @property
    def loaded(self) -> bool:
        """Whether the library was loaded (nothing here loads it)."""
        return self._calls is not None or self._forked is not None

    @property
    def calls(self) -> "Calls | None":
        """The bound calls when loaded, else None (never loads)."""
        return self._calls

    def hint(self) -> str:
        return self._hint() if callable(self._hint) else self._hint

    def reset(self) -> None:
        """Forget a remembered failure (tests change the override variable); a loaded library stays."""
        with self._lock:
            self._failure = None

    # -- loading ------------------------------------------------------------------------------
    def __call__(self) -> Calls:
        calls = self._calls
        if calls is not None:
            return calls
        if self._forked is not None:
            return self._forked  # type: ignore[return-value]  # every attribute raises ForkedProcessError
        with self._lock:
            if self._calls is None:
                if self._failure is not None:
                    raise BackendUnavailable(self.backend, self._failure.problem, fix=self._failure.fix)
                try:
                    lib = self._load()
                    self._calls = self._bind(lib)
                except BackendUnavailable as exc:
                    self._failure = exc
                    raise
        return self._calls

    def _load(self) -> ctypes.CDLL:
        override = os.environ.get(self.env, "").strip() if self.env else ""
        if override:
            try:
                return self._open(override)
            except OSError as exc:
                raise BackendUnavailable(
                    self.backend, f"{self.env}={override!r} could not be loaded ({_without_name(exc, override)})",
                    fix=self.hint()) from None
        tried: list[str] = []
        candidates = list(self._candidates())
        for candidate in candidates:
            try:
                return self._open(candidate)
            except OSError as exc:
                # "libcuda.so.1: cannot open shared object file": the loader's text names the file already
                tried.append(f"{candidate}: {_without_name(exc, candidate)}" if os.sep in candidate
                             or len(candidates) == 1 else candidate)
        if self._fallback is not None:
            return self._fallback(tried)
        raise BackendUnavailable(
            self.backend, f"{self.what} could not be loaded (tried {', '.join(tried) or 'nothing'})", fix=self.hint())

    def _open(self, path: str) -> ctypes.CDLL:
        if self._prepare is not None and os.path.isabs(path):
            self._prepare(path)
        return ctypes.CDLL(path)

    def _bind(self, lib: ctypes.CDLL) -> Calls:
        path = getattr(lib, "_name", "") or self.what
        calls = Calls(self.backend, lib, path, self.errors)
        for role, fn in self.functions.items():
            if fn.symbol is None:
                setattr(calls, role, None)
                continue
            try:
                bound = getattr(lib, fn.symbol)
            except AttributeError:
                if fn.optional:
                    setattr(calls, role, None)
                    continue
                raise BackendUnavailable(
                    self.backend, f"{path} has no {fn.symbol}: {self._too_old or 'the library is too old'}",
                    fix=self.hint()) from None
            bound.restype = fn.restype
            if fn.argtypes is not None:
                bound.argtypes = fn.argtypes
            setattr(calls, role, bound)
            if fn.fast:
                raw = lib[fn.symbol]  # lib[name] is a new function object; lib.name is cached
                raw.restype = fn.restype
                setattr(calls, role + "_unchecked", raw)
        return calls

    # -- fork ---------------------------------------------------------------------------------
    def _forget_after_fork(self) -> bool:
        """In a forked child: replace the loaded library by the stand-in; whether it was loaded."""
        if self._calls is None:
            return False
        self._forked = ForkedLibrary(self.backend)
        self._calls = None
        self._lock = threading.Lock()  # another thread may have held it at fork
        return True

    def __repr__(self) -> str:
        state = "loaded" if self._calls is not None else ("forked" if self._forked else "not loaded")
        return f"<{self.backend} {self.what} ({state})>"


def _without_name(exc: OSError, name: str) -> str:
    """The loader's message without the file name it starts with (``name: cannot open ...``), so a
    message that names the file itself does not name it twice in nested parentheses."""
    text = str(exc)
    return text[len(name) + 2:] if text.startswith(f"{name}: ") else text


_fork_listeners: "list[Callable[[str], None]]" = []


def on_library_forked(listener: Callable[[str], None]) -> None:
    """Call ``listener(backend)`` in a forked child for each driver library the parent had loaded."""
    if listener not in _fork_listeners:
        _fork_listeners.append(listener)


def _drop_after_fork() -> None:
    for library in list(_fork_unsafe):
        if library._forget_after_fork():
            for listener in list(_fork_listeners):
                listener(library.backend)
            mark_forked(library.backend)


on_fork_child(_drop_after_fork)
on_fork_report_use(lambda: {library.backend for library in list(_fork_unsafe) if library._calls is not None})
