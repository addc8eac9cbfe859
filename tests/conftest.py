"""Shared fixtures: which backends to run on, and compile-only checks for CUDA and HIP.

``PYGPGPU_TEST_BACKENDS=cuda,opencl`` selects the backends that execute kernels (default:
every installed backend that has a device, but webgpu only when named: SUITE_OPT_IN); an entry may be any device selector, e.g.
``opencl:nvidia`` to test NVIDIA's OpenCL on a machine that also has PoCL. ``PYGPGPU_REQUIRE_COMPILERS=1`` (set by CI)
turns a missing NVRTC, hiprtc, offline HIP clang/hipcc, oclgrind or hatchling into a failure instead of a skip.
``PYGPGPU_REQUIRE_DEVICES=opencl`` (CI; ``cuda,opencl`` on the GPU machine) does the same for devices:
every test that would skip for want of a device of a listed backend fails instead, and the
``backend`` fixture runs each listed backend even where it finds no device (so it fails there).
Tests skip for a missing device only through :func:`skip_no_device`, for a missing tool only
through :func:`skip_no_compiler`, so that both variables reach every such skip.
"""
from __future__ import annotations

import os
import sys
import re
import struct
import tempfile
from pathlib import Path

import pytest

# Tests never touch the user's cache.
os.environ.setdefault("PYGPGPU_CACHE_DIR", tempfile.mkdtemp(prefix="pygpgpu-test-cache-"))

from pygpgpu_core import registry  # noqa: E402
from pygpgpu_core.errors import GPGPUError  # noqa: E402


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def _required_devices() -> tuple[str, ...]:
    names = tuple(b.strip().lower() for b in os.environ.get("PYGPGPU_REQUIRE_DEVICES", "").split(",") if b.strip())
    unknown = [b for b in names if b not in registry.backend_names()]
    if unknown:
        raise pytest.UsageError(f"PYGPGPU_REQUIRE_DEVICES names unknown backends {unknown}; "
                                f"use a comma-separated list of {registry.backend_names()}")
    return names


REQUIRED_DEVICES = _required_devices()


def _backend_of(selector: str) -> str:
    return selector.split(":")[0].strip().lower()


def skip_no_device(backend_name: str, reason: str):
    """Skip a test that needs a ``backend_name`` device this machine lacks, or fail it when
    ``PYGPGPU_REQUIRE_DEVICES`` lists that backend (a required device must not go missing silently).
    ``backend_name="any"``: the test needs some device, so any required backend makes it fail."""
    if _backend_of(backend_name) in REQUIRED_DEVICES or (backend_name == "any" and REQUIRED_DEVICES):
        pytest.fail(f"{reason} (PYGPGPU_REQUIRE_DEVICES={','.join(REQUIRED_DEVICES)} requires a "
                    f"{_backend_of(backend_name)} device)")
    pytest.skip(reason)


# Backends the shared suite runs on only when named in PYGPGPU_TEST_BACKENDS: the WebGPU plug-in
# translates a subset of the kernel language (docs/webgpu.md) and has its own tests (test_webgpu_*).
SUITE_OPT_IN = frozenset({"webgpu"})


def _selected_backends() -> list[str]:
    env = os.environ.get("PYGPGPU_TEST_BACKENDS", "").strip()
    if env:
        names = [b.strip() for b in env.split(",") if b.strip()]
    else:
        names = []
        for name in registry.backend_names():
            if name in SUITE_OPT_IN:
                continue
            try:
                if registry.backend_devices(name):
                    names.append(name)
            except GPGPUError:
                pass
    # a required backend runs even without a device: the backend fixture then fails for it
    names += [b for b in REQUIRED_DEVICES if b not in {_backend_of(n) for n in names}]
    return names


RUN_BACKENDS = _selected_backends()


def first_device(backend_name: str):
    """The first device of a backend (for tests of that backend's own features), or skip."""
    try:
        devices = registry.backend_devices(backend_name)
    except GPGPUError as exc:
        skip_no_device(backend_name, f"no {backend_name} device here: {exc}")
    if not devices:
        skip_no_device(backend_name, f"no {backend_name} device here")
    return devices[0]


