"""Handwritten .wgsl files imported as modules (pygpgpu_webgpu.wgslimport): a kernel per @compute
entry point, parameters from the @group/@binding variables it reaches, numpy arrays staged and
read_write ones read back, uniforms from numbers. The declaration scanner is tested without a device."""
from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

from webgpu_support import webgpu_device

MODULE = """
// two entry points sharing some bindings; /* a comment mentioning @binding(9) */
@binding(0) @group(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(1) @binding(0) var<uniform> scale: f32;
@group(1) @binding(1) var<storage, read_write> counts: array<atomic<u32>>;

const WG = 32u;

fn scaled(v: f32) -> f32 { return v * scale; }

@compute @workgroup_size(WG)
fn add_scaled(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= arrayLength(&out)) { return; }
    out[i] = a[i] + scaled(b[i]);
}

@compute @workgroup_size(16, 1, 1)
fn tally(@builtin(global_invocation_id) g: vec3<u32>) {
    let i = g.x;
    if (i >= arrayLength(&a)) { return; }
    atomicAdd(&counts[i % arrayLength(&counts)], u32(a[i] > 0.0));
}
"""


@pytest.fixture()
def wgsl_module(tmp_path, monkeypatch):
    webgpu_device()                        # skips, saying why, where the plug-in or an adapter is missing
    (tmp_path / "shaders.wgsl").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    import pygpgpu_webgpu.wgslimport as hook  # noqa: F401 (installs the finder)
    sys.modules.pop("shaders", None)
    import shaders
    yield shaders
    sys.modules.pop("shaders", None)


def test_the_scanner_reads_bindings_entry_points_and_what_each_reaches():
    pytest.importorskip("pygpgpu_webgpu")
    from pygpgpu_webgpu._wgsl import scan
    decls = scan(textwrap.dedent(MODULE))
    assert [(b.group, b.binding, b.name, b.space, b.access) for b in decls.bindings] == [
        (0, 0, "a", "storage", "read"), (0, 1, "b", "storage", "read"), (0, 2, "out", "storage", "read_write"),
        (1, 0, "scale", "uniform", "read"), (1, 1, "counts", "storage", "read_write")]
    add, tally = decls.entry_points["add_scaled"], decls.entry_points["tally"]
    assert [b.name for b in add.params] == ["a", "b", "out", "scale"]     # scale through the helper
    assert add.workgroup_size == (32,) and tally.workgroup_size == (16, 1, 1)
    assert [b.name for b in tally.params] == ["a", "counts"]
    assert "scaled" not in decls.entry_points


def test_two_variables_on_one_binding_are_an_import_error(tmp_path):
    pytest.importorskip("pygpgpu_webgpu")
    from pygpgpu_webgpu import load
    path = tmp_path / "clash.wgsl"
    path.write_text("@group(0) @binding(0) var<storage, read> a: array<f32>;\n"
                    "@group(0) @binding(0) var<storage, read> b: array<f32>;\n")
    with pytest.raises(ImportError, match=r"clash.wgsl:2: 'b' and 'a' \(line 1\) both use @group\(0\) @binding\(0\)"):
        load(path)


def test_a_module_runs_on_numpy_arrays_and_reads_back_only_written_bindings(wgsl_module):
    webgpu_device()
    n = 300
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    a_before = a.copy()
    out = np.zeros(n, np.float32)
    wgsl_module.add_scaled(a, b, out, 0.25)                 # the work size: the first array's length
    np.testing.assert_allclose(out, a + np.float32(0.25) * b, rtol=1e-6)
    np.testing.assert_array_equal(a, a_before)
    assert wgsl_module.__kernels__ == ["add_scaled", "tally"]
    counts = np.zeros(7, np.uint32)
    wgsl_module.tally(a=a, counts=counts)                  # keywords are the WGSL names
    expected = np.bincount(np.arange(n)[a > 0] % 7, minlength=7)
    np.testing.assert_array_equal(counts, expected)


def test_brackets_pick_the_device_and_the_work_size(wgsl_module):
    dev = webgpu_device()
    a = np.ones(100, np.float32)
    out = np.zeros(100, np.float32)
    wgsl_module.add_scaled[dev.selector][(40,)](a, a, out, 1.0)      # only the first 40 items (two groups of 32)
    np.testing.assert_array_equal(out, np.where(np.arange(100) < 64, 2.0, 0.0).astype(np.float32))
    with pytest.raises(ValueError, match="workgroup_size"):
        wgsl_module.add_scaled[(100, 64)](a, a, out, 1.0)


def test_device_arrays_pass_without_copies_and_stay_written(wgsl_module):
    import pygpgpu.numpy as gnp
    dev = webgpu_device()
    a = gnp.asarray(np.arange(50, dtype=np.float32), device=dev)
    out = gnp.zeros(50, dtype=np.float32, device=dev)
    wgsl_module.add_scaled(a, a, out, 3.0)
    np.testing.assert_array_equal(np.asarray(out), np.arange(50, dtype=np.float32) * 4)
    with pytest.raises(ValueError, match="view into a device array"):
        wgsl_module.add_scaled(a[1:], a[1:], out[1:], 3.0)


def test_wrong_dtypes_and_arguments_are_named(wgsl_module):
    webgpu_device()
    a = np.ones(8, np.float64)
    with pytest.raises(TypeError, match=r"binding 'a' is array<f32>; the array given is float64"):
        wgsl_module.add_scaled(a, a, a, 1.0)
    f = np.ones(8, np.float32)
    with pytest.raises(TypeError, match="missing scale"):
        wgsl_module.add_scaled(f, f, f)
    with pytest.raises(TypeError, match="no binding 'alpha'"):
        wgsl_module.add_scaled(f, f, f, alpha=1.0)
    with pytest.raises(ValueError, match="read_write"):
        wgsl_module.add_scaled(f, f, f[::2], 1.0)


def test_atomic_arrays_check_their_element_type(wgsl_module):
    webgpu_device()
    f = np.ones(8, np.float32)
    with pytest.raises(TypeError, match=r"binding 'counts' is array<atomic<u32>>; the array given is int32"):
        wgsl_module.tally(f, np.zeros(4, np.int32))
