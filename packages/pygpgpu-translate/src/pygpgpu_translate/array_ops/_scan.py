"""Prefix scans (``cumsum``, ``cumprod``) as generated ``@kernel`` functions, and the compaction
built on them (``nonzero``, boolean-mask indexing).

A block scan: each group of ``GROUP`` work items scans a tile of ``TILE`` consecutive elements
in local memory (every work item scans ``PER_ITEM`` of them serially, a Hillis-Steele scan over
the ``GROUP`` work-item totals joins them, with a ``gpu.barrier`` between steps). Longer rows
take three passes: the tiles' totals, an inclusive scan of those totals (the same code,
recursively), and the tiles' scans started from the preceding tiles' total.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import DTypeLike
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._array import check_out_writeable

from .._kernel import _Config
from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch, np_type
from ._half import bits, narrow, stores_half_only, widen
from ._operands import check_dtype, check_same_device, contiguous, normalize_axis

__all__ = ["scan", "scan_rows", "compact_indices", "mask_select", "TILE"]

GROUP = 256
PER_ITEM = 8
TILE = GROUP * PER_ITEM


class _ScanOp:
    def __init__(self, name: str, combine: str, acc: DTypeLike, out: DTypeLike, identity):
        self.name = name
        self.combine = combine          # format string with {a} (earlier) and {b} (later)
        self.acc = np.dtype(acc)
        self.out = np.dtype(out)
        self.identity = identity

    def comb(self, a: str, b: str) -> str:
        return self.combine.format(a=a, b=b)


# Where a work item of group g stands: block b of row ``row`` (nb blocks a row), whose elements
# start at x[base + start]
_BLOCK_POSITION = ["    lid = gpu.get_local_id(0)",
                   "    g = gpu.get_group_id(0)",
                   "    row = g // nb",
                   "    b = g - row * nb",
                   f"    start = b * {TILE}",
                   "    base = row * n"]


def _block_source(kname: str, op: _ScanOp, mapped: bool, carry: bool) -> str:
    acc = np_type(op.acc)
    conv = (lambda v: f"{acc}({v})") if mapped else (lambda v: v)
    params = ["x", "out"] + (["cs"] if carry else []) + ["n", "nb", "ident"]
    lines = [f"def {kname}({', '.join(params)}):",
             f"    tile = gpu.local_array({TILE}, {acc})",
             f"    part = gpu.local_array({GROUP}, {acc})",
             *_BLOCK_POSITION,
             f"    for e in range({PER_ITEM}):",
             f"        k = start + e * {GROUP} + lid",
             f"        tile[e * {GROUP} + lid] = {conv('x[base + k]')} if k < n else ident",
             "    gpu.barrier()",
             f"    t0 = lid * {PER_ITEM}",
             "    acc = tile[t0]",
             f"    for e in range(1, {PER_ITEM}):",
             f"        acc = {op.comb('acc', 'tile[t0 + e]')}",
             "        tile[t0 + e] = acc",
             "    part[lid] = acc",
             "    off = 1",
             f"    while off < {GROUP}:",
             "        gpu.barrier()",
             "        v = part[lid]",
             "        if lid >= off:",
             f"            v = {op.comb('part[lid - off]', 'v')}",
             "        gpu.barrier()",
             "        part[lid] = v",
             "        off = off * 2",
             "    gpu.barrier()",
             "    prefix = ident",
             "    if lid > 0:",
             "        prefix = part[lid - 1]"]
    if carry:
        lines += ["    if b > 0:",
                  f"        prefix = {op.comb('cs[g - 1]', 'prefix')}"]
    lines += [f"    for e in range({PER_ITEM}):",
              f"        tile[t0 + e] = {op.comb('prefix', 'tile[t0 + e]')}",
              "    gpu.barrier()",
              f"    for e in range({PER_ITEM}):",
              f"        k = start + e * {GROUP} + lid",
              "        if k < n:",
              f"            out[base + k] = {np_type(op.out)}(tile[e * {GROUP} + lid])"]
    return "\n".join(lines) + "\n"


def _totals_source(kname: str, op: _ScanOp, mapped: bool) -> str:
    acc = np_type(op.acc)
    conv = (lambda v: f"{acc}({v})") if mapped else (lambda v: v)
    lines = [f"def {kname}(x, sums, n, nb, ident):",
             f"    tile = gpu.local_array({GROUP}, {acc})",
             *_BLOCK_POSITION,
             "    acc = ident",
             f"    for e in range({PER_ITEM}):",
             f"        k = start + e * {GROUP} + lid",
             "        if k < n:",
             f"            acc = {op.comb('acc', conv('x[base + k]'))}",
             "    tile[lid] = acc",
             f"    s = {GROUP // 2}",
             "    while s > 0:",
             "        gpu.barrier()",
             "        if lid < s:",
             f"            tile[lid] = {op.comb('tile[lid]', 'tile[lid + s]')}",
             "        s = s >> 1",
             "    if lid == 0:",
             "        sums[g] = tile[0]"]
    return "\n".join(lines) + "\n"


_kernels: dict = {}


def _kernel(op: _ScanOp, which: str, mapped: bool, carry: bool = False):
    key = (op.name, op.combine, op.acc, op.out, which, mapped, carry)
    k = _kernels.get(key)
    if k is None:
        kname = f"gnp_scan_{op.name}_{which}{'_map' if mapped else ''}{'_carry' if carry else ''}"
        src = (_block_source(kname, op, mapped, carry) if which == "block" else _totals_source(kname, op, mapped))
        k = _kernels[key] = kernel_from_source(kname, src)
    return k


def _groups(count: int) -> _Config:
    return _Config(None, (count * GROUP,), (GROUP,))


def scan_rows(op: _ScanOp, x: DeviceArray, rows: int, n: int, device, mapped: bool = True) -> DeviceArray:
    """Inclusive scan of each of ``rows`` contiguous rows of ``n`` elements of flat ``x``; the
    result has ``op.out`` (``mapped``) or ``op.acc`` elements, shape (rows * n,)."""
    ctx = device.context()
    out_dt = op.out if mapped else op.acc
    out = DeviceArray((rows * n,), out_dt, ctx)
    if rows * n == 0:
        return out
    ident = op.acc.type(op.identity)
    nb = -(-n // TILE)
    final = op if mapped else _ScanOp(op.name, op.combine, op.acc, op.acc, op.identity)
    if nb == 1:
        launch(_kernel(final, "block", mapped), device, _groups(rows), (x, out, n, 1, ident))
        return out
    sums = DeviceArray((rows * nb,), op.acc, ctx)
    launch(_kernel(op, "totals", mapped), device, _groups(rows * nb), (x, sums, n, nb, ident))
    acc_op = _ScanOp(op.name, op.combine, op.acc, op.acc, op.identity)
    cs = scan_rows(acc_op, sums, rows, nb, device, mapped=False)
    launch(_kernel(final, "block", mapped, carry=True), device, _groups(rows * nb), (x, out, cs, n, nb, ident))
    return out


_result_dtypes: dict = {}


def _scan_op(name: str, dt: np.dtype, dtype: Any) -> _ScanOp:
    key = (name, dt, dtype)
    out = _result_dtypes.get(key)
    if out is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = _result_dtypes[key] = np.dtype(getattr(np, name)(np.ones(1, dt), dtype=dtype).dtype)
    acc = out
    if name == "cumsum":
        comb = "({a} + {b})" if out.kind != "b" else "({a} | {b})"
        ident = 0
    else:
        comb = "({a} * {b})" if out.kind != "b" else "({a} & {b})"
        ident = 1
    if out.kind == "b":
        acc = np.dtype(np.uint8)
    return _ScanOp(name, comb, acc, out, ident)


def scan(name: str, a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> DeviceArray:
    """``np.cumsum`` / ``np.cumprod`` on the device (flattened when ``axis`` is None)."""
    check_out_writeable(out)
    if not isinstance(a, DeviceArray):
        raise TypeError(f"gnp.{name} takes a device array, got {type(a).__name__}")
    device = check_same_device([a], name)
    half = np.dtype(np.float16)
    if half in (a.dtype, np.dtype(dtype) if dtype is not None else None) and stores_half_only(device):
        # a float32 running total rounded to half at the end (numpy rounds each partial sum to half,
        # so long float16 scans here are closer to the exact ones than numpy's)
        wide = widen(a) if a.dtype == half else a
        res = scan(name, wide, axis=axis, dtype=None if dtype is None or np.dtype(dtype) == half else dtype)
        if _scan_op(name, a.dtype, dtype).out == half:
            res = narrow(res)
        if out is not None:
            out[...] = res
            return out
        return res
    check_dtype(a.dtype, name, 0, device)
    op = _scan_op(name, a.dtype, dtype)
    check_dtype(op.out, name, "result", device)
    if axis is None:
        x = contiguous(a).reshape(-1)
        res = scan_rows(op, x, 1, x.size, device)
    else:
        ax = normalize_axis(axis, a.ndim, name)
        last = a.ndim - 1
        moved = a if ax == last else a.swapaxes(ax, last)
        x = contiguous(moved)
        n = x.shape[-1] if x.ndim else 1
        rows = x.size // n if n else 0
        res = scan_rows(op, x.reshape(-1), rows, n, device).reshape(x.shape)
        if ax != last:
            res = res.swapaxes(ax, last).copy()
    if not res.size:       # numpy's new empty result has strides of 0, not the reshape's
        res = DeviceArray(res.shape, res.dtype, res.context)
    if out is not None:
        if not isinstance(out, DeviceArray) or out.shape != res.shape:
            raise ValueError(f"gnp.{name}: out must be a device array of shape {res.shape}")
        out[...] = res
        return out
    return res


_SCATTER = '''def gnp_compact(x, cs, out):
    for i in range(x.shape[0]):
        if x[i] != 0:
            out[cs[i] - 1] = np.int64(i)
'''


def _positions(x: DeviceArray, device) -> "tuple[DeviceArray, DeviceArray, int]":
    """The flags of flat ``x`` (x itself when bool), their inclusive prefix count (int32 where
    the count fits: half the memory traffic of int64) and the total, read back (the result's
    size depends on it)."""
    n = x.size
    count_dt = np.int32 if n < 2**31 - 1 else np.int64
    op = _ScanOp(f"count_{np.dtype(count_dt).name}", "({a} + {b})", count_dt, count_dt, 0)
    flags = x if x.dtype.kind == "b" else None
    if flags is None:
        from ._elementwise import ufunc_call
        flags = ufunc_call("not_equal", (x, 0))
    cs = scan_rows(op, flags, 1, n, device)
    return flags, cs, int(cs[n - 1].get())


def compact_indices(x: DeviceArray) -> DeviceArray:
    """The indices (int64) of the nonzero elements of flat ``x``, in order. Reads back one
    number, the count, since the result's size depends on it."""
    device = x.device
    check_dtype(x.dtype, "nonzero", 0, device)
    n = x.size
    if n == 0:
        return DeviceArray((0,), np.int64, device.context())
    flags, cs, count = _positions(x, device)
    out = DeviceArray((count,), np.int64, device.context())
    if count:
        launch(kernel_from_source("gnp_compact", _SCATTER), device, DEFAULT_CONFIG, (flags, cs, out))
    return out


