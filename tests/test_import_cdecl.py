"""The C declaration parser behind the kernel-file import hooks (no device needed)."""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import cdecl
from pygpgpu_core.cdecl import CDeclError, Pointer, Scalar, Struct, Vector
from pygpgpu_core.kernel_files import struct_ctype

DATA = Path(__file__).parent / "kernel_files"


def parse(src: str, dialect: str = "opencl", path: "Path | None" = None) -> cdecl.ParsedFile:
    return cdecl.parse_source(src, dialect, str(path) if path else "<string>")


def test_vecadd_signature_and_access():
    p = cdecl.parse_file(DATA / "vecadd.cl", "opencl")
    k = p.kernels["vecadd"]
    assert [x.name for x in k.params] == ["a", "b", "out", "n"]
    assert [x.access for x in k.params] == ["read", "read", "readwrite", "value"]
    assert k.prototype == ("__kernel void vecadd(__global const float* a, __global const float* b, "
                           "__global float* out, const int n)")
    a = k.params[0].type
    assert isinstance(a, Pointer) and a.address_space == "global" and a.const
    assert a.pointee == cdecl.scalar_type("float", "opencl")
    assert k.line == 1 and k.file.endswith("vecadd.cl")


@pytest.mark.parametrize("spelling, dtype", [
    ("unsigned int", "uint32"), ("unsigned", "uint32"), ("uint", "uint32"), ("signed char", "int8"),
    ("unsigned char", "uint8"), ("uchar", "uint8"), ("short", "int16"), ("unsigned short int", "uint16"),
    ("long", "int64"), ("unsigned long", "uint64"), ("ulong", "uint64"),   # long long: test_import_cdecl_long_long
    ("size_t", "uint64"), ("half", "float16"), ("double", "float64"),
    ("float", "float32"), ("int", "int32"), ("uint32_t", "uint32"), ("bool", "bool"),
])
def test_scalar_spellings(spelling, dtype):
    p = parse(f"__kernel void k(const {spelling} v, __global {spelling}* restrict p) {{}}")
    v, ptr = p.kernels["k"].params
    assert v.type.dtype == dtype and v.access == "value"
    assert ptr.type.pointee.dtype == dtype and ptr.access == "readwrite"


def test_qualifiers_spellings_and_address_spaces():
    src = """
    kernel void k(global const float * restrict a, __constant int* c, local float* tmp,
                  __global volatile uint* v, const __global float* __restrict b,
                  __global float* const q, __local float4 *tile, float arr[])
    { }
    """
    params = parse(src).kernels["k"].params
    access = {p.name: p.access for p in params}
    assert access == {"a": "read", "c": "read", "tmp": "local", "v": "readwrite", "b": "read",
                      "q": "readwrite", "tile": "local", "arr": "readwrite"}
    assert params[1].type.address_space == "constant"
    assert isinstance(params[6].type.pointee, Vector) and params[6].type.pointee.n == 4


def test_cuda_qualifiers_attributes_and_extern_c():
    p = cdecl.parse_file(DATA / "vecadd.cu", "cuda")
    assert list(p.kernels) == ["vecadd", "bodies_mass"]
    k = p.kernels["vecadd"]
    assert [x.access for x in k.params] == ["read", "read", "readwrite", "value"]
    assert "__launch_bounds__" not in k.prototype and k.prototype.startswith("__global__ void vecadd(")
    assert p.kernels["bodies_mass"].params[2].type.dtype == "uint64"
    assert "extern \"C\"" in p.skipped["mangled"] and "vecadd.cu:" in p.skipped["mangled"]
    assert p.constants == {"BLOCK": 256}


def test_template_kernel_is_left_out_with_a_clear_reason():
    p = cdecl.parse_file(DATA / "template_kernel.cu", "cuda")
    assert p.kernels == {}
    assert "template_kernel.cu:1: template kernels are not supported" in p.skipped["scale"]
    assert 'extern "C" __global__ wrapper' in p.skipped["scale"]


def test_bad_signature_names_file_and_line():
    with pytest.raises(CDeclError) as info:
        cdecl.parse_file(DATA / "bad_signature.cl", "opencl")
    err = info.value
    assert err.file.endswith("bad_signature.cl") and err.line == 5
    assert "mystery_t" in str(err) and "bad_signature.cl:5" in str(err)


