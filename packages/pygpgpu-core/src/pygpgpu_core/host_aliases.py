"""One numpy array passed for several pointer parameters of one launch.

A numpy argument is copied into a device buffer for the launch and read back after it. Passed
twice, one array would become two copies, and the copy read back last would undo the writes
made through the other; in C the two parameters are one pointer. So the same array (the same
memory, layout and dtype) gets one buffer, and different arrays that share memory
(``x[1:]`` and ``x[:-1]``) are refused when the kernel may write either: no pair of copies
gives them C's meaning. Used by the kernel-file arguments and the backends' low-level launches.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["same_array", "earlier_same"]


def same_array(a: np.ndarray, b: np.ndarray) -> bool:
    """The same elements in the same layout (``x`` twice, or two equal views of it)."""
    return a is b or (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
                      and a.strides == b.strides and a.dtype == b.dtype)


def earlier_same(array: np.ndarray, written: bool, earlier: "Sequence[tuple[np.ndarray, bool, str]]") -> "int | None":
    """The index of the ``(array, written, name)`` in ``earlier`` that ``array`` is, or None.
    Raises ValueError (naming that earlier parameter) when they are different arrays sharing
    memory and either is ``written``."""
    for k, (other, other_written, name) in enumerate(earlier):
        if not np.may_share_memory(array, other):          # bounds only: cheap
            continue
        if same_array(array, other):
            return k
        if (written or other_written) and np.shares_memory(array, other):
            raise ValueError(f"it overlaps in memory with {name} but is not the same array, and the kernel may "
                             "write one of them; each would be copied to the device apart. Pass the same array "
                             "for both, or arrays that share no memory")
    return None
