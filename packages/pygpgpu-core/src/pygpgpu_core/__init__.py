"""PyGPGPU core: protocols, errors, device selection, backend registry and caches.

Importing this package loads no vendor library and scans no entry points.
"""
from .errors import (
    BackendUnavailable,
    ClosedError,
    CompileError,
    ContextLost,
    DeviceNotFound,
    DriverError,
    GPGPUError,
)
from .registry import (
    available_devices,
    backend_devices,
    backend_names,
    default_backend_name,
    diagnostics,
    get_backend,
    get_device,
    reset_registry,
    select_device,
)
from .selector import Selector, canonical_backend, parse_selector

from ._version import __version__ as __version__  # re-exported

__all__ = [
    "GPGPUError",
    "BackendUnavailable",
    "DeviceNotFound",
    "CompileError",
    "DriverError",
    "ContextLost",
    "ClosedError",
    "available_devices",
    "backend_devices",
    "backend_names",
    "default_backend_name",
    "diagnostics",
    "get_backend",
    "get_device",
    "reset_registry",
    "select_device",
    "Selector",
    "canonical_backend",
    "parse_selector",
]
