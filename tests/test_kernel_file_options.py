"""Build options of kernel files: given at import (``load(path, options=...)``, ``climport(path,
options=...)``) or in the file (``// pygpgpu: options ...``); they reach the compiler, the
declaration parser's ``#if`` and the compiled binary's cache key. Run on PoCL; the CUDA/HIP
forms compile with NVRTC/hiprtc."""
from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import cdecl
from pygpgpu_core import kernel_files as kf
from pygpgpu_core.errors import CompileError
from conftest import assert_code_object, assert_cubin

DATA = Path(__file__).parent / "kernel_files"


@pytest.fixture
def options_cl(tmp_path) -> Path:
    shutil.copy(DATA / "options.cl", tmp_path / "options.cl")
    return tmp_path / "options.cl"


def test_in_file_options_reach_the_compiler_and_the_module(options_cl, cl_device):
    m = kf.load(options_cl)
    assert m.__kernel_file__.parsed.options == ["-DSCALE=3"] and m.SCALE == 3
    x = np.arange(50, dtype=np.float32) - 7
    out = np.zeros_like(x)
    m.scaled(x, out, len(x))
    np.testing.assert_array_equal(out, 3 * x)
    assert "offset" not in m.__kernels__      # #if defined(WITH_OFFSET) && WITH_OFFSET > 0 is false


def test_given_options_follow_the_files_and_decide_the_declarations(options_cl, cl_device):
    m = kf.load(options_cl, options=["-DUSE_DOUBLE", "-DSCALE=5", "-D", "WITH_OFFSET=2"])
    assert m.__kernel_file__.parsed.options == ["-DSCALE=3", "-DUSE_DOUBLE", "-DSCALE=5", "-D", "WITH_OFFSET=2"]
    assert m.scaled.prototype.startswith("__kernel void scaled(__global const real* x")
    x = np.linspace(-1, 1, 40)                               # float64: real is double now
    out = np.zeros_like(x)
    m.scaled(x, out, len(x))
    np.testing.assert_array_equal(out, 5 * x)
    with pytest.raises(TypeError, match="expects an array of float64"):
        m.scaled(x.astype(np.float32), out.astype(np.float32), len(x))
    m.offset(out, len(out))                                  # exists only under WITH_OFFSET > 0
    np.testing.assert_array_equal(out, 5 * x + 2)


def test_options_as_one_string(options_cl, cl_device):
    m = kf.load(options_cl, options="-DSCALE=4 -DWITH_OFFSET=0")
    assert m.__kernel_file__.parsed.options == ["-DSCALE=3", "-DSCALE=4", "-DWITH_OFFSET=0"]
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    m.scaled(x, out, 8)
    np.testing.assert_array_equal(out, 4 * x)
    assert m.__kernels__ == ["scaled"] and m.SCALE == 4
    with pytest.raises(TypeError, match="build options must be strings"):
        kf.load(options_cl, options=["-DA=1", 2])


def test_a_build_error_under_options_names_the_real_file_and_line(options_cl, cl_device):
    m = kf.load(options_cl, options=["-DSCALE=undefined_name"])
    with pytest.raises(CompileError) as info:
        m.scaled(np.zeros(4, np.float32), np.zeros(4, np.float32), 4)
    assert f"{options_cl}:12:" in str(info.value) and "undefined_name" in str(info.value)


def test_climport_loads_a_path_with_options(options_cl, cl_device):
    import pygpgpu

    m = pygpgpu.climport(options_cl, options=["-DSCALE=7"])
    x = np.arange(10, dtype=np.float32)
    out = np.zeros_like(x)
    m.scaled(x, out, 10)
    np.testing.assert_array_equal(out, 7 * x)
    also = kf.install("cl")(str(options_cl), options="-DSCALE=2", name="twice")
    assert also.__name__ == "twice"
    also.scaled(x, out, 10)
    np.testing.assert_array_equal(out, 2 * x)


