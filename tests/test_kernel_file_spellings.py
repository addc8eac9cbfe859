"""Kernel files as people write them: every qualifier spelling of OpenCL C, CUDA and HIP,
parameters named like Python keywords, kernels named like module dunders, a kernel whose type
is unknown, a file without kernels. Run on PoCL; the .cu/.hip files compile with NVRTC/hiprtc."""
from __future__ import annotations

import ast
import inspect
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import cdecl
from pygpgpu_core import kernel_files as kf
from pygpgpu_core.cdecl import Pointer
from pygpgpu_core.protocols import LocalMemory
from conftest import assert_code_object, assert_cubin

DATA = Path(__file__).parent / "kernel_files"


def _copy(tmp_path: Path, name: str) -> Path:
    shutil.copy(DATA / name, tmp_path / name)
    return tmp_path / name


def _stub_call_params(stub: str, kernel: str) -> "list[str]":
    """The parameter names of ``_<kernel>_kernel.__call__`` in a generated stub (after self)."""
    tree = ast.parse(stub)          # the stub must be valid Python in the first place
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == f"_{kernel}_kernel")
    call = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__call__")
    return [a.arg for a in call.args.args[1:]]


# ---- parameters named like Python keywords -----------------------------------------------------

def test_keyword_named_parameters_are_called_by_position_and_by_keyword_with_an_underscore(tmp_path, cl_device):
    m = kf.load(_copy(tmp_path, "spellings.cl"))
    stub = (tmp_path / "spellings.pyi").read_text()
    expected = {"clamp_copy": ["in_", "out", "limits", "n"],
                "scale": ["lambda_", "pass_", "def_", "len", "scratch"],
                "add_const": ["a", "b", "self_", "n"]}
    for name, keywords in expected.items():
        assert list(inspect.signature(m.kernels[name]).parameters) == keywords
        assert _stub_call_params(stub, name) == keywords          # exactly the names the .pyi gives

    rng = np.random.default_rng(3)
    x = rng.standard_normal(64).astype(np.float32)
    by_position = np.zeros_like(x)
    m.scale[(64, 16)](x, by_position, 2.5, 60, LocalMemory(16 * 4))
    want = np.where(np.arange(64) < 60, x * np.float32(2.5), 0).astype(np.float32)
    np.testing.assert_array_equal(by_position, want)
    by_keyword = np.zeros_like(x)
    m.scale[(64, 16)](lambda_=x, pass_=by_keyword, def_=2.5, len=60, scratch=LocalMemory(16 * 4))
    np.testing.assert_array_equal(by_keyword, want)
    mixed = np.zeros_like(x)
    m.add_const(x, np.array([1.5], np.float32), n=64, self_=mixed)
    np.testing.assert_array_equal(mixed, x + np.float32(1.5))

    with pytest.raises(TypeError, match=r"unexpected argument 'lambda' \(a Python keyword: pass it as lambda_="):
        m.scale[(64, 16)](**{"lambda": x, "pass_": by_keyword, "def_": 1.0, "len": 60, "scratch": LocalMemory(64)})


def test_keyword_renames_stay_distinct_from_parameters_already_spelled_so():
    p = cdecl.parse_source("__kernel void k(__global float* in, __global float* in_, int self) { }", "opencl", "k.cl")
    assert kf._names.python_names([q.name for q in p.kernels["k"].params]) == ["in__", "in_", "self_"]


# ---- qualifier spellings ---------------------------------------------------------------------------

@pytest.mark.parametrize("param, access, space", [
    ("__global __const float* p", "read", "global"),
    ("__const __global float* p", "read", "global"),
    ("const __global float* p", "read", "global"),
    ("global const float* p", "read", "global"),
    ("__global float __const* p", "read", "global"),
    ("__constant float* p", "read", "constant"),
    ("constant float* p", "read", "constant"),
    ("__global float* restrict p", "readwrite", "global"),
    ("__global float* __restrict p", "readwrite", "global"),
    ("__global float* __restrict__ p", "readwrite", "global"),
    ("__global volatile float* p", "readwrite", "global"),
    ("__global float* const p", "readwrite", "global"),
    ("__global float* __const p", "readwrite", "global"),
    ("__local float* p", "local", "local"),
    ("local float* p", "local", "local"),
    ("__private int p", "value", None),
    ("private int p", "value", None),
    ("__const int p", "value", None),
    ("const int p __attribute__((unused))", "value", None),
    ("__global float* p __attribute__((aligned(16)))", "readwrite", "global"),
])
def test_every_opencl_qualifier_spelling_parses(param, access, space):
    k = cdecl.parse_source(f"__kernel void k({param}) {{ }}", "opencl", "k.cl").kernels["k"]
    (p,) = k.params
    assert p.name == "p" and p.access == access
    assert (p.type.address_space if isinstance(p.type, Pointer) else None) == space


