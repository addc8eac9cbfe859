"""When an optional OpenCL vendor library (CLBlast, clFFT) may run on a device."""
from __future__ import annotations

import os
from typing import Any

__all__ = ["allowed_on"]


def allowed_on(device: Any, switch: str) -> bool:
    """``switch`` (an environment variable) "0": never; "1": on every device; unset: on devices
    that are not CPUs. On a CPU device (PoCL) these libraries' kernels take 20-60 s to compile on
    their first use in a fresh cache, where our own kernels take about a second, so there they run
    only when asked for. Read on every call: tests switch it."""
    setting = os.environ.get(switch, "")
    if setting == "0":
        return False
    return setting == "1" or device is None or not getattr(device, "is_cpu", False)
