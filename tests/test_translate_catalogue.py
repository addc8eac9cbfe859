"""Every translated feature, executed on each backend and compared with the same Python
function run on the host (or numpy); every kernel's CUDA and HIP source is also compiled
(NVRTC / hiprtc) so dialect errors fail without GPUs.

``CASES`` is the registry of test kernels; other test_translate_* files append to it.
"""
from __future__ import annotations

import copy
import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

from pygpgpu_core import funcs, gpu
from pygpgpu_core.vec_types import float2, float3, float4, float8, int4
from pygpgpu_translate import kernel

import test_translate_helpers as th
from conftest import assert_code_object, assert_cubin
from test_translate_helpers import hyp, poly

RNG = np.random.default_rng(1234)


@dataclass
class Case:
    name: str
    kernel: object
    make_args: Callable
    reference: "Callable | None" = None      # mutates host copies of the args; default: py_func
    bracket: object = None                   # e.g. (64, 16) for gid kernels
    rtol: float = 2e-5
    atol: float = 1e-6
    needs_fp64: bool = False
    compile_only: bool = False               # executed by its own test (order-dependent results)


CASES: list[Case] = []


def case(name, k, make_args, reference=None, **kw):
    CASES.append(Case(name, k, make_args, reference, **kw))


def f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


# ---- the brief's examples -------------------------------------------------------------------------------
@kernel
def saxpy(x, y, out, alpha):
    for i in range(out.shape[0]):
        out[i] = x[i] * alpha + y[i]


case("saxpy", saxpy, lambda: (f32(1000), f32(1000), np.zeros(1000, np.float32), 2.0))


def square(v):
    return v * v


def clamp01(v):
    if v < 0.0:
        return 0.0
    if v > 1.0:
        return 1.0
    return v


def weight(v):
    return clamp01(square(v)) * 0.5 + 0.25


@kernel
def apply_all(x, out):
    for i in range(out.shape[0]):
        out[i] = weight(x[i])


case("helpers_square_clamp_weight", apply_all, lambda: (f32(300), np.zeros(300, np.float32)))
case("helpers_float64", apply_all, lambda: (f32(50).astype(np.float64), np.zeros(50)), needs_fp64=True)


@kernel
def matrix_scale(m, out, k):
    for y, x in np.ndindex(out.shape):
        out[y, x] = m[y, x] * k


case("matrix_scale", matrix_scale, lambda: (f32(13, 29), np.zeros((13, 29), np.float32), 3))


@kernel
def histogram(data, counts):
    gpu.work_size(data)
    i = gpu.get_global_id(0)
    gpu.atomic_add(counts, data[i], 1)


def histogram_ref(data, counts):
    counts += np.bincount(data, minlength=len(counts)).astype(counts.dtype)


case("histogram_atomic_add", histogram,
     lambda: (RNG.integers(0, 16, 5000).astype(np.int32), np.zeros(16, np.int32)), histogram_ref)


def norm2(v):
    return funcs.dot(v, v)


@kernel
def normalize_all(vecs, out):
    for i, v in enumerate(vecs):
        out[i] = funcs.normalize(v)


def normalize_ref(vecs, out):
    out[...] = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


case("normalize_all", normalize_all, lambda: (f32(100, 4, lo=0.1), np.zeros((100, 4), np.float32)), normalize_ref)


# ---- domains -----------------------------------------------------------------------------------------------
@kernel
def ndindex3(a, out):
    for z, y, x in np.ndindex(out.shape):
        out[z, y, x] = a[z, y, x] * 2.0 + z * 100 + y * 10 + x


case("ndindex_3d", ndindex3, lambda: (f32(3, 5, 7), np.zeros((3, 5, 7), np.float32)))


@kernel
def ndindex_tuple(out, h, w):
    for y, x in np.ndindex((h, w)):
        out[y, x] = y * w + x


case("ndindex_tuple_shape", ndindex_tuple, lambda: (np.zeros((6, 9), np.int32), 6, 9))


@kernel
def ndenum(a, out):
    for (y, x), v in np.ndenumerate(a):
        out[y, x] = v * v - y


case("ndenumerate_2d", ndenum, lambda: (f32(4, 11), np.zeros((4, 11), np.float32)))


@kernel
def enum1(a, out):
    for i, v in enumerate(a):
        out[i] = v + i


case("enumerate_1d", enum1, lambda: (f32(77), np.zeros(77, np.float32)))


@kernel
def stepped(out, start, stop):
    for i in range(start, stop, 3):
        out[i] = i * 2


case("range_start_stop_step_domain", stepped, lambda: (np.full(40, -1, np.int32), 5, 37))


@kernel
def scalar_bound(out, n):
    for i in range(n):
        out[i] = 1.5


case("range_scalar_bound_partial_write", scalar_bound, lambda: (np.full(20, 7.0, np.float32), 12))


@kernel
def len_bound(x, out):
    for i in range(len(x)):
        out[i] = x[i] + x.size + x.ndim + out.shape[0] + len(out)


case("len_size_ndim_shape", len_bound, lambda: (f32(33), np.zeros(33, np.float32)))


@kernel
def gid2d(a, out):
    gpu.work_size(out)
    x = gpu.get_global_id(0)
    y = gpu.get_global_id(1)
    out[y, x] = a[y, x] + 1.0


def gid2d_ref(a, out):
    out[...] = a + 1.0


case("work_size_2d_gid", gid2d, lambda: (f32(9, 21), np.zeros((9, 21), np.float32)), gid2d_ref)


@kernel
def bracket_only(out):
    i = gpu.get_global_id(0)
    out[i] = i * 3


def bracket_only_ref(out):
    out[...] = np.arange(len(out)) * 3


