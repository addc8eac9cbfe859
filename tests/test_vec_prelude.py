"""The prelude library: naming, dependency order, completeness, and compiling every piece
with NVRTC (CUDA), hiprtc (HIP) and the OpenCL device's compiler."""
from __future__ import annotations

import re

import numpy as np
import pytest

from pygpgpu_translate._builtins import FUNCS
from pygpgpu_translate.prelude import PRELUDE_NAMES, c_type, component, make_vector, piece_function, prelude_source
from test_vec_helpers import COMPILE_ERRORS, opencl_runner, rtc_compile  # noqa: F401 - fixture

DIALECTS = ("opencl", "cuda", "hip")
_DEFINED_FN = re.compile(r"(?:static inline|__device__ __forceinline__)\s[^(){};]*?\b(pg_\w+)\s*\(")
_DEFINED_TYPE = re.compile(r"struct alignas\(\d+\) (pg_\w+)")
_DEFINED_TYPEDEF = re.compile(r"typedef struct \{[^}]*\} (pg_\w+);")
_DEFINED_MACRO = re.compile(r"#define (pg_\w+)\(")
_USED = re.compile(r"\bpg_\w+\b")
# declared by the kernel itself (Dialect.kernel_locals), for pieces that need kernel-scope memory
_KERNEL_PROVIDED = {"pg_sg_scratch"}


def _defined(src: str) -> set[str]:
    return (set(_DEFINED_FN.findall(src)) | set(_DEFINED_TYPE.findall(src)) | set(_DEFINED_TYPEDEF.findall(src))
            | set(_DEFINED_MACRO.findall(src)) | _KERNEL_PROVIDED)


def test_names_cover_every_family():
    fams = {n.split(":")[0] for n in PRELUDE_NAMES}
    for f in FUNCS:
        assert f"funcs.{f}" in fams
    for op in ("add", "sub", "min", "max", "and", "or", "xor", "xchg", "cmpxchg", "inc", "dec"):
        assert {f"atomic_{op}", f"atomic_{op}.local"} <= fams
        assert f"atomic_{op}:int" in PRELUDE_NAMES and f"atomic_{op}:ulong" in PRELUDE_NAMES
    assert "atomic_add:float" in PRELUDE_NAMES and "atomic_xor:float" not in PRELUDE_NAMES
    assert {"vec", "vec_ops", "vec_cmp", "pyfloordiv", "pymod"} <= fams
    assert sum(n.startswith("vec:") for n in PRELUDE_NAMES) == 50
    assert "funcs.cross:float3" in PRELUDE_NAMES and "funcs.cross:float2" not in PRELUDE_NAMES
    assert "funcs.dot:float8" not in PRELUDE_NAMES and "funcs.clamp:int16" in PRELUDE_NAMES
    assert "funcs.mix:int4" not in PRELUDE_NAMES


def test_each_piece_once_dependencies_first():
    src = prelude_source("cuda", ["funcs.normalize:float3", "funcs.normalize:float3", "funcs.dot:float3"])
    assert src.count("pg_normalize_float3(") == 1
    assert src.count(" pg_dot_float3(") == 1
    assert src.index(" pg_dot_float3(") < src.index(" pg_normalize_float3(")
    assert src.index(" pg_make_float3(") < src.index(" pg_dot_float3(")
    # order of the request does not matter
    assert src == prelude_source("cuda", ["funcs.dot:float3", "funcs.normalize:float3"])
    assert prelude_source("opencl", set()) == ""
    ocl = prelude_source("opencl", {"funcs.dot:double4", "atomic_min:long"})
    assert ocl.index("cl_khr_fp64") < ocl.index("pg_dot_double4")
    assert ocl.index("cl_khr_int64_extended_atomics") < ocl.index("pg_atomic_min_long")


def test_errors_name_the_problem():
    with pytest.raises(KeyError, match="no prelude piece 'funcs.dot:float9'"):
        prelude_source("cuda", {"funcs.dot:float9"})
    with pytest.raises(ValueError, match="unknown dialect"):
        prelude_source("metal", {"vec:float4"})


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_piece_defines_what_it_uses(dialect):
    """Static completeness: alone, each piece plus its dependencies defines every pg_ name it uses,
    so a generated kernel needs to ask only for the pieces it calls."""
    for name in sorted(PRELUDE_NAMES):
        src = prelude_source(dialect, {name})
        missing = set(_USED.findall(src)) - _defined(src)
        assert not missing, f"{dialect} {name}: uses {missing} without defining them:\n{src}"
        fn = piece_function(name)
        if fn is not None:
            assert fn in _defined(src), (dialect, name)