def opencl_translations_made_by(run) -> list:
    """``(kernel, tokens, bits)`` of each OpenCL translation of the gnp kernels ``run()`` uses, made
    afresh: array_ops' kernel registry is an empty one while ``run`` runs (then merged back), so a
    compile test compiles what its own operations need, not every kernel earlier tests made in this
    process (the whole suite had made hundreds: the hiprtc test took 15 minutes)."""
    from pygpgpu_translate.array_ops import _codegen

    saved = _codegen._kernels
    _codegen._kernels = {}
    try:
        run()
    finally:
        fresh, _codegen._kernels = _codegen._kernels, saved
        for key, kf in fresh.items():
            saved.setdefault(key, kf)
    return [(kf, key[1], key[2]) for kf in fresh.values() for key in list(kf._translations) if key[0] == "opencl"]


@pytest.fixture(scope="module")
def cl_device():
    """The default OpenCL device (kernel-file tests), or skip when there is none."""
    try:
        return registry.get_device("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device on this machine: {exc}")


def host_unified_opencl_device():
    """An OpenCL device sharing host memory (PoCL, integrated GPUs), or skip when none exists."""
    try:
        devices = registry.backend_devices("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")
    for dev in devices:
        if dev.host_unified_memory:
            return dev
    skip_no_device("opencl", f"no host-unified OpenCL device (such as PoCL) among {[d.selector for d in devices]}")


@pytest.fixture(autouse=_env_flag("PYGPGPU_TEST_SYNC_EACH"))
def _synchronize_after_each_test():
    """``PYGPGPU_TEST_SYNC_EACH=1`` (GPU runs): wait for every open OpenCL queue after each test, so
    that a kernel which faults (NVIDIA's OpenCL reports it at the next wait, -9999) fails the test
    that launched it instead of a later test of the same worker."""
    yield
    from pygpgpu_opencl import _context
    for context in list(_context._live_contexts):
        if not context.closed:
            context.queue.synchronize()


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
        asked = ("PYGPGPU_REQUIRE_DEVICES" if _backend_of(request.param) in REQUIRED_DEVICES
                 and request.param not in os.environ.get("PYGPGPU_TEST_BACKENDS", "") else "PYGPGPU_TEST_BACKENDS")
        pytest.fail(f"{asked} asks for {request.param!r} but: {exc}")
    return request.param


@pytest.fixture
def device(backend):
    return registry.get_device(backend)


def _lacked_capability(item, exc: BaseException) -> "str | None":
    """Why a test failed for a feature its backend's device declares it lacks (the optional Device
    attribute ``lacks``; a refusal at translation names the feature as its ``capability``), or None."""
    callspec = getattr(item, "callspec", None)
    selector = callspec.params.get("backend") if callspec is not None else None
    seen = set()
    while exc is not None and id(exc) not in seen and selector:
        seen.add(id(exc))
        capability = getattr(exc, "capability", "")
        if capability:                  # a name in the device's lacks, or a boolean attribute (fp64...)
            from pygpgpu_core.protocols import option
            try:
                lacks = option(registry.get_device(selector), "lacks")
            except GPGPUError:
                return None
            if capability in lacks or getattr(registry.get_device(selector), capability, True) is False:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                return f"{selector} declares it lacks {capability!r}: {first}"
            return None
        exc = exc.__cause__ or exc.__context__
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test of the shared suite whose kernel needs what its device declares it lacks (float64,
    int64, print() on webgpu) is reported as skipped, naming the capability and the refusal;
    every other failure stays a failure."""
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and report.failed and call.excinfo is not None:
        reason = _lacked_capability(item, call.excinfo.value)
        if reason is not None:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {reason}")


def _require_compilers() -> bool:
    return _env_flag("PYGPGPU_REQUIRE_COMPILERS")


def skip_no_compiler(what: str, reason: str | Exception):
    """Skip a test that needs a tool this machine lacks (NVRTC, hiprtc, clang, hipcc, oclgrind, hatchling), or
    fail it under ``PYGPGPU_REQUIRE_COMPILERS=1``."""
    if _require_compilers():
        pytest.fail(f"{what} is required here (PYGPGPU_REQUIRE_COMPILERS=1) but unavailable: {reason}")
    pytest.skip(f"{what} unavailable: {reason}")


_missing = skip_no_compiler


OCLGRIND_ICD_LIB = Path("/usr/lib/oclgrind/liboclgrind-rt-icd.so")


@pytest.fixture(params=["0", "1"], ids=["no-events", "events"])
def events_context(request, monkeypatch):
    """A private OpenCL context made with launch events off, then on (``PYGPGPU_OPENCL_LAUNCH_EVENTS``,
    read when a context is made); closed after the test."""
    from pygpgpu_core import registry
    from pygpgpu_core.errors import GPGPUError

    monkeypatch.setenv("PYGPGPU_OPENCL_LAUNCH_EVENTS", request.param)
    try:
        device = registry.get_device("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device here: {exc}")
    from pygpgpu_opencl import Context

    ctx = Context(device)
    assert ctx.launch_events is (request.param == "1")
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def native_module(tmp_path_factory):
    """The optional native launcher (``pygpgpu build-native``) built into a temporary folder and
    loaded from there (never into the checkout), for the tests that pass it as ``module=``."""
    import importlib.util
    import shutil
    import sysconfig

    from pygpgpu_core.backend import native

    if not Path(sysconfig.get_paths()["include"], "Python.h").is_file() or not shutil.which("cc"):
        skip_no_compiler("a C compiler with Python's headers", "no cc, or no Python.h")
    path = native.build(tmp_path_factory.mktemp("native"))
    spec = importlib.util.spec_from_file_location("_native_launch", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="session")
def oclgrind_icd() -> Path:
    """oclgrind's OpenCL ICD library (the simulator that finds out-of-bounds accesses and races)."""
    if not OCLGRIND_ICD_LIB.exists():
        skip_no_compiler("oclgrind", f"{OCLGRIND_ICD_LIB} is missing (apt-get install oclgrind)")
    return OCLGRIND_ICD_LIB


