"""A stable LSD radix sort of 1-D arrays (the path ``gnp.sort``/``argsort`` take for long
1-D arrays; the bitonic sort in ``_sort`` handles short ones and sorts along an axis).

Each element becomes an unsigned key ordered as numpy orders the values: integers flip their
sign bit, floats flip all bits when negative and the sign bit otherwise, every NaN becomes the
largest key (numpy puts NaN last) and -0.0 becomes +0.0 (equal values keep their order). The
sort moves (key, original index) pairs, 4 key bits per pass, in tiles of 2048 elements (1024 for
64-bit keys), one group of ``GROUP`` work items per tile, 8 (4) consecutive elements per work item:

1. *histogram*: every tile counts its elements per digit; the counts, digit-major over tiles,
   go through the device prefix scan, which gives each (digit, tile) its first output slot;
2. *scatter*: every tile ranks its elements again -- per-work-item digit counts in local memory,
   an exclusive scan over them (digit-major), so each element's rank keeps the input order --
   sorts the tile in local memory and writes it out, runs of one digit to consecutive addresses.

A group needs about 25 KiB of local memory (21 KiB for 64-bit keys); devices with less take the
bitonic sort.

The sorted indices then gather the values (``sort``) or are the result (``argsort``).
"""
from __future__ import annotations

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from .._kernel import _Config
from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch, np_type

__all__ = ["radix_sort_indices", "radix_supported"]

GROUP = 256
BITS = 4
DIGITS = 1 << BITS


def _items(kt: np.dtype) -> int:
    """Elements per work item: 8 for 32-bit keys, 4 for 64-bit ones, so a group's local memory
    (keys, indices, int16 digit counts) stays under 32 KiB, the smallest common limit."""
    return 8 if kt.itemsize == 4 else 4


def local_bytes(kt: np.dtype) -> int:
    tile = GROUP * _items(kt)
    return tile * (kt.itemsize + 4) + DIGITS * GROUP * 2 + GROUP * 4 + DIGITS * 4


def radix_supported(dtype: np.dtype, n: int, device=None) -> bool:
    if not (dtype.kind in "biuf" and dtype.itemsize <= 8 and dtype != np.float16 and n < 2**31 - 4096):
        return False
    limit = getattr(device, "local_mem_size", None) if device is not None else None
    return not limit or local_bytes(_key_type(dtype)) <= limit


def _key_type(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.uint64) if dtype.itemsize == 8 else np.dtype(np.uint32)


def _init_source(kname: str, dtype: np.dtype, kt: np.dtype) -> str:
    """keys[i] = the ordered unsigned key of src[i] (float data arrives as its bits), idx[i] = i."""
    K = np_type(kt)
    bits = kt.itemsize * 8
    sign = f"{K}({1 << (bits - 1)})"
    ones = f"{K}({(1 << bits) - 1})"
    if dtype.kind == "f":
        absmask = f"{K}({(1 << (bits - 1)) - 1})"
        inf = f"{K}({0x7F800000 if bits == 32 else 0x7FF0000000000000})"
        body = ("        u = src[i]\n"
                f"        if (u & {absmask}) > {inf}:\n"
                f"            k = {ones}\n"
                f"        elif u == {sign}:\n"
                f"            k = {sign}\n"
                f"        elif (u >> {bits - 1}) != {K}(0):\n"
                f"            k = {ones} - u\n"
                "        else:\n"
                f"            k = u | {sign}\n")
    elif dtype.kind == "i":
        wide = "np.int64" if bits == 64 else "np.int32"
        body = f"        k = {K}({wide}(src[i])) ^ {sign}\n"
    else:
        body = f"        k = {K}(src[i])\n"
    return (f"def {kname}(src, keys, idx, n):\n"
            "    for i in range(n):\n"
            f"{body}"
            "        keys[i] = k\n"
            "        idx[i] = np.int32(i)\n")


