"""A stable LSD radix sort of 1-D arrays (the path ``gnp.sort``/``argsort`` take for long
1-D arrays; the bitonic sort in ``_sort`` handles short ones and sorts along an axis).

Each element becomes an unsigned key ordered as numpy orders the values; integers flip their
sign bit. ``sort`` moves the keys alone and turns them back into values as it writes the
result, so its float key is a bijection (every bit pattern comes back, -0.0 and NaN payloads
included): the usual flip (all bits of negative numbers, the sign bit of the others), rotated so
that negative NaNs follow the positive ones, after +inf (numpy puts NaN last; -0.0 sorts before
0.0, which numpy counts as equal). ``argsort`` moves (key, index) pairs and must keep equal
values in input order, so its float key maps -0.0 to +0.0 and every NaN to the largest key.

A pass sorts by 8 key bits (a digit), so 32-bit values take 4 passes, 64-bit ones 8, 8-bit ones
1. The array is cut into tiles of ``GROUP * items`` elements (4096 for 32-bit keys alone), one
group of ``GROUP`` work items per tile; each pass runs three steps:

1. *histogram*: every tile counts its elements per digit (each work item first loads all of its
   elements, unconditionally, so that they are in flight together; then local atomics on 8 copies
   of the 256 counters, so that runs of one digit do not all hit one counter), digit-major over
   tiles, and
   where each digit's run will start in the sorted tile (a scan over its 256 counts);
2. *scan*: the device prefix scan of those counts (``_scan.scan_rows``) gives each (digit, tile)
   its first output slot;
3. *scatter*: every tile sorts itself in local memory by the digit, stably, in two 4-bit splits.
   A split counts each work item's elements per 4-bit value (16-bit counters, two to a 32-bit
   word, so one exclusive scan over the words ranks both halves), scans the counts (value-major,
   so equal values keep the input order) and moves the elements to their ranks. The sorted tile
   then goes out in order, each run of one digit to consecutive addresses from its slot (its
   position in the tile, less the run's start, plus the slot).

The first pass reads the input values and makes the keys on the fly; the last writes the values
(``sort``) or the int64 indices (``argsort``).

Arrays under 2**30 elements on GPUs take the *sweep* instead of steps 1 and 2 (see ``_sweep_source``):
one launch reads every value once for the histograms of all digits, then each pass is one launch
of the scatter whose tiles count their digits as they load them and find their output slots by
a decoupled look-back over the tiles before them (one launch and two key transfers a digit,
against 4 to 5 launches and three transfers). A group uses at most 32 KiB of local memory:
16 elements per work item for 32-bit keys alone, fewer where indices or 64-bit keys need room
or the device has less (down to 1; a device without room for that, under about 14 KiB, takes the
bitonic sort).
"""
from __future__ import annotations

import functools

import numpy as np
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.protocols import option

from .._cpu_choices import on_cpu
from .._kernel import _Config
from ._codegen import kernel_from_source, launch, np_type

__all__ = ["radix_sort", "radix_argsort", "radix_supported"]

GROUP = 256              # work items per group; one work item per digit in the per-digit steps
DIGIT_BITS = 8
RADIX = 1 << DIGIT_BITS  # == GROUP
SPLIT_BITS = 4           # the local sort takes 4 of the digit's 8 bits at a time
LANES = 8                # counter words per work item: 16 4-bit values, two 16-bit counters a word
COPIES = 8               # histogram copies (work item t counts into copy t % COPIES)
MAX_ITEMS = 16           # elements per work item at most (16-bit counters: tiles below 65536)
LOCAL_LIMIT = 32 * 1024  # the smallest common local memory size


def _padded(n: int) -> int:
    """Local words for ``n`` slots with one padding word every 32 (see ``_pad``)."""
    return n + (n >> 5)


