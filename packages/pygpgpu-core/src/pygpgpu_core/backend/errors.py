"""A backend's status codes turned into errors that say what went wrong and what to do.

Each backend declares one :class:`ErrorTable`: its fatal codes (after which the context is
unusable: :class:`~pygpgpu_core.errors.ContextLost`), a hint per common code, and how to ask
the loaded library for a code's name and text. Every failed call becomes a
:class:`~pygpgpu_core.errors.DriverError` naming the call, the status and the hint.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..errors import ContextLost, DriverError

if TYPE_CHECKING:
    from .library import Calls

__all__ = ["ErrorTable", "call_name"]


def call_name(call: Any) -> str:
    """``"cuMemAlloc"`` for the bound function ``cuMemAlloc_v2`` (or a string as it is)."""
    name = getattr(call, "__name__", None) or str(call)
    return name.removesuffix("_v2")


class ErrorTable:
    """``fatal``: code -> name of the statuses after which the context is lost (``lost`` says
    what that means for the user); ``hints``: code -> advice; ``ask_name`` / ``ask_text``:
    ``(calls, code) -> str | None`` from the loaded library; ``unknown``: the name of a code
    nothing knows (``"CUresult {code}"``)."""

    def __init__(self, backend: str, *, fatal: Mapping[int, str], hints: Mapping[int, str], lost: str, unknown: str,
                 ask_name: "Callable[[Calls, int], str | None] | None" = None,
                 ask_text: "Callable[[Calls, int], str | None] | None" = None):
        self.backend = backend
        self.fatal = dict(fatal)
        self.hints = dict(hints)
        self.lost = lost
        self.unknown = unknown
        self._ask_name = ask_name
        self._ask_text = ask_text

    def name(self, code: int, calls: "Calls | None" = None) -> str:
        """The status's name: the fatal table's, else the library's, else ``unknown``."""
        if code in self.fatal:
            return self.fatal[code]
        if calls is not None and self._ask_name is not None:
            try:
                found = self._ask_name(calls, code)
            except Exception:  # a half-working library must not hide the original error
                found = None
            if found:
                return found
        return self.unknown.format(code=code)

    def text(self, code: int, calls: "Calls | None" = None) -> str:
        """The library's description of the status ('' when it has none)."""
        if calls is None or self._ask_text is None:
            return ""
        try:
            return self._ask_text(calls, code) or ""
        except Exception:
            return ""

    def raise_for(self, status: int, call: Any, hint: str = "", calls: "Calls | None" = None) -> None:
        """Raise the error for a failed ``call`` (a bound function or its name)."""
        name = self.name(status, calls)
        if status in self.fatal:
            raise ContextLost(self.backend, call_name(call), status, name,
                              f"a kernel faulted ({self.text(status, calls) or name}); {self.lost}")
        explanation = hint or self.hints.get(status) or self.text(status, calls)
        raise DriverError(self.backend, call_name(call), status, name, explanation)

    def check(self, status: int, call: Any, hint: str = "", calls: "Calls | None" = None) -> None:
        """Nothing for status 0, else :meth:`raise_for`."""
        if status:
            self.raise_for(status, call, hint, calls)
