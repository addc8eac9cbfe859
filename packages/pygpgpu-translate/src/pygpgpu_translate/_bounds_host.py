"""The bounds-checked debug mode, host side: the error buffer each launch clears and reads back,
and the IndexError it turns into (the device side is ``_bounds``).

Switched on per kernel with ``@kernel(debug=True)``, or for every kernel defined while the
environment variable ``PYGPGPU_BOUNDS_CHECK`` is set (to anything but ``0``).
"""
from __future__ import annotations

import os
import threading

import numpy as np

from ._bounds import ERROR_SLOTS, MAX_DIMS
from ._launch import LaunchPlan

__all__ = ["ENV_VAR", "CheckedLaunchPlan", "bounds_check_default"]

ENV_VAR = "PYGPGPU_BOUNDS_CHECK"


def bounds_check_default() -> bool:
    """Whether kernels are bounds-checked without asking (``PYGPGPU_BOUNDS_CHECK=1``)."""
    return os.environ.get(ENV_VAR, "").strip() not in ("", "0")


class CheckedLaunchPlan(LaunchPlan):
    """A launch plan of a bounds-checked kernel: clears the error buffer, launches, reads the
    buffer back and raises IndexError for the first out-of-bounds access the kernel recorded.

    The buffer is the kernel's last argument whichever way the arrays travel (numpy arrays staged
    or batched, gnp arrays resident); launches of one plan from several threads take turns, so
    an error is reported to the call that caused it."""

    def _extra_state(self) -> None:
        self.error_buffer = self.context.buffer(ERROR_SLOTS * 4)
        self._clear = np.zeros(ERROR_SLOTS, np.int32)
        self._errors = np.zeros(ERROR_SLOTS, np.int32)
        self._turn = threading.Lock()

    def run(self, values, global_size, local_size):
        buffer = self.error_buffer
        assert buffer is not None          # made by _extra_state before the plan is sealed
        with self._turn:
            buffer.write(self._clear)
            super().run(values, global_size, local_size)
            buffer.read(self._errors)     # waits for the launch
            if self._errors[0]:
                raise IndexError(describe(self.t, self._errors))


def _wide(slots, k) -> int:
    """The int64 stored as two int32 slots (low, high) from ``k``."""
    return (int(slots[k]) & 0xFFFFFFFF) | (int(slots[k + 1]) << 32)


def describe(t, slots) -> str:
    """The IndexError message for error-buffer contents ``slots`` of translation ``t``."""
    site, dim, ndim = int(slots[1]), int(slots[2]), int(slots[3])
    sites = t.bounds_sites or []
    if not 0 <= site < len(sites):
        return (f"kernel {t.name!r}: an array index was out of bounds (debug bounds check; unknown site {site}); "
                "the access was skipped")
    array, filename, line, kind, helper, text, unsigned = sites[site]
    extents = [_wide(slots, 6 + 2 * k) for k in range(min(ndim, MAX_DIMS))]
    index = _wide(slots, 4)
    if dim in unsigned:
        index &= (1 << 64) - 1         # a uint64 index passed as its bits (2**63 and more looked negative)
    elif index < 0 and 0 <= dim < len(extents):
        index -= extents[dim]          # the device saw the index after Python's wrap (i + n for i < 0)
    shape = "(" + ", ".join(str(n) for n in extents) + ("," if len(extents) == 1 else "") + ")"
    verb = {"read": "reading", "write": "writing", "atomic": "an atomic update of"}.get(kind, kind)
    where = f"helper {helper}() called by kernel {t.name!r}" if helper else f"kernel {t.name!r}"
    return (f"{filename}:{line}: index {index} is out of bounds for axis {dim} with size "
            f"{extents[dim] if 0 <= dim < len(extents) else '?'}: {verb} array {array!r} of shape {shape} "
            f"in {where}\n    {text}\n"
            f"(found by the bounds check of @kernel(debug=True) / {ENV_VAR}=1; the first such access is "
            "reported, and every out-of-bounds access was skipped, reads giving 0)")