def test_options_are_part_of_the_binary_and_metadata_cache_keys(options_cl, cl_device):
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    first = kf.load(options_cl, options=["-DSCALE=5"])
    first.scaled(x, out, 16)
    np.testing.assert_array_equal(out, 5 * x)
    assert first.__kernel_file__.programs.stats == {"binary_loads": 0, "builds": 1}

    other = kf.load(options_cl, options=["-DSCALE=7"])         # another key: built, not the 5x binary
    other.scaled(x, out, 16)
    np.testing.assert_array_equal(out, 7 * x)
    assert other.__kernel_file__.programs.stats == {"binary_loads": 0, "builds": 1}

    again = kf.load(options_cl, options=["-DSCALE=7"])         # the same key: the kept binary
    again.scaled(x, out, 16)
    np.testing.assert_array_equal(out, 7 * x)
    assert again.__kernel_file__.programs.stats == {"binary_loads": 1, "builds": 0}

    # the parsed declarations are cached per options too: double, then float again
    as_double = kf.load(options_cl, options=["-DUSE_DOUBLE"])
    assert as_double.scaled.params[0].type.pointee.dtype == "float64"
    assert kf.load(options_cl).scaled.params[0].type.pointee.dtype == "float32"


def test_a_pickled_kernel_keeps_its_options(options_cl, cl_device):
    m = kf.load(options_cl, options=["-DSCALE=9"])
    back = pickle.loads(pickle.dumps(m.scaled[(16, 4)]))
    assert back._state.options == ("-DSCALE=9",)
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    back(x, out, 16)
    np.testing.assert_array_equal(out, 9 * x)


@pytest.mark.parametrize("options, defined", [
    (["-DN=4"], {"N": "4"}),
    (["-DFLAG"], {"FLAG": "1"}),
    (["-D", "N=4", "-U", "N"], {}),
    (["--define-macro=N=4"], {"N": "4"}),
    (["--define-macro", "N"], {"N": "1"}),
    (["-cl-fast-relaxed-math", "-DM=2", "-I", "inc"], {"M": "2"}),
])
def test_define_and_undefine_spellings(options, defined):
    got: dict = {}
    for name, body in cdecl.option_defines(options):
        if body is None:
            got.pop(name, None)
        else:
            got[name] = body
    assert got == defined


_CUDA_SOURCE = """// pygpgpu: options -DREAL=float
#ifndef BLOCK
#error BLOCK is not defined
#endif
#if BLOCK > 64
extern "C" __global__ void __launch_bounds__(BLOCK) wide(const REAL* __restrict__ x, REAL* y, int n)
{ int i = blockIdx.x * BLOCK + threadIdx.x; if (i < n) y[i] = 2 * x[i]; }
#else
extern "C" __global__ void narrow(const REAL* __restrict__ x, REAL* y, int n)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i]; }
#endif
"""


def test_cuda_options_decide_declarations_and_compile_with_nvrtc(nvrtc_compile, tmp_path):
    path = tmp_path / "blocks.cu"
    path.write_text(_CUDA_SOURCE)
    parsed = cdecl.parse_file(path, "cuda", options=["-DBLOCK=128"])
    assert list(parsed.kernels) == ["wide"] and parsed.options == ["-DREAL=float", "-DBLOCK=128"]
    assert parsed.kernels["wide"].params[0].type.pointee.dtype == "float32"
    source = cdecl.compile_source(path)
    assert_cubin(nvrtc_compile(source, "sm_90", parsed.options), 'extern "C" __global__ void wide(')
    assert list(cdecl.parse_file(path, "cuda", options="-DBLOCK=32").kernels) == ["narrow"]
    undefined = ["-DBLOCK=128", "-UBLOCK", "-DBLOCK=16"]         # NVRTC and hiprtc take -U (OpenCL does not)
    assert list(cdecl.parse_file(path, "cuda", options=undefined).kernels) == ["narrow"]
    assert_cubin(nvrtc_compile(source, "sm_90", [*cdecl.file_options(source), *undefined]),
                 'extern "C" __global__ void narrow(')


def test_hip_options_decide_declarations_and_compile_with_hiprtc(hiprtc_compile, tmp_path):
    path = tmp_path / "blocks.hip"
    path.write_text("#include <hip/hip_runtime.h>\n" + _CUDA_SOURCE.replace("// pygpgpu: options -DREAL=float\n", "")
                    .replace("#ifndef", "// pygpgpu: options -DREAL=double\n#ifndef"))
    parsed = cdecl.parse_file(path, "hip", options=["-DBLOCK=32"])
    assert list(parsed.kernels) == ["narrow"] and parsed.kernels["narrow"].params[0].type.pointee.dtype == "float64"
    source = cdecl.compile_source(path)
    assert_code_object(hiprtc_compile(source, "gfx1030", parsed.options), 'extern "C" __global__ void narrow(')
