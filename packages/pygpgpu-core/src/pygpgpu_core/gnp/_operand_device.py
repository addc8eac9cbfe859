"""gnp functions run on their operands' device.

``gnp.gradient(g, [0.0, 0.5, 2.0])`` with ``g`` on ``opencl:1`` must upload the coordinates to
``opencl:1`` too, and so must every temporary a gnp function makes from Python scalars, lists or
numpy arrays. Those conversions call ``asarray(x)`` without ``device=``, which means the default
device (the scoped one inside ``with pygpgpu.device(...)``). Rather than thread ``device=`` through
every internal call, each public gnp function and array method runs inside a scope of the device
of its first device-array operand: the inner conversions then land beside the operands. Checked
with two devices present (two PoCL devices here; CUDA beside NVIDIA's OpenCL on the GPU machine),
where the default device is not the operands' one.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable, TypeVar

from ..scoped_device import SCOPES
from ._device import LAST_DEFAULT

__all__ = ["follow_operands", "follow_operands_in_namespace", "follow_operands_in_class", "scopes_itself"]


def _first_device(args: tuple, kwargs: dict, array_type: Any) -> Any:
    for value in (*args, *kwargs.values()):
        if isinstance(value, array_type):
            return value.device
        if isinstance(value, (list, tuple)):       # gnp.concatenate([g, h]), gnp.stack((g, h))
            for item in value:
                if isinstance(item, array_type):
                    return item.device
    return None


def follow_operands(fn: Callable, array_type: Any) -> Callable:
    """``fn`` run inside a scope of its first device-array operand's device (when it has one, no
    ``device=`` was passed, and that device is not already the scoped one)."""

    @functools.wraps(fn)
    def on_operands_device(*args: Any, **kwargs: Any) -> Any:
        if kwargs and kwargs.get("device") is not None:
            return fn(*args, **kwargs)
        first = args[0] if args else None
        dev = first.device if isinstance(first, array_type) else _first_device(args, kwargs, array_type)
        scopes = SCOPES.get()
        # no scope needed where the inner lookups already give the operands' device: the scoped one,
        # or (outside every scope) the default device the last lookup gave
        if dev is None or (scopes[-1] is dev if scopes else dev is LAST_DEFAULT[0]):
            return fn(*args, **kwargs)
        token = SCOPES.set(scopes + (dev,))
        try:
            return fn(*args, **kwargs)
        finally:
            SCOPES.reset(token)

    on_operands_device.__wrapped_for_operands__ = True  # type: ignore[attr-defined]
    return on_operands_device


_F = TypeVar("_F", bound=Callable[..., Any])


def scopes_itself(fn: _F) -> _F:
    """Mark ``fn`` (an array method) as entering its operands' device scope itself, past a warm
    path that converts nothing (the reductions: ``array_ops._reduction.reduce``), so that
    :func:`follow_operands_in_class` leaves it unwrapped: a warm small call then pays no wrapper
    and no scope (the fixed cost of a gnp call, issue 33 item 2)."""
    fn.__wrapped_for_operands__ = True  # type: ignore[attr-defined]
    return fn


def _wants_wrapping(value: Any, package: str) -> bool:
    return (isinstance(value, types.FunctionType) and value.__module__.startswith(package)
            and not getattr(value, "__wrapped_for_operands__", False))


def follow_operands_in_namespace(namespace: dict, names: list, array_type: type, package: str) -> None:
    """Wrap each public function ``names`` lists in ``namespace`` (a module's globals)."""
    for name in names:
        value = namespace.get(name)
        if value is not None and _wants_wrapping(value, package):
            namespace[name] = follow_operands(value, array_type)


def follow_operands_in_class(cls: type, array_type: type, package: str) -> None:
    """Wrap the public methods ``cls`` and its bases define (not the operators: they convert
    their scalar operand into a kernel argument, never into an array of the default device)."""
    for klass in cls.__mro__:
        for name, value in list(vars(klass).items()):
            if not name.startswith("_") and _wants_wrapping(value, package):
                setattr(klass, name, follow_operands(value, array_type))
