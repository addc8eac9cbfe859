"""Exception types shared by every PyGPGPU package.

All errors derive from :class:`GPGPUError`, so ``except pygpgpu.GPGPUError`` catches
anything the library raises on purpose. Messages say what went wrong *and* what to do.
"""
from __future__ import annotations

from typing import Sequence

__all__ = [
    "GPGPUError",
    "BackendUnavailable",
    "DeviceNotFound",
    "CompileError",
    "DriverError",
    "ContextLost",
    "ClosedError",
    "PyGPGPUWarning",
]


class GPGPUError(Exception):
    """Base class of every error PyGPGPU raises on purpose."""


class BackendUnavailable(GPGPUError):
    """A backend cannot be used on this machine; ``reason`` says why (missing library, no device...).

    ``fix``, when the raiser knows it, is what to do, kept apart from ``problem`` (what went wrong)
    so that a summary over several backends can put the fix first; ``reason`` is both, problem first."""

    def __init__(self, backend: str, reason: str, *, fix: str = ""):
        self.backend = backend
        self.problem = reason
        self.fix = fix
        self.reason = (f"{reason}. {fix}" if fix[:1].isupper() else f"{reason}: {fix}") if fix else reason
        super().__init__(f"backend {backend!r} is unavailable: {self.reason}")


class DeviceNotFound(GPGPUError, LookupError):
    """No device matches a selector; ``available`` lists the selectors that do exist."""

    def __init__(self, selector: str, available: Sequence[str], detail: str = ""):
        self.selector = selector
        self.available = list(available)
        self.detail = detail
        listing = ", ".join(self.available) if self.available else "none"
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"no device matches {selector!r}{extra}. Available devices: {listing}. "
            "Use pygpgpu.available_devices() to list them."
        )


class CompileError(GPGPUError):
    """Device code failed to compile. ``log`` holds the compiler's build log."""

    def __init__(self, message: str, log: str = "", source: str = "", source_path: str | None = None):
        self.log = log
        self.source = source
        self.source_path = source_path
        text = message
        if source_path:
            text += f"\n  generated source: {source_path}"
        if log:
            text += "\n--- build log ---\n" + log.strip()
        super().__init__(text)


class DriverError(GPGPUError):
    """A vendor API call failed. ``name`` is the vendor's status name (e.g. CL_OUT_OF_RESOURCES)."""

    def __init__(self, backend: str, call: str, code: int, name: str, hint: str = ""):
        self.backend = backend
        self.call = call
        self.code = code
        self.name = name
        msg = f"{backend}: {call} failed with {name} ({code})"
        if hint:
            msg += f": {hint}"
        super().__init__(msg)


class ContextLost(DriverError):
    """A kernel faulted (e.g. an illegal address) and the device context is no longer usable."""


class ClosedError(GPGPUError, ValueError):
    """An object was used after ``close()``."""

    def __init__(self, what: str):
        super().__init__(f"{what} is closed; create a new one instead of reusing a closed object")


class PyGPGPUWarning(UserWarning):
    """Base category of every warning PyGPGPU issues, attributed to the user's line
    (``warnings.filterwarnings("error", category=pygpgpu.PyGPGPUWarning)`` turns them into errors)."""