def run_under_oclgrind(tmp_path: Path, script_text: str, *args: str) -> "tuple[str, str, list[str]]":
    """Run ``script_text`` (a file: kernels need inspectable source) in a subprocess whose only
    OpenCL platform is oclgrind, with races checked: ``(stdout, oclgrind's log, its bad lines)``.
    oclgrind exits 0 whatever it finds, so callers read the bad lines (invalid accesses, races)."""
    import subprocess
    vendors = tmp_path / "vendors"
    vendors.mkdir(exist_ok=True)
    (vendors / "oclgrind.icd").write_text(f"{OCLGRIND_ICD_LIB}\n")
    log = tmp_path / "oclgrind.log"
    env = dict(os.environ, OCL_ICD_VENDORS=str(vendors), OCLGRIND_LOG=str(log), OCLGRIND_DATA_RACES="1",
               PYGPGPU_CACHE_DIR=str(tmp_path / "cache"), PYGPGPU_BACKEND="opencl",
               PYGPGPU_SMALL_ARRAY_MAX="-1")   # one buffer per array (no shared small-argument block)
    script = tmp_path / "run_under_oclgrind.py"
    script.write_text(script_text)
    proc = subprocess.run([sys.executable, str(script), *args], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = log.read_text() if log.exists() else ""
    return proc.stdout, text, [ln for ln in text.splitlines() if "Invalid" in ln or "data race" in ln.lower()]


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


# ---- what a compile-only test asserts: the binary is for the right machine and defines the kernels -------
_EM_CUDA, _EM_AMDGPU = 190, 224
_KERNEL_DEF = re.compile(r'extern\s+"C"\s+__global__[^(;{]*?\bvoid\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(')


def kernel_names(source: str) -> list[str]:
    """The ``extern "C" __global__`` kernels a CUDA/HIP source defines."""
    return _KERNEL_DEF.findall(source)


def _elf_machine(image: bytes) -> int:
    assert isinstance(image, bytes) and image[:4] == b"\x7fELF", f"not an ELF image: {image[:16]!r}"
    return struct.unpack_from("<H", image, 18)[0]


def assert_cubin(image: bytes, source: str) -> None:
    """``image`` is a CUBIN (an ELF for NVIDIA GPUs) holding every kernel ``source`` defines."""
    assert _elf_machine(image) == _EM_CUDA, "not a CUBIN (ELF machine is not EM_CUDA)"
    names = kernel_names(source)
    assert names, "the source defines no extern \"C\" __global__ kernel"
    for name in names:
        assert name.encode() + b"\x00" in image, f"kernel {name!r} is not in the CUBIN"


def assert_code_object(code: bytes, source: str) -> None:
    """``code`` is an AMDGPU HSA code object with a symbol and a kernel descriptor for every kernel of ``source``."""
    assert _elf_machine(code) == _EM_AMDGPU, "not an AMDGPU code object (ELF machine is not EM_AMDGPU)"
    names = kernel_names(source)
    assert names, "the source defines no extern \"C\" __global__ kernel"
    for name in names:
        assert name.encode() + b"\x00" in code and name.encode() + b".kd\x00" in code, \
            f"kernel {name!r} (or its descriptor {name}.kd) is not in the code object"