@pytest.mark.parametrize("src, message", [
    ("__kernel int k(__global float* x) { return 0; }", "must return void"),
    ("__kernel void k(__global float x) {}", "needs a pointer"),
    ("__kernel void k(struct Missing m) {}", "struct Missing is not defined"),
    ("__kernel void k(__global float* x, ) {}", "empty parameter"),
])
def test_unparseable_signatures(src, message):
    with pytest.raises(CDeclError, match=message):
        parse(src)


def test_comments_strings_and_if0_are_ignored():
    src = r"""
    /* __kernel void commented(int x) {} */
    // __kernel void also_commented(int x) {}
    #if 0
    __kernel void disabled(int x) {}
    #else
    __kernel void enabled(int x) { const char* s = "__kernel void not_a_kernel(int y) {}"; }
    #endif
    __kernel void after(__global int* p /* the output */, int /* count */ n) { if (n) { p[0] = '}'; } }
    """
    p = parse(src)
    assert list(p.kernels) == ["enabled", "after"]
    assert [x.name for x in p.kernels["after"].params] == ["p", "n"]


def test_define_constants_and_macros_in_signatures():
    src = """
    #define N 256
    #define HALF (N / 2)
    #define MASK (0xF0u | 0x0F)
    #define NEG (-7)
    #define BIG (1ull << 40)
    #define DIV (-7 / 2)
    #define CAST ((uchar)300)
    #define CH 'A'
    #define PI 3.5f
    #define GUARD_H
    #define SQUARE(x) ((x) * (x))
    #define REAL float
    #define KERNEL __kernel
    enum Mode { MODE_A, MODE_B = 10, MODE_C };
    KERNEL void k(__global REAL* x, const REAL alpha, enum Mode m) {}
    """
    p = parse(src)
    assert p.constants == {"N": 256, "HALF": 128, "MASK": 255, "NEG": -7, "BIG": 1 << 40, "DIV": -3,
                           "CAST": 44, "CH": 65, "PI": 3.5, "MODE_A": 0, "MODE_B": 10, "MODE_C": 11}
    x, alpha, m = p.kernels["k"].params
    assert x.type.pointee.dtype == "float32" and alpha.type.dtype == "float32" and m.type.dtype == "int32"


def test_include_resolved_relative_to_file_and_recorded():
    p = cdecl.parse_file(DATA / "particles.cl", "opencl")
    assert p.includes == [str((DATA / "particles.h").resolve())]
    assert p.constants["SCALE"] == 2 and p.constants["MAX_PARTICLES"] == 1024 and p.constants["FLAG_ACTIVE"] == 4
    assert "PARTICLES_H" not in p.constants  # an empty define is not a constant
    assert isinstance(p.structs["Particle"], Struct)
    step = p.kernels["advance"]
    assert step.params[0].type.pointee is p.structs["Particle"]
    assert step.params[1].type is p.structs["Force"]


def test_compile_source_inlines_headers_with_line_markers():
    text = cdecl.compile_source(DATA / "particles.cl")
    header = str((DATA / "particles.h").resolve())
    assert f'#line 1 "{header}"' in text
    assert "typedef struct {" in text and '#include "particles.h"' not in text
    assert f'#line 2 "{(DATA / "particles.cl").resolve()}"' in text


def test_include_cycles_and_pragma_once(tmp_path):
    (tmp_path / "a.h").write_text('#pragma once\n#include "b.h"\n#define A 1\n')
    (tmp_path / "b.h").write_text('#include "a.h"\n#define B 2\n')
    (tmp_path / "k.cl").write_text('#include "a.h"\n#include "a.h"\n#include <stdio_not_here.h>\n'
                                   '__kernel void k(int x) {}\n')
    p = cdecl.parse_file(tmp_path / "k.cl", "opencl")
    assert p.constants == {"A": 1, "B": 2}
    assert sorted(Path(x).name for x in p.includes) == ["a.h", "b.h"]
    text = cdecl.compile_source(tmp_path / "k.cl")
    assert text.count("#define A 1") == 1 and "#include <stdio_not_here.h>" in text


# ---- struct layouts -------------------------------------------------------------------------

def _offsets(s: Struct) -> dict:
    return {f.name: f.offset for f in s.fields}


