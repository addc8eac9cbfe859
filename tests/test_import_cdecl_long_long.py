"""``long long`` in kernel files: 64 bits in CUDA and HIP, but not a 64-bit type in OpenCL C (the
spec reserves it for 128 bits; PoCL took 8 bytes, NVIDIA's OpenCL refused an 8-byte argument with
CL_INVALID_ARG_SIZE). A .cl file that uses it fails at import, saying to write long/ulong."""
from __future__ import annotations

import pytest

from pygpgpu_core import cdecl, kernel_files as kf
from pygpgpu_core.cdecl import CDeclError, Pointer


def _parse(src: str, dialect: str = "opencl"):
    return cdecl.parse_source(src, dialect, "k.cl" if dialect == "opencl" else "k.cu")


@pytest.mark.parametrize("decl, fix", [
    ("unsigned long long n", "ulong"),
    ("const long long n", "long"),
    ("long long int n", "long"),
    ("unsigned long long int n", "ulong"),
    ("__global long long* p", "long"),
    ("__global const unsigned long long* p", "ulong"),
])
def test_opencl_long_long_parameter_is_refused_with_the_fix(decl, fix):
    with pytest.raises(CDeclError) as info:
        _parse(f"__kernel void k(__global float* x,\n                {decl}) {{ }}")
    text = str(info.value)
    assert "k.cl:2: parameter 2 of kernel 'k'" in text, text
    assert "not a 64-bit integer in OpenCL C" in text and f"write {fix!r}" in text


def test_opencl_long_long_through_a_typedef_or_struct_member_is_refused_where_used():
    src = ("typedef unsigned long long u64;\n"
           "struct Span { long long first; int n; };\n"
           "__kernel void by_typedef(u64 n) { }\n"
           "__kernel void by_struct(struct Span s) { }\n")
    with pytest.raises(CDeclError, match=r"typedef u64: 'unsigned long long' is not a 64-bit integer.*write 'ulong'"):
        _parse(src.replace("__kernel void by_struct(struct Span s) { }\n", ""))
    with pytest.raises(CDeclError, match=r"member of struct Span: 'long long' is not a 64-bit integer.*write 'long'"):
        _parse(src.replace("__kernel void by_typedef(u64 n) { }\n", ""))


def test_opencl_long_and_ulong_stay_64_bit():
    k = _parse("__kernel void k(long a, ulong b, unsigned long c, __global long* p) { }").kernels["k"]
    types = [p.type.pointee if isinstance(p.type, Pointer) else p.type for p in k.params]
    assert [(t.dtype, t.size) for t in types] == [("int64", 8), ("uint64", 8), ("uint64", 8), ("int64", 8)]


@pytest.mark.parametrize("dialect", ["cuda", "hip"])
@pytest.mark.parametrize("spelling, dtype", [("long long", "int64"), ("unsigned long long int", "uint64")])
def test_cuda_and_hip_long_long_is_8_bytes(dialect, spelling, dtype):
    src = f'extern "C" __global__ void k({spelling} v, {spelling}* p) {{ }}'
    v, p = cdecl.parse_source(src, dialect, "k.cu").kernels["k"].params
    assert (v.type.dtype, v.type.size) == (dtype, 8) and p.type.pointee.dtype == dtype


def test_importing_a_cl_file_with_long_long_leaves_that_kernel_out_naming_file_line_and_fix(tmp_path):
    path = tmp_path / "offsets.cl"
    path.write_text("// 64-bit offsets\n__kernel void add(__global ulong* out, unsigned long long base) { }\n"
                    "__kernel void fine(__global ulong* out, ulong base) { }\n")
    with pytest.warns(kf.KernelFileWarning, match="kernel 'add' is left out"):
        m = kf.load(path)
    assert m.__kernels__ == ["fine"]
    with pytest.raises(AttributeError) as info:
        m.add
    text = str(info.value)
    assert f"{path}:2:" in text and "'unsigned long long' is not a 64-bit integer in OpenCL C" in text
    assert "write 'ulong'" in text
