"""numpy's warnings that depend on the data, given when the data is read back.

``np.nanmax`` of an all-NaN slice warns "All-NaN slice encountered"; knowing that on the host
would cost a device-to-host read and a wait in every call. A slice with nothing left makes the
result NaN there, so the nan-reductions leave their warning on the result instead
(:func:`warn_when_read`), and the first read-back of it (``get()``, printing, ``float(r)``,
``np.asarray(r)``) gives the warning when the values it read hold a NaN. Where a NaN can also
come from the data itself (``nanmean`` of ``[inf, -inf]``), the per-slice flags the reduction
computed are read too, and only then. A result never read back never warns.
"""
from __future__ import annotations

import warnings
import weakref
from typing import Any

import numpy as np

__all__ = ["warn_when_read", "on_read"]

# id(result array) -> (weak reference to it, message, flags: a device array of one bool per slice, or
# None when a NaN in the result already says it). By id: a WeakKeyDictionary would compare arrays
# with ==, which is elementwise for arrays (and false for NaN).
_pending: "dict[int, tuple[weakref.ref, str, Any]]" = {}


def warn_when_read(result: Any, message: str, flags: Any = None) -> Any:
    """Give RuntimeWarning ``message`` at the first read-back of ``result`` that finds a NaN (and,
    with ``flags``, a true flag). Returns ``result``."""
    key = id(result)
    _pending[key] = (weakref.ref(result, lambda _ref: _pending.pop(key, None)), message, flags)
    return result


def on_read(array: Any, host: np.ndarray) -> None:
    """Called by ``DeviceArray.get`` with the values it read (only while warnings are pending)."""
    entry = _pending.get(id(array))
    if entry is None or entry[0]() is not array:
        return
    del _pending[id(array)]
    _ref, message, flags = entry
    if host.dtype.kind == "f" and np.isnan(host).any() and (flags is None or bool(flags.get().any())):
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def pending() -> bool:
    return bool(_pending)
