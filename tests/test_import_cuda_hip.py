"""Imported .cu / .hip files: parsed here, compiled with NVRTC / hiprtc (no GPU needed), and run
on a CUDA device when one is present. Struct layouts are checked by the vendor compilers
themselves: the parsed sizes, alignments and offsets become static_asserts in the source."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import cdecl
from pygpgpu_core import kernel_files as kf
from pygpgpu_core import registry
from pygpgpu_core.errors import CompileError, GPGPUError
from conftest import skip_no_device

DATA = Path(__file__).parent / "kernel_files"


# NVRTC's EDG front end spells offsetof as __INTADDR__ (NVRTC 13.0 has no __builtin_offsetof; 13.5
# has both, and both ship no <cstddef>); hiprtc is clang, which has __builtin_offsetof.
OFFSETOF = """
#ifdef __CUDACC_RTC__
#define LAYOUT_OFFSETOF(T, m) __INTADDR__(&(((T*)0)->m))
#else
#define LAYOUT_OFFSETOF(T, m) __builtin_offsetof(T, m)
#endif
"""


def layout_asserts(parsed: cdecl.ParsedFile) -> str:
    lines = [OFFSETOF]
    for name, s in parsed.structs.items():
        lines.append(f'static_assert(sizeof({name}) == {s.size}, "sizeof {name}");')
        lines.append(f'static_assert(alignof({name}) == {s.align}, "alignof {name}");')
        for f in s.fields:
            lines.append(f'static_assert(LAYOUT_OFFSETOF({name}, {f.name}) == {f.offset}, "{name}.{f.name}");')
    return "\n".join(lines) + "\n"


def test_cu_file_parses_and_compiles_with_nvrtc(nvrtc_compile):
    parsed = cdecl.parse_file(DATA / "vecadd.cu", "cuda")
    assert list(parsed.kernels) == ["vecadd", "bodies_mass"]
    source = cdecl.compile_source(DATA / "vecadd.cu")
    cubin = nvrtc_compile(source, "sm_90")
    assert cubin[:4] == b"\x7fELF" and b"vecadd" in cubin and b"bodies_mass" in cubin


def test_cuda_struct_layout_matches_nvrtc(nvrtc_compile):
    parsed = cdecl.parse_file(DATA / "vecadd.cu", "cuda")
    body = parsed.structs["Body"]
    assert (body.size, body.align) == (48, 16)
    source = cdecl.compile_source(DATA / "vecadd.cu") + layout_asserts(parsed)
    assert nvrtc_compile(source, "sm_90")[:4] == b"\x7fELF"
    # the check has teeth: a wrong offset does not compile
    with pytest.raises(CompileError, match="Body.mass"):
        nvrtc_compile(source + 'static_assert(LAYOUT_OFFSETOF(Body, mass) == 16, "Body.mass");\n', "sm_90")


def test_cuda_vector_layouts_match_nvrtc(nvrtc_compile):
    checks = []
    for base in ("char", "short", "int", "float", "double", "longlong"):
        for n in (1, 2, 3, 4):
            v = cdecl.vector_type(base, n, "cuda")
            checks.append(f'static_assert(sizeof({base}{n}) == {v.size} && alignof({base}{n}) == {v.align}, '
                          f'"{base}{n}");')
    src = "\n".join(checks) + '\nextern "C" __global__ void k(float* x) { x[0] = 1.0f; }\n'
    assert nvrtc_compile(src, "sm_90")[:4] == b"\x7fELF"


def test_hip_file_parses_and_compiles_with_hiprtc(hiprtc_compile):
    parsed = cdecl.parse_file(DATA / "vecadd.hip", "hip")
    assert list(parsed.kernels) == ["vecadd", "body_x"]
    assert [p.access for p in parsed.kernels["body_x"].params] == ["read", "readwrite", "value"]
    source = cdecl.compile_source(DATA / "vecadd.hip") + layout_asserts(parsed)
    code = hiprtc_compile(source, "gfx1030")
    assert code[:4] == b"\x7fELF"
    with pytest.raises(CompileError, match="Body.extra"):
        hiprtc_compile(source + 'static_assert(LAYOUT_OFFSETOF(Body, extra) == 16, "Body.extra");\n', "gfx1030")


def test_hip_vector_layouts_match_hiprtc(hiprtc_compile):
    checks = ["#include <hip/hip_runtime.h>"]
    for base in ("char", "short", "int", "float", "double", "longlong"):
        for n in (1, 2, 3, 4):
            v = cdecl.vector_type(base, n, "hip")
            checks.append(f'static_assert(sizeof({base}{n}) == {v.size} && alignof({base}{n}) == {v.align}, '
                          f'"{base}{n}");')
    src = "\n".join(checks) + '\nextern "C" __global__ void k(float* x) { x[0] = 1.0f; }\n'
    assert hiprtc_compile(src, "gfx1030")[:4] == b"\x7fELF"


def test_opencl_struct_layout_matches_the_opencl_compiler():
    """The same proof for OpenCL C (no static_assert there: a negative array size fails)."""
    try:
        dev = registry.get_device("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device on this machine: {exc}")
    parsed = cdecl.parse_file(DATA / "particles.cl", "opencl")
    checks = []
    for i, (name, s) in enumerate(parsed.structs.items()):
        spelled = f"struct {name}" if name == s.tag else name
        checks.append(f"typedef char size_{i}[sizeof({spelled}) == {s.size} ? 1 : -1];")
        checks.append(f"typedef char align_{i}[__alignof__({spelled}) == {s.align} ? 1 : -1];")
        for f in s.fields:
            checks.append(f"typedef char off_{i}_{f.name}[__builtin_offsetof({spelled}, {f.name}) == {f.offset} "
                          f"? 1 : -1];")
    source = cdecl.compile_source(DATA / "particles.cl") + "\n".join(checks) + "\n"
    dev.context().program(source)  # raises CompileError on any mismatch
    with pytest.raises(CompileError):
        dev.context().program(source + "typedef char wrong[sizeof(Particle) == 32 ? 1 : -1];\n")


def test_cu_and_hip_import_through_finders(tmp_path):
    shutil.copy(DATA / "vecadd.cu", tmp_path / "cukern.cu")
    shutil.copy(DATA / "vecadd.hip", tmp_path / "hipkern.hip")
    had = set(kf.installed())
    kf.install("cu")
    kf.install("hip")
    sys.path.insert(0, str(tmp_path))
    try:
        import cukern
        import hipkern

        assert cukern.__kernels__ == ["vecadd", "bodies_mass"] and cukern.__dialect__ == "cuda"
        assert hipkern.__kernels__ == ["vecadd", "body_x"] and hipkern.Body.dtype.itemsize == 64
        assert (tmp_path / "__cucache__" / "cukern_cu.meta.json").is_file()
        assert (tmp_path / "__hipcache__" / "hipkern_hip.meta.json").is_file()
        assert "def __call__(self, a: npt.NDArray[np.float32] | DeviceArray" in (tmp_path / "cukern.pyi").read_text()
        with pytest.raises(ValueError, match="cuda source and cannot run on the 'opencl' backend"):
            cukern.vecadd["opencl"](np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.float32), 1)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("cukern", None)
        sys.modules.pop("hipkern", None)
        for kind in ("cu", "hip"):
            if kind not in had:
                kf.uninstall(kind)


def test_cu_file_runs_on_a_cuda_device(tmp_path):
    try:
        registry.get_device("cuda")
    except GPGPUError as exc:
        skip_no_device("cuda", f"no CUDA device on this machine: {exc}")
    shutil.copy(DATA / "vecadd.cu", tmp_path)
    m = kf.load(tmp_path / "vecadd.cu")
    a = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(a)
    m.vecadd(a, a, out, 1000)
    np.testing.assert_array_equal(out, 2 * a)
    out[:] = 0
    m.vecadd[(1000, 128)](a, a, out, 1000)
    np.testing.assert_array_equal(out, 2 * a)
    bodies = np.zeros(300, m.Body.dtype)
    bodies["mass"] = np.arange(300, dtype=np.float32)
    total = np.zeros(1, np.float32)
    m.bodies_mass(bodies, total, 300)
    assert total[0] == np.arange(300).sum()
    # the CUBIN is kept beside the source, keyed by device and compiler/driver version
    assert list((tmp_path / "__cucache__").glob("vecadd_cu.cuda-*.bin"))
    again = kf.load(tmp_path / "vecadd.cu")  # a fresh module (from the binary where the backend can load one)
    out[:] = 0
    again.vecadd(a, a, out, 1000)
    np.testing.assert_array_equal(out, 2 * a)
