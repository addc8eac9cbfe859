"""Printing a large device array as numpy prints a large array, reading only what is shown.

numpy summarizes an array of more than ``threshold`` elements: along every axis longer than
``2 * edgeitems`` it shows the first and last ``edgeitems`` and an ellipsis. ``corner`` reads
exactly those elements (two small reads per printed row), plus one element per summarized axis
that the ellipsis hides, so numpy, printing the small array with ``threshold=0``, lays it out
as it would the whole one.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

__all__ = ["needs_summary", "corner", "summary_repr", "summary_str"]


def needs_summary(size: int) -> bool:
    return size > np.get_printoptions()["threshold"]


def _kept(n: int, edge: int) -> "list[int]":
    # index ``edge`` stands for the hidden middle: it sits right after the head, so the head and
    # it are one contiguous run
    return list(range(edge + 1)) + list(range(n - edge, n)) if n > 2 * edge else list(range(n))


def _read(arr: Any, out: np.ndarray, byte_offset: int) -> None:
    arr._read_bytes(out, byte_offset)


def corner(arr: Any, edge: int) -> np.ndarray:
    """The elements of ``arr`` (a device array or view) numpy's summary shows, as a small array
    that numpy summarizes the same way."""
    keep = [_kept(n, edge) for n in arr.shape]
    out = np.empty([len(k) for k in keep], arr.dtype)
    item, strides, base = arr.dtype.itemsize, arr.strides, getattr(arr, "offset", 0)
    *lead, last = keep
    # runs of consecutive indices along the last axis: (position in out, first index, length)
    runs, start = [], 0
    for k in range(1, len(last) + 1):
        if k == len(last) or last[k] != last[k - 1] + 1:
            runs.append((start, last[start], k - start))
            start = k
    for pos in itertools.product(*(range(len(k)) for k in lead)):
        row_offset = base + sum(lead[a][p] * strides[a] for a, p in enumerate(pos))
        row = out[pos]
        for at, first, length in runs:
            if strides[-1] == item:
                _read(arr, row[at:at + length], row_offset + first * item)
            else:                                   # a strided view: element by element
                for j in range(length):
                    _read(arr, row[at + j:at + j + 1], row_offset + (first + j) * strides[-1])
    return out


def summary_repr(arr: Any, selector: str) -> str:
    edge = np.get_printoptions()["edgeitems"]
    with np.printoptions(threshold=0):
        body = np.array2string(corner(arr, edge), separator=", ", prefix="array(")
    return f"array({body}, shape={arr.shape}, dtype={arr.dtype}, device='{selector}')"


def summary_str(arr: Any) -> str:
    edge = np.get_printoptions()["edgeitems"]
    with np.printoptions(threshold=0):
        return np.array2string(corner(arr, edge))
