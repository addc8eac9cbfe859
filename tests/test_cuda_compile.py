"""CUDA without a GPU: NVRTC compiles, kernel-name lookup, cache keys, and how a missing
driver is reported. Everything here runs in CI (NVRTC from its pip wheel, no libcuda)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from pygpgpu_core.errors import CompileError

VECADD = r"""
extern "C" __global__ void vecadd(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
"""

SAMPLES = {
    "vecadd": VECADD,
    "saxpy_cpp_linkage": r"""
__global__ void saxpy(float a, const float* x, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
""",
    "shared_reduce": r"""
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = tile[0];
}
""",
    "struct_and_atomics": r"""
struct Params { float scale; int offset; double bias; };
extern "C" __global__ void hist(const int* data, unsigned int* bins, Params p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[(data[i] + p.offset) & 255], 1u);
}
""",
}


def test_nvrtc_version(nvrtc_compile):
    from pygpgpu_cuda import nvrtc_version, supported_archs

    major, minor = nvrtc_version()
    assert major >= 12 and minor >= 0
    archs = supported_archs()
    assert list(archs) == sorted(archs) and 90 in archs


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_compile_sample_to_cubin(nvrtc_compile, name):
    from pygpgpu_cuda._cubin import entry_names

    cubin = nvrtc_compile(SAMPLES[name], "sm_90")
    assert cubin[:4] == b"\x7fELF"
    entries = entry_names(cubin)
    assert len(entries) == 1, entries


def test_cubin_for_each_supported_arch(nvrtc_compile):
    from pygpgpu_cuda import supported_archs

    for arch in ("sm_80", "sm_90", "sm_90a"):
        if int(arch[3:5]) in supported_archs():
            assert nvrtc_compile(VECADD, arch)[:4] == b"\x7fELF"


def test_ptx_fallback_for_arch_newer_than_nvrtc(nvrtc_compile):
    from pygpgpu_cuda import supported_archs
    from pygpgpu_cuda._cubin import entry_names

    newest = supported_archs()[-1]
    ptx = nvrtc_compile(VECADD, f"sm_{newest + 100}")
    assert ptx[:4] != b"\x7fELF"
    text = ptx.rstrip(b"\0").decode()
    assert f".target sm_{newest}" in text
    assert entry_names(ptx) == ["vecadd"]


def test_arch_older_than_nvrtc_is_explained(nvrtc_compile):
    from pygpgpu_cuda import supported_archs

    oldest = supported_archs()[0]
    if oldest <= 30:
        pytest.skip(f"this NVRTC still targets sm_{oldest}")
    with pytest.raises(CompileError, match="oldest target"):
        nvrtc_compile(VECADD, "sm_30")


def test_bad_arch_string(nvrtc_compile):
    with pytest.raises(ValueError, match="sm_XY"):
        nvrtc_compile(VECADD, "ampere")


def test_compile_error_carries_the_log(nvrtc_compile):
    broken = 'extern "C" __global__ void k(float* x) { x[0] = undefined_name + 1; }'
    with pytest.raises(CompileError) as info:
        nvrtc_compile(broken, "sm_90")
    err = info.value
    assert "undefined_name" in err.log
    assert "undefined_name" in str(err) and "NVRTC_ERROR_COMPILATION" in str(err)
    assert err.source == broken


def test_options_reach_nvrtc(nvrtc_compile):
    src = 'extern "C" __global__ void k(float* x) { x[0] = VALUE; }'
    with pytest.raises(CompileError):
        nvrtc_compile(src, "sm_90")
    assert nvrtc_compile(src, "sm_90", ["-DVALUE=2.0f"])[:4] == b"\x7fELF"


def test_mangled_kernel_names_resolve(nvrtc_compile):
    from pygpgpu_core.backend.lowlevel import resolve_kernel_name
    from pygpgpu_cuda._cubin import entry_names

    src = SAMPLES["saxpy_cpp_linkage"] + r"""