_SELECT_ONE = '''def gnp_mask_select(x, flags, cs, out):
    for i in range(x.shape[0]):
        if flags[i] != 0:
            out[cs[i] - 1] = x[i]
'''

_SELECT_ROWS = '''def gnp_mask_select_rows(x, flags, cs, out, inner):
    for t in range(x.shape[0]):
        i = t // inner
        if flags[i] != 0:
            out[(cs[i] - 1) * inner + (t - i * inner)] = x[t]
'''


def mask_select(x: DeviceArray, mask: DeviceArray, rest: tuple) -> DeviceArray:
    """``a[mask]``: the elements (``rest``-shaped blocks) of C-contiguous ``x`` where the flat
    ``mask`` is true, in order, copied straight to their places (one prefix count, one pass;
    no index array in between)."""
    if x.dtype == np.float16:       # halves move as their bit patterns: exact, and no half arithmetic
        return mask_select(bits(x), mask, rest).view(np.float16)
    device = x.device
    n = mask.size
    inner = x.size // n if n else 0
    if n == 0:
        return DeviceArray((0,) + rest, x.dtype, device.context())
    flags, cs, count = _positions(mask, device)
    out = DeviceArray((count,) + rest, x.dtype, device.context())
    if count and inner:
        if inner == 1:
            launch(kernel_from_source("gnp_mask_select", _SELECT_ONE), device, DEFAULT_CONFIG,
                   (x.reshape(-1), flags, cs, out.reshape(-1)))
        else:
            launch(kernel_from_source("gnp_mask_select_rows", _SELECT_ROWS), device, DEFAULT_CONFIG,
                   (x.reshape(-1), flags, cs, out.reshape(-1), inner))
    return out