def test_opencl_struct_layout_with_vectors():
    p = cdecl.parse_file(DATA / "particles.cl", "opencl")
    part = p.structs["Particle"]
    assert (part.size, part.align, _offsets(part)) == (48, 16, {"pos": 0, "vel": 16, "mass": 32, "id": 36})
    pair = p.structs["Pair"]  # char, double, float3 (16 bytes in OpenCL)
    assert (pair.size, pair.align, _offsets(pair)) == (32, 16, {"tag": 0, "value": 8, "v": 16})
    force = p.structs["Force"]
    assert (force.size, force.align) == (32, 16)


@pytest.mark.parametrize("dialect, float3, double4", [
    ("opencl", (16, 16), (32, 32)),
    ("cuda", (12, 4), (32, 16)),
    ("hip", (12, 4), (32, 32)),
])
def test_vector_layout_per_dialect(dialect, float3, double4):
    f3 = cdecl.vector_type("float", 3, dialect)
    d4 = cdecl.vector_type("double", 4, dialect)
    assert (f3.size, f3.align) == float3
    assert (d4.size, d4.align) == double4
    f4 = cdecl.vector_type("float", 4, dialect)
    assert (f4.size, f4.align) == (16, 16)


def test_cuda_and_hip_struct_layouts():
    cu = cdecl.parse_file(DATA / "vecadd.cu", "cuda").structs["Body"]
    assert (cu.size, cu.align, _offsets(cu)) == (48, 16, {"pos": 0, "mass": 12, "extra": 16})
    hip = cdecl.parse_file(DATA / "vecadd.hip", "hip").structs["Body"]
    assert (hip.size, hip.align, _offsets(hip)) == (64, 32, {"pos": 0, "extra": 32})


def test_struct_forms_nested_arrays_unions_packed():
    src = """
    #define K 3
    struct Inner { short a; int b; };
    typedef struct Outer_s {
        char c;
        struct Inner in;
        float m[K][2];
        union { int i; float f; } u;
        struct { uchar lo, hi; };
        __global float* ptr;
    } Outer, *OuterPtr;
    typedef struct __attribute__((packed)) { char c; int i; } Packed;
    typedef struct Fwd Fwd_t;
    struct Fwd { double d; char c; };
    typedef float real;
    __kernel void k(Outer o, Packed p, Fwd_t f, real r) {}
    """
    p = parse(src)
    outer = p.structs["Outer"]
    assert p.structs["Outer_s"] is outer and "OuterPtr" not in p.structs
    offs = _offsets(outer)
    assert offs["c"] == 0 and offs["in"] == 4 and offs["m"] == 12 and offs["u"] == 36
    assert outer.fields[4].name in outer.anonymous and offs[outer.fields[4].name] == 40
    assert offs["ptr"] == 48 and outer.size == 56 and outer.align == 8
    packed = p.structs["Packed"]
    assert (packed.size, packed.align, _offsets(packed)) == (5, 1, {"c": 0, "i": 1})
    assert p.structs["Fwd_t"].size == 16
    assert [x.type.kind for x in p.kernels["k"].params] == ["struct", "struct", "struct", "scalar"]


def test_unsupported_struct_is_skipped_with_a_reason_and_rejected_as_a_parameter():
    src = "typedef struct { int a : 3; int b; } Bits;\n__kernel void ok(int x) {}\n"
    p = parse(src)
    assert "Bits" not in p.structs and "bit-fields" in p.skipped["Bits"]
    with pytest.raises(CDeclError, match="bit-fields"):
        parse(src + "__kernel void bad(Bits b) {}\n")


def test_ctypes_struct_matches_device_layout():
    p = cdecl.parse_file(DATA / "particles.cl", "opencl")
    Particle = struct_ctype(p.structs["Particle"])
    assert ctypes.sizeof(Particle) == 48
    assert Particle.mass.offset == 32 and Particle.id.offset == 36 and Particle.vel.offset == 16
    assert Particle.dtype.itemsize == 48 and Particle.dtype.fields["mass"][1] == 32
    v = Particle((1, 2, 3, 4), (0, 0, 0, 0), 2.5, 7)
    assert list(v.pos) == [1.0, 2.0, 3.0, 4.0] and v.mass == 2.5 and v.id == 7
    # the record layout of the numpy dtype is the same bytes as the ctypes struct
    rec = np.frombuffer(bytes(v), dtype=Particle.dtype)[0]
    assert rec["mass"] == np.float32(2.5) and rec["id"] == 7 and tuple(rec["pos"]) == (1, 2, 3, 4)
    Pair = struct_ctype(p.structs["Pair"])
    assert ctypes.sizeof(Pair) == 32 and Pair.v.offset == 16 and Pair.value.offset == 8


