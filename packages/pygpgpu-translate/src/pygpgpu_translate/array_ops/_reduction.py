"""Reductions (sum, prod, min, max, mean, argmin, argmax, any, all and user-defined ones) as
generated ``@kernel`` functions.

The input is brought to a ``(outer, r, inner)`` layout (reduced axes in the middle, a contiguous
copy only when they are not already adjacent), then one of two kernels runs:

* *rows* (``inner == 1``, rows of ``r`` contiguous elements): each group of ``GROUP`` work items
  strides through one segment of a row, accumulates per work item, then combines the group's
  values in a tree in local memory (``gpu.barrier`` between levels). Long rows are split over
  several groups (segments) and a second *rows* pass combines the segments' results: the classic
  two-pass block reduction. Accumulation is sequential within a work item (about ``r /
  (segments * GROUP)`` values) and a tree above it, so float sums are as accurate as numpy's
  pairwise ones.
* *columns* (``inner > 1``): one work item per output element walks down its column (neighbouring
  work items read neighbouring addresses); a short output with long columns is split into chunks
  of rows whose partial results a second pass combines.

numpy decides the result dtype (``np.sum(np.ones(1, dtype))``), so int32 sums are int64 like
numpy's on Linux, mean of integers is float64, and so on.

Positions (argmin/argmax) and counts are int64, on a device without 64-bit integers (its
``int64`` capability False: WGSL) int32: the kernels then index in 32 bits, argmin/argmax give
int32, and arrays of ``INDEX32_LIMIT`` elements or more are refused.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._array import check_out_writeable
from pygpgpu_core.gnp._array import setitem_value
from pygpgpu_core.gnp._operand_device import follow_operands
from pygpgpu_core.protocols import option

from .._kernel import _Config

from ._codegen import DEFAULT_CONFIG, bind, kernel_from_source, launch, np_type
from ._complex_ufuncs import complex_rule
from ._half import narrow, stores_half_only, widen
from ._operands import check_dtype, check_same_device, contiguous, normalize_axes

__all__ = ["reduce", "Reduction", "REDUCTIONS", "reduce_with", "GROUP", "index_dtype", "INDEX32_LIMIT"]

GROUP = 256                  # work items per group in the rows kernel (a power of two)
_COLS_MIN_R = 128            # rows shorter than this are reduced one per work item (columns kernel, inner 1)
_GPU_VECTOR_LOADS = 2        # 128-bit loads in flight per work item in the GPU rows kernel (lanes > 1)
_GPU_GROUPS_PER_CU = 8       # groups per compute unit a long row is split over on GPUs
# A long row's last group combines the segments (one launch; see _rows_source). None: on CUDA and
# HIP, whose memory model makes a fence plus an atomic counter publish the partials to another
# group (__threadfence); OpenCL 1.2's mem_fence does not order memory between groups (oclgrind
# reports the reads as races), so OpenCL keeps two launches. True/False: always/never (tests).
_GPU_SINGLE_PASS: "bool | None" = None
_SINGLE_PASS_DIALECTS = ("cuda", "hip")
# Without 64-bit integers the kernels index in 32 bits: from 2**30 elements on, the index arithmetic
# (a work item's next strided loads, a chunk's end) may pass 2**31, which is where devices that have
# int64 switch to 64-bit indices (``wide`` in _rows_plan). No WebGPU buffer of 4-byte numbers is so big.
INDEX32_LIMIT = 2**30
_INT64 = np.dtype(np.int64)


def index_dtype(device) -> np.dtype:
    """The type of positions and counts in the device's reduction kernels: int64, or int32 where
    the device declares no 64-bit integers (the ``int64`` capability)."""
    return _INT64 if option(device, "int64") else np.dtype(np.int32)


class Reduction:
    """What one reduction computes: ``combine(a, b)`` of two accumulated values (a Python
    expression, or a helper function's name), ``prepare`` turning an input element into an
    accumulator value, the accumulator and result dtypes, the identity, and whether it tracks
    indices (argmin/argmax)."""

    def __init__(self, name, combine, acc, out, identity, prepare="{acc}({v})", final=None, arg=None,
                 helpers=None, helper_source=""):
        self.name = name
        self.combine = combine            # format string with {a} and {b}
        self.acc = np.dtype(acc)
        self.out = np.dtype(out)
        self.identity = identity
        self.prepare = prepare            # format string with {v} (and {acc})
        self.final = final                # format string with {v}: mean divides by the count
        self.arg = arg                    # None, or "min"/"max": argmin/argmax track indices
        self.helpers = helpers or {}      # extra globals (a user's combine function)
        self.helper_source = helper_source
        self._key = (self.name, self.combine, self.acc, self.out, self.prepare, self.final, self.arg,
                     tuple(sorted((k, id(v)) for k, v in self.helpers.items())), self.helper_source)

    def key(self):
        return self._key

    def map(self, v: str) -> str:
        return self.prepare.format(v=v, acc=np_type(self.acc))

    def comb(self, a: str, b: str) -> str:
        return self.combine.format(a=a, b=b)


# ---- kernel sources ------------------------------------------------------------------------------------------
def _arg_helper(kind: str, t: np.dtype) -> "tuple[str, str]":
    """``better(a, ia, b, ib)``: whether (b, ib) replaces (a, ia) in argmin/argmax: the smaller
    (larger) value, NaN first (numpy returns the first NaN), the lower index among equals."""
    name = f"_gnp_arg{kind}_better"
    cmp = "<" if kind == "min" else ">"
    if t.kind == "c":      # numpy's order: real parts, then imaginary ones; a NaN in either part first
        body = ("    if a.real != a.real or a.imag != a.imag:\n"
                "        return (b.real != b.real or b.imag != b.imag) and ib < ia\n"
                "    if b.real != b.real or b.imag != b.imag:\n"
                "        return True\n"
                f"    return b.real {cmp} a.real or (b.real == a.real and (b.imag {cmp} a.imag or "
                "(b.imag == a.imag and ib < ia)))\n")
    elif t.kind == "f":
        body = ("    if a != a:\n"
                "        return b != b and ib < ia\n"
                "    if b != b:\n"
                "        return True\n"
                f"    return b {cmp} a or (b == a and ib < ia)\n")
    else:
        body = f"    return b {cmp} a or (b == a and ib < ia)\n"
    return name, f"def {name}(a, ia, b, ib):\n{body}"


def _tree(red: Reduction, lines: list, arg: bool) -> None:
    """Combine the group's GROUP values in local memory: log2(GROUP) levels, a barrier before each."""
    lines += [f"    s = {GROUP // 2}",
              "    while s > 0:",
              "        gpu.barrier()",
              "        if lid < s:"]
    if arg:
        lines += ["            if _better(tile[lid], tidx[lid], tile[lid + s], tidx[lid + s]):",
                  "                tile[lid] = tile[lid + s]",
                  "                tidx[lid] = tidx[lid + s]"]
    else:
        lines += [f"            tile[lid] = {red.comb('tile[lid]', 'tile[lid + s]')}"]
    lines += ["        s = s >> 1"]


_MASK = {False: "2147483647", True: "9223372036854775807"}


def _no_index(index: np.dtype) -> str:
    """An index past every real one (``tidx`` of a work item that saw no element)."""
    return f"{np_type(index)}({np.iinfo(index).max})"


def _first_of_chunk() -> list:
    """j0 = (seg * GROUP + lid) * c, one operation per assignment: each is then a sum or product
    of two values the translator proves non-negative, and so is j0 (and the loop counter from it)."""
    return [f"    w = seg * {GROUP}",
            "    wl = w + lid",
            "    j0 = wl * c"]


def _rows_source(kname: str, red: Reduction, mapped: bool, final: bool, arg_in: bool, chunked: bool,
                 two_d: bool, lanes: int = 1, single: bool = False, index: np.dtype = _INT64) -> str:
    """The rows kernel: group (seg, row) reduces segment ``seg`` of row ``row`` into
    ``out[row * segs + seg]`` (``two_d``: a 2-D launch of (segs * GROUP, rows) work items; else a
    1-D launch with one group per row and one segment).

    ``mapped``: inputs are raw elements (prepare them); otherwise accumulator values of an earlier
    pass (with ``arg_in`` their indices come in ``xi``). ``final``: write the result dtype (after
    ``final``); otherwise write the accumulator (and index) for another pass.

    Each work item first accumulates its share with several independent accumulators. On GPUs
    (``chunked`` False) it strides by the segment's work-item count, so neighbouring work items
    read neighbouring addresses (coalesced), four loads in flight. On CPUs (``chunked``, compiled
    with 64-bit indices) it walks one contiguous chunk of ``cl`` elements (a multiple of 8) with
    eight accumulators the compiler keeps in one SIMD register; the last ``r % 8`` elements of a
    row are added by the row's first work item. Parameters are masked non-negative (``& MAX``,
    a no-op for valid sizes) so the translator proves the indices non-negative and leaves out
    Python's negative-index wrap, which would keep the loads from vectorizing.

    ``lanes`` > 1 (GPUs, 4- and 8-byte elements, 16-byte aligned rows): ``xv`` is the same memory
    seen as rows of ``lanes``-wide vectors, so each load is one 128-bit access; the last ``r %
    lanes`` elements of a row (one row only: otherwise rows are not aligned) come from ``x``.

    ``single`` (a 2-D launch writing partial results): one pass. Each group, after writing its
    segment's partial result, counts itself done on its row's counter (an atomic increment after
    a global memory fence); the group that finds itself last combines the row's ``segs``
    partials and writes the result to ``res[row]``, then sets the counter back to 0 for the
    next call. This saves the second launch (and its partial-result allocation on the host).

    ``index``: the type of positions (argmin/argmax); int32 also keeps the CPU layout's
    parameters in 32 bits (a device without 64-bit integers)."""
    acc = np_type(red.acc)
    arg = red.arg is not None
    idx = np_type(index)
    mask = _MASK[chunked and index == _INT64]
    lines = []
    if red.helper_source:
        lines.append(red.helper_source)
    params = ["x"] + (["xv"] if lanes > 1 else []) + (["xi"] if arg_in else []) + ["out"] + \
             (["outi"] if arg and not final else []) + (["res", "counter"] if single else []) + \
             (["r", "r8", "segs", "cl"] if chunked else ["r", "segs"]) + ["ident", "cnt"]   # (fewer to pack)
    lines.append(f"def {kname}({', '.join(params)}):")
    lines.append(f"    tile = gpu.local_array({GROUP}, {acc})")
    if arg:
        lines.append(f"    tidx = gpu.local_array({GROUP}, {idx})")
    lines += ["    lid = gpu.get_local_id(0)"]
    if two_d:
        lines += ["    seg = gpu.get_group_id(0)",
                  "    row = gpu.get_group_id(1)"]
    else:
        lines += ["    seg = 0",
                  "    row = gpu.get_group_id(0)"]
    lines += [f"    rr = r & {mask}",
              f"    ns = segs & {mask}",
              "    o = row * ns + seg"]

    # x is (rows, r): x[row, j] keeps each subscript a sum the translator proves non-negative,
    # so no Python negative-index wrap (a compare per load, which stops CPU vectorization)
    def load_value(v):
        return red.map(v) if mapped else v

    def load(at):
        return load_value(f"x[row, {at}]")
    if arg and lanes > 1:
        _arg_vector_loop(lines, red, lanes, load_value, load, index)
    elif arg:
        vi_of = (lambda at: f"xi[row, {at}]") if arg_in else (lambda at: f"{idx}({at})")
        lines += ["    acc = ident",
                  f"    ai = {idx}(-1)"]
        if chunked:
            lines += [f"    c = cl & {mask}",
                      *_first_of_chunk(),
                      "    for jj in range(j0, min(j0 + c, rr)):"]
        else:
            lines += [f"    j = seg * {GROUP} + lid",
                      f"    step = ns * {GROUP}",
                      "    while j < rr:",
                      "        jj = j",
                      "        j += step"]
        ind = "        "
        lines += [f"{ind}v = {load('jj')}",
                  f"{ind}vi = {vi_of('jj')}",
                  f"{ind}if ai < 0 or _better(acc, ai, v, vi):",
                  f"{ind}    acc = v",
                  f"{ind}    ai = vi",
                  "    tile[lid] = acc",
                  f"    tidx[lid] = ai if ai >= 0 else {_no_index(index)}"]
    elif lanes > 1:
        u = _GPU_VECTOR_LOADS
        comps = "xyzw"[:lanes]
        accs = [f"acc{k}" for k in range(u * lanes)]
        lines += [f"    {a} = ident" for a in accs]
        lines += [f"    j = seg * {GROUP} + lid",
                  f"    step = ns * {GROUP}",
                  f"    rv = rr >> {lanes.bit_length() - 1}",
                  f"    while j + {u - 1} * step < rv:"]
        lines += [f"        v{k} = xv[row, {'j' if k == 0 else f'j + {k} * step'}]" for k in range(u)]
        lines += [f"        acc{k * lanes + c} = {red.comb(f'acc{k * lanes + c}', load_value(f'v{k}.{comps[c]}'))}"
                  for k in range(u) for c in range(lanes)]
        lines += [f"        j += {u} * step",
                  "    while j < rv:",
                  "        v0 = xv[row, j]"]
        lines += [f"        acc{c} = {red.comb(f'acc{c}', load_value(f'v0.{comps[c]}'))}" for c in range(lanes)]
        lines += ["        j += step",
                  "    if seg == 0 and lid == 0:",
                  f"        for jj in range(rv * {lanes}, rr):",
                  f"            acc0 = {red.comb('acc0', load('jj'))}"]
        level = accs
        while len(level) > 1:           # combine the accumulators pairwise
            level = [red.comb(level[k], level[k + 1]) for k in range(0, len(level), 2)]
        lines.append(f"    tile[lid] = {level[0]}")
    else:
        u = 8 if chunked else 4
        lines += [f"    acc{k} = ident" for k in range(u)]
        if chunked:
            lines += [f"    c = cl & {mask}",
                      *_first_of_chunk(),
                      f"    for jj in range(j0, min(j0 + c, r8 & {mask}), 8):"]
            lines += [f"        acc{k} = {red.comb(f'acc{k}', load('jj' if k == 0 else f'jj + {k}'))}"
                      for k in range(u)]
            lines += ["    if seg == 0 and lid == 0:",
                      f"        for jj in range(r8 & {mask}, rr):",
                      f"            acc0 = {red.comb('acc0', load('jj'))}"]
        else:
            lines += [f"    j = seg * {GROUP} + lid",
                      f"    step = ns * {GROUP}",
                      f"    while j + {u - 1} * step < rr:"]
            lines += [f"        acc{k} = {red.comb(f'acc{k}', load('j' if k == 0 else f'j + {k} * step'))}"
                      for k in range(u)]
            lines += [f"        j += {u} * step",
                      "    while j < rr:",
                      f"        acc0 = {red.comb('acc0', load('j'))}",
                      "        j += step"]
        level = [f"acc{k}" for k in range(u)]
        while len(level) > 1:           # combine the accumulators pairwise
            level = [red.comb(level[k], level[k + 1]) for k in range(0, len(level), 2)]
        lines.append(f"    tile[lid] = {level[0]}")
    _tree(red, lines, arg)
    lines.append("    if lid == 0:")
    lines += _store(red, final, arg, "o", "tile[0]", "tidx[0]")
    if single:
        _finish_in_last_group(lines, red, arg, index)
    return "\n".join(lines) + "\n"


def _finish_in_last_group(lines: list, red: Reduction, arg: bool, index: np.dtype) -> None:
    """The end of a ``single`` rows kernel (see _rows_source): the last group of a row to finish
    combines the row's partial results (``out``/``outi``) into ``res[row]``."""
    lines[1:1] = ["    last = gpu.local_array(1, np.int32)"]
    lines += ["        gpu.mem_fence(gpu.GLOBAL)",            # the partial is visible before it is counted
              "        done = gpu.atomic_inc(counter, row)",
              "        last[0] = np.int32(1) if done == ns - 1 else np.int32(0)",
              "    gpu.barrier()",
              "    if last[0] == 1:",                            # the same for the whole group
              "        gpu.mem_fence(gpu.GLOBAL)",
              "        acc = ident",
              f"        k = lid & {_MASK[False]}",
              "        base = row * ns"]
    if arg:
        lines += [f"        ai = {np_type(index)}(-1)",
                  "        while k < ns:",
                  "            v = out[base + k]",
                  "            vi = outi[base + k]",
                  "            if ai < 0 or _better(acc, ai, v, vi):",
                  "                acc = v",
                  "                ai = vi",
                  f"            k += {GROUP}",
                  "        tile[lid] = acc",
                  f"        tidx[lid] = ai if ai >= 0 else {_no_index(index)}"]
    else:
        lines += ["        while k < ns:",
                  f"            acc = {red.comb('acc', 'out[base + k]')}",
                  f"            k += {GROUP}",
                  "        tile[lid] = acc"]
    tree: list = []
    _tree(red, tree, arg)
    lines += ["    " + t for t in tree]
    lines.append("        if lid == 0:")
    lines += ["    " + t.replace("out[", "res[") for t in _store(red, True, arg, "row", "tile[0]", "tidx[0]")]
    lines.append("            counter[row] = 0")


def _arg_vector_loop(lines: list, red: Reduction, lanes: int, load_value, load, index: np.dtype) -> None:
    """argmin/argmax's first pass with 128-bit loads (GPUs): one (value, index) accumulator per
    lane, ``_GPU_VECTOR_LOADS`` vectors in flight per work item, the row's tail added by its first
    work item; the accumulators are then combined by ``_better``, a total order on (value,
    index), so the order of combining does not change the result. An index of -1: none yet."""
    u = _GPU_VECTOR_LOADS
    comps = "xyzw"[:lanes]
    n_acc = u * lanes
    idx = np_type(index)
    lines += [f"    acc{k} = ident" for k in range(n_acc)]
    lines += [f"    ai{k} = {idx}(-1)" for k in range(n_acc)]

    def take(lines_, k, value, index, ind):
        lines_ += [f"{ind}if ai{k} < 0 or _better(acc{k}, ai{k}, {value}, {index}):",
                   f"{ind}    acc{k} = {value}",
                   f"{ind}    ai{k} = {index}"]
    lines += [f"    j = seg * {GROUP} + lid",
              f"    step = ns * {GROUP}",
              f"    rv = rr >> {lanes.bit_length() - 1}",
              f"    while j + {u - 1} * step < rv:"]
    lines += [f"        v{k} = xv[row, {'j' if k == 0 else f'j + {k} * step'}]" for k in range(u)]
    for k in range(u):
        lines.append(f"        e{k} = {idx}({'j' if k == 0 else f'j + {k} * step'}) * {lanes}")
        for c in range(lanes):
            lines.append(f"        w = {load_value(f'v{k}.{comps[c]}')}")
            take(lines, k * lanes + c, "w", f"e{k} + {c}", "        ")
    lines += [f"        j += {u} * step",
              "    while j < rv:",
              "        v0 = xv[row, j]",
              f"        e0 = {idx}(j) * {lanes}"]
    for c in range(lanes):
        lines.append(f"        w = {load_value(f'v0.{comps[c]}')}")
        take(lines, c, "w", f"e0 + {c}", "        ")
    lines += ["        j += step",
              "    if seg == 0 and lid == 0:",
              f"        for jj in range(rv * {lanes}, rr):",
              f"            w = {load('jj')}"]
    take(lines, 0, "w", f"{idx}(jj)", "            ")
    for k in range(1, n_acc):
        lines += [f"    if ai{k} >= 0 and (ai0 < 0 or _better(acc0, ai0, acc{k}, ai{k})):",
                  f"        acc0 = acc{k}",
                  f"        ai0 = ai{k}"]
    lines += ["    tile[lid] = acc0",
              f"    tidx[lid] = ai0 if ai0 >= 0 else {_no_index(index)}"]


def _cols_source(kname: str, red: Reduction, mapped: bool, final: bool, arg_in: bool,
                 index: np.dtype = _INT64) -> str:
    """The columns kernel: work item t reduces rows [c*chunk, (c+1)*chunk) of column (o, j)
    (t = (c * outer + o) * inner + j) into out[t]."""
    arg = red.arg is not None
    lines = []
    if red.helper_source:
        lines.append(red.helper_source)
    params = ["x"] + (["xi"] if arg_in else []) + ["out"] + (["outi"] if arg and not final else []) + \
             ["total", "r", "inner", "oi", "chunk", "ident", "cnt"]
    lines.append(f"def {kname}({', '.join(params)}):")
    lines += ["    for t in range(total):",
              "        c = t // oi",
              "        rem = t - c * oi",
              "        o = rem // inner",
              "        jj = rem - o * inner",
              "        k = c * chunk",
              "        k1 = min(k + chunk, r)",
              "        base = o * r * inner + jj",
              "        acc = ident"]
    if arg:
        lines.append(f"        ai = {np_type(index)}(-1)")
    lines.append("        while k < k1:")
    v = red.map("x[base + k * inner]") if mapped else "x[base + k * inner]"
    if arg:
        vi = f"{np_type(index)}(k)" if not arg_in else "xi[base + k * inner]"
        lines += [f"            v = {v}",
                  f"            vi = {vi}",
                  "            if ai < 0 or _better(acc, ai, v, vi):",
                  "                acc = v",
                  "                ai = vi"]
    else:
        lines.append(f"            acc = {red.comb('acc', v)}")
    lines.append("            k += 1")
    lines += _store(red, final, arg, "t", "acc", "ai")
    return "\n".join(lines) + "\n"


def _store(red: Reduction, final: bool, arg: bool, at: str, value: str, index: str) -> list:
    """The lines (in a work item's loop body) storing reduced ``value`` at ``out[at]``: the final
    result in the output type (argmin/argmax: its position ``index``), or a partial result and
    its position for the next pass."""
    if final:
        if arg:
            return [f"        out[{at}] = {index}"]
        return [f"        out[{at}] = {np_type(red.out)}({(red.final or '{v}').format(v=value)})"]
    return [f"        out[{at}] = {value}"] + ([f"        outi[{at}] = {index}"] if arg else [])


_kernels: dict = {}


def _kernel(red: Reduction, shape: str, mapped: bool, final: bool, arg_in: bool = False, chunked: bool = False,
            two_d: bool = False, lanes: int = 1, single: bool = False, index: np.dtype = _INT64):
    key = (red.key(), shape, mapped, final, arg_in, chunked, two_d, lanes, _GPU_VECTOR_LOADS, single, index)
    k = _kernels.get(key)
    if k is None:
        tag = (f"{red.name}_{shape}{'_map' if mapped else ''}{'_fin' if final else ''}{'_cpu' if chunked else ''}"
               f"{'_2d' if two_d else ''}{f'_v{lanes}' if lanes > 1 else ''}{'_one' if single else ''}")
        kname = f"gnp_red_{tag}"
        if shape == "rows":
            src = _rows_source(kname, red, mapped, final, arg_in, chunked, two_d, lanes, single, index)
        else:
            src = _cols_source(kname, red, mapped, final, arg_in, index)
        helpers = dict(red.helpers)
        if red.arg is not None:
            hname, hsrc = _arg_helper(red.arg, red.acc)
            src = hsrc + "\n" + src.replace("_better", hname)
        k = _kernels[key] = kernel_from_source(kname, src, helpers or None)
    return k


# ---- which reduction -----------------------------------------------------------------------------------------
_result_dtypes: dict = {}


def _numpy_result_dtype(op: str, dt: np.dtype, dtype: Any) -> np.dtype:
    """The dtype numpy gives ``op`` of a ``dt`` array (asked of numpy on one host element)."""
    key = (op, dt, dtype)
    r = _result_dtypes.get(key)
    if r is None:
        probe = np.ones(1, dt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kwargs = {} if dtype is None else {"dtype": dtype}
            r = np.dtype(getattr(np, op)(probe, **kwargs).dtype)
        _result_dtypes[key] = r
    return r


_reductions: dict = {}


def _reduction_for(op: str, dt: np.dtype, dtype: Any, index: np.dtype = _INT64) -> Reduction:
    key = (op, dt, dtype, index)
    red = _reductions.get(key)
    if red is None:
        red = _reductions[key] = _new_reduction(op, dt, dtype, index)
    return red


def _new_reduction(op: str, dt: np.dtype, dtype: Any, index: np.dtype) -> Reduction:
    """``op`` of ``dt`` numbers; ``index``: the type of argmin/argmax's positions (index_dtype)."""
    if op in ("sum", "prod"):
        out = _numpy_result_dtype(op, dt, dtype)
        acc = out
        comb = "({a} + {b})" if op == "sum" else "({a} * {b})"
        if out.kind == "b":
            comb = "({a} | {b})" if op == "sum" else "({a} & {b})"
            acc = np.dtype(np.uint8)
        return Reduction(op, comb, acc, out, 0 if op == "sum" else 1)
    if op == "mean":
        out = _numpy_result_dtype("mean", dt, dtype)
        acc = np.dtype(np.float32) if out == np.float16 else out
        return Reduction("mean", "({a} + {b})", acc, out, 0, final=f"{{v}} / {np_type(acc)}(cnt)")
    if op in ("min", "max", "argmin", "argmax") and dt.kind == "c":
        return _complex_extreme(op, dt, index)
    if op in ("min", "max", "argmin", "argmax"):
        kind = op[-3:]
        acc = np.dtype(np.uint8) if dt.kind == "b" else dt
        if acc.kind == "f":
            ident = np.inf if kind == "min" else -np.inf
        else:
            info = np.iinfo(acc)
            ident = info.max if kind == "min" else info.min
        if op.startswith("arg"):
            return Reduction(op, "", acc, index, ident, arg=kind)
        comb = "np.minimum({a}, {b})" if kind == "min" else "np.maximum({a}, {b})"
        return Reduction(op, comb, acc, dt, ident)
    if op in ("any", "all"):
        comb = "({a} | {b})" if op == "any" else "({a} & {b})"
        truth = "np.bool_({v})" if dt.kind != "c" else "({v} != 0)"       # a complex number: either part
        return Reduction(op, comb, np.uint8, np.bool_, 0 if op == "any" else 1, prepare=f"np.uint8({truth})")
    raise ValueError(f"unknown reduction {op!r}")


def _complex_extreme(op: str, dt: np.dtype, index: np.dtype) -> Reduction:
    """min/max/argmin/argmax of complex numbers in numpy's lexicographic order (real part, then
    imaginary), a NaN in either part winning as numpy's maximum/minimum and argmax/argmin make it.
    The identity is (inf, inf) for min, (-inf, -inf) for max: every number is at least as small."""
    kind = op[-3:]
    ident = complex(np.inf, np.inf) if kind == "min" else complex(-np.inf, -np.inf)
    if op.startswith("arg"):
        return Reduction(op, "", dt, index, ident, arg=kind)
    call, source = complex_rule("minimum" if kind == "min" else "maximum", (dt, dt))
    return Reduction(op, call.replace("{0}", "{a}").replace("{1}", "{b}"), dt, dt, ident, helper_source=source or "")


REDUCTIONS = ("sum", "prod", "min", "max", "mean", "argmin", "argmax", "any", "all")
_UFUNC_NAMES = {"min": "minimum", "max": "maximum", "argmin": "argmin", "argmax": "argmax"}


# ---- running -------------------------------------------------------------------------------------------------
def cpu_layout(device) -> bool:
    """Whether the rows kernel walks contiguous chunks per work item (CPUs) rather than striding
    across the group (GPUs). Tests swap this to run both variants on one device."""
    return not option(device, "is_gpu")


def _target_groups(device) -> int:
    cu = max(int(getattr(device, "compute_units", 1) or 1), 1)
    return cu * (_GPU_GROUPS_PER_CU if option(device, "is_gpu") else 4)


def _vector_lanes(red: Reduction, x: DeviceArray, outer: int, r: int, chunked: bool) -> int:
    """How many elements one 128-bit load of the GPU rows kernel carries (1: scalar loads): 4- and
    8-byte numbers, every row starting 16-byte aligned (one row, or rows a multiple of 16 bytes)."""
    dt = x.dtype
    if chunked or dt.kind not in "iuf" or dt.itemsize not in (4, 8):
        return 1
    lanes = 16 // dt.itemsize
    if type(x) is not DeviceArray or (outer > 1 and r % lanes) or r < lanes * GROUP:
        return 1                  # (a view may start anywhere in its buffer)
    return lanes


def _empty_result(red: Reduction, op: str, shape: tuple, device) -> DeviceArray:
    if red.arg is not None:
        raise ValueError(f"attempt to get {op} of an empty sequence")
    if op in ("min", "max"):
        raise ValueError(f"zero-size array to reduction operation {_UFUNC_NAMES[op]} which has no identity")
    out = DeviceArray(shape, red.out, device.context())
    if op == "mean":
        warnings.warn("Mean of empty slice.", RuntimeWarning, stacklevel=4)
        out.fill(np.nan)
    else:
        out.fill(red.identity)
    return out


def _rows_config(segs: int, rows: int, chunked: bool, wide: bool, ids64: bool = True) -> _Config:
    """The launch of the rows kernel: (segs * GROUP, rows) work items in groups of (GROUP, 1),
    1-D when there is one segment per row; 64-bit indices on CPUs (see _rows_source) that have
    them (``ids64``)."""
    if segs == 1:
        c = _Config(None, (rows * GROUP,), (GROUP,))
    else:
        c = _Config(None, (segs * GROUP, rows), (GROUP, 1))
    if (chunked and ids64) or wide:
        c.wide = True
    return c


class _RowsPlan:
    """What reducing ``outer`` rows of ``r`` elements takes on one device, worked out once: the
    kernels, their launch configurations and scalar arguments (a warm ``g.sum()`` only allocates
    its results and launches)."""

    __slots__ = ("segs", "lanes", "single", "first", "cfg", "args", "second", "cfg2", "args2", "index")

    def __init__(self, red: Reduction, outer: int, r: int, device, chunked: bool, wide: bool, lanes: int):
        ident = red.acc.type(red.identity)
        self.index = index = index_dtype(device)
        ids64 = index == _INT64
        segs = 1
        target = _target_groups(device)
        if outer < target and r > 8 * GROUP and outer <= 65535:
            segs = min(-(-target // outer), -(-r // (8 * GROUP)))
        self.segs, self.lanes = segs, lanes
        cl = -(-r // (segs * GROUP * 8)) * 8          # elements per work item, a multiple of 8 (chunked)
        self.cfg = _rows_config(segs, outer, chunked, wide, ids64)
        # then the count; the GPU layout takes no chunk sizes
        self.args = (r, r - r % 8, segs, cl, ident) if chunked else (r, segs, ident)
        single = _GPU_SINGLE_PASS
        if single is None:
            single = getattr(device.backend, "dialect", "") in _SINGLE_PASS_DIALECTS
        self.single = segs > 1 and not chunked and single
        self.first = _kernel(red, "rows", True, segs == 1, chunked=chunked, two_d=segs > 1,
                             lanes=lanes, single=self.single, index=index)
        if segs > 1 and not self.single:
            self.second = _kernel(red, "rows", False, True, arg_in=red.arg is not None, chunked=chunked, index=index)
            self.cfg2 = _rows_config(1, outer, chunked, False, ids64)
            self.args2 = (segs, segs - segs % 8, 1, -(-segs // (GROUP * 8)) * 8, ident) if chunked else (segs, 1, ident)


_rows_plans: dict = {}


def _rows_plan(red: Reduction, x: DeviceArray, outer: int, r: int, device) -> _RowsPlan:
    chunked = cpu_layout(device)
    wide = x.size >= 2**30
    lanes = _vector_lanes(red, x, outer, r, chunked)
    key = (red.key(), outer, r, device, chunked, wide, lanes, _GPU_GROUPS_PER_CU, _GPU_VECTOR_LOADS, _GPU_SINGLE_PASS)
    plan = _rows_plans.get(key)
    if plan is None:
        plan = _rows_plans[key] = _RowsPlan(red, outer, r, device, chunked, wide, lanes)
    return plan


def _shaped(x: DeviceArray, shape: tuple) -> DeviceArray:
    """``x``'s leading elements seen with C-contiguous ``shape`` (a cheap reshape for arrays that
    are contiguous from byte 0, a checked one otherwise)."""
    if type(x) is DeviceArray:
        return DeviceArray._wrap(shape, x.dtype, x.device, x.buffer, x._owner, x._host)
    return x.reshape(-1)[:int(np.prod(shape))].reshape(shape)


def _run_rows(red: Reduction, x: DeviceArray, outer: int, r: int, device, count: int) -> DeviceArray:
    """Reduce each of ``outer`` contiguous rows of length ``r`` of the flat ``x``: one pass when
    there are enough rows to fill the device, else segments of each row over several groups
    (a 2-D launch) and a second pass over the segments' results."""
    return _launch_rows(_rows_plan(red, x, outer, r, device), red, x, outer, r, device, device.context(), count)


def _launch_rows(plan: _RowsPlan, red: Reduction, x: DeviceArray, outer: int, r: int, device, ctx,
                 count: int, bounds: "dict | None" = None) -> DeviceArray:
    """Run ``plan`` on ``x``: the (outer,) result. ``bounds``: a warm call's bound launches
    (_WarmRows), by launch, made by the first of its calls that could bind them."""
    xs: tuple = (_shaped(x, (outer, r)),)    # the kernel indexes x[row, j]
    if plan.lanes > 1:                       # the same memory as rows of lanes-wide vectors
        xs += (_shaped(x, (outer, r // plan.lanes, plan.lanes)),)
    out = DeviceArray._empty((outer,), red.out, ctx.device, ctx, outer * red.out.itemsize)
    segs = plan.segs
    if segs == 1:
        _go(bounds, 0, plan.first, device, plan.cfg, (*xs, out, *plan.args, count))
        return out
    part = DeviceArray._empty((outer * segs,), red.acc, ctx.device, ctx, outer * segs * red.acc.itemsize)
    if plan.single:
        counter = _row_counters(ctx, outer)
        if red.arg is not None:
            parti = DeviceArray._empty((outer * segs,), plan.index, ctx.device, ctx, outer * segs * plan.index.itemsize)
            _go(bounds, 0, plan.first, device, plan.cfg, (*xs, part, parti, out, counter, *plan.args, count))
        else:
            _go(bounds, 0, plan.first, device, plan.cfg, (*xs, part, out, counter, *plan.args, count))
        return out
    part2 = _shaped(part, (outer, segs))
    if red.arg is not None:
        parti = DeviceArray._empty((outer * segs,), plan.index, ctx.device, ctx, outer * segs * plan.index.itemsize)
        _go(bounds, 0, plan.first, device, plan.cfg, (*xs, part, parti, *plan.args, count))
        _go(bounds, 1, plan.second, device, plan.cfg2, (part2, _shaped(parti, (outer, segs)), out, *plan.args2, count))
        return out
    _go(bounds, 0, plan.first, device, plan.cfg, (*xs, part, *plan.args, count))
    _go(bounds, 1, plan.second, device, plan.cfg2, (part2, out, *plan.args2, count))
    return out


def _go(bounds: "dict | None", slot: int, kern, device, cfg, args: tuple) -> None:
    """Launch ``kern``; with ``bounds``, through the bound launch kept in ``slot`` (made by the
    first call that can: the arguments' types, shapes and scalars are those of every call of
    one _WarmRows)."""
    if bounds is None:
        launch(kern, device, cfg, args)
        return
    b = bounds.get(slot)
    if b is None or not b(args):
        b = bind(kern, device, cfg, args)      # launches
        if b is not None:
            bounds[slot] = b


_counters: dict = {}       # context -> int32 zeros, one per row: the single-pass kernels' done counters


def _row_counters(ctx, rows: int) -> DeviceArray:
    """At least ``rows`` done counters, all 0 between launches (each row's last group sets its
    counter back; launches on the context's one queue never overlap)."""
    c = _counters.get(ctx)
    if c is None or c.size < rows or ctx.closed:
        c = DeviceArray((max(rows, 1024),), np.int32, ctx)
        c.fill(0)
        _counters[ctx] = c
    return c


class _WarmRows:
    """A reduction call that ran the rows kernels on a plain array, remembered so that the same
    call again (same operation, dtype, shape, axis, keepdims, device) skips the argument checks
    and the layout work: it only allocates its result and launches (see :func:`reduce`)."""

    __slots__ = ("red", "plan", "outer", "r", "final_shape", "device", "ctx", "bounds", "one", "tail")

    def __init__(self, red: Reduction, plan: _RowsPlan, outer: int, r: int, final_shape: tuple, device, ctx):
        self.red, self.plan, self.outer, self.r = red, plan, outer, r
        self.final_shape, self.device, self.ctx = final_shape, device, ctx
        self.bounds: dict = {}
        # one launch over the rows as they are (one segment, scalar loads): its bound launch, once
        # bound, takes (rows, out, *tail) straight from run()
        self.one = None
        self.tail = (*plan.args, r)

    def run(self, a: DeviceArray) -> DeviceArray:
        one = self.one
        if one is not None:
            ctx, red, outer = self.ctx, self.red, self.outer
            out = DeviceArray._empty((outer,), red.out, ctx.device, ctx, outer * red.out.itemsize)
            rows = DeviceArray._wrap((outer, self.r), a._dtype, a.device, a.buffer, a._owner, a._host)
            if one((rows, out, *self.tail)):
                res = out
            else:
                self.one = None
                res = _launch_rows(self.plan, red, a, outer, self.r, self.device, ctx, self.r, self.bounds)
        else:
            res = _launch_rows(self.plan, self.red, a, self.outer, self.r, self.device, self.ctx, self.r, self.bounds)
            if self.plan.segs == 1 and self.plan.lanes == 1:
                self.one = self.bounds.get(0)
        if self.final_shape == res._shape:
            return res
        return DeviceArray._wrap(self.final_shape, res._dtype, res.device, res.buffer, res._owner, res._host)


_warm: dict = {}          # (op, dtype, shape, axis, keepdims, device, layout and tuning) -> _WarmRows


def _run_cols(red: Reduction, x: DeviceArray, outer: int, r: int, inner: int, device, count: int) -> DeviceArray:
    """Reduce the middle axis of the flat ``x`` seen as (outer, r, inner)."""
    ident = red.acc.type(red.identity)
    index = index_dtype(device)
    m = outer * inner
    ctx = device.context()
    xf = x.reshape(-1)
    threads = _target_groups(device) * GROUP
    chunks = 1
    if m < threads and r >= 64:
        chunks = min(-(-threads // m), -(-r // 16))
    if chunks == 1:
        out = DeviceArray((m,), red.out, ctx)
        k = _kernel(red, "cols", True, True, index=index)
        launch(k, device, DEFAULT_CONFIG, (xf, out, m, r, inner, m, r, ident, count))
        return out
    chunk = -(-r // chunks)
    chunks = -(-r // chunk)
    part = DeviceArray((chunks * m,), red.acc, ctx)
    out = DeviceArray((m,), red.out, ctx)
    if red.arg is not None:
        parti = DeviceArray((chunks * m,), index, ctx)
        launch(_kernel(red, "cols", True, False, index=index), device, DEFAULT_CONFIG,
               (xf, part, parti, chunks * m, r, inner, m, chunk, ident, count))
        launch(_kernel(red, "cols", False, True, arg_in=True, index=index), device, DEFAULT_CONFIG,
               (part, parti, out, m, chunks, m, m, chunks, ident, count))
        return out
    launch(_kernel(red, "cols", True, False, index=index), device, DEFAULT_CONFIG,
           (xf, part, chunks * m, r, inner, m, chunk, ident, count))
    launch(_kernel(red, "cols", False, True, index=index), device, DEFAULT_CONFIG,
           (part, out, m, chunks, m, m, chunks, ident, count))
    return out


def reduce_with(red: Reduction, a: DeviceArray, axis: Any, keepdims: bool, op: str, device,
                warm_key: Any = None) -> DeviceArray:
    """Apply ``red`` over ``axis`` of ``a`` (any layout); the result has the reduced shape.
    ``warm_key``: where the rows kernels run on ``a`` itself, remember the call under this key
    (:func:`reduce`'s warm path)."""
    nd = a.ndim
    axes = normalize_axes(axis, nd, op)
    kept = [k for k in range(nd) if k not in axes]
    out_shape = tuple(a.shape[k] for k in kept)
    final_shape = tuple(1 if k in axes else a.shape[k] for k in range(nd)) if keepdims else out_shape
    r = 1
    for k in axes:
        r *= a.shape[k]
    if a.size == 0 or r == 0:
        if r == 0:
            return _empty_result(red, op, out_shape, device).reshape(final_shape)
        return DeviceArray(out_shape, red.out, device.context()).reshape(final_shape)
    if red.arg is not None and axis is not None and len(axes) != 1:
        raise ValueError(f"{op} takes one axis or None")
    if a.size >= INDEX32_LIMIT and index_dtype(device) != _INT64:
        raise ValueError(f"gnp.{op}: the array has {a.size} elements, and {device.selector} ({device.name}) has no "
                         f"64-bit integers, so its reductions index in 32 bits: at most {INDEX32_LIMIT - 1} elements; "
                         "reduce parts of it (g[:n] and g[n:]) or use a device that has them (cuda, hip, opencl)")
    # bring the reduced axes together: (outer, r, inner)
    lo, hi = (min(axes), max(axes)) if axes else (0, -1)
    adjacent = hi - lo + 1 == len(axes)
    if adjacent and type(a) is DeviceArray:
        x = a
        outer = 1
        for k in range(lo):
            outer *= a.shape[k]
        inner = 1
        for k in range(hi + 1, nd):
            inner *= a.shape[k]
    else:
        order = kept + list(axes)
        x = contiguous(a.transpose(order)) if order != list(range(nd)) else contiguous(a)
        outer, inner = 1, 1
        for n in out_shape:
            outer *= n
    if inner == 1 and (r >= _COLS_MIN_R or outer == 1):
        plan = _rows_plan(red, x, outer, r, device)
        ctx = device.context()
        if warm_key is not None and x is a:
            if len(_warm) > 4096:
                _warm.clear()
            _warm[warm_key] = _WarmRows(red, plan, outer, r, final_shape, device, ctx)
        res = _launch_rows(plan, red, x, outer, r, device, ctx, r)
    else:
        res = _run_cols(red, x, outer, r, inner, device, r)
    return res.reshape(final_shape)


def reduce(op: str, a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> DeviceArray:
    """numpy's ``a.<op>(axis, dtype, out, keepdims, initial)`` on the device."""
    warm_key = None
    if (type(a) is DeviceArray and dtype is None and out is None and initial is None and where is None
            and (axis is None or type(axis) is int) and type(keepdims) is bool):
        # (the layout choice and the tuning knobs too: tests and sweep_reduction.py swap them). The device by
        # id (its hash is a Python method on some backends): the entry holds the device, checked below.
        warm_key = (op, a._dtype, a._shape, axis, keepdims, id(a.device), cpu_layout, _GPU_GROUPS_PER_CU,
                    _GPU_VECTOR_LOADS, _GPU_SINGLE_PASS)
        w = _warm.get(warm_key)
        if w is not None and a.buffer.context is w.ctx and w.device is a.device and not w.ctx.closed:
            return w.run(a)     # converts nothing: needs no scope of the operand's device
    return _reduce_full(a, op, axis, dtype, out, keepdims, initial, where, warm_key)


def _reduce_checked(a: Any, op: str, axis: Any, dtype: Any, out: Any, keepdims: bool, initial: Any, where: Any,
                    warm_key: Any) -> DeviceArray:
    """:func:`reduce` past its warm path: every check, then the layout, inside a scope of the
    operand's device (``_reduce_full``: the array methods that call reduce leave that to it)."""
    check_out_writeable(out)
    if not isinstance(a, DeviceArray):
        raise TypeError(f"gnp.{op} takes a device array, got {type(a).__name__} (upload host data with gnp.asarray)")
    if where is not None and where is not True:
        raise TypeError(f"gnp.{op}: where= is not supported on device arrays")
    device = check_same_device([a], op)
    half = np.dtype(np.float16)
    if half in (a.dtype, np.dtype(dtype) if dtype is not None else None) and stores_half_only(device):
        # numpy's float16 reductions accumulate in float32 and round the result to half once
        wide = widen(a) if a.dtype == half else a
        res = reduce(op, wide, axis=axis, keepdims=keepdims, initial=initial,
                     dtype=None if dtype is None or np.dtype(dtype) == half else dtype)
        if _numpy_result_dtype(op, a.dtype, dtype) == half:
            res = narrow(res)
        if out is not None:
            out[...] = res
            return out
        return res
    check_dtype(a.dtype, op, 0, device)
    if dtype is not None:
        check_dtype(np.dtype(dtype), op, "dtype", device)
    if op in ("argmin", "argmax") and axis is not None and isinstance(axis, tuple):
        raise TypeError(f"{op}: axis must be an integer or None")
    red = _reduction_for(op, a.dtype, dtype, index_dtype(device))
    check_dtype(red.out, op, "result", device)
    if initial is not None and (a.size == 0 and op in ("min", "max")):
        res = DeviceArray(_reduced_shape(a, axis, keepdims, op), red.out, device.context())
        res.fill(initial)
    else:
        res = reduce_with(red, a, axis, keepdims, op, device, warm_key)
        if initial is not None:
            from ._elementwise import ufunc_call
            # numpy converts ``initial`` to the result's type first, as setitem does: sum(initial=1.5)
            # of integers starts from 1 (not 1.5, truncated after adding), NaN or 300 into int8 raise
            start = setitem_value(initial, red.out)[()]
            ufunc_call({"sum": "add", "prod": "multiply", "min": "minimum", "max": "maximum"}.get(op, op),
                       (res, start), out=res, casting="unsafe")
    if out is not None:
        if not isinstance(out, DeviceArray):
            raise TypeError(f"gnp.{op}: out must be a device array")
        if out.shape != res.shape:
            raise ValueError(f"output parameter for reduction operation {op} has the wrong number of dimensions "
                             f"(or shape): {out.shape} instead of {res.shape}")
        out[...] = res
        return out
    return res


_reduce_full = follow_operands(_reduce_checked, DeviceArray)


def _reduced_shape(a: DeviceArray, axis: Any, keepdims: bool, op: str) -> tuple:
    axes = normalize_axes(axis, a.ndim, op)
    if keepdims:
        return tuple(1 if k in axes else n for k, n in enumerate(a.shape))
    return tuple(n for k, n in enumerate(a.shape) if k not in axes)