def test_type_helpers():
    assert c_type("cuda", "long") == "long long" and c_type("opencl", "long") == "long"
    assert c_type("cuda", "long2") == "longlong2" and c_type("hip", "ulong3") == "ulonglong3"
    assert c_type("cuda", "float8") == "pg_float8" and c_type("hip", "uint16") == "pg_uint16"
    assert c_type("cuda", "double4") == "pg_double4" and c_type("hip", "double4") == "double4"
    assert component("cuda", "float4", 2) == ".z" and component("cuda", "float16", 11) == ".sB"
    assert component("opencl", "float16", 11) == ".sb"
    assert make_vector("opencl", "int2", ["a", "b"]) == "((int2)(a, b))"
    assert make_vector("hip", "int2", ["a", "b"]) == "pg_make_int2(a, b)"


_CUDA_KERNEL = 'extern "C" __global__ void pg_probe(int* out) { out[0] = 1; }\n'
_OPENCL_KERNEL = "__kernel void pg_probe(__global int* out) { out[0] = 1; }\n"


def test_all_pieces_compile(rtc_compile):
    dialect, compile_ = rtc_compile
    assert compile_(prelude_source(dialect, PRELUDE_NAMES) + _CUDA_KERNEL)


@pytest.mark.parametrize("native", [True, False])
def test_all_pieces_build_on_opencl(native):
    run = opencl_runner()
    out = np.zeros(1, np.int32)
    run(prelude_source("opencl", PRELUDE_NAMES, native=native) + _OPENCL_KERNEL, "pg_probe", (1,), None, [out])
    assert out[0] == 1


def test_compile_errors_are_reported(rtc_compile):
    dialect, compile_ = rtc_compile
    with pytest.raises(COMPILE_ERRORS, match="pg_no_such"):
        compile_(prelude_source(dialect, {"vec:float4"}) + "__device__ float f() { return pg_no_such(); }\n")


_USE_OPS = r"""
extern "C" __global__ void use_ops(float* f, int* i, unsigned long long* u) {
  float4 a = pg_make_float4(f[0], f[1], f[2], f[3]);
  float4 b = 2.0f * a + 1.0f - a / 3.0f;
  b += a; b *= 0.5f; b = -b;
  pg_float8 w = pg_splat_float8(f[4]) * pg_make_float8(1, 2, 3, 4, 5, 6, 7, 8) + 1.0f;
  w -= pg_splat_float8(1.0f);
  int4 c = pg_lt_float4(a, b);
  int4 k = pg_make_int4(i[0], i[1], i[2], i[3]);
  k = ((k << 3) | 1) ^ (~k & 7) % 5 + (2 << k) + (+k) - (-k);
  k >>= 1; k %= 3; k <<= 2; k &= 7; k |= 8; k ^= k; k += k; k -= 1; k *= k; k /= 2;
  uint3 q = -pg_make_uint3(1u, 2u, 3u);
  q += 1u; q <<= 2u; q = +q;
  a = +a; a -= 1.0f; a /= 2.0f;
  pg_ulong16 big = pg_splat_ulong16(u[0]) + 3ull;
  @double4@ d = pg_normalize_double4(pg_make_double4(1.0, 2.0, f[0], 4.0));
  longlong3 l3 = pg_pyfloordiv_long3(pg_make_long3(-7, 7, 8), pg_make_long3(2, -2, 0));
  float3 n = pg_normalize_float3(pg_cross_float3(pg_make_float3(1, 0, 0), pg_make_float3(0, 1, 0)));
  f[0] = b.x + w.s7 + c.y + n.z + pg_dot_float4(a, b) + pg_smoothstep_float(0.0f, 1.0f, f[1]) + (float)d.w;
  i[0] = k.x + (int)l3.y + pg_atomic_inc_int(i + 1) + pg_atomic_cmpxchg_int(i + 2, 1, 2);
  u[0] = big.sF + pg_atomic_max_ulong(u + 1, 5ull) + (unsigned long long)pg_atomic_min_long((long long*)u + 2, -5);
  pg_atomic_max_float(f + 5, 1.0f);
}
"""


def test_generated_names_usable_from_kernel_code(rtc_compile):
    """Operators with scalar broadcast, own structs, comparisons, funcs and atomics, used the way
    emitted kernel code uses them."""
    needed = {
        "vec_ops:float4", "vec_ops:float8", "vec_ops:int4", "vec_ops:uint3", "vec_ops:ulong16", "vec_cmp:float4",
        "funcs.normalize:double4", "pyfloordiv:long3", "funcs.normalize:float3", "funcs.cross:float3",
        "funcs.dot:float4", "funcs.smoothstep:float", "atomic_inc:int", "atomic_cmpxchg:int",
        "atomic_max:ulong", "atomic_min:long", "atomic_max:float", "vec:float8",
    }
    dialect, compile_ = rtc_compile
    assert compile_(prelude_source(dialect, needed) + _USE_OPS.replace("@double4@", c_type(dialect, "double4")))
