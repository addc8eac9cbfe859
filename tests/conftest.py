"""Shared fixtures: which backends to run on, and compile-only checks for CUDA and HIP.

``PYGPGPU_TEST_BACKENDS=cuda,opencl`` selects the backends that execute kernels (default:
every installed backend that has a device); an entry may be any device selector, e.g.
``opencl:nvidia`` to test NVIDIA's OpenCL on a machine that also has PoCL. ``PYGPGPU_REQUIRE_COMPILERS=1`` (set by CI)
turns a missing NVRTC/hiprtc into a failure instead of a skip.
"""
from __future__ import annotations

import os
import tempfile

import pytest

# Tests never touch the user's cache.
os.environ.setdefault("PYGPGPU_CACHE_DIR", tempfile.mkdtemp(prefix="pygpgpu-test-cache-"))

from pygpgpu_core import registry  # noqa: E402
from pygpgpu_core.errors import GPGPUError  # noqa: E402


def _selected_backends() -> list[str]:
    env = os.environ.get("PYGPGPU_TEST_BACKENDS", "").strip()
    if env:
        return [b.strip() for b in env.split(",") if b.strip()]
    names = []
    for name in registry.backend_names():
        try:
            if registry.backend_devices(name):
                names.append(name)
        except GPGPUError:
            pass
    return names


RUN_BACKENDS = _selected_backends()


def first_device(backend_name: str):
    """The first device of a backend (for tests of that backend's own features), or skip."""
    try:
        devices = registry.backend_devices(backend_name)
    except GPGPUError as exc:
        pytest.skip(f"no {backend_name} device here: {exc}")
    if not devices:
        pytest.skip(f"no {backend_name} device here")
    return devices[0]


def host_unified_opencl_device():
    """An OpenCL device sharing host memory (PoCL, integrated GPUs), or skip when none exists."""
    try:
        devices = registry.backend_devices("opencl")
    except GPGPUError as exc:
        pytest.skip(f"no OpenCL device here: {exc}")
    for dev in devices:
        if dev.host_unified_memory:
            return dev
    pytest.skip(f"no host-unified OpenCL device (such as PoCL) among {[d.selector for d in devices]}")


def pytest_report_header(config):
    return f"pygpgpu execution backends: {RUN_BACKENDS or 'none'}; status: {registry.diagnostics()}"


@pytest.fixture(params=RUN_BACKENDS or ["<none>"])
def backend(request) -> str:
    """Each backend (or device selector) that executes kernels in this run (``"opencl"``, ``"cuda"``...)."""
    if request.param == "<none>":
        pytest.skip(f"no backend with a device (status: {registry.diagnostics()})")
    try:
        registry.get_device(request.param)
    except GPGPUError as exc:
        pytest.fail(f"PYGPGPU_TEST_BACKENDS asks for {request.param!r} but: {exc}")
    return request.param


@pytest.fixture
def device(backend):
    return registry.get_device(backend)


def _require_compilers() -> bool:
    return os.environ.get("PYGPGPU_REQUIRE_COMPILERS", "") not in ("", "0")


def _missing(what: str, exc: Exception):
    if _require_compilers():
        pytest.fail(f"{what} is required here (PYGPGPU_REQUIRE_COMPILERS=1) but unavailable: {exc}")
    pytest.skip(f"{what} unavailable: {exc}")


@pytest.fixture(scope="session")
def nvrtc_compile():
    """``compile(source, arch="sm_90") -> cubin bytes`` through NVRTC (no GPU needed)."""
    try:
        from pygpgpu_cuda import compile_cuda

        compile_cuda('extern "C" __global__ void probe(int* p) { *p = 1; }')
    except Exception as exc:  # ImportError, BackendUnavailable, a broken install
        _missing("NVRTC", exc)
    return compile_cuda


@pytest.fixture(scope="session")
def hiprtc_compile():
    """``compile(source, arch="gfx1030") -> code object bytes`` through hiprtc (no GPU needed)."""
    try:
        from pygpgpu_hip import compile_hip

        # A real compile: some machines ship libamdhip64 without the headers hiprtc needs.
        compile_hip('#include <hip/hip_runtime.h>\nextern "C" __global__ void probe(int* p) { *p = 1; }', "gfx1030")
    except Exception as exc:
        _missing("hiprtc", exc)
    return compile_hip
