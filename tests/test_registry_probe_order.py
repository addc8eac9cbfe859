"""The default backend (no ``$PYGPGPU_BACKEND``): the first with a device of cuda -> hip ->
opencl, and only then plug-in backends, alphabetically, even where a plug-in's name sorts first
and it has devices. Installed backends and their devices are stood in for, so the order is
tested whatever this machine has."""
from __future__ import annotations

import pytest

from pygpgpu_core import registry

# (installed backends, those with a device) -> the default backend
CASES = [
    ({"aaa_plugin", "opencl"}, {"aaa_plugin", "opencl"}, "opencl"),
    ({"aaa_plugin", "opencl", "cuda"}, {"aaa_plugin", "opencl", "cuda"}, "cuda"),
    ({"aaa_plugin", "hip", "opencl"}, {"aaa_plugin", "hip", "opencl"}, "hip"),
    ({"aaa_plugin", "cuda", "opencl"}, {"aaa_plugin", "opencl"}, "opencl"),
    ({"aaa_plugin", "zzz_plugin", "opencl"}, {"aaa_plugin", "zzz_plugin"}, "aaa_plugin"),
    ({"zzz_plugin", "aaa_plugin"}, {"zzz_plugin"}, "zzz_plugin"),
]


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.delenv(registry.ENV_VAR, raising=False)

    def install(names, with_devices):
        monkeypatch.setattr(registry, "_scan", lambda: {n: None for n in sorted(names)})
        monkeypatch.setattr(registry, "_try_devices", lambda name: [object()] if name in with_devices else [])
    return install


@pytest.mark.parametrize("installed, with_devices, default", CASES)
def test_builtins_are_probed_before_plugins(stand_in, installed, with_devices, default):
    stand_in(installed, with_devices)
    assert registry.default_backend_name() == default
    names = registry.backend_names()
    builtins = [n for n in registry.PROBE_ORDER if n in installed]
    assert names == builtins + sorted(installed - set(builtins))
