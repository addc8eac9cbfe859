"""``gnp.sort`` / ``gnp.argsort``: a bitonic sort of (key, index) pairs on the device, for short
arrays and for sorting along an axis; long 1-D sorts take the radix sort (``_radix``).

Each row (the sorted axis) is padded to a power of two ``P``; padding entries carry an index
``>= n`` and order after every real element. The order is numpy's: NaN after every number, and
equal keys by their original index, so the sort is stable (``argsort`` agrees with numpy's
``kind="stable"``); complex numbers sort by real part, then imaginary part, NaN parts last as
numpy's. Stages that compare elements less than ``BLOCK`` apart run in local memory,
one group per ``BLOCK`` elements (``gpu.barrier`` between steps); longer strides run one
compare-exchange per work item in global memory. That is O(n log^2 n) work: simple and
portable, but slower than the radix sort for long arrays.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from .._kernel import _Config
from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch, np_type
from ._complex_ufuncs import less_source
from ._half import narrow, stores_half_only, widen
from ._operands import check_dtype, check_same_device, contiguous, normalize_axis

__all__ = ["sort", "argsort"]

GROUP = 256
BLOCK = 2 * GROUP
RADIX_MIN = 1 << 14          # 1-D sorts from this length take the radix sort (_radix)


def _after_source(t: np.dtype) -> str:
    """``_after(ka, ia, kb, ib, n)``: whether (ka, ia) belongs after (kb, ib)."""
    if t.kind == "c":        # numpy's complex order (its CFLOAT_LT), ties by index
        less, source = less_source(t)
        return (source +
                "def _after(ka, ia, kb, ib, n):\n"
                "    if ia >= n:\n"
                "        return ib < n or ia > ib\n"
                "    if ib >= n:\n"
                "        return False\n"
                f"    if {less}(kb, ka):\n"
                "        return True\n"
                f"    return ia > ib and not {less}(ka, kb)\n")
    nan = ("    if ka != ka:\n"
           "        return kb == kb or ia > ib\n"
           "    if kb != kb:\n"
           "        return False\n") if t.kind == "f" else ""
    return ("def _after(ka, ia, kb, ib, n):\n"
            "    if ia >= n:\n"
            "        return ib < n or ia > ib\n"
            "    if ib >= n:\n"
            "        return False\n"
            f"{nan}"
            "    if ka == kb:\n"
            "        return ia > ib\n"
            "    return ka > kb\n")


def _exchange(lines: list, ind: str, kk: str, ii: str, p: str, q: str, asc: str) -> None:
    lines += [f"{ind}ka = {kk}[{p}]",
              f"{ind}ia = {ii}[{p}]",
              f"{ind}kb = {kk}[{q}]",
              f"{ind}ib = {ii}[{q}]",
              f"{ind}swap = _after(ka, ia, kb, ib, n) if {asc} else _after(kb, ib, ka, ia, n)",
              f"{ind}if swap:",
              f"{ind}    {kk}[{p}] = kb",
              f"{ind}    {ii}[{p}] = ib",
              f"{ind}    {kk}[{q}] = ka",
              f"{ind}    {ii}[{q}] = ia"]


def _local_source(kname: str, t: np.dtype, it: np.dtype) -> str:
    lines = [_after_source(t),
             f"def {kname}(keys, idx, n, P, kstart, kend):",
             f"    lk = gpu.local_array({BLOCK}, {np_type(t)})",
             f"    li = gpu.local_array({BLOCK}, {np_type(it)})",
             "    lid = gpu.get_local_id(0)",
             f"    base = gpu.get_group_id(0) * {BLOCK}",
             "    lk[lid] = keys[base + lid]",
             "    li[lid] = idx[base + lid]",
             f"    lk[lid + {GROUP}] = keys[base + lid + {GROUP}]",
             f"    li[lid + {GROUP}] = idx[base + lid + {GROUP}]",
             "    k = kstart",
             "    while k <= kend:",
             f"        j = min(k >> 1, {GROUP})",
             "        while j > 0:",
             "            gpu.barrier()",
             "            r = lid & (j - 1)",
             "            p = ((lid - r) << 1) + r",
             "            asc = ((base + p) & (P - 1) & k) == 0"]
    _exchange(lines, "            ", "lk", "li", "p", "p + j", "asc")
    lines += ["            j = j >> 1",
              "        k = k << 1",
              "    gpu.barrier()",
              "    keys[base + lid] = lk[lid]",
              "    idx[base + lid] = li[lid]",
              f"    keys[base + lid + {GROUP}] = lk[lid + {GROUP}]",
              f"    idx[base + lid + {GROUP}] = li[lid + {GROUP}]"]
    return "\n".join(lines) + "\n"


def _step_source(kname: str, t: np.dtype) -> str:
    lines = [_after_source(t),
             f"def {kname}(keys, idx, n, P, k, j, half):",
             "    for t in range(half):",
             "        r = t & (j - 1)",
             "        p = ((t - r) << 1) + r",
             "        asc = (p & (P - 1) & k) == 0"]
    _exchange(lines, "        ", "keys", "idx", "p", "p + j", "asc")
    return "\n".join(lines) + "\n"


_INIT = '''def gnp_sort_init(x, keys, idx, n, P):
    for t in range(keys.shape[0]):
        row = t // P
        i = t - row * P
        if i < n and row * n + i < x.shape[0]:
            keys[t] = x[row * n + i]
        idx[t] = i if i < n else n + i
'''

_EXTRACT = '''def gnp_sort_extract(src, out, n, P):
    for t in range(out.shape[0]):
        row = t // n
        out[t] = src[row * P + t - row * n]
'''


def _sorted_pairs(a: DeviceArray, axis: Any, op: str) -> "tuple[DeviceArray, DeviceArray, int, int, tuple, Any]":
    """Sort along ``axis``: (keys, indices, n, P, moved shape, undo) with each padded row sorted."""
    device = check_same_device([a], op)
    check_dtype(a.dtype, op, 0, device)
    if axis is None:
        x = contiguous(a).reshape(-1)
        ax = 0
    else:
        ax = normalize_axis(axis, max(a.ndim, 1), op) if a.ndim else 0
        x = a if a.ndim else a.reshape(1)
    last = x.ndim - 1
    moved = x if ax == last else x.swapaxes(ax, last)
    x = contiguous(moved)
    n = x.shape[-1]
    rows = x.size // n if n else 0
    kt = np.dtype(np.uint8) if x.dtype.kind == "b" else x.dtype
    P = 1
    while P < n:
        P <<= 1
    total = max(-(-rows * P // BLOCK) * BLOCK, BLOCK)
    it = np.dtype(np.int32) if total < 2**31 - 1 else np.dtype(np.int64)
    ctx = device.context()
    keys = DeviceArray((total,), kt, ctx)
    idx = DeviceArray((total,), it, ctx)
    if rows == 0 or n == 0:
        return keys, idx, n, P, x.shape, (ax, last)
    src = x.reshape(-1) if kt == x.dtype else x.reshape(-1).view(kt)
    launch(kernel_from_source("gnp_sort_init", _INIT), device, DEFAULT_CONFIG, (src, keys, idx, n, P))
    lname = f"gnp_sort_local_{kt.name}_{it.name}"
    local = kernel_from_source(lname, _local_source(lname, kt, it))
    sname = f"gnp_sort_step_{kt.name}"
    step = kernel_from_source(sname, _step_source(sname, kt))
    groups = _Config(None, (total // BLOCK * GROUP,), (GROUP,))
    launch(local, device, groups, (keys, idx, n, P, 2, min(BLOCK, P)))
    k = 2 * BLOCK
    while k <= P:
        j = k >> 1
        while j >= BLOCK:
            launch(step, device, DEFAULT_CONFIG, (keys, idx, n, P, k, j, total // 2))
            j >>= 1
        launch(local, device, groups, (keys, idx, n, P, k, k))
        k <<= 1
    return keys, idx, n, P, x.shape, (ax, last)


def _finish(res: DeviceArray, shape: tuple, undo: tuple, a: DeviceArray, axis: Any) -> DeviceArray:
    res = res.reshape(shape)
    ax, last = undo
    if ax != last:
        res = res.swapaxes(ax, last).copy()
    if axis is not None and a.ndim == 0:
        res = res.reshape(())
    return res


def _check_args(a, axis, kind, order, stable, op):
    """What sort and argsort refuse, in numpy's order: not a device array, order=, an unknown
    kind, an axis of a 0-d array."""
    if not isinstance(a, DeviceArray):
        raise TypeError(f"gnp.{op} takes a device array, got {type(a).__name__}")
    if order is not None:
        raise ValueError(f"gnp.{op}: order= applies to structured arrays, which device arrays are not")
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise ValueError(f"gnp.{op}: kind must be one of 'quicksort', 'mergesort', 'heapsort', 'stable'")
    if a.ndim == 0 and axis is not None:
        raise np.exceptions.AxisError(axis, 0)


def _radix_input(a: DeviceArray, axis: Any, op: str) -> "DeviceArray | None":
    """The contiguous 1-D array to radix-sort when the sort is of one long row, else None."""
    from ._radix import radix_supported

    if not (axis is None or a.ndim == 1) or a.size < RADIX_MIN or not radix_supported(a.dtype, a.size, a.device):
        return None
    if a.ndim == 1:
        normalize_axis(axis if axis is not None else 0, 1, op)
    device = check_same_device([a], op)
    check_dtype(a.dtype, op, 0, device)
    return contiguous(a).reshape(-1)


def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, stable: Any = None) -> DeviceArray:
    """A sorted copy (numpy order: NaN last; stable whatever ``kind`` says)."""
    _check_args(a, axis, kind, order, stable, "sort")
    if a.dtype == np.float16 and stores_half_only(a.device):      # float32 holds every half exactly
        return narrow(sort(widen(a), axis))
    flat = _radix_input(a, axis, "sort")
    if flat is not None:
        from ._radix import radix_sort
        return radix_sort(flat)
    keys, _idx, n, P, shape, undo = _sorted_pairs(a, axis, "sort")
    out = DeviceArray(shape, a.dtype, a.context)
    if out.size:
        src = keys if keys.dtype == a.dtype else keys.view(a.dtype)
        launch(kernel_from_source("gnp_sort_extract", _EXTRACT), a.device, DEFAULT_CONFIG,
               (src, out.reshape(-1), n, P))
    return _finish(out, shape, undo, a, axis)


def argsort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, stable: Any = None) -> DeviceArray:
    """The int64 indices that sort ``a`` along ``axis`` (stable: numpy's ``kind="stable"`` order)."""
    _check_args(a, axis, kind, order, stable, "argsort")
    if a.dtype == np.float16 and stores_half_only(a.device):
        return argsort(widen(a), axis)
    flat = _radix_input(a, axis, "argsort")
    if flat is not None:
        from ._radix import radix_argsort
        return radix_argsort(flat)
    _keys, idx, n, P, shape, undo = _sorted_pairs(a, axis, "argsort")
    out = DeviceArray(shape, np.int64, a.context)
    if out.size:
        tmp = DeviceArray(shape, idx.dtype, a.context) if idx.dtype != np.int64 else out
        launch(kernel_from_source("gnp_sort_extract", _EXTRACT), a.device, DEFAULT_CONFIG,
               (idx, tmp.reshape(-1), n, P))
        if tmp is not out:
            out[...] = tmp
    return _finish(out, shape, undo, a, axis)
