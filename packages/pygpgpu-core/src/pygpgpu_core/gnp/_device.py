"""Turning the ``device=`` argument of every gnp function into a Device (and its Context)."""
from __future__ import annotations

import os
from typing import Any

from .. import registry
from ..errors import GPGPUError
from ..scoped_device import scoped_device

__all__ = ["resolve_device", "resolve_target", "backend_name"]


def _is_context(obj: Any) -> bool:
    return callable(getattr(obj, "buffer", None)) and hasattr(obj, "queue") and hasattr(obj, "device")


def resolve_target(device: Any) -> "tuple[Any, Any]":
    """``(device, context)`` for a ``device=`` argument. A Context (e.g. a private
    ``pygpgpu_opencl.Context(dev)``) selects that context; anything else the device's shared one."""
    if _is_context(device):
        return device.device, device
    dev = resolve_device(device)
    return dev, dev.context()


# Selector -> Device, so that gnp.empty(n) in a loop does not re-parse and re-probe each time.
# An entry is trusted only while the registry still lists that very device object (a
# reset_registry() or a changed $PYGPGPU_BACKEND makes it miss).
_resolved: dict = {}


def _still_registered(dev: Any) -> bool:
    try:
        return any(d is dev for d in registry.backend_devices(backend_name(dev)))
    except GPGPUError:
        return False


# the device the last default lookup gave (``device=None`` outside every scope): gnp functions whose
# operands live there need no scope of their own (_operand_device); the next lookup refreshes it
LAST_DEFAULT: list = [None]


def _select(selector: "str | None") -> Any:
    key = (selector, os.environ.get("PYGPGPU_BACKEND", ""))
    dev = _resolved.get(key)
    if dev is None or not _still_registered(dev):
        dev = registry.select_device(selector)
        if len(_resolved) > 64:
            _resolved.clear()
        _resolved[key] = dev
    if selector is None:
        LAST_DEFAULT[0] = dev
    return dev


def resolve_device(device: Any) -> Any:
    """``None`` -> the default device (the scoped one inside ``with pygpgpu.device(...)``); a selector string (``"opencl:0"``, ``"cuda"``) -> that
    device; a Device -> itself; a device array or Context -> its device."""
    if device is None:
        scoped = scoped_device()     # with pygpgpu.device(...): / with dev: (not cached: it changes)
        return _select(None) if scoped is None else scoped
    if isinstance(device, str):
        return _select(device)
    if callable(getattr(device, "context", None)) and hasattr(device, "selector") and hasattr(device, "backend"):
        return device
    inner = getattr(device, "device", None)  # a DeviceArray or a Context
    if inner is not None and inner is not device and hasattr(inner, "selector"):
        return inner
    raise TypeError(
        f"device must be a selector string such as 'opencl:0' or 'cuda', a Device, or None for the "
        f"default device; got {type(device).__name__}"
    )


def backend_name(device: Any) -> str:
    backend = getattr(device, "backend", None)
    return getattr(backend, "name", None) or device.selector.split(":", 1)[0]
