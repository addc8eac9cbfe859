"""Imported .cl files executed on an OpenCL device (PoCL in CI), compared with numpy."""
from __future__ import annotations

import importlib
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import kernel_files as kf
from pygpgpu_core.errors import GPGPUError
from pygpgpu_core.protocols import LocalMemory

DATA = Path(__file__).parent / "kernel_files"


@pytest.fixture
def kdir(tmp_path, cl_device):
    folder = tmp_path / "k"
    shutil.copytree(DATA, folder)
    sys.path.insert(0, str(folder))
    had = "cl" in kf.installed()
    kf.install("cl")
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        if str(getattr(sys.modules[name], "__file__", "") or "").startswith(str(folder)):
            del sys.modules[name]
    sys.path.remove(str(folder))
    if not had:
        kf.uninstall("cl")


def test_vecadd_work_size_inferred_and_in_brackets(kdir):
    import vecadd

    rng = np.random.default_rng(1)
    a = rng.random(1000, dtype=np.float32)
    b = rng.random(1000, dtype=np.float32)
    out = np.zeros_like(a)
    vecadd.vecadd(a, b, out, np.int32(len(a)))
    np.testing.assert_array_equal(out, a + b)

    out[:] = 0
    vecadd.vecadd[(1000, 256)](a, b, out, len(a))  # global rounded up to 1024; the kernel clamps with n
    np.testing.assert_array_equal(out, a + b)

    out[:] = 0
    vecadd.vecadd[(500, 100)]["opencl:0"](a, b, out, len(a))  # explicit size covers only the first half
    np.testing.assert_array_equal(out[:500], (a + b)[:500])
    assert not out[500:].any()

    out[:] = 0
    vecadd.vecadd(a=a, b=b, out=out, n=len(a))
    np.testing.assert_array_equal(out, a + b)


def test_device_object_and_name_selectors(kdir, cl_device):
    import vecadd

    a = np.arange(100, dtype=np.float32)
    for selector in (cl_device, "opencl", "ocl:0", cl_device.arch or "0"):
        out = np.zeros_like(a)
        vecadd.vecadd[selector](a, a, out, 100)
        np.testing.assert_array_equal(out, 2 * a)


def test_const_pointers_upload_only_and_outputs_read_back(kdir):
    from pygpgpu_core.gnp import reset_transfer_stats, transfer_stats
    import misc
    import vecadd

    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    reset_transfer_stats()
    vecadd.vecadd(a, a, out, 64)
    stats = transfer_stats()
    assert (stats["h2d"], stats["d2h"], stats["d2h_bytes"]) == (2, 1, out.nbytes)   # `a` twice: one upload

    # The kernel writes -1 through a cast-away const pointer; the host array must not see it.
    src = np.arange(32, dtype=np.float32)
    keep = src.copy()
    dst = np.zeros_like(src)
    assert misc.scribble.access == {"src": "read", "dst": "readwrite", "n": "value"}
    misc.scribble(src, dst, 32)
    np.testing.assert_array_equal(dst, keep + 1)
    np.testing.assert_array_equal(src, keep)


def test_saxpy_scalars_converted_and_checked(kdir, cl_device):
    import saxpy

    x = np.linspace(0, 1, 300, dtype=np.float32)
    y = np.ones(300, np.float32)
    expect = np.float32(2.5) * x + y
    saxpy.saxpy(y, x, 2.5, 300)  # Python float -> float, Python int -> unsigned int
    np.testing.assert_allclose(y, expect, rtol=1e-6)
    saxpy.saxpy(y, x, np.float32(-2.5), np.uint32(300))  # numpy scalars of the declared type pass as-is
    np.testing.assert_allclose(y, np.ones(300, np.float32), atol=1e-6)

    with pytest.raises(TypeError, match=r"parameter 'alpha' \(const float alpha\) is float \(float32\); got a numpy "
                                        r"float64 scalar"):
        saxpy.saxpy(y, x, np.float64(2.0), 300)
    with pytest.raises(ValueError, match=r"parameter 'n' .*-1 does not fit uint"):
        saxpy.saxpy(y, x, 1.0, -1)
    with pytest.raises(OverflowError, match="overflows float"):
        saxpy.saxpy(y, x, 1e300, 300)
    with pytest.raises(OverflowError, match=r"parameter 'alpha' .*overflows float"):   # past any double
        saxpy.saxpy(y, x, 2**1100, 300)
    with pytest.raises(TypeError, match=r"parameter 'n' .* an integer type; got float"):
        saxpy.saxpy(y, x, 1.0, 300.0)
    with pytest.raises(TypeError, match=r"parameter 'x' .* expects an array of float32; got a numpy array of "
                                        r"dtype float64"):
        saxpy.saxpy(y, x.astype(np.float64), 1.0, 300)
    with pytest.raises(ValueError, match=r"parameter 'y' .*read-only"):
        ro = y.copy()
        ro.flags.writeable = False
        saxpy.saxpy(ro, x, 1.0, 300)

    base = 2**40 + 5
    out = np.zeros(50, np.uint64)
    saxpy.offset_index(out, base, 7, 50)  # ulong and uchar by value
    np.testing.assert_array_equal(out, base + 7 * np.arange(50, dtype=np.uint64))
    with pytest.raises(ValueError, match="300 does not fit uchar"):
        saxpy.offset_index(out, base, 300, 50)

    if not cl_device.fp64:
        pytest.skip(f"{cl_device.name} has no fp64 for daxpy")
    yd = np.arange(10, dtype=np.float64)
    saxpy.daxpy(yd, np.ones(10), 1 / 3, 10)
    np.testing.assert_allclose(yd, np.arange(10) + 1 / 3, rtol=1e-15)


