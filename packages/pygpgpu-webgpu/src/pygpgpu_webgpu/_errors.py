"""wgpu-py's exceptions as PyGPGPU errors: one function, as every backend has."""
from __future__ import annotations

from pygpgpu_core.errors import DriverError

__all__ = ["driver_error"]


class WebGPUError(DriverError):
    """A WebGPU call failed: ``name`` is wgpu's error class (GPUValidationError, GPUOutOfMemoryError...)."""

    def __init__(self, call: str, exc: BaseException, hint: str = "") -> None:
        self.detail = str(exc)
        super().__init__("webgpu", call, -1, type(exc).__name__, hint or self.detail)


def driver_error(call: str, exc: BaseException, hint: str = "") -> WebGPUError:
    return WebGPUError(call, exc, hint)
