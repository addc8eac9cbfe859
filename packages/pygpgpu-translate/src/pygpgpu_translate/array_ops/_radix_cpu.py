"""``gnp.sort`` of long 1-D arrays on CPU devices (``_cpu_choices.on_cpu``): an LSD radix sort in
the shape CPU sorts take, one work item per contiguous chunk (issue 33, item 5).

The GPU radix sort (``_radix``) sorts tiles of 4096 elements in local memory with groups of 256
work items, local atomics and barriers between its steps; a CPU runtime runs each barrier-free
stretch of such a group as a loop over its work items, so every step costs a pass over the tile
through memory (16M float32: 1.6 s on PoCL against 0.1 s for numpy on 2 cores). Here each of
``T`` work items (a few per compute unit) owns one contiguous chunk and walks it in order, as
numpy's threads would: per 8-bit digit pass

1. *histogram*: each chunk counts its digits in a private array, stored digit-major
   (``cnt[d * T + t]``; per pass: a chunk holds other elements after each scatter);
2. *scan*: the device prefix scan of ``cnt`` (``_scan.scan_rows``) gives (digit, chunk) its
   first output slot;
3. *scatter*: each chunk walks its elements in order again and moves each to its digit's next
   slot, so equal digits keep their order and the sort is stable (LSD needs that).

Keys and the values they come back to are ``_radix``'s (every bit pattern kept, NaN last).
``argsort`` keeps the GPU kernels.
"""
from __future__ import annotations

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from .._kernel import _Config
from ._codegen import kernel_from_source, launch, np_type
from ._radix import DIGIT_BITS, RADIX, _bits_type, _key_functions, _key_type

__all__ = ["cpu_radix_sort", "chunks"]

CHUNKS_PER_UNIT = 2      # chunks a compute unit: equal work each, a spare for a busy core
MIN_CHUNK = 1 << 14      # elements a chunk at least: below that, the per-chunk counts cost more than they save


def chunks(n: int, units: int) -> "tuple[int, int]":
    """``(T, chunk)``: how many chunks of how many elements ``n`` elements make on ``units``
    compute units (the last chunk may be shorter; none is empty)."""
    t = max(1, min(units * CHUNKS_PER_UNIT, -(-n // MIN_CHUNK)))
    chunk = -(-n // t)
    return -(-n // chunk), chunk


def _hist_source(kname: str, dtype: np.dtype, kt: np.dtype) -> str:
    """Chunk ``t``'s count of digit ``d`` (at ``shift``) to ``cnt[d * T + t]``. Per pass, of the
    order the previous pass left: a chunk holds other elements each pass."""
    K = np_type(kt)
    L = [f"def {kname}(src, keys, cnt, n, shift, T, chunk, first):",
         "    for t in range(T):",
         f"        h = np.zeros({RADIX}, np.uint32)",
         "        lo = np.uint32(t) * np.uint32(chunk)",
         "        hi = min(np.uint32(n), lo + np.uint32(chunk))",
         f"        ks = {K}(shift)",
         "        if first:",
         "            for i in range(lo, hi):",
         f"                h[np.uint32((_key(src[i]) >> ks) & {K}({RADIX - 1}))] += 1",
         "        else:",
         "            for i in range(lo, hi):",
         f"                h[np.uint32((keys[i] >> ks) & {K}({RADIX - 1}))] += 1",
         f"        for d in range({RADIX}):",
         "            cnt[d * T + t] = h[d]"]
    return _key_functions(dtype, kt, False) + "\n" + "\n".join(L) + "\n"


def _scatter_source(kname: str, dtype: np.dtype, kt: np.dtype) -> str:
    K = np_type(kt)
    L = [f"def {kname}(src, keys, okeys, incl, cnt, n, shift, T, chunk, first, last):",
         "    for t in range(T):",
         f"        slot = np.zeros({RADIX}, np.uint32)",
         f"        for d in range({RADIX}):",
         "            slot[d] = np.uint32(incl[d * T + t] - cnt[d * T + t])",
         "        lo = np.uint32(t) * np.uint32(chunk)",
         "        hi = min(np.uint32(n), lo + np.uint32(chunk))",
         f"        ks = {K}(shift)"]
    for cond, key in (("if first:", "_key(src[i])"), ("else:", "keys[i]")):
        L += [f"        {cond}",
              "            for i in range(lo, hi):",
              f"                k = {key}",
              f"                g = np.uint32((k >> ks) & {K}({RADIX - 1}))",
              "                p = slot[g]",
              "                slot[g] = p + np.uint32(1)",
              "                okeys[p] = _value(k) if last else k"]
    return _key_functions(dtype, kt, False) + "\n" + "\n".join(L) + "\n"


_kernel_pairs: dict = {}


def _kernels(dtype: np.dtype):
    pair = _kernel_pairs.get(dtype)
    if pair is None:
        kt = _key_type(dtype)
        hname, sname = f"gnp_radix_cpu_hist_{dtype.name}", f"gnp_radix_cpu_scatter_{dtype.name}"
        pair = _kernel_pairs[dtype] = (kernel_from_source(hname, _hist_source(hname, dtype, kt)),
                                       kernel_from_source(sname, _scatter_source(sname, dtype, kt)))
    return pair


def cpu_radix_sort(x: DeviceArray) -> DeviceArray:
    """``np.sort`` of the 1-D C-contiguous ``x`` on a CPU device (every bit pattern kept; NaN last)."""
    from ._scan import _ScanOp, scan_rows

    out = DeviceArray(x.shape, x.dtype, x.context)
    n = x.size
    if n == 0:
        return out
    device = x.device
    ctx = device.context()
    kt = _key_type(x.dtype)
    hist_k, scatter_k = _kernels(x.dtype)
    src = x.view(_bits_type(x.dtype))
    npass = x.dtype.itemsize * 8 // DIGIT_BITS
    T, chunk = chunks(n, max(int(getattr(device, "compute_units", 1) or 1), 1))
    # pass p reads `keys` (unless first) and writes `okeys` (unless last), then they swap
    keys = DeviceArray((n if npass > 2 else 1,), kt, ctx)
    okeys = DeviceArray((n if npass > 1 else 1,), kt, ctx)
    cnt = DeviceArray((RADIX * T,), np.int32, ctx)
    one_each = _Config(None, (T,), (1,))      # one work item a group: each is a whole chunk's work
    count = _ScanOp("count", "({a} + {b})", np.int32, np.int32, 0)
    for p in range(npass):
        first, last = int(p == 0), int(p == npass - 1)
        shift = p * DIGIT_BITS
        launch(hist_k, device, one_each, (src, keys, cnt, n, shift, T, chunk, first))
        incl = scan_rows(count, cnt, 1, RADIX * T, device)
        launch(scatter_k, device, one_each, (src, keys, out.view(_bits_type(out.dtype)) if last else okeys,
                                             incl, cnt, n, shift, T, chunk, first, last))
        keys, okeys = okeys, keys
    return out