def test_struct_by_value_with_float4_and_struct_array(kdir):
    import particles

    n = 37
    ps = np.zeros(n, particles.Particle.dtype)
    ps["pos"] = np.arange(4 * n, dtype=np.float32).reshape(n, 4)
    ps["vel"] = 1.0
    ps["mass"] = np.linspace(1, 2, n, dtype=np.float32)
    ps["id"] = np.arange(n)
    ref = ps.copy()
    force = particles.Force((1.0, 2.0, 3.0, 0.0), 4.0, 3)
    dt = 0.5
    particles.advance(ps, force, dt, n)

    acc = np.array([1, 2, 3, 0], np.float32)[None, :] * (np.float32(4.0) / ref["mass"])[:, None]
    vel = ref["vel"] + acc * np.float32(dt)
    np.testing.assert_allclose(ps["vel"], vel, rtol=1e-6)
    np.testing.assert_allclose(ps["pos"], ref["pos"] + vel * np.float32(dt), rtol=1e-6)
    np.testing.assert_array_equal(ps["id"], ref["id"] * particles.SCALE + 3)
    np.testing.assert_array_equal(ps["mass"], ref["mass"])

    with pytest.raises(TypeError, match=r"parameter 'f' .* pass a Force instance"):
        particles.advance(ps, (1, 2, 3, 4), dt, n)
    with pytest.raises(TypeError, match=r"parameter 'ps' .* expects an array of dtype Particle.dtype"):
        particles.advance(np.zeros(n, np.float32), force, dt, n)


def test_struct_with_char_double_float3_by_value(kdir):
    import particles

    out = np.zeros(1, np.float64)
    p = particles.Pair(5, 0.25, (1.0, 2.0, 4.0))
    particles.pair_sum[1](p, out)
    assert out[0] == 5 + 0.25 + 1 + 2 + 4
    rec = np.zeros((), particles.Pair.dtype)
    rec["tag"], rec["value"], rec["v"] = 1, 0.5, (1, 1, 1)
    particles.pair_sum[1](rec[()], out)  # a numpy record of the same layout works too
    assert out[0] == 1 + 0.5 + 3


