"""The kernel-file parser asks a description of the file's language (cdecl._languages: OpenCL
C, CUDA C++, HIP C++) instead of comparing backend names: each difference is a field of the
``Language``, looked up once by name. A language described by those fields alone, under a name
the parser has never seen, parses as the language it copies."""
from __future__ import annotations

import ctypes
import dataclasses
from pathlib import Path

import pytest

from pygpgpu_core import cdecl
from pygpgpu_core.cdecl import CDeclError, LANGUAGES, Language, language

DATA = Path(__file__).parent / "kernel_files"
CU = '''
struct Body { float3 pos; double4 vel; } __attribute__((aligned(64)));
extern "C" __global__ void step(Body* b, long n, long long m) { }
__global__ void mangled(float* x) { }
#ifdef __CUDACC__
extern "C" __global__ void cuda_only(int k) { }
#endif
#ifdef __HIPCC__
extern "C" __global__ void hip_only(int k) { }
#endif
'''


def _summary(p):
    return ({name: [(x.name, cdecl.c_name(x.type), x.type.size) for x in k.params] for name, k in p.kernels.items()},
            {name: (s.size, s.align, [(f.name, f.offset) for f in s.fields]) for name, s in p.structs.items()},
            p.skipped)


def test_each_language_is_one_description_looked_up_by_name():
    assert sorted(LANGUAGES) == ["cuda", "hip", "opencl"]          # the one table: no snapshot of the names
    assert not hasattr(cdecl, "DIALECTS")
    for name, lang in LANGUAGES.items():
        assert isinstance(lang, Language) and lang.name == name and language(name) is lang and language(lang) is lang
    with pytest.raises(ValueError, match="unknown kernel language 'metal'; expected one of opencl, cuda, hip"):
        cdecl.parse_source("__kernel void k() { }", "metal")


def test_the_differences_are_fields():
    cl, cu, hip = LANGUAGES["opencl"], LANGUAGES["cuda"], LANGUAGES["hip"]
    assert cl.long_long_reserved and not cu.long_long_reserved and not hip.long_long_reserved
    assert cl.long_bytes == 8 and cu.long_bytes == hip.long_bytes == ctypes.sizeof(ctypes.c_long)
    assert cl.kernel_words == {"__kernel", "kernel", "__kernel_exec", "kernel_exec"} and cu.kernel_words == hip.kernel_words == {"__global__"}
    assert cu.kernels_need_extern_c and hip.kernels_need_extern_c and not cl.kernels_need_extern_c
    # vectors: OpenCL pads 3 to 4 slots; CUDA caps alignment at 16, HIP does not
    f3 = {n: cdecl.vector_type("float", 3, n) for n in LANGUAGES}
    d4 = {n: cdecl.vector_type("double", 4, n) for n in LANGUAGES}
    assert [(f3[n].size, f3[n].align) for n in ("opencl", "cuda", "hip")] == [(16, 16), (12, 4), (12, 4)]
    assert [(d4[n].size, d4[n].align) for n in ("opencl", "cuda", "hip")] == [(32, 32), (32, 16), (32, 32)]
    assert "__CUDACC__" in cu.predefined and "__HIPCC__" in hip.predefined and "__OPENCL_VERSION__" in cl.predefined


@pytest.mark.parametrize("base", ["cuda", "hip"])
def test_a_language_under_a_new_name_parses_like_the_one_it_copies(base):
    """Nothing in the parser compares names: a copy of CUDA C++ (or HIP C++) named 'relaycpp'
    gives the same kernels, layouts, predefined branches and skipped mangled kernels."""
    copy = dataclasses.replace(LANGUAGES[base], name="relaycpp")
    mine, theirs = cdecl.parse_source(CU, copy, "k.cu"), cdecl.parse_source(CU, base, "k.cu")
    assert _summary(mine) == _summary(theirs)
    assert mine.dialect == "relaycpp" and theirs.dialect == base
    assert ("cuda_only" in mine.kernels) == (base == "cuda") and ("hip_only" in mine.kernels) == (base == "hip")
    assert "mangled" in mine.skipped and "extern \"C\"" in mine.skipped["mangled"]
    # NVRTC ignores the aligned attribute after the brace, hiprtc applies it
    assert mine.structs["Body"].align == (16 if base == "cuda" else 64)


def test_an_opencl_copy_refuses_long_long_by_its_field_alone():
    strict = dataclasses.replace(LANGUAGES["opencl"], name="mycl")
    with pytest.raises(CDeclError, match="not a 64-bit integer in OpenCL C"):
        cdecl.parse_source("__kernel void k(long long n) { }", strict, "k.cl")
    lenient = dataclasses.replace(strict, long_long_reserved=False)
    k = cdecl.parse_source("__kernel void k(long long n) { }", lenient, "k.cl").kernels["k"]
    assert (k.params[0].type.dtype, k.params[0].type.size) == ("int64", 8)


def test_files_parse_the_same_by_name_and_by_description():
    for path, name in [("vecadd.cl", "opencl"), ("particles.cl", "opencl"), ("vecadd.cu", "cuda"),
                       ("vecadd.hip", "hip")]:
        assert _summary(cdecl.parse_file(DATA / path, name)) == _summary(cdecl.parse_file(DATA / path, LANGUAGES[name]))