case("bracket_work_size_only", bracket_only, lambda: (np.zeros(64, np.int32),), bracket_only_ref, bracket=(64, 16))


@kernel
def workitems(gids, lids, grps, lsz, ngr, gsz):
    i = gpu.get_global_id(0)
    gids[i] = i
    lids[i] = gpu.get_local_id(0)
    grps[i] = gpu.get_group_id(0)
    lsz[i] = gpu.get_local_size(0)
    ngr[i] = gpu.get_num_groups(0)
    gsz[i] = gpu.get_global_size(0)


def workitems_ref(gids, lids, grps, lsz, ngr, gsz):
    n = len(gids)
    gids[...] = np.arange(n)
    lids[...] = np.arange(n) % 8
    grps[...] = np.arange(n) // 8
    lsz[...] = 8
    ngr[...] = n // 8
    gsz[...] = n


case("work_item_builtins", workitems, lambda: tuple(np.zeros(32, np.int32) for _ in range(6)), workitems_ref,
     bracket=(32, 8))


# ---- control flow ------------------------------------------------------------------------------------------
@kernel
def loops(a, out):
    for i in range(out.shape[0]):
        acc = 0.0
        for j in range(10, 0, -2):
            if j == 4:
                continue
            acc += a[i] * j
        k = 0
        while True:
            k += 1
            if k * k > i:
                break
        n = 0
        for j in range(i % 5):
            n += j
        out[i] = acc + k + n


case("loops_break_continue_while_neg_step", loops, lambda: (f32(50), np.zeros(50, np.float32)))


@kernel
def branches(a, out, lo, hi):
    for i in range(out.shape[0]):
        v = a[i]
        if v < lo:
            out[i] = -1.0
        elif lo <= v < hi:
            out[i] = 0.0 if v < 0 else 0.5
        else:
            out[i] = 1.0
        if i > 0 and a[i - 1] > 0 or i == 0:
            out[i] += 10.0
        if not (v > 1.0):
            out[i] += 100.0


case("if_elif_chained_ternary_and_or_not", branches, lambda: (f32(64), np.zeros(64, np.float32), -0.5, 0.7))


@kernel
def short_circuit(a, out, n):
    for i in range(out.shape[0]):
        # a[i + n] would be out of bounds: 'and' must not evaluate it
        if i + n < a.shape[0] and a[i + n] > 0:
            out[i] = 1
        else:
            out[i] = 0


case("and_short_circuit", short_circuit, lambda: (f32(40), np.zeros(40, np.int32), 30))


EVEN_ONLY = True
OFFSET = 2.5
COUNT = 4


@kernel
def uses_constants(a, out):
    for i in range(out.shape[0]):
        v = a[i] + OFFSET
        if EVEN_ONLY:
            v = v * COUNT
        out[i] = v + math.pi + np.e


case("module_constants", uses_constants, lambda: (f32(20), np.zeros(20, np.float32)))


@kernel
def imported_helpers(a, b, out):
    for i in range(out.shape[0]):
        out[i] = th.scaled(a[i]) + hyp(a[i], b[i]) + poly(a[i]) + poly(b[i], b=2.0) + poly(a[i], 3.0)


case("helpers_from_imported_module_defaults_keywords", imported_helpers,
     lambda: (f32(30), f32(30), np.zeros(30, np.float32)))


@kernel
def array_helpers(src, dst):
    for i in range(dst.shape[0]):
        th.fill_row(dst, i, th.read_at(src, i) * 2.0)


case("helpers_with_array_params", array_helpers, lambda: (f32(25), np.zeros(25, np.float32)))


@kernel
def aliasing(a, out):
    for i in range(out.shape[0]):
        src = a
        dst = out
        dst[i] = src[i] - src[-1]


case("array_aliases_and_negative_constant_index", aliasing, lambda: (f32(16), np.zeros(16, np.float32)))


@kernel
def tuple_swap(a, out):
    for i in range(out.shape[0]):
        x, y = a[i], 2.0 * a[i]
        x, y = y, x
        out[i] = x - y


case("tuple_assign_swap", tuple_swap, lambda: (f32(16), np.zeros(16, np.float32)))


# ---- math ----------------------------------------------------------------------------------------------------
@kernel
def math_unary(a, out):
    for i in range(a.shape[0]):
        x = a[i]
        p = abs(x) + 0.5
        out[i, 0] = math.sqrt(p) + np.sqrt(p)
        out[i, 1] = math.exp(x) + np.exp2(x) + math.expm1(x)
        out[i, 2] = math.log(p) + math.log2(p) + math.log10(p) + math.log1p(p)
        out[i, 3] = math.sin(x) + math.cos(x) + math.tan(x * 0.5)
        out[i, 4] = math.asin(x * 0.4) + math.acos(x * 0.4) + math.atan(x)
        out[i, 5] = math.sinh(x) + math.cosh(x) + math.tanh(x)
        out[i, 6] = np.floor(x) + np.ceil(x) + np.trunc(x) + math.fabs(x)
        out[i, 7] = math.erf(x) + np.cbrt(x) + np.arctan(x)
        out[i, 8] = math.atan2(x, p) + math.hypot(x, p) + math.fmod(x, 0.7) + math.copysign(p, x)
        out[i, 9] = math.pow(p, 1.7) + p ** 2.5 + np.arcsin(x * 0.4)


case("math_functions_float32", math_unary, lambda: (f32(64), np.zeros((64, 10), np.float32)), rtol=1e-4, atol=2e-5)
case("math_functions_float64", math_unary, lambda: (f32(64).astype(np.float64), np.zeros((64, 10))),
     needs_fp64=True, rtol=1e-9, atol=1e-12)