@pytest.mark.parametrize("qualifier", ["__read_only", "read_only", "__write_only", "write_only", "__read_write",
                                       "read_write"])
def test_opencl_access_qualifiers_parse_and_leave_only_the_image_kernel_out(qualifier):
    p = cdecl.parse_source(f"__kernel void img({qualifier} image2d_t im, __global float* o) {{ }}\n"
                           "__kernel void ok(__global float* o) { }\n", "opencl", "k.cl")
    assert list(p.kernels) == ["ok"] and "image2d_t arguments are not supported" in p.skipped["img"]


def test_opencl_qualifier_spellings_run_on_the_device(tmp_path, cl_device):
    """spellings.cl uses __const, global, __constant, volatile, restrict, __attribute__s and
    reqd_work_group_size(4, 1, 1), which is applied without a local size being given."""
    m = kf.load(_copy(tmp_path, "spellings.cl"))
    assert [p.access for p in m.clamp_copy.params] == ["read", "readwrite", "read", "value"]
    x = np.linspace(-2, 2, 24, dtype=np.float32)
    out = np.zeros_like(x)
    limits = np.zeros(1, m.Range.dtype)
    limits["lo"], limits["hi"] = -0.5, 1.25
    m.clamp_copy(x, out, limits, 24)
    np.testing.assert_array_equal(out, np.clip(x, np.float32(-0.5), np.float32(1.25)))
    with pytest.raises(ValueError, match=r"reqd_work_group_size\(4, 1, 1\)"):
        m.clamp_copy[(24, 8)](x, out, limits, 24)
    m.exec_fill(out, 2.5)                                   # __kernel_exec(8, float4) void exec_fill(...)
    np.testing.assert_array_equal(out, np.full(24, 2.5, np.float32))


def test_cuda_qualifier_spellings_parse_and_compile_with_nvrtc(nvrtc_compile, tmp_path):
    parsed = cdecl.parse_file(DATA / "spellings.cu", "cuda")
    assert list(parsed.kernels) == ["scale", "shift", "fill"]     # fill: __grid_constant__ parameter
    assert [p.access for p in parsed.kernels["fill"].params] == ["readwrite", "value"]
    assert [p.access for p in parsed.kernels["scale"].params] == ["read", "readwrite", "value", "value"]
    assert [p.access for p in parsed.kernels["shift"].params] == ["read", "readwrite", "value", "value"]
    source = cdecl.compile_source(DATA / "spellings.cu")
    assert_cubin(nvrtc_compile(source, "sm_90"), source)
    m = kf.load(_copy(tmp_path, "spellings.cu"))
    assert list(inspect.signature(m.shift).parameters) == ["def_", "pass_", "n", "self_"]
    assert _stub_call_params((tmp_path / "spellings.pyi").read_text(), "shift") == ["def_", "pass_", "n", "self_"]


def test_hip_qualifier_spellings_parse_and_compile_with_hiprtc(hiprtc_compile):
    parsed = cdecl.parse_file(DATA / "spellings.hip", "hip")
    assert list(parsed.kernels) == ["scale", "shift"]
    assert [p.name for p in parsed.kernels["scale"].params] == ["in", "out", "lambda", "len"]
    assert [p.access for p in parsed.kernels["shift"].params] == ["read", "readwrite", "value", "value"]
    source = cdecl.compile_source(DATA / "spellings.hip")
    assert_code_object(hiprtc_compile(source, "gfx1030"), source)


# ---- an unknown type takes down only its kernel -------------------------------------------------

