"""Core's tables of backend names are derived from what is registered (issue 34, item 2): the one
table of the built-ins (pygpgpu_core.builtin_backends: probe order, aliases) plus the
``pygpgpu.backends`` entry points, and the kernel-file languages (cdecl.LANGUAGES) for the
kernel-file kinds and import hooks. The built-ins keep exactly the names and order they had; the
example plug-in of docs/writing-a-backend.md (tests/backend_example, backend ``relay``) appears
wherever a built-in does, and a registered language is a kernel-file kind."""
from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import numpy as np
import pygpgpu
import pytest
from pygpgpu import cli
from pygpgpu_core import registry
from pygpgpu_core._cachesize import NAMESPACES, namespaces
from pygpgpu_core.cache import DiskCache, clear_cache
from pygpgpu_core import kernel_files
from pygpgpu_core.cdecl import LANGUAGES, register_language
from pygpgpu_core.cdecl import _languages
from pygpgpu_core.cdecl._languages import OPENCL_C
from pygpgpu_core.kernel_files import KINDS, Kind
from pygpgpu_core.selector import BACKEND_ALIASES, canonical_backend, parse_selector

EXAMPLE = Path(__file__).parent / "backend_example"


@pytest.fixture
def relay_installed(monkeypatch):
    """The example plug-in on the path: its entry point is found (no device needed)."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    registry.reset_registry()
    yield
    registry.reset_registry()


def test_the_built_ins_keep_their_names_order_and_aliases():
    assert registry.PROBE_ORDER == ("cuda", "hip", "opencl")
    assert BACKEND_ALIASES == {"opencl": "opencl", "ocl": "opencl", "cl": "opencl", "cuda": "cuda", "cu": "cuda",
                               "nvidia": "cuda", "hip": "hip", "rocm": "hip", "amd": "hip"}
    assert registry.known_backend_names()[:3] == ["cuda", "hip", "opencl"]
    assert {"translate", "opencl", "cuda", "hip", "kernel_files", "failed"} <= namespaces()
    assert dict(KINDS) == {"cl": Kind("cl", ".cl", "opencl", "opencl", "__clcache__"),
                           "cu": Kind("cu", ".cu", "cuda", "cuda", "__cucache__"),
                           "hip": Kind("hip", ".hip", "hip", "hip", "__hipcache__")}
    # pygpgpu's import hooks (named for type checkers) are exactly the kernel-file kinds' hooks
    assert set(pygpgpu._IMPORT_HOOKS) == {f"{suffix}import" for suffix in KINDS}


def test_a_plugin_backend_appears_wherever_a_built_in_does(relay_installed, tmp_path, monkeypatch):
    assert "relay" in registry.backend_names()
    names = registry.known_backend_names()
    assert names[:3] == ["cuda", "hip", "opencl"] and "relay" in names[3:]      # after the built-ins
    assert canonical_backend("Relay") == "relay"
    assert parse_selector("relay:0", set(registry.backend_names())) == registry.Selector(backend="relay", index=0)
    # the cache: its binaries' namespace is its name, measured and cleared like a built-in's
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    assert "relay" in namespaces()
    entry = DiskCache("relay")        # (a process's own DiskCache namespaces count too: forget that here,
    NAMESPACES.discard("relay")       # so what follows is the namespace derived from the registry)
    key = "ab" * 32
    entry.put(key, b"relay binary")
    assert entry.get(key) == b"relay binary"
    assert clear_cache("relay") > 0 and entry.get(key) is None


def test_the_cli_takes_a_plugin_backend_and_says_what_it_knows(relay_installed, tmp_path, capsys):
    kernels = tmp_path / "relay_kernels.py"
    kernels.write_text(textwrap.dedent('''
        from pygpgpu import kernel

        @kernel
        def double(x, out):
            for i in range(out.shape[0]):
                out[i] = x[i] * 2
    '''))
    assert cli.main(["inspect", f"{kernels}:double", "--backend", "relay", "--types", "float32[:], float32[:]"]) == 0
    assert "__kernel" in capsys.readouterr().out              # the relay's dialect is OpenCL C
    assert cli.main(["inspect", f"{kernels}:double", "--backend", "nosuch", "--types", "float32[:], float32[:]"]) == 2
    err = capsys.readouterr().err
    assert "names no backend" in err and "relay" in err and "cuda" in err and "rocm" in err


def test_a_registered_language_is_a_kernel_file_kind_with_an_import_hook(tmp_path):
    lang = dataclasses.replace(OPENCL_C, name="relaycl", suffix="rcl")
    try:
        assert register_language(lang) is lang
        assert LANGUAGES["relaycl"] is lang
        assert KINDS["rcl"] == Kind("rcl", ".rcl", "relaycl", "relaycl", "__rclcache__")
        assert pygpgpu.rclimport is not None                 # the hook of the new kind installs its finder
        src = tmp_path / "scale.rcl"
        src.write_text("__kernel void scale(__global float *x, float k) { x[get_global_id(0)] *= k; }\n")
        module = kernel_files.load(src)                         # the kind from the new suffix
        assert list(module.kernels) == ["scale"] and module.scale is module.kernels["scale"]
        with pytest.raises(ValueError, match="suffix 'cl' is opencl's"):
            register_language(dataclasses.replace(OPENCL_C, name="other", suffix="cl"))
    finally:
        if "rcl" in KINDS:
            kernel_files.uninstall("rcl")
        _languages._registered.pop("relaycl", None)
    assert "rcl" not in KINDS
    np.testing.assert_array_equal(sorted(KINDS), ["cl", "cu", "hip"])


def test_with_no_backend_installed_the_error_names_every_built_in_extra(monkeypatch):
    from pygpgpu_core.errors import DeviceNotFound

    monkeypatch.delenv("PYGPGPU_BACKEND", raising=False)
    registry.reset_registry()
    monkeypatch.setattr(registry, "_entry_points", {})         # as if no backend package were installed
    try:
        with pytest.raises(DeviceNotFound) as err:
            registry.default_backend_name()
    finally:
        registry.reset_registry()
    text = str(err.value)
    assert "no backend package is installed" in text
    assert all(f"pygpgpu[{name}]" in text for name in registry.PROBE_ORDER), text


def test_a_built_in_that_is_not_installed_is_still_known_and_its_cache_clearable(monkeypatch, tmp_path):
    """Names registration cannot give: a built-in without its package is still a known backend
    (the error for it says which extra to install) and a cache namespace (its old binaries can
    be cleared)."""
    registry.reset_registry()
    monkeypatch.setattr(registry, "_entry_points", {})         # no backend package installed
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path))
    try:
        assert registry.backend_names() == []
        assert registry.known_backend_names() == ["cuda", "hip", "opencl"]
        assert {"cuda", "hip", "opencl"} <= namespaces()
        assert clear_cache("hip") == 0                              # a namespace, though empty
        with pytest.raises(registry.BackendUnavailable, match=r"pygpgpu\[hip\]"):
            registry.get_backend("rocm")
    finally:
        registry.reset_registry()
