"""Helpers for the vector/funcs/gpu/prelude tests (this module holds no tests).

``opencl_runner()`` runs handwritten kernels through the OpenCL backend's low-level API;
``rtc_compile`` (a fixture) compiles CUDA/HIP source through the conftest NVRTC/hiprtc fixtures.
"""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import registry
from pygpgpu_core.errors import CompileError, GPGPUError
from conftest import skip_no_device

COMPILE_ERRORS = (CompileError,)

_CUDA_KERNEL = 'extern "C" __global__ void pg_probe(int* out) { out[0] = 1; }\n'


@pytest.fixture(params=["cuda", "hip"])
def rtc_compile(request):
    """``(dialect, compile(source))`` for CUDA (NVRTC, sm_90) and HIP (hiprtc, gfx1030)."""
    fixture = "nvrtc_compile" if request.param == "cuda" else "hiprtc_compile"
    return request.param, request.getfixturevalue(fixture)


class _Runner:
    def __init__(self, device):
        self.device = device
        self.context = device.context()
        self.programs: dict = {}

    def __call__(self, source: str, name: str, global_size, local_size, args) -> None:
        if self.context.closed:  # another test closed the shared context: start over on a new one
            self.context = self.device.context()
            self.programs.clear()
        prog = self.programs.get(source)
        if prog is None:
            prog = self.programs[source] = self.context.program(source)
        prog.kernel(name).launch(tuple(global_size), None if local_size is None else tuple(local_size), list(args))
        self.context.synchronize()


_RUNNER: list = []


def opencl_runner() -> _Runner:
    """``run(source, kernel_name, global_size, local_size, args)`` on the first OpenCL device;
    numpy array arguments are copied in and back out. Programs are built once per source."""
    if not _RUNNER:
        try:
            _RUNNER.append(_Runner(registry.get_device("opencl")))
        except GPGPUError as exc:  # no ICD / no device on this machine
            _RUNNER.append(exc)
    r = _RUNNER[0]
    if isinstance(r, Exception):
        skip_no_device("opencl", f"no OpenCL device to execute on: {r}")
    return r


def as_int_array(values, dtype) -> np.ndarray:
    return np.asarray(values).astype(dtype)
