"""Dialects are objects in a registry: a third-party backend can bring its own (registered in
code or as a target of the ``pygpgpu.targets`` entry-point group), and a name nobody registered is an
error, never OpenCL."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import skip_no_device
from pygpgpu import kernel
from pygpgpu_core import registry, targets
from pygpgpu_translate import Dialect, register_dialect
from pygpgpu_translate._dialects import CUDA, DIALECTS, OpenCL, UnknownDialect, dialect_for

EXAMPLE = Path(__file__).parent / "backend_example"
MARK = "// written by the tagged OpenCL dialect"


class TaggedOpenCL(OpenCL):
    """OpenCL C with a mark in the header and its own name for float32 square roots' suffix-free math."""

    def headers(self, features):
        return [MARK] + super().headers(features)


@pytest.fixture
def tagged():
    d = register_dialect("taggedcl", TaggedOpenCL())
    yield d
    DIALECTS.pop("taggedcl", None)


@kernel
def scale(x, out, a):
    for i in range(out.shape[0]):
        out[i] = x[i] * a


def _args():
    x = np.arange(100, dtype=np.float32)
    return x, np.zeros_like(x), 3.0


def test_an_unknown_dialect_is_an_error_not_opencl():
    with pytest.raises(ValueError, match="unknown dialect 'nosuch'"):
        dialect_for("nosuch")
    with pytest.raises(UnknownDialect, match="nosuch"):
        scale.inspect(*_args(), backend="nosuch")


def test_a_registered_dialect_writes_the_source(tagged):
    src = scale.inspect(*_args(), backend="taggedcl").source
    assert MARK in src and "__kernel void scale(" in src
    assert MARK not in scale.inspect(*_args(), backend="opencl").source       # translations kept apart
    assert dialect_for("taggedcl") is tagged and tagged.name == "taggedcl"


def test_a_taken_name_or_a_non_dialect_is_refused(tagged):
    assert register_dialect("taggedcl", tagged) is tagged                    # the same object again: fine
    with pytest.raises(ValueError, match="already registered"):
        register_dialect("opencl", TaggedOpenCL())
    with pytest.raises(TypeError, match="Dialect"):
        register_dialect("strcl", "opencl")


def test_a_dialect_from_an_entry_point_loads_on_first_use(tmp_path, monkeypatch):
    (tmp_path / "epdialect_mod.py").write_text(textwrap.dedent('''
        from pygpgpu_translate.target import CUDA, Target

        class EpCuda(CUDA):
            kernel_prefix = 'extern "C" __global__ __launch_bounds__(256) void'

        target = Target("epcuda", "epdialect_mod:EpCuda")      # the dialect by reference, imported on first use
    '''))
    info = tmp_path / "epdialect-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: epdialect\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pygpgpu.targets]\nepcuda = epdialect_mod:target\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    targets._reset_for_tests()
    try:
        assert "epcuda" not in DIALECTS
        src = scale.inspect(*_args(), backend="epcuda").source
        assert "__launch_bounds__(256) void scale(" in src
        assert isinstance(DIALECTS["epcuda"], CUDA)
    finally:
        DIALECTS.pop("epcuda", None)
        sys.modules.pop("epdialect_mod", None)
        targets._reset_for_tests()


@pytest.fixture
def relay(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    registry.reset_registry()
    try:
        registry.backend_devices("opencl")
    except Exception as exc:
        skip_no_device("opencl", f"the relay example runs over OpenCL: {exc}")
    import pygpgpu_relay_backend
    yield pygpgpu_relay_backend.backend
    registry.reset_registry()


def test_a_plugin_backend_names_its_own_dialect(relay, tagged, monkeypatch):
    monkeypatch.setattr(relay, "dialect", "taggedcl")

    @kernel
    def twice(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * 2

    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    twice["relay"](x, out)
    np.testing.assert_array_equal(out, x * 2)
    assert [key[0] for key in twice._translations] == ["taggedcl"]
    assert MARK in next(iter(twice._translations.values())).source
    assert MARK in twice.inspect(x, out, backend="relay").source


def test_a_plugin_backend_with_an_unknown_dialect_is_refused(relay, monkeypatch):
    monkeypatch.setattr(relay, "dialect", "nosuch")

    @kernel
    def copy(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i]

    x = np.arange(8, dtype=np.float32)
    with pytest.raises(UnknownDialect, match="nosuch"):
        copy["relay"](x, np.zeros_like(x))
    with pytest.raises(UnknownDialect, match="nosuch"):
        copy.inspect(x, np.zeros_like(x), backend="relay")


def test_every_dialect_is_a_dialect_object():
    for name in ("opencl", "cuda", "hip"):
        d = dialect_for(name)
        assert isinstance(d, Dialect) and d.name == name
    assert isinstance(dialect_for("hip"), CUDA)


def test_a_dialect_that_leaves_out_a_spelling_says_which():
    """A plug-in dialect built on the base class without barrier/mem_fence/atomic_source/atomic_cas_global_int gets an error
    naming the dialect and the missing method, not a bare NotImplementedError."""

    class Bare(Dialect):
        name = "barecl"

    bare = Bare()
    for call in (lambda: bare.barrier("local"), lambda: bare.mem_fence("global"),
                 lambda: bare.atomic_source("add", "int", False), lambda: bare.atomic_cas_global_int("p", "0", "1")):
        with pytest.raises(NotImplementedError, match=r"dialect 'barecl' \(Bare\) does not define \w+\(\)"):
            call()