def test_cuda_float3_member_ctypes():
    body = struct_ctype(cdecl.parse_file(DATA / "vecadd.cu", "cuda").structs["Body"])
    assert ctypes.sizeof(body) == 48 and body.mass.offset == 12 and body.extra.offset == 16
    assert ctypes.sizeof(type(body().pos)) == 12


def test_metadata_json_round_trip():
    p = cdecl.parse_file(DATA / "particles.cl", "opencl")
    q = cdecl.ParsedFile.from_json(p.to_json())
    assert q.to_json() == p.to_json()
    assert q.kernels["advance"].params[0].type.pointee is q.structs["Particle"]
    assert _offsets(q.structs["Particle"]) == _offsets(p.structs["Particle"])
    assert isinstance(q.kernels["scale"].params[2].type, Scalar)


def test_kernel_keyword_inside_parameters_is_not_a_kernel():
    src = """
    float convolve(__global const float* kernel, int n) { return kernel[n]; }
    __kernel void blur(__global const float* kernel, __global float* out) { out[0] = convolve(kernel, 0); }
    """
    p = parse(src)
    assert list(p.kernels) == ["blur"]
    assert [x.name for x in p.kernels["blur"].params] == ["kernel", "out"]


@pytest.mark.parametrize("decl, message", [
    ("__kernel void k(__global float** x)", "pointer-to-pointer"),
    ("__kernel void k(read_only image2d_t img)", "image2d_t arguments are not supported"),
    ("__kernel void k(__global float* x, sampler_t s)", "sampler_t arguments are not supported"),
])
def test_unsupported_kernels_are_left_out_with_file_and_line(decl, message):
    p = parse(f"__kernel void ok(__global int* x) {{}}\n{decl} {{}}\n")
    assert list(p.kernels) == ["ok"]
    assert message in p.skipped["k"] and ":2:" in p.skipped["k"]


def test_conditional_compilation_follows_the_device_compiler():
    src = """
    #ifdef __OPENCL_VERSION__
        #define REAL3 float3
    #else
        #include <CL/cl.h>
        #define REAL3 cl_float3
    #endif
    #if defined(USE_DOUBLE) && USE_DOUBLE
        typedef double real;
    #elif __OPENCL_VERSION__ >= 120
        typedef float real;
    #else
        typedef half real;
    #endif
    #ifndef WIDTH
    #define WIDTH 16
    #endif
    #if WIDTH > 8
    #define WIDE 1
    #else
    #define NARROW 1
    #endif
    typedef struct { REAL3 pos; real w; } Point;
    __kernel void k(__global Point* p, real scale) {}
    """
    p = parse(src)
    assert p.structs["Point"].size == 32  # float3 is 16 bytes in OpenCL, then a float, rounded to 16
    assert p.kernels["k"].params[1].type.dtype == "float32"
    assert p.constants == {"WIDTH": 16, "WIDE": 1}  # REAL3 is a type, not a number


def test_cuda_predefined_macros():
    src = """
    #ifndef __CUDACC__
    #error not reached by the parser
    struct Host { int never; };
    #endif
    #if __CUDA_ARCH__ >= 700
    struct Device { float4 v; };
    #endif
    extern "C" __global__ void k(Device d) {}
    """
    p = parse(src, "cuda")
    assert list(p.structs) == ["Device"] and p.kernels["k"].params[0].type.size == 16


def test_ctypes_for_nested_unions_and_anonymous_members():
    src = """
    typedef union { int i; float f; uchar bytes[4]; } Bits;
    typedef struct { char c; Bits b; union { short s; ushort u; }; struct { uchar lo, hi; } pair; } Holder;
    __kernel void k(Holder h, Bits b) {}
    """
    p = parse(src)
    Bits = struct_ctype(p.structs["Bits"])
    Holder = struct_ctype(p.structs["Holder"])
    assert ctypes.sizeof(Bits) == 4 and ctypes.sizeof(Holder) == p.structs["Holder"].size == 12
    b = Bits(f=1.0)
    assert b.i == 0x3F800000 and list(b.bytes) == [0, 0, 0x80, 0x3F]
    h = Holder(1, b)
    h.s = -2  # an anonymous union member is reached directly
    assert h.u == 0xFFFE and h.b.i == 0x3F800000 and Holder.pair.offset == 10
    assert "Bits(i=1065353216" in repr(b)