def test_unknown_type_leaves_out_only_the_kernel_that_uses_it(tmp_path, cl_device):
    path = _copy(tmp_path, "partial.cl")
    with pytest.warns(kf.KernelFileWarning, match=r"kernel 'count_hits' is left out.*partial.cl:13:.*counter32_t"):
        m = kf.load(path)
    assert m.__kernels__ == ["doubled", "negated"]
    x = np.arange(-5, 45, dtype=np.int32)
    out = np.zeros_like(x)
    m.doubled(x, out, len(x))
    np.testing.assert_array_equal(out, 2 * x)
    m.negated(x, out, len(x))
    np.testing.assert_array_equal(out, -x)
    with pytest.raises(AttributeError) as info:
        m.count_hits
    text = str(info.value)
    assert "kernel 'count_hits' of partial.cl" in text and f"{path}:13:" in text and "unknown type 'counter32_t'" in text
    assert not hasattr(m, "count_hits") and "count_hits" not in m.kernels
    with pytest.raises(cdecl.CDeclError, match="counter32_t"):   # strict parsing still refuses the file
        cdecl.parse_file(path, "opencl")
    with pytest.warns(kf.KernelFileWarning, match="kernel 'count_hits' is left out"):
        again = kf.load(path)                                   # from the metadata cache: the same warning
    assert again.__kernels__ == ["doubled", "negated"] and "counter32_t" in again.__kernel_file__.parsed.broken[
        "count_hits"]


# ---- a file without kernels ------------------------------------------------------------------------

def test_a_file_without_kernels_warns_naming_it(tmp_path):
    path = _copy(tmp_path, "nokernels.cl")
    with pytest.warns(kf.KernelFileWarning, match=rf"{path}: imported with nothing to call: it declares no kernel"):
        m = kf.load(path)
    assert m.__kernels__ == [] and m.Point.dtype.itemsize == 8


def test_a_file_whose_kernels_all_need_extern_c_warns_saying_so(tmp_path):
    path = tmp_path / "mangled.cu"
    path.write_text("__global__ void k(float* x) { x[0] = 1.0f; }\n")
    with pytest.warns(kf.KernelFileWarning, match=r"no kernel of it can be called from Python .*extern \"C\""):
        kf.load(path)


# ---- kernels named like module dunders --------------------------------------------------------------

def test_kernels_named_like_module_dunders_stay_reachable(tmp_path, cl_device):
    path = _copy(tmp_path, "dunders.cl")
    m = kf.load(path)
    assert m.__file__ == str(path) and m.__name__ == "dunders"
    assert m.__kernels__ == ["__file__", "__kernels__", "__name__", "plain"]
    assert list(m.kernels) == m.__kernels__ and m.kernels["plain"] is m.plain
    out = np.zeros(8, np.int32)
    for name, value in [("__file__", 1), ("__kernels__", 2), ("__name__", 3), ("plain", 4)]:
        m.kernels[name](out)
        np.testing.assert_array_equal(out, np.full(8, value, np.int32))
    stub = (tmp_path / "dunders.pyi").read_text()
    top = {n.target.id for n in ast.parse(stub).body if isinstance(n, ast.AnnAssign)}
    assert "kernels" in top and "plain" in top and "__file__" not in top and "__name__" not in top
    back = pickle.loads(pickle.dumps(m.kernels["__name__"][(8, 4)]))   # by reference, dunder name and all
    out[:] = 0
    back(out)
    np.testing.assert_array_equal(out, np.full(8, 3, np.int32))


def test_a_kernel_called_kernels_keeps_its_name_and_the_mapping_moves_aside(tmp_path):
    path = tmp_path / "named.cl"
    path.write_text("__kernel void kernels(__global int* out) { out[0] = 1; }\n")
    m = kf.load(path)
    assert isinstance(m.kernels, kf.FileKernel) and m.__kernel_file__.kernels["kernels"] is m.kernels
    assert "kernels: Mapping" not in (tmp_path / "named.pyi").read_text()


def test_struct_members_named_like_keywords_use_the_stubs_names(tmp_path, cl_device):
    path = tmp_path / "pairs.cl"
    path.write_text("typedef struct { float in; int pass; float self; } Pair;\n"
                    "__kernel void pair_sum(Pair p, __global float* out) { out[get_global_id(0)] = p.in + p.pass "
                    "+ p.self; }\n")
    m = kf.load(path)
    stub = ast.parse((tmp_path / "pairs.pyi").read_text())
    cls = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Pair")
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert [a.arg for a in init.args.args[1:]] == ["in_", "pass_", "self_"]
    p = m.Pair(in_=1.5, pass_=20, self_=0.25)
    assert (p.in_, p.pass_, p.self_) == (1.5, 20, 0.25) and getattr(p, "in") == 1.5
    p.in_ = 2.5
    out = np.zeros(4, np.float32)
    m.pair_sum(p, out)
    np.testing.assert_array_equal(out, np.full(4, 2.5 + 20 + 0.25, np.float32))
    with pytest.raises(TypeError, match=r"Pair has no member 'pas' \(members: in_, pass_, self_\)"):
        m.Pair(pas=1)       # a misspelt member is refused, not stored beside the struct
