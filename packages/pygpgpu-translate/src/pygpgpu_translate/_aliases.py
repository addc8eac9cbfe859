"""Numpy arguments that share memory: ``k(x, x)`` (docs/architecture.md#the-launch-path).

Each numpy argument is staged into device memory of its own, so two parameters given the same
numpy array would be two copies: the kernel would not see its stores through the other
parameter, and of two written copies only the one read back last would survive, where the
function run on the host (and gnp arrays, which are device memory already) sees one array. So
a numpy array passed to several parameters is staged once, read and written through one
device buffer. Different views that overlap (``x[1:]`` and ``x[:-1]``) cannot share one
buffer as they are staged; when the kernel writes either, the call raises instead of giving
a result the host would not.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["numpy_aliases"]

# how hard np.shares_memory may work on intricate strides before it gives up (numpy's stubs allow
# only its -1 and 0 constants here, the function any bound)
_MAX_WORK: Any = 100_000


def _same_view(a: np.ndarray, b: np.ndarray) -> bool:
    return (a is b or (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
                       and a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype))


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    try:
        return bool(np.shares_memory(a, b, max_work=_MAX_WORK))
    except np.exceptions.TooHardError:   # strides too intricate to tell quickly: assume they do
        return True


def numpy_aliases(arrays: list, values, kernel_name: str):
    """``(rows, same)`` for one call: ``arrays`` (a plan's ``(position, name, reads, writes,
    covered)`` rows) with the parameters given the same numpy array as an earlier one left out
    (``same``: their position -> the earlier one's) and that earlier one's row reading and writing
    for all of them, never skipping its upload (``covered`` None). ``same`` is None when no two
    numpy arguments share memory. Raises ValueError for overlapping different views one of which
    the kernel writes."""
    numpy_rows = [row for row in arrays if type(values[row[0]]) is np.ndarray]
    if len(numpy_rows) < 2:
        return arrays, None
    same: dict = {}
    row_of = {row[0]: row for row in numpy_rows}     # flags merged into a representative's row
    for i, (pos, name, reads, writes, _covered) in enumerate(numpy_rows):
        a = values[pos]
        for rep, rep_name, *_ in numpy_rows[:i]:
            b = values[rep]
            if rep in same or not np.may_share_memory(a, b):
                continue
            _, _, rep_reads, rep_writes, _ = row_of[rep]
            if _same_view(a, b):
                row_of[rep] = (rep, rep_name, rep_reads or reads, rep_writes or writes, None)
                same[pos] = rep
                break
            if (writes or rep_writes) and _overlap(a, b):
                raise ValueError(
                    f"arguments {rep_name!r} and {name!r} of kernel {kernel_name!r} are different views of "
                    "overlapping memory and the kernel writes one of them; numpy arguments are copied to the "
                    "device one by one, so the kernel would not see one through the other. Pass the same "
                    "array to both, a copy (np.copy) to one, or gnp arrays (device memory, shared)")
    if not same:
        return arrays, None
    rows = [row_of.get(row[0], row) for row in arrays if row[0] not in same]
    return rows, same