def local_bytes(kt: np.dtype, with_index: bool, items: int) -> int:
    tile = GROUP * items
    return (_padded(tile) * (kt.itemsize + (4 if with_index else 0)) + _padded(LANES * GROUP) * 4
            + (GROUP + GROUP // 16 + 16 + RADIX) * 4)


@functools.lru_cache(maxsize=None)
def _fitting_items(kt: np.dtype, with_index: bool, limit: int) -> int:
    return max([i for i in range(1, MAX_ITEMS + 1) if local_bytes(kt, with_index, i) <= limit], default=0)


def _items(kt: np.dtype, with_index: bool, device=None) -> int:
    """Elements per work item: as many as fit the device's local memory, at most ``LOCAL_LIMIT``
    (0: not even one fits)."""
    limit = option(device, "local_mem_size") if device is not None else None
    return _fitting_items(kt, with_index, min(limit or LOCAL_LIMIT, LOCAL_LIMIT))


def tile_size(dtype: np.dtype, argsort: bool, device=None) -> int:
    """Elements per tile (one group) of the radix sort of ``dtype`` values on ``device``."""
    return GROUP * _items(_key_type(np.dtype(dtype)), argsort, device)


def _key_type(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.uint64) if dtype.itemsize == 8 else np.dtype(np.uint32)


def _bits_type(dtype: np.dtype) -> np.dtype:
    """The unsigned type of ``dtype``'s size: the kernels read and write values as their bits."""
    return np.dtype(f"u{dtype.itemsize}")


def radix_supported(dtype: np.dtype, n: int, device=None) -> bool:
    if not (dtype.kind in "biuf" and dtype.itemsize <= 8 and dtype != np.float16 and n < 2**31 - 8192):
        return False
    return _items(_key_type(dtype), True, device) > 0     # argsort needs the most room


def _key_functions(dtype: np.dtype, kt: np.dtype, argsort: bool) -> str:
    """``_key(u)``: the ordered key of the value with bits ``u``; ``_value(k)``: its inverse (the
    bits, in the key type), for ``sort``."""
    K = np_type(kt)
    bits = kt.itemsize * 8
    vbits = dtype.itemsize * 8
    sign = f"{K}({1 << (bits - 1)})"
    ones = f"{K}({(1 << bits) - 1})"
    if dtype.kind == "i":
        vsign = f"{K}({1 << (vbits - 1)})"
        return (f"def _key(u):\n    return {K}(u) ^ {vsign}\n\n"
                f"def _value(k):\n    return k ^ {vsign}\n")
    if dtype.kind in "ub":
        return f"def _key(u):\n    return {K}(u)\n\ndef _value(k):\n    return k\n"
    if argsort:                          # equal values compare equal: -0.0 is 0.0, every NaN alike
        absmask = f"{K}({(1 << (bits - 1)) - 1})"
        inf = f"{K}({0x7F800000 if bits == 32 else 0x7FF0000000000000})"
        return ("def _key(u):\n"
                f"    if (u & {absmask}) > {inf}:\n"
                f"        return {ones}\n"
                f"    if u == {sign}:\n"
                f"        return {sign}\n"
                f"    if (u >> {bits - 1}) != {K}(0):\n"
                f"        return u ^ {ones}\n"
                f"    return u | {sign}\n\n"
                "def _value(k):\n    return k\n")
    # the flip puts the negative NaNs (2**mantissa - 1 of them) first: rotate them past the end
    negnan = f"{K}({(1 << (23 if bits == 32 else 52)) - 1})"
    return ("def _key(u):\n"
            f"    f = (u ^ {ones}) if (u >> {bits - 1}) != {K}(0) else (u | {sign})\n"
            f"    return f - {negnan}\n\n"
            "def _value(k):\n"
            f"    f = k + {negnan}\n"
            f"    return (f ^ {sign}) if (f >> {bits - 1}) != {K}(0) else (f ^ {ones})\n")


def _group_scan_lines(value: str, x: str) -> list:
    """Lines setting ``pre{x}`` to the sum of the uint32 ``value`` of the work items before this
    one and ``tot{x}`` to the group's total, through the local arrays ``part`` (GROUP + GROUP/16
    words, padded) and ``sums`` (16): 16 work items scan 16 values each, then every work item adds
    the sums before its own. Two barriers."""
    return [f"    part[t + (t >> 4)] = {value}",
            "    gpu.barrier()",
            "    if t < 16:",
            f"        run{x} = np.uint32(0)",
            f"        for y{x} in range(16):",
            f"            run{x} += part[t * 17 + y{x}]",
            f"            part[t * 17 + y{x}] = run{x}",
            f"        sums[t] = run{x}",
            "    gpu.barrier()",
            f"    pre{x} = np.uint32(0)",
            "    if (t & 15) != 0:",
            f"        pre{x} = part[t + (t >> 4) - 1]",
            f"    tot{x} = np.uint32(0)",
            f"    for u{x} in range(16):",
            f"        sum{x} = sums[u{x}]",
            f"        if u{x} < (t >> 4):",
            f"            pre{x} += sum{x}",
            f"        tot{x} += sum{x}"]


def _hist_source(kname: str, dtype: np.dtype, kt: np.dtype, argsort: bool, items: int) -> str:
    """Step 1 of a pass: tile ``b``'s count of digit ``d`` to ``cnt[d * G + b]``, and the count
    of its smaller digits (where the digit's run starts in the sorted tile) to ``lpre[d * G + b]``."""
    K = np_type(kt)
    stride = RADIX + 1                   # copies one bank apart: one digit's copies do not collide
    # All of a work item's loads come first, unconditional (an index past the end reads the last
    # element; it then counts into word RADIX of its copy, the padding, which nobody reads), so a
    # GPU has them all in flight at once: a load under `if i < n` followed by its atomic made
    # NVRTC wait for each load in turn (one load in flight per work item, ~4x under bandwidth).
    # Consecutive work items read consecutive elements (coalesced); `first` picks the source
    # once for the whole block.
    L = [f"def {kname}(src, keys, cnt, lpre, n, shift, G, first):",
         f"    h = gpu.local_array({COPIES * stride}, np.uint32)",
         f"    part = gpu.local_array({GROUP + GROUP // 16}, np.uint32)",
         "    sums = gpu.local_array(16, np.uint32)",
         "    t = gpu.get_local_id(0)",
         "    b = gpu.get_group_id(0)",
         f"    base = b * {GROUP * items}",
         "    last = n - 1",
         # zeroed before the loads: PoCL would otherwise keep every work item's keys across the
         # barrier in memory (~1.4x slower there); on a GPU the barrier costs little before them
         f"    for c in range({COPIES}):",
         f"        h[c * {stride} + t] = np.uint32(0)",
         "    gpu.barrier()"]
    L += [f"    i{e} = base + {e * GROUP} + t" for e in range(items)]
    L += ["    if first:"]
    L += [f"        k{e} = _key(src[min(i{e}, last)])" for e in range(items)]
    L += ["    else:"]
    L += [f"        k{e} = keys[min(i{e}, last)]" for e in range(items)]
    L += [f"    mine = (t % {COPIES}) * {stride}",
          f"    ks = {K}(shift)"]
    for e in range(items):
        L += [f"    d{e} = np.int32((k{e} >> ks) & {K}({RADIX - 1})) if i{e} < n else {RADIX}",
              f"    gpu.atomic_add(h, mine + d{e}, np.uint32(1))"]
    return (_key_functions(dtype, kt, argsort) + "\n" + "\n".join(L) + "\n"
            "    gpu.barrier()\n"
            "    s = np.uint32(0)\n"
            f"    for c in range({COPIES}):\n"
            f"        s += h[c * {stride} + t]\n"
            "    cnt[t * G + b] = np.int32(s)\n"
            + "\n".join(_group_scan_lines("s", "")) + "\n"
            "    lpre[t * G + b] = np.int32(pre)\n")


def _pad(expr: str) -> str:
    """The local slot of position ``expr``: one padding word every 32, so that a work item's
    consecutive elements (or counter words) and its neighbours' fall into different banks."""
    return f"(({expr}) + (({expr}) >> 5))"


def _split_lines(L: list, kt: np.dtype, items: int, split: int, with_index: bool) -> None:
    """Sort the tile in ``lk`` (and ``li``) stably by the 4 key bits from ``shift + 4 * split``.
    Every work item takes ``items`` consecutive elements and counts them per 4-bit value ``v`` in
    counter word ``(v % 8) * GROUP + t``, half ``v // 8`` (its own words: no atomics); an
    exclusive scan over the words in that order gives each (value, work item) its first rank
    (value-major, then by position), from which the work item counts its elements again, in
    order, to rank and move them. The second count takes the 4 bits with another expression
    (shift left, then right) so that the compiler computes them again instead of keeping each
    element's bits live across the barriers. Every name is assigned once (suffix ``_split``), so
    the translator proves the local indices non-negative and emits no wrap-around compare."""
    K = np_type(kt)
    bits = kt.itemsize * 8
    x = f"_{split}"
    L += [f"    for z{x} in range({LANES}):",
          f"        ctr[{_pad(f't * {LANES} + z{x}')}] = np.uint32(0)",
          "    gpu.barrier()",
          f"    sh{x} = {K}(shift + {split * SPLIT_BITS})",
          f"    up{x} = {K}({bits - 4 - split * SPLIT_BITS} - shift)"]
    for j in range(items):
        q = f"t * {items} + {j}"
        e = f"{j}{x}"
        L += [f"    k{e} = lk[{_pad(q)}]"]
        if with_index:
            L += [f"    i{e} = li[{_pad(q)}]"]
        L += [f"    v{e} = np.int32((k{e} >> sh{x}) & {K}(15))",
              f"    a{e} = {_pad(f'(v{e} & 7) * {GROUP} + t')}",
              f"    ctr[a{e}] += np.uint32(65536) if v{e} >= 8 else np.uint32(1)"]
    # exclusive scan of the words in order: each work item its LANES words, then the items' totals
    # (16 work items scan 16 totals each, every work item adds the preceding sums)
    L += ["    gpu.barrier()",
          f"    s{x} = np.uint32(0)"]
    for j in range(LANES):
        L += [f"    c{j}{x} = ctr[{_pad(f't * {LANES} + {j}')}]",
              f"    s{x} += c{j}{x}"]
    L += _group_scan_lines(f"s{x}", x)
    L += [f"    acc{x} = pre{x} + (tot{x} << 16)     # the upper halves follow all of the lower ones"]
    for j in range(LANES):
        L += [f"    ctr[{_pad(f't * {LANES} + {j}')}] = acc{x}",
              f"    acc{x} += c{j}{x}"]
    L += ["    gpu.barrier()"]
    for j in range(items):
        e = f"{j}{x}"
        L += [f"    b{e} = np.int32((k{e} << up{x}) >> {bits - 4})",
              f"    q{e} = {_pad(f'(b{e} & 7) * {GROUP} + t')}",
              f"    o{e} = ctr[q{e}]",
              f"    g{e} = b{e} >= 8",
              f"    ctr[q{e}] = o{e} + (np.uint32(65536) if g{e} else np.uint32(1))",
              f"    r{e} = np.int32(((o{e} >> 16) if g{e} else o{e}) & np.uint32(65535)) & 65535",
              f"    lk[{_pad(f'r{e}')}] = k{e}"]
        if with_index:
            L += [f"    li[{_pad(f'r{e}')}] = i{e}"]
    L += ["    gpu.barrier()"]


def _scatter_source(kname: str, dtype: np.dtype, kt: np.dtype, argsort: bool, items: int) -> str:
    """Step 3 of a pass. ``first``: read values from ``src`` (keys, indices made here); ``last``:
    write values to ``okeys`` (``sort``) or indices to ``oidx`` (``argsort``)."""
    K = np_type(kt)
    tile = GROUP * items
    ones = f"{K}({(1 << (kt.itemsize * 8)) - 1})"
    digit = f"{K}({RADIX - 1})"
    params = ["src", "keys", "okeys"] + (["idx", "oidx"] if argsort else []) + [
        "incl", "cnt", "lpre", "n", "shift", "G", "first", "last", "items"]
    L = [f"def {kname}({', '.join(params)}):",
         f"    lk = gpu.local_array({_padded(tile)}, {K})"]
    if argsort:
        L.append(f"    li = gpu.local_array({_padded(tile)}, np.int32)")
    L += [f"    ctr = gpu.local_array({_padded(LANES * GROUP)}, np.uint32)",
          f"    part = gpu.local_array({GROUP + GROUP // 16}, np.uint32)",
          "    sums = gpu.local_array(16, np.uint32)",
          f"    start = gpu.local_array({RADIX}, np.int32)",
          "    t = gpu.get_local_id(0)",
          "    b = gpu.get_group_id(0)",
          f"    base = b * {tile}",
          f"    valid = min(n - base, {tile})",
          "    slot = t * G + b",
          # output slot of the sorted tile's position p of digit d: start[d] + p
          "    start[t] = incl[slot] - cnt[slot] - lpre[slot]",
          f"    ks = {K}(shift)",
          # the tile, in order; positions past the end get the largest key, so they stay last.
          # `items` as an argument: a loop the compiler cannot unroll fully, so it does not issue
          # 16 loads at once, which cost NVRTC ~110 registers (1 group per SM) instead of ~56.
          # The loads are unconditional (an index past the end reads the last element, whose key
          # a select then replaces) and `first` is decided outside the loop: a load under a
          # branch made NVRTC finish each load before the next (one in flight per work item);
          # without branches the copies it unrolls (4) have their loads in flight together.
          "    end = n - 1"]
    # (suffix, key, index) of the first pass, which reads values, and of the others
    for x, key, index in (("_f", "_key(src[j_f])", "i_f"), ("_k", "keys[j_k]", "idx[j_k]")):
        L += ["    if first:" if x == "_f" else "    else:",
              f"        for e{x} in range(items):",
              f"            p{x} = e{x} * {GROUP} + t",
              f"            i{x} = base + p{x}",
              f"            j{x} = min(i{x}, end)",
              f"            k{x} = {key}",
              f"            lk[{_pad(f'p{x}')}] = k{x} if p{x} < valid else {ones}"]
        if argsort:
            L += [f"            x{x} = {index}",
                  f"            li[{_pad(f'p{x}')}] = x{x} if p{x} < valid else np.int32(0)"]
    return _sort_and_scatter(L, dtype, kt, argsort, items, digit)


def _sort_and_scatter(L: "list[str]", dtype: np.dtype, kt: np.dtype, argsort: bool, items: int, digit: str) -> str:
    """The end both kinds of pass share, once ``start[d]`` holds where digit ``d`` of this tile goes:
    the tile's stable sort by the digit in local memory, then each key (and index) written to its
    place; ``L``: the kernel's lines so far. Returns the whole kernel source."""
    for split in range(DIGIT_BITS // SPLIT_BITS):
        _split_lines(L, kt, items, split, argsort)
    L += ["    for eo in range(items):",
          f"        po = eo * {GROUP} + t",
          "        if po < valid:",
          f"            ko = lk[{_pad('po')}]",
          f"            dst = np.uint32(start[np.int32((ko >> ks) & {digit}) & {RADIX - 1}] + po)"]
    if argsort:
        L += ["            if last:",
              f"                oidx[dst] = li[{_pad('po')}]",
              "            else:",
              "                okeys[dst] = ko",
              f"                oidx[dst] = li[{_pad('po')}]"]
    else:
        L += ["            okeys[dst] = _value(ko) if last else ko"]
    return _key_functions(dtype, kt, argsort) + "\n" + "\n".join(L) + "\n"


# ---- one sweep per digit (decoupled look-back) ----------------------------------------------------------------
# The passes above take three steps each (histogram, a scan of the counts, scatter): 4 to 5 launches and
# three reads of the keys per digit. The sweep reads every key once up front for the histograms of all
# digits (their global starts), then each pass is one launch: a tile counts its digits while loading,
# publishes the counts, and finds how many elements of each digit the tiles before it hold by looking back
# at their published words (each holding a count and a flag: only the tile's own count, or the inclusive
# count of every tile up to it), waiting on a tile that has published nothing yet. Tiles take their numbers
# from an atomic counter in the order they start, so a tile waits only on tiles that have started: no
# deadlock on a GPU whose groups run to completion (or on PoCL, or oclgrind, which runs groups one after
# another in that order). The counts live in the flag word itself (30 bits), read and written by atomics
# alone, so no memory fence has to order anything between groups: the sweep takes n < 2**30.
SWEEP_FLAG_AGGREGATE = 1 << 30     # the word holds the tile's own count of the digit
SWEEP_FLAG_PREFIX = 2 << 30        # the word holds the count of the digit in this tile and every one before
SWEEP_MAX_N = 1 << 30
# Off by default until it has run on a GPU: built and tested on PoCL and oclgrind only, where groups run
# one after another, so the look-back has never waited on a running group (bench_gnp_table.py
# --radix-sweep times it; tests switch it on)
SWEEP = False
# where the look-back's spin on other groups is known to make progress (groups that have started run to
# completion) and global atomics are plain integer atomics; WebGPU promises neither (its atomics are typed
# atomic<u32> buffers), so it keeps the three-step passes
SWEEP_DIALECTS = ("cuda", "hip", "opencl")
_STRIDE = RADIX + 1                # histogram copies one bank apart, word RADIX: the padding


def _allhist_source(kname: str, dtype: np.dtype, kt: np.dtype, argsort: bool, items: int, npass: int) -> str:
    """The histogram of every digit at once: ``counts[p * RADIX + d]`` += the tile's count of digit
    ``d`` of pass ``p``; each tile also zeroes its look-back words of every pass."""
    K = np_type(kt)
    L = [f"def {kname}(src, counts, status, n, G):",
         f"    h = gpu.local_array({npass * _STRIDE}, np.uint32)",
         "    t = gpu.get_local_id(0)",
         "    b = gpu.get_group_id(0)",
         f"    base = b * {GROUP * items}",
         "    last = n - 1"]
    L += [f"    h[{q * _STRIDE} + t] = np.uint32(0)" for q in range(npass)]
    L += ["    gpu.barrier()",
          f"    for e in range({items}):",
          f"        i = base + e * {GROUP} + t",
          "        k = _key(src[min(i, last)])"]
    for q in range(npass):
        L += [f"        d{q} = np.int32((k >> {K}({q * DIGIT_BITS})) & {K}({RADIX - 1})) if i < n else {RADIX}",
              f"        gpu.atomic_add(h, {q * _STRIDE} + d{q}, np.uint32(1))"]
    L += ["    gpu.barrier()"]
    for q in range(npass):
        L += [f"    c{q} = h[{q * _STRIDE} + t]",
              f"    if c{q} != np.uint32(0):",
              f"        gpu.atomic_add(counts, {q * RADIX} + t, c{q})",
              f"    status[({q} * G + b) * {RADIX} + t] = np.uint32(0)"]
    return _key_functions(dtype, kt, argsort) + "\n" + "\n".join(L) + "\n"


def _sweep_source(kname: str, dtype: np.dtype, kt: np.dtype, argsort: bool, items: int, npass: int) -> str:
    """One pass of the sweep: the scatter kernel's tile sort and output, its tile number from the
    pass's counter (``counts[npass * RADIX + p]``), its digits' output slots from the pass's
    histogram (``counts[p * RADIX + d]``, scanned here) and the look-back."""
    K = np_type(kt)
    tile = GROUP * items
    ones = f"{K}({(1 << (kt.itemsize * 8)) - 1})"
    digit = f"{K}({RADIX - 1})"
    mask = f"np.uint32({SWEEP_FLAG_AGGREGATE - 1})"
    params = ["src", "keys", "okeys"] + (["idx", "oidx"] if argsort else []) + [
        "counts", "status", "n", "shift", "G", "first", "last", "items", "p"]
    L = [f"def {kname}({', '.join(params)}):",
         f"    lk = gpu.local_array({_padded(tile)}, {K})"]
    if argsort:
        L.append(f"    li = gpu.local_array({_padded(tile)}, np.int32)")
    L += [f"    ctr = gpu.local_array({max(_padded(LANES * GROUP), COPIES * _STRIDE)}, np.uint32)",
          f"    part = gpu.local_array({GROUP + GROUP // 16}, np.uint32)",
          "    sums = gpu.local_array(16, np.uint32)",
          f"    start = gpu.local_array({RADIX}, np.int32)",
          "    t = gpu.get_local_id(0)",
          "    if t == 0:",
          f"        start[0] = np.int32(gpu.atomic_add(counts, {npass * RADIX} + p, np.uint32(1)))",
          f"    for c in range({COPIES}):",
          f"        ctr[c * {_STRIDE} + t] = np.uint32(0)",
          "    gpu.barrier()",
          "    b = start[0]",
          f"    base = b * {tile}",
          f"    valid = min(n - base, {tile})",
          f"    ks = {K}(shift)",
          f"    mine = (t % {COPIES}) * {_STRIDE}",
          "    end = n - 1"]
    for x, key, index in (("_f", "_key(src[j_f])", "i_f"), ("_k", "keys[j_k]", "idx[j_k]")):
        L += ["    if first:" if x == "_f" else "    else:",
              f"        for e{x} in range(items):",
              f"            p{x} = e{x} * {GROUP} + t",
              f"            i{x} = base + p{x}",
              f"            j{x} = min(i{x}, end)",
              f"            k{x} = {key}",
              f"            lk[{_pad(f'p{x}')}] = k{x} if p{x} < valid else {ones}"]
        if argsort:
            L += [f"            x{x} = {index}",
                  f"            li[{_pad(f'p{x}')}] = x{x} if p{x} < valid else np.int32(0)"]
    # counted from local memory after the loads (each work item its own elements), so that no
    # atomic comes between two global loads (test_gnp_radix_loads: the loads stay in flight together)
    L += ["    for e_c in range(items):",
          f"        p_c = e_c * {GROUP} + t",
          f"        k_c = lk[{_pad('p_c')}]",
          f"        d_c = np.int32((k_c >> ks) & {digit}) if p_c < valid else {RADIX}",
          "        gpu.atomic_add(ctr, mine + d_c, np.uint32(1))"]
    L += ["    gpu.barrier()",
          "    s = np.uint32(0)",
          f"    for c in range({COPIES}):",
          f"        s += ctr[c * {_STRIDE} + t]"]
    # publish this tile's count of digit t at once (tile 0: its count is already the inclusive one)
    L += [f"    me = (p * G + b) * {RADIX} + t",
          "    if b == 0:",
          f"        gpu.atomic_add(status, me, np.uint32({SWEEP_FLAG_PREFIX}) | s)",
          "    else:",
          f"        gpu.atomic_add(status, me, np.uint32({SWEEP_FLAG_AGGREGATE}) | s)"]
    L += _group_scan_lines("s", "")                                # pre: the tile's smaller digits
    L += ["    gpu.barrier()"]
    L += _group_scan_lines(f"counts[p * {RADIX} + t]", "_g")        # pre_g: the digit's first slot overall
    # look back: the count of digit t in the tiles before this one
    L += ["    excl = np.uint32(0)",
          "    if b > 0:",
          "        j = b - 1",
          "        looking = True",
          "        while looking:",
          f"            v = gpu.atomic_add(status, (p * G + j) * {RADIX} + t, np.uint32(0))",
          "            fl = v >> np.uint32(30)",
          "            if fl != np.uint32(0):",
          f"                excl += v & {mask}",
          "                if fl == np.uint32(2):",
          "                    looking = False",
          "                else:",
          "                    j -= 1",
          f"        gpu.atomic_add(status, me, np.uint32({SWEEP_FLAG_AGGREGATE}) + excl)   # now the inclusive count",
          "    start[t] = np.int32(pre_g + excl) - np.int32(pre)",
          "    gpu.barrier()"]
    return _sort_and_scatter(L, dtype, kt, argsort, items, digit)


_sweep_kernels: dict = {}


def _sweep_pair(dtype: np.dtype, argsort: bool, items: int):
    key = (dtype, argsort, items)
    pair = _sweep_kernels.get(key)
    if pair is None:
        kt = _key_type(dtype)
        npass = dtype.itemsize * 8 // DIGIT_BITS
        mode = "argsort" if argsort else "sort"
        hname = f"gnp_radix_allhist_{mode}_{dtype.name}_{items}"
        sname = f"gnp_radix_sweep_{mode}_{dtype.name}_{items}"
        pair = _sweep_kernels[key] = (
            kernel_from_source(hname, _allhist_source(hname, dtype, kt, argsort, items, npass)),
            kernel_from_source(sname, _sweep_source(sname, dtype, kt, argsort, items, npass)))
    return pair


def _sweep_passes(x: DeviceArray, out: DeviceArray, argsort: bool) -> None:
    """:func:`_passes` as one histogram launch and one launch per digit (n < 2**30)."""
    device = x.device
    ctx = device.context()
    n = x.size
    kt = _key_type(x.dtype)
    items = _items(kt, argsort, device)
    hist_k, sweep_k = _sweep_pair(x.dtype, argsort, items)
    src = x.view(_bits_type(x.dtype))
    npass = x.dtype.itemsize * 8 // DIGIT_BITS
    G = -(-n // (GROUP * items))
    keys = DeviceArray((n if npass > 2 else 1,), kt, ctx)
    okeys = DeviceArray((n if npass > 1 else 1,), kt, ctx)
    if argsort:
        idx = DeviceArray((n if npass > 2 else 1,), np.int32, ctx)
        oidx = DeviceArray((n if npass > 1 else 1,), np.int32, ctx)
    counts = DeviceArray((npass * RADIX + npass,), np.uint32, ctx)   # the histograms, then the tile counters
    counts.fill(0)
    status = DeviceArray((npass * G * RADIX,), np.uint32, ctx)
    groups = _Config(None, (G * GROUP,), (GROUP,))
    launch(hist_k, device, groups, (src, counts, status, n, G))
    for p in range(npass):
        first, last = int(p == 0), int(p == npass - 1)
        args: tuple[DeviceArray, ...]
        if argsort:
            args = (src, keys, okeys, idx, out if last else oidx)
        else:
            args = (src, keys, out.view(_bits_type(out.dtype)) if last else okeys)
        launch(sweep_k, device, groups, args + (counts, status, n, p * DIGIT_BITS, G, first, last, items, p))
        keys, okeys = okeys, keys
        if argsort:
            idx, oidx = oidx, idx


_kernel_pairs: dict = {}


def _kernels(dtype: np.dtype, argsort: bool, items: int):
    """The histogram and scatter kernels (kept: the sources take a while to write)."""
    key = (dtype, argsort, items)
    pair = _kernel_pairs.get(key)
    if pair is None:
        kt = _key_type(dtype)
        mode = "argsort" if argsort else "sort"
        hname = f"gnp_radix_hist_{mode}_{dtype.name}_{items}"
        sname = f"gnp_radix_scatter_{mode}_{dtype.name}_{items}"
        pair = _kernel_pairs[key] = (kernel_from_source(hname, _hist_source(hname, dtype, kt, argsort, items)),
                                     kernel_from_source(sname, _scatter_source(sname, dtype, kt, argsort, items)))
    return pair


def _passes(x: DeviceArray, out: DeviceArray, argsort: bool) -> None:
    """Sort the 1-D C-contiguous ``x`` into ``out`` (its sorted values, or int64 indices)."""
    from ._scan import _ScanOp, scan_rows

    device = x.device
    ctx = device.context()
    n = x.size
    if n == 0:
        return
    if SWEEP and n < SWEEP_MAX_N and not on_cpu(device) and getattr(device.backend, "dialect", "") in SWEEP_DIALECTS:
        # (not on CPUs: PoCL runs a group's work items one after another, so a tile's look-back
        # waits on its predecessors in turn, and a waiting core spins: 1.3-1.7x slower there)
        _sweep_passes(x, out, argsort)
        return
    kt = _key_type(x.dtype)
    items = _items(kt, argsort, device)
    hist_k, scatter_k = _kernels(x.dtype, argsort, items)
    src = x.view(_bits_type(x.dtype))
    npass = x.dtype.itemsize * 8 // DIGIT_BITS
    G = -(-n // (GROUP * items))
    # pass p reads `keys` (unless first) and writes `okeys` (unless last), then they swap: the
    # first buffer is needed from 3 passes on, the second from 2; a one-element stand-in otherwise
    keys = DeviceArray((n if npass > 2 else 1,), kt, ctx)
    okeys = DeviceArray((n if npass > 1 else 1,), kt, ctx)
    if argsort:
        idx = DeviceArray((n if npass > 2 else 1,), np.int32, ctx)
        oidx = DeviceArray((n if npass > 1 else 1,), np.int32, ctx)
    cnt = DeviceArray((RADIX * G,), np.int32, ctx)
    lpre = DeviceArray((RADIX * G,), np.int32, ctx)
    groups = _Config(None, (G * GROUP,), (GROUP,))
    count = _ScanOp("count", "({a} + {b})", np.int32, np.int32, 0)
    for p in range(npass):
        first, last = int(p == 0), int(p == npass - 1)
        shift = p * DIGIT_BITS
        launch(hist_k, device, groups, (src, keys, cnt, lpre, n, shift, G, first))
        incl = scan_rows(count, cnt, 1, RADIX * G, device)
        args: tuple[DeviceArray, ...]
        if argsort:
            args = (src, keys, okeys, idx, out if last else oidx)
        else:
            args = (src, keys, out.view(_bits_type(out.dtype)) if last else okeys)
        launch(scatter_k, device, groups, args + (incl, cnt, lpre, n, shift, G, first, last, items))
        keys, okeys = okeys, keys
        if argsort:
            idx, oidx = oidx, idx


def radix_sort(x: DeviceArray) -> DeviceArray:
    """``np.sort`` of the 1-D C-contiguous ``x`` (every bit pattern kept; NaN last)."""
    if on_cpu(x.device):             # a chunk per work item, as CPU sorts go (_radix_cpu)
        from ._radix_cpu import cpu_radix_sort
        return cpu_radix_sort(x)
    out = DeviceArray(x.shape, x.dtype, x.context)
    _passes(x, out, False)
    return out


def radix_argsort(x: DeviceArray) -> DeviceArray:
    """The int64 indices that stably sort the 1-D C-contiguous ``x`` (numpy's ``kind="stable"``)."""
    out = DeviceArray(x.shape, np.int64, x.context)
    _passes(x, out, True)
    return out
