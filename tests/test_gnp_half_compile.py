"""The float16 conversion kernels gnp uses on CUDA and HIP (whose generated kernels compute in
float32, as numpy's float16 loops do) compile with NVRTC and hiprtc, every kernel present (no
GPU needed); the OpenCL file runs in tests/test_gnp_half.py."""
from __future__ import annotations

from pathlib import Path

from pygpgpu_core import cdecl
from conftest import assert_code_object, assert_cubin

HALF_KERNELS = Path(__import__("pygpgpu_translate.array_ops", fromlist=["_half"]).__file__).parent / "_half_kernels"
NAMES = ("gnp_half_to_float", "gnp_float_to_half", "gnp_double_to_half")


def test_cuda_half_conversions_compile_with_nvrtc(nvrtc_compile):
    source = cdecl.compile_source(HALF_KERNELS.with_suffix(".cu"))
    assert_cubin(nvrtc_compile(source, "sm_90"), source)
    assert all(name in source for name in NAMES)


def test_hip_half_conversions_compile_with_hiprtc(hiprtc_compile):
    source = cdecl.compile_source(HALF_KERNELS.with_suffix(".hip"))
    assert_code_object(hiprtc_compile(source, "gfx90a"), source)
    assert all(name in source for name in NAMES)
