"""Errors about the user's kernel or set-up reach the user without the translator's frames.

A SyntaxError or KernelTypeError already names the user's file and line and quotes it; the
fifteen frames of translator between the call and the raise only hide that. Calls of a kernel
re-raise these errors from their own frame, so the traceback ends at the user's call. With
``PYGPGPU_DEBUG`` set (any value but 0) the full traceback stays, for debugging PyGPGPU itself.
"""
from __future__ import annotations

import os

from pygpgpu_core.errors import BackendUnavailable, DeviceNotFound

from ._source import KernelTypeError

__all__ = ["USER_ERRORS", "for_user"]

# what the user fixes in their own code or set-up; anything else keeps its frames (a bug of ours)
USER_ERRORS = (SyntaxError, KernelTypeError, DeviceNotFound, BackendUnavailable)


def for_user(exc: BaseException) -> BaseException:
    """``exc`` with the frames below the current one dropped, unless ``PYGPGPU_DEBUG`` is set."""
    if os.environ.get("PYGPGPU_DEBUG", "").strip() not in ("", "0"):
        return exc
    return exc.with_traceback(None)