@kernel
def math_int_results(a, out):
    for i in range(a.shape[0]):
        x = a[i]
        out[i, 0] = math.floor(x) * 3          # int
        out[i, 1] = math.ceil(x) // 2
        out[i, 2] = math.trunc(x) % 3
        out[i, 3] = round(x)                   # half to even, int
        out[i, 4] = round(x, 1)
        out[i, 5] = int(x) + int(-x)           # truncation toward zero
        out[i, 6] = np.round(x) + np.rint(x)


def math_int_ref(a, out):
    for i in range(a.shape[0]):
        x = float(a[i])
        out[i] = [math.floor(x) * 3, math.ceil(x) // 2, math.trunc(x) % 3, round(x), round(x, 1),
                  int(x) + int(-x), np.round(x) + np.rint(x)]


case("floor_ceil_trunc_round_int_semantics", math_int_results,
     lambda: (np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -3.7, 3.7, 0.0, 1.25], np.float32), np.zeros((10, 7), np.float32)),
     math_int_ref, atol=1e-5)


@kernel
def predicates(a, out):
    for i in range(a.shape[0]):
        x = a[i]
        out[i, 0] = math.isnan(x)
        out[i, 1] = np.isinf(x)
        out[i, 2] = math.isfinite(x)
        out[i, 3] = x != x


case("isnan_isinf_isfinite", predicates,
     lambda: (np.array([0.0, np.nan, np.inf, -np.inf, 1.0], np.float32), np.zeros((5, 4), np.bool_)))


@kernel
def minmax(a, b, out, iout):
    for i in range(a.shape[0]):
        x = a[i]
        y = b[i]
        out[i, 0] = min(x, y) + max(x, y, 0.25)
        out[i, 1] = np.minimum(x, y) - np.maximum(x, y)
        out[i, 2] = np.clip(x, -0.5, 0.5)
        out[i, 3] = np.where(x > y, x, y)
        out[i, 4] = np.sign(x) + abs(x)
        k = int(x * 10)
        iout[i, 0] = abs(k)
        iout[i, 1] = min(k, 3)
        iout[i, 2] = max(k, -3, 0)
        iout[i, 3] = np.sign(k)


case("abs_min_max_clip_where_sign", minmax,
     lambda: (f32(40), f32(40), np.zeros((40, 5), np.float32), np.zeros((40, 4), np.int32)))


@kernel
def casts(a, fo, io, bo):
    for i in range(a.shape[0]):
        x = a[i]
        fo[i, 0] = float(int(x * 4))
        fo[i, 1] = np.float32(x) * np.float32(3)
        fo[i, 2] = np.float64(x) / 3
        io[i, 0] = int(x * 7)
        io[i, 1] = np.int32(x * 100) // 7
        io[i, 2] = np.uint8(200) + 0
        bo[i] = bool(int(x))


case("casts_int_float_bool_numpy", casts,
     lambda: (f32(30), np.zeros((30, 3), np.float32), np.zeros((30, 3), np.int32), np.zeros(30, np.bool_)),
     needs_fp64=True)


# ---- Python arithmetic semantics ---------------------------------------------------------------------------
@kernel
def py_semantics(a, b, iout, fout):
    for i in range(a.shape[0]):
        x = a[i]
        y = b[i]
        iout[i, 0] = x // y
        iout[i, 1] = x % y
        iout[i, 2] = x ** 2
        iout[i, 3] = x ** 3 - y ** 0
        fout[i, 0] = x / y                   # true division of ints
        fout[i, 1] = (x * 0.5) // (y * 0.25)
        fout[i, 2] = (x * 0.5) % (y * 0.25)
        fout[i, 3] = (x * 0.5) ** 2
        iout[i, 4] = (x << 2) | (y & 3) ^ (~x >> 1)
        iout[i, 5] = True + True + (x > y)


def py_sem_args():
    a = RNG.integers(-50, 50, 60).astype(np.int32)
    b = RNG.integers(1, 9, 60).astype(np.int32) * RNG.choice([-1, 1], 60).astype(np.int32)
    return a, b, np.zeros((60, 6), np.int32), np.zeros((60, 4), np.float32)


case("floor_div_mod_pow_true_div_bitwise", py_semantics, py_sem_args)


@kernel
def int_pow_dynamic(a, e, out):
    for i in range(out.shape[0]):
        out[i] = a[i] ** e[i]


case("int_pow_dynamic_exponent", int_pow_dynamic,
     lambda: (RNG.integers(-4, 5, 30).astype(np.int64), RNG.integers(0, 7, 30).astype(np.int64), np.zeros(30, np.int64)))