def _rank_source(kname: str, kt: np.dtype, scatter: bool) -> str:
    """The histogram (``scatter`` False) or scatter kernel of one pass."""
    K = np_type(kt)
    mask = DIGITS - 1
    ITEMS = _items(kt)
    TILE = GROUP * ITEMS
    params = (["keys", "idx", "okeys", "oidx", "incl", "hist"] if scatter else ["keys", "hist"]) + ["n", "shift", "G"]
    L = [f"def {kname}({', '.join(params)}):",
         f"    lk = gpu.local_array({TILE}, {K})"]
    if scatter:
        L.append(f"    li = gpu.local_array({TILE}, np.int32)")
    L += [f"    cnt = gpu.local_array({DIGITS * GROUP}, np.int16)",     # positions < TILE fit
          f"    part = gpu.local_array({GROUP}, np.int32)"]
    if scatter:
        L.append(f"    dstart = gpu.local_array({DIGITS}, np.int32)")
    L += ["    t = gpu.get_local_id(0)",
          "    b = gpu.get_group_id(0)",
          f"    base = b * {TILE}",
          f"    for e in range({ITEMS}):",
          f"        p = e * {GROUP} + t",
          "        if base + p < n:",
          "            lk[p] = keys[base + p]"]
    if scatter:
        L.append("            li[p] = idx[base + p]")
    L += [f"    for d in range({DIGITS}):",
          f"        cnt[d * {GROUP} + t] = 0",
          "    gpu.barrier()",
          f"    mine = t * {ITEMS}"]
    for e in range(ITEMS):           # this work item's elements, in order, into private variables
        L += [f"    v{e} = base + mine + {e} < n",
              f"    k{e} = lk[mine + {e}] if v{e} else {K}(0)",
              f"    d{e} = np.int32((k{e} >> shift) & {mask})"]
        if scatter:
            L.append(f"    i{e} = li[mine + {e}] if v{e} else np.int32(0)")
        L += [f"    if v{e}:",
              f"        cnt[d{e} * {GROUP} + t] += 1"]
    # exclusive scan of the counts in digit-major order: work item t owns cnt[t*16 : t*16+16]
    L += ["    gpu.barrier()",
          f"    s0 = t * {DIGITS}",
          "    run = np.int16(0)",
          f"    for e in range({DIGITS}):",
          "        c = cnt[s0 + e]",
          "        cnt[s0 + e] = run",
          "        run += c",
          "    part[t] = run",
          "    off = 1",
          f"    while off < {GROUP}:",
          "        gpu.barrier()",
          "        v = part[t]",
          "        if t >= off:",
          "            v += part[t - off]",
          "        gpu.barrier()",
          "        part[t] = v",
          "        off = off * 2",
          "    gpu.barrier()",
          "    pre = np.int16(0)",
          "    if t > 0:",
          "        pre = np.int16(part[t - 1])",
          f"    for e in range({DIGITS}):",
          "        cnt[s0 + e] += pre",
          "    gpu.barrier()",
          f"    total = part[{GROUP - 1}]"]
    if not scatter:
        L += [f"    if t < {DIGITS}:",
              f"        nxt = total if t == {DIGITS - 1} else cnt[(t + 1) * {GROUP}]",
              f"        hist[t * G + b] = nxt - cnt[t * {GROUP}]"]
        return "\n".join(L) + "\n"
    L += [f"    if t < {DIGITS}:",
          f"        dstart[t] = cnt[t * {GROUP}]",
          "    gpu.barrier()"]
    for e in range(ITEMS):           # each element to its rank: stable, as the counts are in input order
        L += [f"    if v{e}:",
              f"        q = cnt[d{e} * {GROUP} + t]",
              f"        cnt[d{e} * {GROUP} + t] = q + 1",
              f"        lk[q] = k{e}",
              f"        li[q] = i{e}"]
    L += ["    gpu.barrier()",
          f"    for e in range({ITEMS}):",
          f"        p = e * {GROUP} + t",
          "        if p < total:",
          "            kk = lk[p]",
          f"            d = np.int32((kk >> shift) & {mask})",
          "            slot = d * G + b",
          "            dst = incl[slot] - hist[slot] + p - dstart[d]",
          "            okeys[dst] = kk",
          "            oidx[dst] = li[p]"]
    return "\n".join(L) + "\n"


_GATHER = '''def gnp_radix_gather(x, idx, out):
    for i in range(out.shape[0]):
        out[i] = x[idx[i]]
'''


def _kernels(dtype: np.dtype, kt: np.dtype):
    iname = f"gnp_radix_init_{dtype.name}"
    hname = f"gnp_radix_hist_{kt.name}"
    sname = f"gnp_radix_scatter_{kt.name}"
    return (kernel_from_source(iname, _init_source(iname, dtype, kt)),
            kernel_from_source(hname, _rank_source(hname, kt, False)),
            kernel_from_source(sname, _rank_source(sname, kt, True)))


def radix_sort_indices(x: DeviceArray) -> DeviceArray:
    """The int32 indices that stably sort the 1-D C-contiguous ``x`` (numpy's order)."""
    from ._scan import _ScanOp, scan_rows

    device = x.device
    ctx = device.context()
    n = x.size
    kt = _key_type(x.dtype)
    init, hist_k, scatter_k = _kernels(x.dtype, kt)
    keys = DeviceArray((n,), kt, ctx)
    idx = DeviceArray((n,), np.int32, ctx)
    src = x.view(kt) if x.dtype.kind == "f" else x
    launch(init, device, DEFAULT_CONFIG, (src, keys, idx, n))
    G = -(-n // (GROUP * _items(kt)))
    okeys = DeviceArray((n,), kt, ctx)
    oidx = DeviceArray((n,), np.int32, ctx)
    hist = DeviceArray((DIGITS * G,), np.int32, ctx)
    groups = _Config(None, (G * GROUP,), (GROUP,))
    count = _ScanOp("count", "({a} + {b})", np.int32, np.int32, 0)
    for shift in range(0, kt.itemsize * 8, BITS):
        launch(hist_k, device, groups, (keys, hist, n, shift, G))
        incl = scan_rows(count, hist, 1, DIGITS * G, device)
        launch(scatter_k, device, groups, (keys, idx, okeys, oidx, incl, hist, n, shift, G))
        keys, okeys = okeys, keys
        idx, oidx = oidx, idx
    return idx


def gather(x: DeviceArray, idx: DeviceArray) -> DeviceArray:
    out = DeviceArray(x.shape, x.dtype, x.context)
    if out.size:
        launch(kernel_from_source("gnp_radix_gather", _GATHER), x.device, DEFAULT_CONFIG, (x, idx, out))
    return out