namespace ops { __global__ void scale(float* x, float s) { x[threadIdx.x] *= s; } }
template <typename T> __global__ void fill(T* x, T v) { x[threadIdx.x] = v; }
template __global__ void fill<float>(float*, float);
template __global__ void fill<int>(int*, int);
""" + VECADD
    entries = entry_names(nvrtc_compile(src, "sm_90"))
    assert len(entries) == 5
    assert resolve_kernel_name("vecadd", entries) == "vecadd"
    assert resolve_kernel_name("saxpy", entries).startswith("_Z5saxpy")
    assert resolve_kernel_name("ops::scale", entries).startswith("_ZN3ops5scaleE")
    both = resolve_kernel_name("fill", entries)
    assert isinstance(both, list) and len(both) == 2  # ambiguous: pass the mangled name
    assert resolve_kernel_name("missing", entries) == []


def test_disk_cache_hits_and_recompiles_on_change(nvrtc_compile, tmp_path, monkeypatch):
    from pygpgpu_core.cache import cache_dir
    from pygpgpu_cuda._program import build_binary

    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    image, _, hit = build_binary(VECADD, "sm_90", (), "v.cu")
    assert not hit and image[:4] == b"\x7fELF"
    again, _, hit = build_binary(VECADD, "sm_90", (), "v.cu")
    assert hit and again == image
    # every input of the key recompiles when it changes
    assert not build_binary(VECADD, "sm_80", (), "v.cu")[2]
    assert not build_binary(VECADD, "sm_90", ("-DX=1",), "v.cu")[2]
    assert not build_binary(VECADD + "\n", "sm_90", (), "v.cu")[2]
    # a corrupt entry is dropped and rebuilt, never trusted
    for entry in (cache_dir() / "cuda").glob("*.cubin"):
        entry.write_bytes(entry.read_bytes()[:-7] + b"garbage")
    rebuilt, _, hit = build_binary(VECADD, "sm_90", (), "v.cu")
    assert not hit and rebuilt == image


def test_nvrtc_newer_than_driver_is_explained():
    from pygpgpu_cuda._backend import nvrtc_driver_problem

    assert nvrtc_driver_problem((13, 0), (13, 0)) == ""
    assert nvrtc_driver_problem((12, 8), (13, 0)) == ""
    text = nvrtc_driver_problem((13, 5), (12, 8))
    assert "NVRTC 13.5" in text and "CUDA 12.8" in text and "nvidia-cuda-nvrtc-cu12" in text


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=full_env, timeout=120)


def test_missing_driver_is_backend_unavailable_naming_libcuda():
    # A path that does not exist stands for "no NVIDIA driver", on any machine.
    proc = _run(
        """
        import pygpgpu_cuda
        from pygpgpu_core.errors import BackendUnavailable
        try:
            pygpgpu_cuda.backend.devices()
        except BackendUnavailable as exc:
            print("UNAVAILABLE", exc)
        """,
        PYGPGPU_CUDA_LIB="/nonexistent/libcuda.so.1",
    )
    assert proc.returncode == 0, proc.stderr
    assert "UNAVAILABLE" in proc.stdout
    assert "libcuda.so.1" in proc.stdout and "NVIDIA driver" in proc.stdout and "PYGPGPU_CUDA_LIB" in proc.stdout


def test_import_loads_no_vendor_library():
    proc = _run(
        """
        import pygpgpu_cuda, pygpgpu_cuda._driver as d, pygpgpu_cuda._nvrtc as n
        maps = open("/proc/self/maps").read() if __import__("os").path.exists("/proc/self/maps") else ""
        print(not d.driver.loaded, not n.nvrtc.loaded, "libcuda" in maps, "libnvrtc" in maps)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "False", "False"]


def test_registry_reports_cuda_without_driver():
    proc = _run(
        """
        import warnings
        warnings.simplefilter("ignore")
        from pygpgpu_core import registry
        print(registry.diagnostics().get("cuda"))
        """,
        PYGPGPU_CUDA_LIB="/nonexistent/libcuda.so.1",
    )
    assert proc.returncode == 0, proc.stderr
    assert "libcuda.so.1" in proc.stdout


def test_backend_object_is_lazy_and_named():
    import pygpgpu_cuda

    assert pygpgpu_cuda.backend.name == "cuda"
    assert pygpgpu_cuda.backend.dialect == "cuda"


def test_launcher_kinds_pack_as_c_expects():
    import ctypes
    import struct

    import numpy as np

    from pygpgpu_core.backend.args import normalize_kind

    class Params(ctypes.Structure):
        _fields_ = [("scale", ctypes.c_float), ("offset", ctypes.c_int), ("bias", ctypes.c_double)]

    assert normalize_kind("buffer").size == 8
    assert (normalize_kind(np.float32).fmt, normalize_kind(np.float32).size) == ("f", 4)
    assert (normalize_kind(np.uint64).fmt, normalize_kind(np.int8).fmt) == ("Q", "b")
    assert normalize_kind(ctypes.c_long).size == ctypes.sizeof(ctypes.c_long)
    kind = normalize_kind(Params)
    assert kind.size == 16
    packed = kind.convert(Params(1.5, -3, 2.25))
    assert struct.unpack("<fi d".replace(" ", ""), packed) == (1.5, -3, 2.25)
    vec = normalize_kind(np.dtype([("x", "f4"), ("y", "f4"), ("z", "f4"), ("w", "f4")]))
    assert vec.tag == "bytes" and vec.size == 16
    assert struct.unpack("<4f", vec.convert((1, 2, 3, 4))) == (1.0, 2.0, 3.0, 4.0)
    with pytest.raises(TypeError):
        normalize_kind(object())


def test_backend_unavailable_type_for_missing_nvrtc():
    proc = _run(
        """
        from pygpgpu_core.errors import BackendUnavailable
        import pygpgpu_cuda
        try:
            pygpgpu_cuda.compile_cuda("__global__ void k(){}")
        except BackendUnavailable as exc:
            print("UNAVAILABLE", exc)
        """,
        PYGPGPU_NVRTC_LIB="/nonexistent/libnvrtc.so.13",
    )
    assert proc.returncode == 0, proc.stderr
    assert "UNAVAILABLE" in proc.stdout and "nvidia-cuda-nvrtc" in proc.stdout


def test_vector_arguments_use_cuda_layout(nvrtc_compile):
    """Vector types by value take CUDA's sizes (float3 = 12 bytes, OpenCL's is 16), checked
    against NVRTC's own sizeof so the packed bytes match what the kernel reads."""
    import numpy as np

    from pygpgpu_core import vec_types
    from pygpgpu_core.backend.args import normalize_kind

    checks = []
    for base, n in [("float", 3), ("float", 4), ("double", 3), ("int", 2), ("char", 3), ("double", 2)]:
        cls = getattr(vec_types, f"{base}{n}")
        kind = normalize_kind(cls)
        assert normalize_kind(cls.dtype).size == kind.size  # the OpenCL-layout dtype maps too
        checks.append(f'static_assert(sizeof({base}{n}) == {kind.size}, "{base}{n}");')
        values = list(range(1, n + 1))
        packed = kind.convert(cls(*values))
        assert np.frombuffer(packed, np.dtype(cls.dtype_packed[0])).tolist() == values
    src = "\n".join(checks) + '\nextern "C" __global__ void k(float* x) { x[0] = 1.0f; }\n'
    assert nvrtc_compile(src, "sm_90")[:4] == b"\x7fELF"
