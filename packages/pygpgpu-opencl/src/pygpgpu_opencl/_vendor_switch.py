"""When an optional OpenCL vendor library (CLBlast, clFFT) may run on a device."""
from __future__ import annotations

import os
from typing import Any, Callable

from pygpgpu_core.errors import BackendUnavailable

__all__ = ["allowed_on", "loaded_if_allowed"]


def allowed_on(device: Any, switch: str) -> bool:
    """``switch`` (an environment variable) "0": never; "1": on every device; unset: on devices
    that are not CPUs. On a CPU device (PoCL) these libraries' kernels take 20-60 s to compile on
    their first use in a fresh cache, where our own kernels take about a second, so there they run
    only when asked for. Read on every call: tests switch it."""
    setting = os.environ.get(switch, "")
    if setting == "0":
        return False
    return setting == "1" or device is None or not getattr(device, "is_cpu", False)


def loaded_if_allowed(device: Any, switch: str, library: "Callable[[], Any]", unavailable: "list[str]") -> Any:
    """``library()`` (its bound functions, loaded on the first call) where ``switch`` allows it on
    ``device`` and it loads; None otherwise. Why it failed to load is kept in ``unavailable``, and
    nothing is tried again after that."""
    if unavailable or not allowed_on(device, switch):
        return None
    try:
        return library()
    except BackendUnavailable as exc:
        unavailable.append(str(exc))
        return None
