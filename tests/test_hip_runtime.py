"""The HIP runtime library without an AMD GPU: loading, versions, no-device handling, registry.

On a machine with an AMD GPU the no-device tests skip (saying so) and test_hip_device.py runs.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from pygpgpu_core import registry
from pygpgpu_core.errors import BackendUnavailable, DeviceNotFound

DIST = Path(__file__).parent / "registry_dist"


def _run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **env))


@pytest.fixture(scope="module")
def hip_runtime():
    """The loaded HIP runtime's call table; skips (fails under PYGPGPU_REQUIRE_COMPILERS=1) when absent."""
    from pygpgpu_hip import _driver

    try:
        return _driver.driver()
    except BackendUnavailable as exc:
        if os.environ.get("PYGPGPU_REQUIRE_COMPILERS", "") not in ("", "0"):
            pytest.fail(f"the HIP runtime is required here but unavailable: {exc}")
        pytest.skip(f"the HIP runtime library is not installed: {exc.reason}")


@pytest.fixture
def no_amd_gpu(hip_runtime):
    from pygpgpu_hip import backend

    try:
        devices = backend.devices()
    except BackendUnavailable as exc:
        return exc
    pytest.skip(f"an AMD GPU is present ({devices[0].name}); the no-device behaviour cannot be observed")


def test_import_loads_no_vendor_library():
    proc = _run("""
        import pygpgpu_hip
        from pygpgpu_core.protocols import Backend
        assert isinstance(pygpgpu_hip.backend, Backend)
        assert (pygpgpu_hip.backend.name, pygpgpu_hip.backend.dialect) == ("hip", "hip")
        maps = open("/proc/self/maps").read()
        print("LOADED" if ("amdhip64" in maps or "hiprtc" in maps) else "CLEAN")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "CLEAN"


def test_library_loads_and_reports_versions(hip_runtime):
    from pygpgpu_hip import _driver, backend

    runtime = _driver.runtime_version()
    driver = _driver.driver_version()
    assert runtime > 0 and driver > 0
    text = _driver.format_version(runtime)
    assert re.fullmatch(r"\d+\.\d+\.\d+", text)
    major, minor, patch = (int(p) for p in text.split("."))
    assert runtime == major * 10_000_000 + minor * 100_000 + patch
    assert text in backend.version()
    # Cross-check against the version file the HIP SDK installs beside the library it loaded.
    from pygpgpu_core.libinfo import library_path

    lib = library_path(hip_runtime.lib)
    for root in (Path("/usr"), Path("/opt/rocm")):
        version_file = root / "share" / "hip" / "version"
        if lib and lib.startswith(str(root) + "/lib") and version_file.exists():
            fields = dict(l.split("=", 1) for l in version_file.read_text().splitlines() if "=" in l)
            assert (fields["HIP_VERSION_MAJOR"], fields["HIP_VERSION_MINOR"], fields["HIP_VERSION_PATCH"]) == (
                str(major), str(minor), str(patch))
            break


def test_error_names_come_from_the_runtime(hip_runtime):
    from pygpgpu_core.errors import DriverError
    from pygpgpu_hip import _driver

    assert _driver.error_name(100) == "hipErrorNoDevice"
    assert _driver.error_name(2) == "hipErrorOutOfMemory"
    with pytest.raises(DriverError, match=r"hipMalloc failed with hipErrorOutOfMemory \(2\): .*out of memory"):
        _driver.check(2, "hipMalloc")


def test_no_device_raises_backend_unavailable_naming_hipErrorNoDevice(no_amd_gpu):
    err = no_amd_gpu
    assert err.backend == "hip"
    assert "hipErrorNoDevice" in err.reason
    assert "compile_hip" in err.reason  # tells the user what still works


def test_get_device_for_hip_explains_why(no_amd_gpu):
    registry.reset_registry()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for selector in ("hip", "hip:0", "rocm:gfx90a", "amd"):
            with pytest.raises(BackendUnavailable, match="hipErrorNoDevice"):
                registry.get_device(selector)
    registry.reset_registry()


def test_available_devices_and_default_backend_skip_hip(no_amd_gpu, monkeypatch):
    # A test-only plug-in backend guarantees some device exists, so the probe has somewhere to go.
    monkeypatch.syspath_prepend(str(DIST))
    monkeypatch.delenv("PYGPGPU_BACKEND", raising=False)
    registry.reset_registry()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            devices = registry.available_devices()
            assert devices and not any(d.startswith("hip:") for d in devices)
            assert registry.PROBE_ORDER.index("hip") < registry.PROBE_ORDER.index("opencl")
            chosen = registry.default_backend_name()
            assert chosen != "hip"
            assert registry.backend_devices(chosen)
            assert registry.select_device().backend.name != "hip"
            assert "hipErrorNoDevice" in registry.diagnostics()["hip"]
    finally:
        registry.reset_registry()


def test_default_backend_error_mentions_hip_when_nothing_has_a_device(no_amd_gpu, monkeypatch):
    monkeypatch.delenv("PYGPGPU_BACKEND", raising=False)
    registry.reset_registry()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                chosen = registry.default_backend_name()
            except DeviceNotFound as exc:
                assert "hipErrorNoDevice" in str(exc)
            else:
                assert chosen != "hip" and registry.backend_devices(chosen)
    finally:
        registry.reset_registry()


def test_missing_library_names_the_package():
    proc = _run("""
        from pygpgpu_hip import _library, backend
        from pygpgpu_core.errors import BackendUnavailable
        _library._hip_names = lambda: ["libamdhip64-does-not-exist.so.99"]
        _library.rocm_roots = lambda: []
        try:
            backend.devices()
        except BackendUnavailable as exc:
            print("REASON:", exc.reason)
    """)
    assert proc.returncode == 0, proc.stderr
    assert "REASON:" in proc.stdout
    assert "libamdhip64-does-not-exist.so.99" in proc.stdout
    assert "libamdhip64-dev" in proc.stdout and "PYGPGPU_HIP_LIB" in proc.stdout


def test_library_override_that_does_not_load_is_reported():
    proc = _run("""
        from pygpgpu_hip import backend
        from pygpgpu_core.errors import BackendUnavailable
        try:
            backend.devices()
        except BackendUnavailable as exc:
            print("REASON:", exc.reason)
    """, PYGPGPU_HIP_LIB="/nonexistent/libamdhip64.so")
    assert proc.returncode == 0, proc.stderr
    assert "REASON: PYGPGPU_HIP_LIB='/nonexistent/libamdhip64.so' could not be loaded" in proc.stdout


def test_library_override_by_path_is_used(hip_runtime):
    from pygpgpu_core.libinfo import library_path

    path = library_path(hip_runtime.lib)
    assert path and os.path.exists(path)
    proc = _run("""
        from pygpgpu_hip import _driver
        from pygpgpu_core.libinfo import library_path
        print("VERSION", _driver.runtime_version(), library_path(_driver.driver().lib))
    """, PYGPGPU_HIP_LIB=path)
    assert proc.returncode == 0, proc.stderr
    from pygpgpu_hip import _driver

    assert f"VERSION {_driver.runtime_version()} {path}" in proc.stdout
