"""Packed and aligned structs in kernel files (issue 13, item 10): ``#pragma pack(push, n)`` /
``pop`` / ``pack(n)`` / ``pack()``, ``__attribute__((packed))`` on structs and members and
``aligned(n)`` get the device's layout, checked against the device compiler itself: an OpenCL
probe kernel reports ``sizeof`` and every member offset (run here on PoCL), and NVRTC/hiprtc
compile ``static_assert``s of the same numbers. Forms whose effect is not modelled are refused
at import."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from pygpgpu_core import kernel_files as kf
from pygpgpu_translate._dialects import dialect_for

STRUCTS = """
#pragma pack(push, 1)
typedef struct { char c; int i; short s; } P1;
struct P1b { int a; char b; float c; double d; };
typedef struct P1b P1b;
#pragma pack(pop)
#pragma pack(push, 2)
typedef struct { char c; int i; double d; char e; } P2;
#pragma pack(push, 4)
typedef struct { char c; double d; short s; } P4;
#pragma pack(pop)
typedef struct { char c; long l; } P2b;
#pragma pack(pop)
typedef struct { char c; int i; } Natural;
typedef struct __attribute__((packed)) { char c; int i; double d; } AttrPacked;
typedef struct { char c; int i; } __attribute__((packed)) TailPacked;
typedef struct { char c; int i __attribute__((aligned(8))); } MemberAligned;
typedef struct __attribute__((aligned(16))) { char c; int i; } StructAligned;
typedef struct { char c; int i __attribute__((packed)); short s; } MemberPacked;
#pragma pack(push, 1)
typedef struct { char c; float4 v; int arr[3]; Natural n; } PackedNested;
typedef struct { char c; int i __attribute__((aligned(8))); } PackOverAligned;
typedef struct __attribute__((aligned(8))) { char c; int i; } PackedStructAligned;
#pragma pack(pop)
#pragma pack(4)
typedef struct { char c; double d; } Set4;
#pragma pack()
typedef struct { char c; double d; } AfterReset;
typedef union { char c; double d; int i[3]; } U;
#pragma pack(push, 1)
typedef union { char c[5]; int i; } PU;
typedef struct { char c; U u; } PackedWithUnion;
#pragma pack(pop)
"""

NAMES = ["P1", "P1b", "P2", "P4", "P2b", "Natural", "AttrPacked", "TailPacked", "MemberAligned", "StructAligned",
         "MemberPacked", "PackedNested", "PackOverAligned", "PackedStructAligned", "Set4", "AfterReset", "U", "PU",
         "PackedWithUnion"]

ECHO = """
__kernel void echo(P1 p, P2 q, __global long* out)
{
    out[0] = p.c; out[1] = p.i; out[2] = p.s;
    out[3] = q.c; out[4] = q.i; out[5] = (long)q.d; out[6] = q.e;
}
"""


def _layouts(path):
    """name -> (size, [(field, offset)]) as parsed, plus the ctypes classes' own numbers."""
    m = kf.load(path)
    parsed = m.__kernel_file__.parsed.structs
    out = {}
    for name in NAMES:
        s = parsed[name]
        fields = [(f.name, f.offset) for f in s.fields]
        cls = getattr(m, name)
        assert ctypes.sizeof(cls) == s.size, name
        for f, off in fields:
            assert getattr(cls, f).offset == off, (name, f)
        out[name] = (s.size, fields)
    return m, out


def _probe_source(layouts, dialect):
    lines = []
    k = 0
    for name, (_size, fields) in layouts.items():
        if dialect == "opencl":
            lines.append(f"    {{ {name} s; out[{k}] = sizeof({name});")
            k += 1
            for f, _off in fields:
                lines.append(f"      out[{k}] = (ulong)((char*)&s.{f} - (char*)&s);")
                k += 1
            lines.append("    }")
        else:
            size, _ = layouts[name]
            lines.append(f"static_assert(sizeof({name}) == {size}, \"sizeof {name}\");")
            for f, off in fields:
                offset = dialect_for(dialect).offsetof.format(type=name, member=f)   # NVRTC 13.0: no __builtin_offsetof
                lines.append(f"static_assert({offset} == {off}, \"{name}.{f}\");")
    if dialect == "opencl":
        return "__kernel void probe(__global ulong* out)\n{\n" + "\n".join(lines) + "\n}\n", k
    return "\n".join(lines) + '\nextern "C" __global__ void probe(int* p) { *p = 1; }\n', k


def _expected(layouts):
    out = []
    for size, fields in layouts.values():
        out.append(size)
        out.extend(off for _f, off in fields)
    return out


def test_layouts_match_the_opencl_device(tmp_path):
    from conftest import first_device
    dev = first_device("opencl")
    src = tmp_path / "structs.cl"
    src.write_text(STRUCTS)
    _, layouts = _layouts(src)
    probe, count = _probe_source(layouts, "opencl")
    src.write_text(STRUCTS + probe)
    m = kf.load(src)
    out = np.zeros(count, np.uint64)
    m.probe[(1, 1)][dev](out)
    assert out.tolist() == _expected(layouts)


def test_packed_structs_pass_by_value_with_the_device_layout(tmp_path):
    from conftest import first_device
    dev = first_device("opencl")
    src = tmp_path / "echo.cl"
    src.write_text(STRUCTS + ECHO)
    m = kf.load(src)
    assert ctypes.sizeof(m.P1) == 7 and m.P1.i.offset == 1 and m.P1.s.offset == 5
    out = np.zeros(7, np.int64)
    m.echo[(1, 1)][dev](m.P1(c=5, i=-70000, s=300), m.P2(c=1, i=123456, d=2.5e9, e=9), out)
    assert out.tolist() == [5, -70000, 300, 1, 123456, 2500000000, 9]


def _cuda_structs():
    return STRUCTS.replace("float4 v;", "float v[4];")


def test_layouts_match_nvrtc(tmp_path, nvrtc_compile):
    src = tmp_path / "structs.cu"
    src.write_text(_cuda_structs())
    _, layouts = _layouts(src)
    probe, _ = _probe_source(layouts, "cuda")
    nvrtc_compile(_cuda_structs() + probe, arch="sm_90")     # a wrong number fails the static_assert


def test_layouts_match_hiprtc(tmp_path, hiprtc_compile):
    src = tmp_path / "structs.hip"
    src.write_text(_cuda_structs())
    _, layouts = _layouts(src)
    probe, _ = _probe_source(layouts, "hip")
    hiprtc_compile("#include <hip/hip_runtime.h>\n" + _cuda_structs() + probe, "gfx1030")


@pytest.mark.parametrize("pragma, message", [
    ("#pragma pack(push, named, 1)", "named pack stack entries"),
    ("#pragma pack(3)", "must be one of"),
    ("#pragma pack(pop)", "without a matching"),
    ("#pragma pack 1", "not understood"),
])
def test_unmodelled_pragma_pack_forms_are_refused_at_import(tmp_path, pragma, message):
    src = tmp_path / "bad.cl"
    src.write_text(f"{pragma}\ntypedef struct {{ char c; int i; }} S;\n__kernel void k(__global S* s) {{ }}\n")
    with pytest.raises(ImportError, match=message):
        kf.load(src)


def test_pragma_pack_inside_a_struct_makes_it_unusable(tmp_path):
    src = tmp_path / "inside.cl"
    src.write_text("typedef struct {\n char c;\n#pragma pack(push, 1)\n int i;\n#pragma pack(pop)\n} S;\n"
                   "__kernel void k(__global int* x) { }\n")
    m = kf.load(src)
    with pytest.raises(AttributeError, match="pragma pack inside a struct"):
        m.S
