"""The HIP backend's kernels and their numpy references (test_hip_device.py) executed on an NVIDIA
GPU through the CUDA backend. No AMD GPU is at hand, so HIP is compile-only in CI; these kernels
are plain CUDA-compatible C++, and running them where a CUDA device is present checks the kernel
sources and the references on real hardware. Skips (failing under PYGPGPU_REQUIRE_DEVICES=cuda)
without a CUDA device."""
from __future__ import annotations

import pytest

from conftest import first_device
from test_hip_device import (  # noqa: F401  (collected here, with this module's ctx fixture)
    test_atomics,
    test_dynamic_shared_memory_from_local_memory,
    test_saxpy_through_a_launcher,
    test_shared_memory_block_sum,
    test_two_dimensional_grid,
    test_vecadd_with_numpy_arrays,
)


class _HipSourceOnCuda:
    """A CUDA context whose ``program`` takes the HIP sources (NVRTC has no hip/hip_runtime.h)."""

    def __init__(self, ctx):
        self._ctx = ctx

    def program(self, source, *args, **kwargs):
        return self._ctx.program(source.replace("#include <hip/hip_runtime.h>\n", ""), *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._ctx, name)


@pytest.fixture(scope="module")
def ctx():
    return _HipSourceOnCuda(first_device("cuda").context())
