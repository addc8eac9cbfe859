"""Ownership of HIP handles: idempotent close, context managers, a shutdown-safe finalizer.

At interpreter exit the HIP runtime may already be tearing itself down, so finalizers then
do nothing and process exit reclaims device memory.
"""
from __future__ import annotations

import atexit
import sys

from pygpgpu_core.errors import ClosedError

__all__ = ["OwnedHandle", "finalizing"]

_exiting = False


def _mark_exiting() -> None:
    global _exiting
    _exiting = True


atexit.register(_mark_exiting)


def finalizing() -> bool:
    """True once the interpreter has started to exit."""
    return _exiting or sys.is_finalizing()


class OwnedHandle:
    """Base class of objects owning one HIP handle (``_handle``: an int, or None once closed).

    Subclasses implement ``_release(handle)``; ``close()`` calls it exactly once.
    """

    _handle: "int | None" = None
    _kind = "HIP object"
    _closed_reason = ""

    def _release(self, handle: int) -> None:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    @property
    def handle(self) -> int:
        """The raw HIP handle or device pointer as an int, for interop."""
        return self._require()

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _require(self) -> int:
        h = self._handle
        if h is None:
            raise ClosedError(f"this {self._kind}{self._closed_reason}")
        return h

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

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        if finalizing():
            return
        try:
            self.close()
        except Exception:
            pass  # a finalizer must never raise
