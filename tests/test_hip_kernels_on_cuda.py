"""The HIP backend's device tests (test_hip_device.py) executed on an NVIDIA GPU through the CUDA
backend. No AMD GPU is at hand, so HIP is compile-only in CI; these kernels are plain
CUDA-compatible C++, and the CUDA and HIP backends share one driver kit
(``pygpgpu_core.backend.driver``: buffers, staging, programs, launchers, errors), so running
them where a CUDA device is present checks the kernel sources, the references and the code path
HIP runs on hardware. Skips (failing under PYGPGPU_REQUIRE_DEVICES=cuda) without a CUDA device."""
from __future__ import annotations

import pytest

from conftest import first_device
from test_hip_device import (  # noqa: F401  (collected here, with this module's ctx fixture)
    test_atomics,
    test_buffer_fill_copy_and_offsets,
    test_dynamic_shared_memory_from_local_memory,
    test_missing_kernel_name_is_explained,
    test_saxpy_through_a_launcher,
    test_shared_memory_block_sum,
    test_too_large_local_size_is_refused,
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
