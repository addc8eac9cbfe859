"""Pickling devices and device arrays (``pickle``, ``multiprocessing``, Dask, joblib).

What crosses a process boundary is a description, never driver state: a device travels as its
selector (``"opencl:0"``), a device array as its dtype, shape, data (read back to the host) and
the selector of its device. Contexts, queues, memory pools, caches and locks belong to one
process and are never pickled; the receiving process makes its own on first use.

A device array is unpickled onto the device its selector names when that device exists in the
receiving process, and onto the receiving process's default device otherwise (a worker with
other hardware still gets the data). A device unpickles only onto the device its selector
names: an absent one raises :class:`~pygpgpu_core.errors.DeviceNotFound` or
:class:`~pygpgpu_core.errors.BackendUnavailable` there.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import registry
from .errors import GPGPUError

__all__ = ["array_from_host", "device_from_selector", "reduce_array", "reduce_device"]


def device_from_selector(selector: str) -> Any:
    """The device ``selector`` names in this process (the inverse of :func:`reduce_device`)."""
    return registry.select_device(selector)


def reduce_device(device: Any) -> tuple:
    """``Device.__reduce__``: the selector, e.g. ``opencl:1``."""
    return device_from_selector, (device.selector,)


def _device_or_default(selector: str | None) -> Any:
    if selector:
        try:
            return registry.select_device(selector)
        except (GPGPUError, ValueError):     # no such device or backend here: the default device
            pass
    return registry.select_device(None)


def array_from_host(host: np.ndarray, selector: str | None) -> Any:
    """A device array holding ``host``, on the device ``selector`` names if this process has it,
    else on the default device (the inverse of :func:`reduce_array`). In a process forked after
    that device's backend was used, a :class:`~pygpgpu_core.forking.ForkedDeviceArray` whose use
    raises ForkedProcessError: unpickling must not fail there, because a pool worker that fails
    while reading its task dies, and the parent learns only "BrokenProcessPool"; the task itself
    raises instead, and its error reaches the parent."""
    from .forking import ForkedDeviceArray, forked_backends
    from .gnp import asarray

    device = _device_or_default(selector)
    backend = device.selector.partition(":")[0]
    if backend in forked_backends():
        return ForkedDeviceArray(backend, host, device.selector)
    return asarray(host, device=device)


def reduce_array(array: Any) -> tuple:
    """``DeviceArray.__reduce__``: the data as a numpy array (dtype, shape and bytes; numpy pickles
    it efficiently, out of band with protocol 5) and the device's selector. Waits for kernels
    queued on the array, like ``get()``."""
    return array_from_host, (array.get(), array.device.selector)
