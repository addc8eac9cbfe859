"""A scoped default device: ``with pygpgpu.device("cuda:0"):`` or ``with dev:``.

Inside the block, kernels called without a device selector (``k(x, out)``, ``k[(n, 256)](...)``),
gnp functions called without ``device=`` and ``get_device()`` use that device. Blocks nest (the
innermost wins) and each exit restores what was there before, also when the body raises. The
scope is per thread and per asyncio task (a ``contextvars.ContextVar``): a thread started inside
a block does not see it. An explicit selector (``k["opencl"]``, ``device="cuda:1"``) and an
existing device array's own device are never overridden.
"""
from __future__ import annotations

from contextvars import ContextVar
from typing import Any

__all__ = ["device", "scoped_device", "DeviceScope", "ScopedDefault", "SCOPES"]

# the stack of scoped devices of this thread/task, innermost last; a tuple, so that a copied
# context (a new asyncio task) can never change the stack of the context it came from. Public for
# the kernel call path, which tests ``SCOPES.get()`` (empty: no scope) before anything else.
SCOPES: ContextVar["tuple[Any, ...]"] = ContextVar("pygpgpu_scoped_device", default=())


def scoped_device() -> Any:
    """The device of the innermost ``with`` block of this thread, or None outside every block."""
    stack = SCOPES.get()
    return stack[-1] if stack else None


def _enter(dev: Any) -> None:
    SCOPES.set(SCOPES.get() + (dev,))


def _exit(dev: Any) -> None:
    stack = SCOPES.get()
    if not stack or stack[-1] is not dev:
        raise RuntimeError(f"the scoped default device {getattr(dev, 'selector', dev)!r} is left out of order; "
                           "use it in a with statement, which enters and leaves scopes in order")
    SCOPES.set(stack[:-1])


class ScopedDefault:
    """What makes a Device a context manager: ``with dev:`` makes ``dev`` the default device of
    this thread inside the block (kernels without a selector, gnp creation without ``device=``)."""

    __slots__ = ()

    def __enter__(self) -> Any:
        _enter(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        _exit(self)


class DeviceScope:
    """What :func:`device` returns: ``with`` it, and the device is this thread's default device.
    ``.device`` is the Device; ``with pygpgpu.device("opencl") as dev:`` binds it too."""

    __slots__ = ("device",)

    def __init__(self, dev: Any) -> None:
        self.device = dev

    def __enter__(self) -> Any:
        _enter(self.device)
        return self.device

    def __exit__(self, *exc_info: object) -> None:
        _exit(self.device)

    def __repr__(self) -> str:
        return f"<pygpgpu.device {self.device.selector}>"


def device(selector: Any) -> DeviceScope:
    """``with pygpgpu.device("cuda:0"):`` runs the block with that default device (a selector
    string as ``k[...]`` takes, or a Device). The device is looked up here, so a selector that
    matches nothing raises DeviceNotFound at the ``with`` line."""
    if isinstance(selector, str):
        from .registry import select_device

        return DeviceScope(select_device(selector))
    if not (hasattr(selector, "selector") and callable(getattr(selector, "context", None))):
        raise TypeError(f"pygpgpu.device() takes a selector string such as 'opencl:0' or a Device, "
                        f"got {type(selector).__name__}")
    return DeviceScope(selector)