def test_include_define_and_cache_invalidation_on_header_edit(kdir):
    import particles

    x = np.arange(10, dtype=np.float32)
    out = np.zeros_like(x)
    particles.scale(x, out, 10)
    np.testing.assert_array_equal(out, x * 2)
    assert particles.SCALE == 2

    header = kdir / "particles.h"
    header.write_text(header.read_text().replace("#define SCALE 2", "#define SCALE 3"))
    st = os.stat(header)
    os.utime(header, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    importlib.reload(particles)
    assert particles.SCALE == 3
    particles.scale(x, out, 10)
    np.testing.assert_array_equal(out, x * 3)


def test_local_memory_and_explicit_groups(kdir):
    import misc

    n, group = 1000, 64
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    groups = -(-n // group)
    sums = np.zeros(groups, np.float32)
    misc.block_sum[(n, group)](x, sums, LocalMemory(group * 4), n)
    padded = np.zeros(groups * group, np.float32)
    padded[:n] = x
    np.testing.assert_allclose(sums, padded.reshape(groups, group).sum(axis=1), rtol=1e-5)
    with pytest.raises(TypeError, match=r"parameter 'scratch' .* pygpgpu.LocalMemory\(nbytes\)"):
        misc.block_sum[(n, group)](x, sums, group * 4, n)


def test_vector_array_and_vector_by_value(kdir):
    import misc
    from pygpgpu_core.vec_types import float4

    pts = np.arange(40, dtype=np.float32).reshape(10, 4)
    ref = pts.copy()
    misc.shift(pts, (1, 2, 3, 4), 10)  # work size = 10 float4 elements
    np.testing.assert_array_equal(pts, ref + [1, 2, 3, 4])
    misc.shift(pts, float4(0.5, 0.5, 0.5, 0.5), 10)
    np.testing.assert_array_equal(pts, ref + [1.5, 2.5, 3.5, 4.5])
    recs = np.zeros(3, float4.dtype)
    misc.shift(recs, (1, 1, 1, 1), 3)
    assert recs["w"].tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="expected 4 components, got 3"):
        misc.shift(pts, (1, 2, 3), 10)


def test_two_dimensional_work_size(kdir):
    import misc

    w, h = 37, 21
    out = np.full(w * h, -1, np.int32)
    misc.fill_2d[((w, h), (8, 4))](out, w, h)
    yy, xx = np.mgrid[0:h, 0:w]
    np.testing.assert_array_equal(out.reshape(h, w), yy * 1000 + xx)


def test_non_contiguous_output_and_empty_arrays(kdir):
    import vecadd

    a = np.arange(20, dtype=np.float32)
    big = np.zeros(40, np.float32)
    out = big[::2]
    vecadd.vecadd(a, a, out, 20)
    np.testing.assert_array_equal(big[::2], 2 * a)
    assert not big[1::2].any()
    empty = np.zeros(0, np.float32)
    vecadd.vecadd(empty, empty, empty, 0)  # nothing to launch, nothing to fail


def test_device_arrays_stay_resident(kdir, cl_device):
    from pygpgpu_core import gnp
    import vecadd

    a = gnp.asarray(np.arange(256, dtype=np.float32), device=cl_device)
    out = gnp.zeros(256, dtype=np.float32, device=cl_device)
    gnp.reset_transfer_stats()
    for _ in range(3):
        vecadd.vecadd(a, out, out, 256)  # out += a, on the device
    gnp.synchronize(cl_device)
    assert gnp.transfer_stats()["h2d"] == 0 and gnp.transfer_stats()["d2h"] == 0
    np.testing.assert_array_equal(out.get(), 3 * np.arange(256, dtype=np.float32))
    with pytest.raises(TypeError, match=r"parameter 'a' .* float32; got DeviceArray of dtype int32"):
        vecadd.vecadd(gnp.zeros(4, dtype=np.int32, device=cl_device), out, out, 4)



def test_device_array_views_are_seen_as_the_view(kdir, cl_device):
    """gnp views (an offset, a step, reversed, transposed) reach a handwritten kernel as the
    elements of the view, as numpy arrays and @kernel do: the kernel indexes from the buffer's
    start in C order, so the base buffer alone silently gave the base's first elements. Written
    views get the kernel's results in their own elements and nothing else."""
    from pygpgpu_core import gnp
    import vecadd

    host = np.arange(64, dtype=np.float32)
    base = gnp.asarray(host, device=cl_device)
    for key in (slice(3, 19), slice(None, 32, 2), slice(None, None, -4)):
        view, want = base[key], host[key]
        out = gnp.zeros(want.shape, dtype=np.float32, device=cl_device)
        vecadd.vecadd(view, view, out, want.size)
        np.testing.assert_array_equal(out.get(), 2 * want, err_msg=str(key))
    grid = gnp.asarray(host.reshape(8, 8), device=cl_device)
    out = gnp.zeros((8, 8), dtype=np.float32, device=cl_device)
    vecadd.vecadd(grid.T, grid, out, 64)
    np.testing.assert_array_equal(out.get(), host.reshape(8, 8).T + host.reshape(8, 8))
    target = gnp.zeros(64, dtype=np.float32, device=cl_device)
    vecadd.vecadd(base[:16], base[:16], target[1::4], 16)        # an output view
    expected = np.zeros(64, np.float32)
    expected[1::4] = 2 * host[:16]
    np.testing.assert_array_equal(target.get(), expected)


ALIAS = """
__kernel void bump(__global float* x, __global float* y, int n)
{
    int i = get_global_id(0);
    if (i < n) x[i] += 1.0f;
}
__kernel void twice(__global const float* src, __global float* dst, int n)
{
    int i = get_global_id(0);
    if (i < n) dst[i] = src[i] * 2.0f;
}
"""


def test_one_numpy_array_for_two_pointers_is_one_buffer(kdir):
    """The same numpy array for two pointer parameters is one buffer, as the same pointer is in C
    (each was uploaded and read back apart, so the unwritten copy read back last overwrote the
    kernel's results); different arrays overlapping in memory are refused when one is written."""
    (kdir / "alias.cl").write_text(ALIAS)
    m = kf.load(kdir / "alias.cl")
    x = np.zeros(64, np.float32)
    m.bump(x, x, 64)
    np.testing.assert_array_equal(x, np.ones(64, np.float32))
    x = np.arange(64, dtype=np.float32)
    m.twice(x, x, 64)                                   # in place through a const and a written pointer
    np.testing.assert_array_equal(x, 2 * np.arange(64, dtype=np.float32))
    x = np.zeros(64, np.float32)
    m.bump(x[::2], x[1::2], 32)                         # interleaved, no element shared: fine
    np.testing.assert_array_equal(x, np.tile(np.float32([1, 0]), 32))
    with pytest.raises(ValueError, match=r"parameter 'y'.*overlaps.*parameter 'x'"):
        m.bump(x[1:], x[:-1], 63)
    with pytest.raises(ValueError, match=r"parameter 'dst'.*overlaps.*parameter 'src'"):
        m.twice(x[1:], x[:-1], 63)
    np.testing.assert_array_equal(x, np.tile(np.float32([1, 0]), 32))   # refused before any launch

def test_compile_error_names_the_file(kdir):
    (kdir / "broken_body.cl").write_text("__kernel void k(__global int* x) { x[0] = undefined_name; }\n")
    mod = kf.load(kdir / "broken_body.cl")
    with pytest.raises(GPGPUError) as info:
        mod.k[1](np.zeros(1, np.int32))
    assert "broken_body.cl" in str(info.value) and "undefined_name" in str(info.value)



def test_compile_error_log_points_at_the_file_and_line(kdir):
    """The compiler's own message names the kernel file and the line, also without any #include
    (PoCL builds from a temporary file and named that: tempfile_XXXX.cl:3:23)."""
    path = kdir / "broken_line.cl"
    path.write_text("__kernel void k(__global int* x)\n{\n    x[0] = undefined_name;\n}\n")
    mod = kf.load(path)
    with pytest.raises(GPGPUError) as info:
        mod.k[1](np.zeros(1, np.int32))
    assert f"{path.resolve()}:3:" in info.value.log

def test_kernel_named_like_a_builtin(kdir):
    (kdir / "builtin_names.cl").write_text(
        "__kernel void step(__global float* x, int n) { int i = get_global_id(0); if (i < n) x[i] += 1.0f; }\n")
    mod = kf.load(kdir / "builtin_names.cl")
    x = np.zeros(5, np.float32)
    mod.step(x, 5)  # PoCL calls this kernel _cl_step; the module still exposes it as step
    np.testing.assert_array_equal(x, np.ones(5, np.float32))


def test_climport_from_the_meta_package(kdir):
    import pygpgpu

    finder = pygpgpu.climport
    assert "cl" in kf.installed() and finder is pygpgpu.climport
    import vecadd

    a = np.arange(8, dtype=np.float32)
    out = np.zeros_like(a)
    vecadd.vecadd(a, a, out, 8)
    np.testing.assert_array_equal(out, 2 * a)


def test_backend_buffer_argument_stays_on_device(kdir, cl_device):
    import vecadd

    ctx = cl_device.context()
    a = np.arange(16, dtype=np.float32)
    buf_a = ctx.buffer_from_host(a)
    buf_out = ctx.buffer(a.nbytes)
    try:
        vecadd.vecadd(buf_a, buf_a, buf_out, 16)  # work size from the first buffer: 16 floats
        result = np.empty_like(a)
        buf_out.read(result)
        np.testing.assert_array_equal(result, 2 * a)
    finally:
        buf_a.close()
        buf_out.close()


def test_constant_address_space_pointer(kdir):
    import misc

    assert misc.lookup.access == {"table": "read", "idx": "read", "out": "readwrite", "n": "value"}
    table = np.array([10, 20, 30, 40], np.float32)
    idx = np.array([3, 0, 2, 2, 1], np.int32)
    out = np.zeros(5, np.float32)
    misc.lookup[5](table, idx, out, 5)  # the first array (table) has 4 elements: the size comes from brackets
    np.testing.assert_array_equal(out, table[idx])
    ns = {}
    exec("from misc import *", ns)
    assert {"lookup", "block_sum", "TILE"} <= set(ns) and "__getattr__" not in ns


def test_a_log_naming_the_program_text_is_given_the_files_places():
    """NVIDIA's OpenCL ignores #line and names places "<kernel>:LINE:" in the compiled text; the
    log then names the file and line the text's #line markers give (also inside an include)."""
    from pygpgpu_core.cdecl._source import line_marker, name_log_places

    compiled = "\n".join([line_marker(1, "/src/blur.cl"), "int a;", line_marker(1, "/src/common.h"),
                          "int b;", line_marker(3, "/src/blur.cl"), "x[0] = undefined_name;"])
    log = "<kernel>:2:5: error: one\n<kernel>:4:1: error: two\n<kernel>:6:12: error: three\n<kernel>:99:1: past"
    assert name_log_places(log, compiled) == ("/src/blur.cl:1:5: error: one\n/src/common.h:1:1: error: two\n"
                                              "/src/blur.cl:3:12: error: three\n<kernel>:99:1: past")
