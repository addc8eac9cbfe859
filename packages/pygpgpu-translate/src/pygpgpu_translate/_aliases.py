"""Numpy arguments that share memory: ``k(x, x)`` (docs/architecture.md#the-launch-path).

Each numpy argument is staged into device memory of its own, so two parameters given the same
numpy array would be two copies: the kernel would not see its stores through the other
parameter, and of two written copies only the one read back last would survive, where the
function run on the host (and gnp arrays, which are device memory already) sees one array. So
a numpy array passed to several parameters is staged once, read and written through one
device buffer. Different views that overlap (``x[1:]`` and ``x[:-1]``) cannot share one
buffer as they are staged; when the kernel writes either, the call raises instead of giving
a result the host would not.

gnp views (``g[1:]``, ``g[::2]``) reach a kernel as contiguous copies of their own (_kernel):
equal views share one copy, and a view overlapping other device memory passed with it, which
the kernel writes, raises for the same reason.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from pygpgpu_core.gnp._indexing import span

from ._signature import is_device_array

__all__ = ["device_view_aliases", "numpy_aliases"]

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


def _device_span(a) -> tuple:
    return span(a.shape, a.strides, getattr(a, "offset", 0), a.dtype.itemsize)


def _stand_in(a, flat: np.ndarray, lo: int) -> np.ndarray:
    """A numpy array laid out as device array ``a`` (bytes: one trailing axis of its itemsize) over
    ``flat``, whose byte 0 stands for byte ``lo`` of ``a``'s buffer. Never read."""
    first = flat[a.offset - lo:]
    return as_strided(first, a.shape + (a.dtype.itemsize,), a.strides + (1,), writeable=False)


def _device_overlap(a, b) -> bool:
    """Whether two layouts over one device buffer share a byte. Intersecting spans are decided by
    numpy's exact test on stand-ins over one unallocated byte range (``as_strided`` of a 1-byte
    array: shares_memory compares addresses only), so ``g[::2]`` and ``g[1::2]`` do not overlap."""
    (lo_a, hi_a), (lo_b, hi_b) = _device_span(a), _device_span(b)
    if lo_a == hi_a or lo_b == hi_b or hi_a <= lo_b or hi_b <= lo_a:
        return False
    lo = min(lo_a, lo_b)
    flat = as_strided(np.zeros(1, np.uint8), (max(hi_a, hi_b) - lo,), (1,), writeable=False)
    return _overlap(_stand_in(a, flat, lo), _stand_in(b, flat, lo))


def device_view_aliases(views: list, values, arrays: list, kernel_name: str) -> None:
    """Raise ValueError when a gnp view staged as a copy (``views``: ``(positions, view, copy)``)
    overlaps another device array of the call (``values``, before staging) in memory and the
    kernel (``arrays``: a plan's rows) writes either: it would compute on the copy apart from the
    other, where the host sees one memory."""
    rows = {row[0]: row for row in arrays}
    for positions, view, _copy in views:
        mine = [rows[p] for p in positions if p in rows]
        if not mine:
            continue
        for pos, name, _reads, writes, _covered in arrays:
            other = values[pos]
            if pos in positions or not is_device_array(other) or other.buffer is not view.buffer:
                continue
            if (writes or any(row[3] for row in mine)) and _device_overlap(view, other):
                raise ValueError(
                    f"arguments {mine[0][1]!r} and {name!r} of kernel {kernel_name!r} are different views of "
                    "overlapping device memory and the kernel writes one of them; a gnp view reaches a kernel "
                    "as a contiguous copy of its own, so the kernel would not see one through the other. Pass "
                    "the same view to both, or a copy (g.copy()) to one")
