"""The kernels of gnp's sort-based statistics that composition cannot express: a binary search
per element (``searchsorted``), numpy's piecewise-linear ``interp``, atomic per-bin counts and
per-bin sums in numpy's order (``bincount``, ``histogram``). Everything else
(quantile, unique, bincount, histogram, isin ...) composes these with the device sort, scans
and ufuncs in ``pygpgpu_core.gnp._sorting``."""
from __future__ import annotations

from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch
from ._complex_ufuncs import less_source
from ._half import stores_half_only, widen
from ._operands import check_same_device, contiguous

__all__ = ["searchsorted_sorted", "interp_sorted", "segment_sums", "bin_counts"]

# numpy's sort order puts NaN after every number, so "before" is NaN-aware for floats
_BEFORE = {
    "left": "(b != b and a == a) or a < b",                  # a sorts strictly before b
    "right": "not ((a != a and b == b) or b < a)",           # a sorts before b or ties with it
}
_INT_BEFORE = {"left": "a < b", "right": "a <= b"}

_SEARCH = '''def {name}(sorted_a, v, out, n):
    for t in range(out.shape[0]):
        b = v[t]
        lo = n - n
        hi = n
        while lo < hi:
            mid = (lo + hi) >> 1
            a = sorted_a[mid]
            if {before}:
                lo = mid + 1
            else:
                hi = mid
        out[t] = lo
'''


def searchsorted_sorted(a: DeviceArray, v: DeviceArray, side: str) -> DeviceArray:
    """Insertion points (int64, ``v``'s shape) of ``v`` in the sorted 1-D ``a``, both already
    of one dtype: one binary search per element of ``v``."""
    device = check_same_device([a, v], "searchsorted")
    out = DeviceArray(v.shape, np.int64, v.context)
    if out.size == 0:
        return out
    if a.dtype == np.float16 and stores_half_only(device):     # float32 holds every half: the same order
        a, v = widen(a), widen(v)
    if a.dtype.kind == "c":              # numpy's complex order (NaN parts last)
        less, helper = less_source(a.dtype)
        name = f"gnp_searchsorted_{side}_{a.dtype.name}"
        before = f"{less}(a, b)" if side == "left" else f"not {less}(b, a)"
        kern = kernel_from_source(name, helper + _SEARCH.format(name=name, before=before))
    else:
        table = _BEFORE if a.dtype.kind == "f" else _INT_BEFORE
        name = f"gnp_searchsorted_{side}_{'f' if a.dtype.kind == 'f' else 'i'}"
        kern = kernel_from_source(name, _SEARCH.format(name=name, before=table[side]))
    launch(kern, device, DEFAULT_CONFIG, (contiguous(a).reshape(-1), contiguous(v).reshape(-1), out.reshape(-1),
                                          np.int64(a.size)))
    return out


# numpy's arr_interp (float64): left of xp[0] -> left, right of xp[-1] -> right, on a point ->
# its fp; else the slope form, falling back to the other end's form when that is NaN (inf fp)
_INTERP = '''def gnp_interp(x, xp, fp, out, n, left, right, has_left, has_right):
    for t in range(out.shape[0]):
        v = x[t]
        if v != v:
            out[t] = v
        elif v < xp[0]:
            out[t] = left if has_left else fp[0]
        elif v > xp[n - 1]:
            out[t] = right if has_right else fp[n - 1]
        else:
            lo = n - n
            hi = n
            while lo < hi:
                mid = (lo + hi) >> 1
                if xp[mid] <= v:
                    lo = mid + 1
                else:
                    hi = mid
            j = lo - 1
            if j >= n - 1:
                out[t] = fp[n - 1]
            elif xp[j] == v:
                out[t] = fp[j]
            else:
                slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
                r = slope * (v - xp[j]) + fp[j]
                if r != r:
                    r = slope * (v - xp[j + 1]) + fp[j + 1]
                    if r != r and fp[j] == fp[j + 1]:
                        r = fp[j]
                out[t] = r
'''


def interp_sorted(x: DeviceArray, xp: DeviceArray, fp: DeviceArray, left: Any, right: Any) -> DeviceArray:
    """``np.interp`` of float64 ``x`` on float64 1-D ``xp`` (increasing) and ``fp``; ``left`` /
    ``right`` None take ``fp[0]`` / ``fp[-1]`` on the device."""
    device = check_same_device([x, xp, fp], "interp")
    out = DeviceArray(x.shape, np.float64, x.context)
    if out.size == 0:
        return out
    kern = kernel_from_source("gnp_interp", _INTERP, contract=False)
    launch(kern, device, DEFAULT_CONFIG, (contiguous(x).reshape(-1), contiguous(xp).reshape(-1),
                                          contiguous(fp).reshape(-1), out.reshape(-1), np.int64(xp.size),
                                          np.float64(0.0 if left is None else left),
                                          np.float64(0.0 if right is None else right),
                                          np.int32(left is not None), np.int32(right is not None)))
    return out


# one bin per work item, adding its run of the sorted values in their original order (a stable
# sort keeps it), which is the order and precision (float64) of numpy's bincount
_SEGMENT_SUMS = '''def gnp_segment_sums(values, lo, hi, out):
    for t in range(out.shape[0]):
        acc = np.float64(0.0)
        for i in range(lo[t], hi[t]):
            acc += values[i]
        out[t] = acc
'''


def segment_sums(values: DeviceArray, lo: DeviceArray, hi: DeviceArray) -> DeviceArray:
    """float64 sums of ``values[lo[k]:hi[k]]`` for each k (1-D int64 ``lo``/``hi``)."""
    device = check_same_device([values, lo, hi], "bincount")
    out = DeviceArray(lo.shape, np.float64, lo.context)
    if out.size == 0:
        return out
    kern = kernel_from_source("gnp_segment_sums", _SEGMENT_SUMS, contract=False)
    launch(kern, device, DEFAULT_CONFIG, (contiguous(values).reshape(-1), contiguous(lo).reshape(-1),
                                          contiguous(hi).reshape(-1), out.reshape(-1)))
    return out


# one atomic increment per element (32-bit counters, which every device has; O(n), no sort)
_BIN_COUNTS = '''def gnp_bin_counts(bins, counts, length):
    for t in range(bins.shape[0]):
        b = bins[t]
        if b >= 0 and b < length:
            gpu.atomic_add(counts, b, np.uint32(1))
'''


def bin_counts(bins: DeviceArray, length: int) -> DeviceArray:
    """int64 counts of each value 0..length-1 in the int64 ``bins`` (others are ignored)."""
    from ._elementwise import fill

    device = check_same_device([bins], "bincount")
    if bins.size >= 2**32:
        raise ValueError(f"gnp.bincount counts with 32-bit atomics; {bins.size} elements could overflow them")
    counts = DeviceArray((length,), np.uint32, bins.context)
    if length:
        fill(counts, 0)
    if bins.size and length:
        launch(kernel_from_source("gnp_bin_counts", _BIN_COUNTS), device, DEFAULT_CONFIG,
               (contiguous(bins).reshape(-1), counts, np.int64(length)))
    return counts.astype(np.int64)
