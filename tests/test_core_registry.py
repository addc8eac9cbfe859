"""The backend registry, exercised through real entry points of a test-only distribution."""
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from pygpgpu_core import registry
from pygpgpu_core.errors import BackendUnavailable, DeviceNotFound

DIST = Path(__file__).parent / "registry_dist"


@pytest.fixture
def plugins(monkeypatch):
    monkeypatch.syspath_prepend(str(DIST))
    registry.reset_registry()
    yield
    registry.reset_registry()


def test_plugin_backend_is_discovered(plugins):
    assert "acme" in registry.backend_names()
    names = registry.backend_names()
    builtin = [n for n in names if n in registry.PROBE_ORDER]
    assert names[: len(builtin)] == builtin  # cuda -> hip -> opencl first, plug-ins after
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        devices = registry.available_devices()
    assert {"acme:0", "acme:1", "acme:2"} <= set(devices)


def test_broken_plugin_is_warned_recorded_and_isolated(plugins):
    with pytest.warns(RuntimeWarning, match="broken on purpose"):
        registry.available_devices()
    diag = registry.diagnostics()
    assert "broken on purpose" in diag["broken"]
    assert diag["acme"] == "ok (3 devices)"
    with pytest.raises(BackendUnavailable, match="broken on purpose"):
        registry.get_device("broken")


def test_backend_without_device_is_recorded_not_fatal(plugins):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert not any(d.startswith("nodevice:") for d in registry.available_devices())
    assert "reports no device" in registry.diagnostics()["nodevice"]
    with pytest.raises(BackendUnavailable, match="reports no device"):
        registry.get_device("nodevice")


@pytest.mark.parametrize(
    "selector, name, index",
    [
        ("acme", "Acme Rocket 9000", 0),
        ("acme:1", "Acme Anvil", 1),
        ("acme:anvil", "Acme Anvil", 1),
        ("acme:rocket:1", "Acme Rocket 9000", 2),
        ("anvil", "Acme Anvil", 1),
        ("ROCKET:1", "Acme Rocket 9000", 2),
        ("acme:ACME2", "Acme Anvil", 1),
    ],
)
def test_get_device_by_selector(plugins, selector, name, index):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dev = registry.get_device(selector)
    assert (dev.name, dev.index) == (name, index)


@pytest.mark.parametrize("selector, detail", [
    ("acme:7", "index 7 is out of range"),
    ("acme:rocket:2", "2 device(s) match 'rocket'"),
    ("acme:nonesuch", "nothing matches 'nonesuch'"),
])
def test_device_not_found_lists_devices(plugins, selector, detail):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DeviceNotFound) as info:
            registry.get_device(selector)
    assert detail in str(info.value)
    assert "acme:0" in str(info.value) and "available_devices()" in str(info.value)


def test_unknown_backend_error_text(plugins):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DeviceNotFound) as info:
            registry.get_device("vulkan")
    text = str(info.value)
    assert "'vulkan' is neither an installed backend (" in text and "acme" in text
    with pytest.raises(BackendUnavailable) as info:
        registry.get_backend("vulkan")
    assert "no such backend is installed" in str(info.value)


def test_env_override_of_default_backend(plugins, monkeypatch):
    monkeypatch.setenv("PYGPGPU_BACKEND", "acme")
    assert registry.default_backend_name() == "acme"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert registry.get_device().name == "Acme Rocket 9000"


def test_import_pygpgpu_loads_no_vendor_library_and_scans_nothing():
    code = (
        "import sys, pygpgpu, pygpgpu_core.registry as r\n"
        "assert r._entry_points is None, 'entry points scanned at import'\n"
        "bad = [m for m in sys.modules if m.startswith(('pygpgpu_opencl','pygpgpu_cuda','pygpgpu_hip','pygpgpu_translate'))]\n"
        "assert not bad, bad\n"
        "libs = open('/proc/self/maps').read()\n"
        "assert 'libOpenCL' not in libs and 'libcuda' not in libs and 'amdhip' not in libs\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