# ---- dtypes ---------------------------------------------------------------------------------------------------
@kernel
def dtype_add(a, b, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + b[i]


for _dt in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64"):
    def _mk(dt=_dt):
        info = np.iinfo(dt) if np.dtype(dt).kind in "iu" else None
        if info is not None:
            lo, hi = max(info.min // 2, -1000), min(info.max // 2, 1000)
            a = RNG.integers(lo, hi, 37).astype(dt)
            b = RNG.integers(lo, hi, 37).astype(dt)
        else:
            a, b = f32(37).astype(dt), f32(37).astype(dt)
        return a, b, np.zeros(37, dt)
    case(f"dtype_{_dt}", dtype_add, _mk, needs_fp64=(_dt == "float64"))


@kernel
def bool_arrays(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] and not out[i]


case("bool_arrays_as_uchar", bool_arrays, lambda: (RNG.integers(0, 2, 20).astype(np.bool_), RNG.integers(0, 2, 20).astype(np.bool_)))


@kernel
def mixed_dtypes(a8, b16, c64, out):
    for i in range(out.shape[0]):
        out[i] = a8[i] * b16[i] + c64[i] * 0.5


case("mixed_dtype_promotion", mixed_dtypes,
     lambda: (RNG.integers(-100, 100, 20).astype(np.int8), RNG.integers(-1000, 1000, 20).astype(np.int16),
              f32(20).astype(np.float64), np.zeros(20)), needs_fp64=True)


@kernel
def scalar_kinds(out, a, b, c, d, flag):
    for i in range(out.shape[0]):
        if flag:
            out[i] = a * i + b + c + d
        else:
            out[i] = 0


case("scalar_arguments_python_and_numpy", scalar_kinds,
     lambda: (np.zeros(10), 2, 0.5, np.float32(0.25), np.int64(7), True), needs_fp64=True)


# ---- vectors -------------------------------------------------------------------------------------------------
@kernel
def vec_ops(a, out, s):
    for i in range(out.shape[0]):
        v = a[i]
        w = float4(v.x, v.y * 2.0, 1.0, v.w) + s
        out[i] = w * v.wzyx + float4(norm2(v)) - funcs.cross(v, w) + float4(v.xy, 3.0, -v.z) / 2.0


def vec_ops_ref(a, out, s):
    for i in range(out.shape[0]):
        v = float4(*a[i])
        w = float4(v.x, v.y * 2.0, 1.0, v.w) + s
        out[i] = np.asarray(w * v.wzyx + float4(norm2(v)) - funcs.cross(v, w) + float4(v.xy, 3.0, -v.z) / 2.0)


case("vector_ops_swizzles_ctor_broadcast", vec_ops, lambda: (f32(20, 4), np.zeros((20, 4), np.float32), 1.5), vec_ops_ref)


@kernel
def vec_funcs(a, b, out):
    for i in range(out.shape[0]):
        u = a[i]
        v = b[i]
        out[i, 0] = funcs.dot(u, v) + funcs.length(u) + funcs.distance(u, v)
        r = funcs.clamp(u, -0.5, 0.5) + funcs.mix(u, v, 0.25) + funcs.step(0.0, u) + funcs.smoothstep(-1.0, 1.0, v)
        out[i, 1] = r.x + r.y * 2.0 + r.z * 3.0
        q = funcs.fma(u, v, u) + funcs.sign(v) + funcs.radians(u) + funcs.degrees(v) + funcs.reflect(u, funcs.normalize(v))
        out[i, 2] = q.x - q.y + q.z
        m = funcs.min(u, v) + funcs.max(u, v) + funcs.abs(u)
        out[i, 3] = m.x + m.y + m.z


def vec_funcs_ref(a, b, out):
    for i in range(out.shape[0]):
        u, v = float3(*a[i]), float3(*b[i])
        out[i, 0] = funcs.dot(u, v) + funcs.length(u) + funcs.distance(u, v)
        r = funcs.clamp(u, -0.5, 0.5) + funcs.mix(u, v, 0.25) + funcs.step(0.0, u) + funcs.smoothstep(-1.0, 1.0, v)
        out[i, 1] = r.x + r.y * 2.0 + r.z * 3.0
        q = funcs.fma(u, v, u) + funcs.sign(v) + funcs.radians(u) + funcs.degrees(v) + funcs.reflect(u, funcs.normalize(v))
        out[i, 2] = q.x - q.y + q.z
        m = funcs.min(u, v) + funcs.max(u, v) + funcs.abs(u)
        out[i, 3] = m.x + m.y + m.z


case("funcs_on_float3_rows", vec_funcs, lambda: (f32(25, 3), f32(25, 3), np.zeros((25, 4), np.float32)), vec_funcs_ref,
     rtol=1e-4, atol=1e-5)


@kernel
def vec_arg(a, out, offset, scale):
    for i in range(out.shape[0]):
        out[i] = a[i] * scale + offset


def vec_arg_ref(a, out, offset, scale):
    out[...] = a * scale + np.asarray(offset)


case("vector_scalar_argument", vec_arg, lambda: (f32(12, 4), np.zeros((12, 4), np.float32), float4(1, 2, 3, 4), 2.0),
     vec_arg_ref)


@kernel
def vec_dtype_arrays(a, out):
    for i, v in enumerate(a):
        out[i] = float4(v.x + v.w, v.y, v.z, 1.0) * 2.0


def vec_dtype_ref(a, out):
    for i in range(len(a)):
        r = a[i]
        out[i] = (float(r["x"] + r["w"]) * 2, float(r["y"]) * 2, float(r["z"]) * 2, 2.0)


def _vec_dtype_args():
    a = np.zeros(15, float4.dtype)
    for f in "xyzw":
        a[f] = f32(15)
    return a, np.zeros(15, float4.dtype)


case("arrays_of_float4_dtype", vec_dtype_arrays, _vec_dtype_args, vec_dtype_ref)


@kernel
def int_vectors(a, out):
    for i in range(out.shape[0]):
        v = a[i]
        w = int4(v.x, v.y, 7, -1) * 3 + v.wzyx
        out[i] = w // 2


def int_vectors_ref(a, out):
    for i in range(out.shape[0]):
        v = int4(*a[i])
        out[i] = np.asarray((int4(v.x, v.y, 7, -1) * 3 + v.wzyx) // 2)


case("int4_rows_floor_division", int_vectors, lambda: (RNG.integers(-20, 20, (10, 4)).astype(np.int32), np.zeros((10, 4), np.int32)),
     int_vectors_ref)


@kernel
def float2_rows(a, out):
    for i in range(out.shape[0]):
        v = a[i]
        out[i] = float2(v.y, v.x) * funcs.length(v)


case("float2_rows", float2_rows, lambda: (f32(9, 2), np.zeros((9, 2), np.float32)),
     lambda a, out: out.__setitem__(..., a[:, ::-1] * np.linalg.norm(a, axis=1, keepdims=True)))


# ---- gpu builtins ------------------------------------------------------------------------------------------
TILE = 16


@kernel
def block_sum(x, partial):
    tile = gpu.local_array(TILE, np.float32)
    lid = gpu.get_local_id(0)
    gid = gpu.get_global_id(0)
    tile[lid] = x[gid]
    gpu.barrier(gpu.LOCAL)
    s = TILE // 2
    while s > 0:
        if lid < s:
            tile[lid] += tile[lid + s]
        gpu.barrier(gpu.LOCAL)
        s //= 2
    if lid == 0:
        partial[gpu.get_group_id(0)] = tile[0]


def block_sum_ref(x, partial):
    partial[...] = x.reshape(-1, TILE).sum(axis=1)


case("local_memory_barrier_block_sum", block_sum, lambda: (f32(128), np.zeros(128 // TILE, np.float32)),
     block_sum_ref, bracket=(128, TILE), rtol=1e-5, atol=1e-5)


@kernel
def atomics_int(data, counts, acc):
    gpu.work_size(data)
    i = gpu.get_global_id(0)
    v = data[i]
    gpu.atomic_add(counts, v % 4, 1)
    gpu.atomic_sub(counts, 4 + v % 4, 2)
    gpu.atomic_min(acc, 0, v)
    gpu.atomic_max(acc, 1, v)
    gpu.atomic_and(acc, 2, v | 0xF0)
    gpu.atomic_or(acc, 3, v & 0x0F)
    gpu.atomic_xor(acc, 4, 1)
    gpu.atomic_inc(acc, 5)
    gpu.atomic_dec(acc, 6)
    gpu.atomic_xchg(acc, 7, 42)
    gpu.atomic_cmpxchg(acc, 8, 0, 1)


def atomics_int_ref(data, counts, acc):
    v = data
    T = data.dtype.type
    for k in range(4):
        counts[k] += T(np.sum(v % 4 == k))
        counts[4 + k] -= T(2 * np.sum(v % 4 == k))
    acc[0] = min(acc[0], v.min())
    acc[1] = max(acc[1], v.max())
    acc[2] = acc[2] & np.bitwise_and.reduce(v | T(0xF0))
    acc[3] = acc[3] | np.bitwise_or.reduce(v & T(0x0F))
    acc[4] ^= len(v) % 2
    acc[5] += len(v)
    acc[6] -= len(v)
    acc[7] = 42
    acc[8] = 1


def _atomic_args(dt):
    def mk():
        data = RNG.integers(0, 200, 3000).astype(dt)
        acc = np.array([1000, 0, 0xFFFF, 0, 0, 5, 10000, 3, 0], dt)
        return data, np.zeros(8, dt), acc
    return mk


for _dt in ("int32", "uint32", "int64", "uint64"):
    case(f"atomics_contention_{_dt}", atomics_int, _atomic_args(_dt), atomics_int_ref)


@kernel
def atomics_float(data, acc, old):
    gpu.work_size(data)
    i = gpu.get_global_id(0)
    old[i] = gpu.atomic_add(acc, 0, data[i])
    gpu.atomic_min(acc, 1, data[i])
    gpu.atomic_max(acc, 2, data[i])
    gpu.atomic_sub(acc, 3, 1.0)


def atomics_float_ref(data, acc, old):
    acc[0] += data.sum()
    acc[1] = min(acc[1], data.min())
    acc[2] = max(acc[2], data.max())
    acc[3] -= len(data)
    old[...] = -1.0     # order-dependent: checked separately below


def _float_atomic_args():
    return np.ones(1000, np.float32) * 0.5, np.array([0.0, 1e9, -1e9, 0.0], np.float32), np.zeros(1000, np.float32)


case("atomics_float32", atomics_float, _float_atomic_args, atomics_float_ref, compile_only=True)


@kernel
def fast_math(a, out):
    for i in range(out.shape[0]):
        x = abs(a[i]) + 0.5
        out[i] = gpu.native_sqrt(x) + gpu.rsqrt(x) + gpu.native_exp(x * 0.1) + gpu.native_divide(x, 3.0) + gpu.native_sin(x)


def fast_math_ref(a, out):
    x = np.abs(a) + 0.5
    out[...] = np.sqrt(x) + 1 / np.sqrt(x) + np.exp(x * 0.1) + x / 3 + np.sin(x)


case("native_fast_math", fast_math, lambda: (f32(30), np.zeros(30, np.float32)), fast_math_ref, rtol=1e-3, atol=1e-3)


# ---- the tests ---------------------------------------------------------------------------------------------------
def _clone(args):
    return tuple(copy.deepcopy(a) if isinstance(a, np.ndarray) else a for a in args)


def run_case(c: Case, backend):
    args = c.make_args()
    host = _clone(args)
    k = c.kernel[backend]
    if c.bracket is not None:
        k = k[c.bracket]
    k(*args)
    with np.errstate(all="ignore"):          # numpy's overflow warnings in host references
        (c.reference or c.kernel.py_func)(*host)
    for i, (got, want) in enumerate(zip(args, host)):
        if isinstance(got, np.ndarray):
            if got.dtype.fields is not None:      # compare the fields, not padding bytes
                from numpy.lib.recfunctions import structured_to_unstructured
                got, want = structured_to_unstructured(got), structured_to_unstructured(want)
            np.testing.assert_allclose(got, want, rtol=c.rtol, atol=c.atol, err_msg=f"{c.name}: argument {i}")


def pytest_generate_tests(metafunc):
    # at collection time, so cases appended below the tests (or by other modules) are included
    if metafunc.function.__name__ == "test_execute":
        metafunc.parametrize("c", [c for c in CASES if not c.compile_only], ids=lambda c: c.name)
    elif metafunc.function.__name__ == "test_execute_ragged_groups":
        metafunc.parametrize("c", _ragged_cases(), ids=lambda c: c.name)


def test_execute(c, backend, device):
    if c.needs_fp64 and not device.fp64:
        pytest.skip(f"{device.selector} has no float64 support")
    run_case(c, backend)


# Ragged groups: the same cases with a local size that divides no extent of the arguments, so the
# launch rounds the domain up (OpenCL) or launches whole blocks past it (CUDA/HIP) and the extra
# work items must be stopped by the kernel's own bounds guard. PoCL otherwise launches exactly
# the domain, which leaves every guard unexercised without oclgrind. test_translate_guards.py
# checks with sentinel-filled, larger-than-domain outputs that nothing past the domain is written.
RAGGED_CAP = {1: 64, 2: 16, 3: 8}          # per-dimension ceiling
RAGGED_GROUP_MAX = 256                      # items a group: NVIDIA's OpenCL allows 256 for these kernels


def domain_ndim(k, args) -> int:
    """Dimensions of the kernel's iteration domain (0: none; the launch needs a bracket work size)."""
    return sum(1 for item in k.inspect(*args, backend="opencl").layout if item[0] == "bound")


def ragged_local_size(args, ndim) -> tuple:
    """Per dimension a size that divides no array extent and no integer argument, the largest such
    tuple with at most RAGGED_GROUP_MAX items a group (sizes may repeat): a domain built from those
    is never a whole number of groups (range(a, b, step) counts are not among the candidates, so
    those cases are ragged with high probability, not certainty)."""
    extents = set()
    for a in args:
        if isinstance(a, np.ndarray):
            extents.update(a.shape)
        elif isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            extents.add(abs(int(a)))
    extents = {e for e in extents if e > 1}
    sizes = [n for n in range(RAGGED_CAP[ndim], 1, -1) if all(e % n for e in extents)]
    # combinations_with_replacement of a descending list: the largest sizes come first
    fits = [t for t in itertools.combinations_with_replacement(sizes, ndim) if math.prod(t) <= RAGGED_GROUP_MAX]
    assert fits, f"no ragged local size of at most {RAGGED_GROUP_MAX} items for extents {sorted(extents)}"
    return fits[0]


def _ragged_cases():
    return [c for c in CASES if not c.compile_only and c.bracket is None]


def test_execute_ragged_groups(c, backend, device):
    if c.needs_fp64 and not device.fp64:
        pytest.skip(f"{device.selector} has no float64 support")
    args = c.make_args()
    ndim = domain_ndim(c.kernel, args)
    assert ndim, f"{c.name}: a case without a bracket must have an iteration domain"
    ragged = dataclasses.replace(c, bracket=(None, ragged_local_size(args, ndim)), make_args=lambda: args)
    run_case(ragged, backend)


def test_ragged_local_sizes_fit_a_256_item_group_and_divide_no_extent():
    """NVIDIA's OpenCL refused (8, 7, 6) = 336 items for work_size_3d; PoCL takes 4096."""
    for c in _ragged_cases():
        args = c.make_args()
        local = ragged_local_size(args, domain_ndim(c.kernel, args))
        extents = {e for a in args if isinstance(a, np.ndarray) for e in a.shape if e > 1}
        assert math.prod(local) <= RAGGED_GROUP_MAX, (c.name, local)
        assert all(e % n for n in local for e in extents), (c.name, local, extents)


def test_ragged_groups_cover_every_domain_shape():
    """The ragged run reaches 1-, 2- and 3-D domains of each kind (range, ndindex, ndenumerate,
    enumerate, work_size), so every guard the translator emits runs with items past the domain."""
    kinds = set()
    for c in _ragged_cases():
        args = c.make_args()
        rule = c.kernel.inspect(*args, backend="opencl").work_size
        kinds.add((rule.split(" domain")[0], domain_ndim(c.kernel, args)))
    for want in [("range", 1), ("ndindex", 2), ("ndindex", 3), ("ndenumerate", 2), ("enumerate", 1),
                 ("work_size", 2), ("work_size", 3)]:
        assert want in kinds, f"no catalogue case with a {want[1]}-D {want[0]} domain: {sorted(kinds)}"


def test_float_atomics(backend):
    data, acc, old = _float_atomic_args()
    atomics_float[backend](data, acc, old)
    assert acc[0] == 500.0 and acc[1] == 0.5 and acc[2] == 0.5 and acc[3] == -1000.0
    # every old value is distinct and a multiple of 0.5: the add returned the value before it
    assert sorted(old.tolist()) == [0.5 * k for k in range(1000)]


def _sources(c, dialect):
    return c.kernel.inspect(*c.make_args(), backend=dialect).source


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_cuda_source_compiles(c, nvrtc_compile):
    # executed too, where a CUDA device is present: test_execute runs every backend with a device
    src = _sources(c, "cuda")
    assert_cubin(nvrtc_compile(src), src)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1030"])  # CDNA (MI200) and RDNA2
@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_hip_source_compiles(c, arch, hiprtc_compile):
    src = _sources(c, "hip")
    assert_code_object(hiprtc_compile(src, arch), src)


def test_catalogue_is_large():
    assert len(CASES) >= 40


@kernel
def special_constants(a, out):
    for i in range(out.shape[0]):
        x = a[i]
        out[i, 0] = min(x, math.inf) + max(x, -math.inf)
        out[i, 1] = math.e * math.tau + np.pi
        out[i, 2] = 1.0 if math.isnan(np.nan) else 0.0
        out[i, 3] = x // 0 if False else x


case("math_constants_inf_nan", special_constants, lambda: (f32(10), np.zeros((10, 4), np.float32)))
case("math_constants_inf_nan_f64", special_constants, lambda: (f32(10).astype(np.float64), np.zeros((10, 4))),
     needs_fp64=True)


@kernel
def int_div_by_zero(a, b, q, r):
    for i in range(q.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


def test_integer_division_by_zero_does_not_crash(backend):
    a = np.array([7, -7, -2**31, 5], np.int32)
    b = np.array([0, 0, -1, 0], np.int32)
    q, r = np.zeros(4, np.int32), np.ones(4, np.int32)
    int_div_by_zero[backend](a, b, q, r)
    assert q.tolist() == [0, 0, -2**31, 0] and r.tolist() == [0, 0, 0, 0]
    u = np.array([7, 9], np.uint32)
    qu, ru = np.zeros(2, np.uint32), np.ones(2, np.uint32)
    int_div_by_zero[backend](u, np.array([0, 2], np.uint32), qu, ru)
    assert qu.tolist() == [0, 4] and ru.tolist() == [0, 1]


@kernel
def local_atomics_2d(data, out):
    hist = gpu.local_array((2, 8), np.int32)
    lid = gpu.get_local_id(0)
    if lid < 8:
        hist[0, lid] = 0
        hist[1, lid] = 0
    gpu.barrier()
    v = data[gpu.get_global_id(0)]
    gpu.atomic_add(hist, (v % 2, v % 8), 1)
    gpu.barrier(gpu.LOCAL | gpu.GLOBAL)
    if lid < 8:
        gpu.atomic_add(out, (0, lid), hist[0, lid])
        gpu.atomic_add(out, (1, lid), hist[1, lid])


def local_atomics_ref(data, out):
    for v in data.tolist():
        out[v % 2, v % 8] += 1


case("local_2d_array_local_atomics", local_atomics_2d,
     lambda: (RNG.integers(0, 100, 256).astype(np.int32), np.zeros((2, 8), np.int32)), local_atomics_ref,
     bracket=(256, 32))


@kernel
def atomics_double(data, acc):
    gpu.work_size(data)
    gpu.atomic_add(acc, 0, data[gpu.get_global_id(0)])


case("atomics_float64_cas", atomics_double, lambda: (np.full(500, 0.25), np.zeros(1)),
     lambda data, acc: acc.__setitem__(0, data.sum()), needs_fp64=True)


@kernel
def guarded_temporaries(a, out, n):
    for i in range(out.shape[0]):
        # the chained comparison needs a temporary for a[i + n]; it must not be read when i + n >= len(a)
        ok = i + n < a.shape[0] and -1.0 < a[i + n] < 1.0
        big = (i + n >= a.shape[0]) or 0.0 < a[i + n] * 2.0 < 1.0
        out[i, 0] = 1 if ok else 0
        out[i, 1] = 1 if big else 0
        out[i, 2] = funcs.length(float2(a[i], 1.0).yx) if i % 2 == 0 else funcs.dot(float2(a[i]), float2(1.0, 2.0))


case("short_circuit_and_conditional_with_temporaries", guarded_temporaries,
     lambda: (f32(40), np.zeros((40, 3), np.float32), 25), rtol=1e-5)


# ---- more helpers and vector shapes ----------------------------------------------------------------------
def scaled_vec(v, s):
    return float4(v.x * s, v.y * s, v.z, v.w + s)


def tile_sum(tile, n):
    total = 0.0
    for k in range(n):
        total += tile[k]
    return total


@kernel
def vec_helpers(a, out):
    for i in range(out.shape[0]):
        w = scaled_vec(a[i], 2.0)
        out[i] = w + scaled_vec(w, 0.5).zyxw


def vec_helpers_ref(a, out):
    for i in range(out.shape[0]):
        w = scaled_vec(float4(*a[i]), 2.0)
        out[i] = np.asarray(w + scaled_vec(w, 0.5).zyxw)


case("helpers_returning_vectors", vec_helpers, lambda: (f32(10, 4), np.zeros((10, 4), np.float32)), vec_helpers_ref)


@kernel
def local_to_helper(x, partial):
    tile = gpu.local_array(TILE, np.float32)
    lid = gpu.get_local_id(0)
    tile[lid] = x[gpu.get_global_id(0)]
    gpu.barrier()
    if lid == 0:
        partial[gpu.get_group_id(0)] = tile_sum(tile, TILE)


case("local_array_passed_to_helper", local_to_helper, lambda: (f32(64), np.zeros(64 // TILE, np.float32)),
     block_sum_ref, bracket=(64, TILE), rtol=1e-5, atol=1e-5)


@kernel
def ndenum_tuple_index(a, out):
    for idx, v in np.ndenumerate(a):
        out[idx] = v * 3.0


case("ndenumerate_tuple_index", ndenum_tuple_index, lambda: (f32(5, 6), np.zeros((5, 6), np.float32)))


@kernel
def float3_padded(a, out):
    for i, v in enumerate(a):
        out[i] = float3(v.z, v.y, v.x) * 2.0


def float3_padded_ref(a, out):
    for f_out, f_in in zip("xyz", "zyx"):
        out[f_out] = a[f_in] * 2


def _float3_args():
    a = np.zeros(7, float3.dtype)
    for f in "xyz":
        a[f] = f32(7)
    return a, np.zeros(7, float3.dtype)


case("arrays_of_float3_dtype_16_byte_slots", float3_padded, _float3_args, float3_padded_ref)


@kernel
def image_rows(img, out):
    for y, x in np.ndindex(out.shape):
        p = img[y, x]
        out[y, x] = p.x * 0.25 + p.y * 0.5 + p.z * 0.25 + p.w * 0.0


def image_rows_ref(img, out):
    out[...] = img[..., 0] * 0.25 + img[..., 1] * 0.5 + img[..., 2] * 0.25


case("image_hw4_rows_as_vectors", image_rows, lambda: (f32(6, 9, 4), np.zeros((6, 9), np.float32)), image_rows_ref)


@kernel
def wide_vectors(a, out):
    for i in range(out.shape[0]):
        v = a[i]
        out[i] = v * 2.0 + float8(v.s7, v.s6, v.s5, v.s4, v.s3, v.s2, v.s1, v.s0)


def wide_ref(a, out):
    out[...] = a * 2 + a[:, ::-1]


case("float8_rows", wide_vectors, lambda: (f32(5, 8), np.zeros((5, 8), np.float32)), wide_ref)


@kernel
def work_size_3d(vol, out):
    gpu.work_size(vol)
    x = gpu.get_global_id(0)
    y = gpu.get_global_id(1)
    z = gpu.get_global_id(2)
    out[z, y, x] = vol[z, y, x] + z


def work_size_3d_ref(vol, out):
    out[...] = vol + np.arange(vol.shape[0])[:, None, None]


case("work_size_3d", work_size_3d, lambda: (f32(3, 4, 5), np.zeros((3, 4, 5), np.float32)), work_size_3d_ref)


@kernel
def index64(out, base):
    for i in range(out.shape[0]):
        out[i] = base + i


case("indexing_64_bit_by_large_int", index64, lambda: (np.zeros(6, np.int64), 2**33))


@kernel
def shape_unpack_float_words(a, out):
    for y, x in np.ndindex(out.shape):
        h, w = a.shape
        lo = float("-inf")
        v = a[y, x]
        out[y, x] = (v if v > lo else float("nan")) + h * 100 + w * 10 + (1.0 if float("inf") > 1e30 else 0.0)


case("shape_tuple_unpacking_and_float_inf", shape_unpack_float_words, lambda: (f32(3, 5), np.zeros((3, 5), np.float32)))


@kernel
def native_all(a, out):
    for i in range(out.shape[0]):
        x = abs(a[i]) + 0.5
        out[i, 0] = gpu.native_rsqrt(x) + gpu.native_recip(x) + gpu.native_exp2(x) + gpu.native_exp10(x * 0.1)
        out[i, 1] = gpu.native_log(x) + gpu.native_log2(x) + gpu.native_log10(x)
        out[i, 2] = gpu.native_cos(x) + gpu.native_tan(x * 0.1) + gpu.native_powr(x, 1.5)


def native_all_ref(a, out):
    x = np.abs(a) + 0.5
    out[:, 0] = 1 / np.sqrt(x) + 1 / x + np.exp2(x) + 10 ** (x * 0.1)
    out[:, 1] = np.log(x) + np.log2(x) + np.log10(x)
    out[:, 2] = np.cos(x) + np.tan(x * 0.1) + x ** 1.5


case("native_math_all", native_all, lambda: (f32(20), np.zeros((20, 3), np.float32)), native_all_ref, rtol=2e-3, atol=2e-3)
case("native_math_all_float64", native_all, lambda: (f32(20).astype(np.float64), np.zeros((20, 3))), native_all_ref,
     rtol=1e-9, atol=1e-9, needs_fp64=True)


@kernel
def scalar_funcs(a, b, out):
    for i in range(out.shape[0]):
        x = a[i]
        y = b[i]
        out[i, 0] = funcs.clamp(x, -0.5, 0.5) + funcs.mix(x, y, 0.25) + funcs.step(0.0, x)
        out[i, 1] = funcs.smoothstep(-1.0, 1.0, y) + funcs.fma(x, y, 1.0) + funcs.sign(x)
        out[i, 2] = funcs.radians(x) + funcs.degrees(y) + funcs.dot(x, y) + funcs.length(y)
        out[i, 3] = funcs.distance(x, y) + funcs.min(x, y) + funcs.max(x, y) + funcs.abs(x)


case("funcs_on_scalars", scalar_funcs, lambda: (f32(30), f32(30), np.zeros((30, 4), np.float32)), rtol=1e-4, atol=1e-5)


@kernel
def normalize_edge_cases(vecs, out, s_out):
    for i, v in enumerate(vecs):
        out[i] = funcs.normalize(v)
        s_out[i] = funcs.normalize(v.x)


def _normalize_edge_args():
    vecs = f32(8, 4)
    vecs[0] = 0.0
    vecs[3, 0] = 0.0
    return vecs, np.full((8, 4), 7.0, np.float32), np.full(8, 7.0, np.float32)


case("normalize_zero_vector_unchanged", normalize_edge_cases, _normalize_edge_args,
     lambda vecs, out, s_out: (out.__setitem__(..., funcs.normalize(vecs)),
                               s_out.__setitem__(..., [funcs.normalize(x) for x in vecs[:, 0]])))


@kernel
def nan_rules(a, b, out):
    for i in range(out.shape[0]):
        x = a[i]
        y = b[i]
        out[i, 0] = min(x, y)
        out[i, 1] = np.minimum(x, y)
        out[i, 2] = np.fmax(x, y)
        out[i, 3] = funcs.min(x, y)
        out[i, 4] = np.sign(x)
        out[i, 5] = funcs.sign(x)


def _nan_args():
    a = np.array([np.nan, 1.0, np.nan, -2.0, 0.0, 3.0], np.float32)
    b = np.array([1.0, np.nan, np.nan, 5.0, -0.0, np.nan], np.float32)
    return a, b, np.zeros((6, 6), np.float32)


case("nan_semantics_of_min_max_sign", nan_rules, _nan_args)


@kernel
def local_named_like_helper(x, out):
    for i in range(out.shape[0]):
        scaled = th.scaled(x[i])          # valid Python: the helper is reached through its module
        poly = th.poly(scaled)
        out[i] = poly + scaled


case("locals_named_like_helpers", local_named_like_helper, lambda: (f32(12), np.zeros(12, np.float32)))
