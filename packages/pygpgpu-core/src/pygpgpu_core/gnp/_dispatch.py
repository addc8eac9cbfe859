"""Where array operations come from: the hook between device arrays (core) and the kernels that
compute on them (pygpgpu-translate).

pygpgpu-core holds the array object and its numpy-style *data model* (shape, dtype, views,
transfers) but cannot compile Python to device code; the operations (``g + h``, ``g.sum()``,
``gnp.sqrt``, ``gnp.sort`` ...) are ``@kernel`` functions that live in
``pygpgpu_translate.array_ops``, so they run on every backend the translator targets.
``pygpgpu_translate`` registers that module here when it is imported (:func:`set_provider`);
core never imports it at module import time. The first operation in a process that has not
imported it yet imports it then (it is the one module that can provide them), and a process
without pygpgpu-translate gets :class:`OperationsUnavailable` saying what to install.

The provider is a module (or any object) with one function per operation name:
``provider.binary("add", a, b, out)``, ``provider.reduce("sum", a, axis, ...)`` and so on;
:func:`ops` returns it.
"""
from __future__ import annotations

import threading
from typing import Any

from ..errors import GPGPUError

__all__ = ["set_provider", "ops", "OperationsUnavailable", "PROVIDER_MODULE"]

# the module that provides the operations (imported on first use when nobody registered one; the
# import itself is spelled out in _import_provider, this name is what messages say)
PROVIDER_MODULE = "pygpgpu_translate.array_ops"


class OperationsUnavailable(GPGPUError, ImportError):
    """Array operations need the translator (pygpgpu-translate), which is not installed."""


_provider: Any = None
_lock = threading.Lock()


def set_provider(provider: Any) -> None:
    """Register the object whose functions implement array operations (called by
    ``pygpgpu_translate.array_ops`` when it is imported; tests may swap it)."""
    global _provider
    _provider = provider


def _import_provider() -> None:
    """Import ``pygpgpu_translate.array_ops``, which registers itself (:func:`set_provider`).

    A lazy import on purpose (the one import of the translator in core): pygpgpu-translate depends
    on pygpgpu-core, so importing it at module level would make the two import each other and
    make core need the translator installed; the first array operation is the first moment it
    is needed."""
    import pygpgpu_translate.array_ops  # noqa: F401  (imported for its registration)


def ops() -> Any:
    """The registered operations provider, importing ``pygpgpu_translate.array_ops`` on first
    use; :class:`OperationsUnavailable` when pygpgpu-translate is not installed."""
    p = _provider
    if p is not None:
        return p
    with _lock:
        if _provider is None:
            try:
                _import_provider()
            except ImportError as exc:
                if exc.name and not PROVIDER_MODULE.startswith(exc.name):
                    raise             # the provider exists but something it needs is missing: say that
                raise OperationsUnavailable(
                    "device array operations (arithmetic, ufuncs, reductions, sorting, copies of strided "
                    "views) are compiled by pygpgpu-translate, which is not installed; install the "
                    "'pygpgpu' package (pip install pygpgpu[opencl] or [cuda]) or pygpgpu-translate"
                ) from None
        if _provider is None:
            raise OperationsUnavailable(f"{PROVIDER_MODULE} was imported but did not register its operations")
        return _provider
