"""The order of the devices within one backend: GPUs first, then other accelerators, CPUs last.

A backend's first device is what ``k["opencl"]``, ``get_device("opencl")`` and ``opencl:0``
name, so on a machine with both a GPU and PoCL the GPU must come first; PoCL on the CPU
stays the fallback when nothing else exists. The sort is stable: devices of one kind keep
the driver's order (platform order, then the order each platform enumerates them), so an
index names the same device in every run on the same machine.

Backends number their devices after ordering them with :func:`order_devices`, so that a
device's ``selector`` (``"opencl:0"``) and its position in the registry agree.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .protocols import option

__all__ = ["ACCELERATOR", "CPU", "GPU", "order_devices", "type_rank"]

GPU = 0
ACCELERATOR = 1
"""Anything that is neither a GPU nor a CPU (FPGA, DSP, custom devices), and devices of
backends that do not say (``is_gpu`` / ``is_cpu``, optional attributes of the contract)."""
CPU = 2


def type_rank(device: Any) -> int:
    """``GPU``, ``ACCELERATOR`` or ``CPU`` from the device's ``is_gpu`` / ``is_cpu`` flags."""
    if option(device, "is_gpu"):
        return GPU
    if option(device, "is_cpu"):
        return CPU
    return ACCELERATOR


def order_devices(devices: Iterable[Any]) -> list:
    """``devices`` sorted by :func:`type_rank`, keeping the given order within each rank."""
    return sorted(devices, key=type_rank)
