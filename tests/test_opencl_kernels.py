"""OpenCL backend: real kernels on the OpenCL device (PoCL in CI), compared with numpy."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import pygpgpu_opencl
from pygpgpu_core.errors import BackendUnavailable
from pygpgpu_core.protocols import LocalMemory
from pygpgpu_opencl import Buffer, Context, Kernel, Program
from conftest import skip_no_device


@pytest.fixture(scope="module")
def ctx() -> Context:
    try:
        devices = pygpgpu_opencl.backend.devices()
    except BackendUnavailable as exc:
        skip_no_device("opencl", f"no OpenCL runtime on this machine: {exc}")
    if not devices:
        skip_no_device("opencl", "the OpenCL runtime lists no device")
    context = Context(devices[0])  # private, so closing tests elsewhere cannot affect it
    yield context
    context.close()


RNG = np.random.default_rng(1234)

VECADD = """
__kernel void vecadd(__global const float* a, __global const float* b, __global float* out, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = a[i] + b[i];
}
"""


def test_vecadd_with_buffers(ctx):
    n = 1000  # not a multiple of the local size: global is rounded up, the kernel guards
    a = RNG.random(n, dtype=np.float32)
    b = RNG.random(n, dtype=np.float32)
    k = ctx.program(VECADD).kernel("vecadd")
    assert isinstance(k, Kernel)
    with ctx.buffer_from_host(a) as A, ctx.buffer_from_host(b) as B, ctx.buffer(a.nbytes) as OUT:
        k[(n, 256)](A, B, OUT, np.int32(n))
        out = OUT.read(np.empty(n, np.float32))
    np.testing.assert_array_equal(out, a + b)


def test_saxpy_with_launch_and_python_scalars(ctx):
    src = """
    __kernel void saxpy(__global const float* x, __global const float* y, __global float* out,
                        float alpha, int n) {
        int i = get_global_id(0);
        if (i < n) out[i] = alpha * x[i] + y[i];
    }"""
    n = 4097
    x = RNG.random(n, dtype=np.float32)
    y = RNG.random(n, dtype=np.float32)
    prog = ctx.program(src, name="saxpy.cl")
    k = prog.kernel("saxpy")
    X, Y, OUT = ctx.buffer_from_host(x), ctx.buffer_from_host(y), ctx.buffer(x.nbytes)
    # Python float/int are accepted because the driver reports the parameter types.
    k.launch((n,), None, (X, Y, OUT, 2.5, n))
    out = OUT.read(np.empty(n, np.float32))
    np.testing.assert_allclose(out, np.float32(2.5) * x + y, rtol=1e-6)


def test_float64_and_int64(ctx):
    if not ctx.device.fp64:
        pytest.skip(f"{ctx.device.name} has no fp64 support")
    src = """
    #pragma OPENCL EXTENSION cl_khr_fp64 : enable
    __kernel void f64(__global const double* x, __global double* out, double s, long n) {
        long i = get_global_id(0);
        if (i < n) out[i] = sqrt(x[i]) * s;
    }
    __kernel void i64(__global const long* x, __global long* out, long add, long n) {
        long i = get_global_id(0);
        if (i < n) out[i] = x[i] * 3 + add;
    }"""
    prog = ctx.program(src)
    n = 333
    x = RNG.random(n) * 1e6
    out = np.zeros(n)
    prog.kernel("f64")[(n, 64)](x, out, np.float64(1.0 / 3.0), np.int64(n))
    np.testing.assert_allclose(out, np.sqrt(x) * (1.0 / 3.0), rtol=1e-15)
    xi = RNG.integers(-(2**40), 2**40, n, dtype=np.int64)
    outi = np.zeros(n, np.int64)
    prog.kernel("i64")[n](xi, outi, np.int64(2**41 + 7), np.int64(n))
    np.testing.assert_array_equal(outi, xi * 3 + (2**41 + 7))


class Params(ctypes.Structure):
    _fields_ = [("scale", ctypes.c_float), ("offset", ctypes.c_int32), ("bias", ctypes.c_double)]


STRUCT_SRC = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef struct { float scale; int offset; double bias; } Params;
__kernel void affine(__global const float* x, __global double* out, Params p, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = (double)(x[i] * p.scale) + (double)p.offset + p.bias;
}
"""


def test_struct_by_value(ctx):
    if not ctx.device.fp64:
        pytest.skip(f"{ctx.device.name} has no fp64 support")
    k = ctx.program(STRUCT_SRC).kernel("affine")
    n = 100
    x = RNG.random(n, dtype=np.float32)
    out = np.zeros(n)
    p = Params(1.5, -3, 0.25)
    k[(n, None)](x, out, p, np.int32(n))
    expected = (x * np.float32(1.5)).astype(np.float64) - 3 + 0.25
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    # The same through the hot path, with the struct changed in place between launches.
    X, OUT = ctx.buffer_from_host(x), ctx.buffer(out.nbytes)
    fn = k.launcher(["buffer", "buffer", Params, np.int32])
    fn((n,), None, (X, OUT, p, n))
    p.scale = 2.0
    fn((n,), None, (X, OUT, p, n))  # same object, new contents: must be set again
    got = OUT.read(np.empty(n))
    np.testing.assert_allclose(got, (x * np.float32(2.0)).astype(np.float64) - 3 + 0.25, rtol=1e-12)


def test_local_memory_argument(ctx):
    src = """
    __kernel void group_sum(__global const float* x, __global float* sums, __local float* scratch) {
        int lid = get_local_id(0);
        int size = get_local_size(0);
        scratch[lid] = x[get_global_id(0)];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = size / 2; s > 0; s /= 2) {
            if (lid < s) scratch[lid] += scratch[lid + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) sums[get_group_id(0)] = scratch[0];
    }"""
    k = ctx.program(src).kernel("group_sum")
    group, groups = 64, 16
    x = RNG.integers(0, 100, group * groups).astype(np.float32)  # exact sums in float32
    sums = np.zeros(groups, np.float32)
    k[(group * groups, group)](x, sums, LocalMemory(group * 4))
    np.testing.assert_array_equal(sums, x.reshape(groups, group).sum(axis=1))
    # Hot path: "local" accepts LocalMemory or a byte count.
    X, S = ctx.buffer_from_host(x), ctx.buffer(sums.nbytes)
    fn = k.launcher(["buffer", "buffer", "local"])
    fn(group * groups, group, (X, S, group * 4))
    np.testing.assert_array_equal(S.read(np.empty(groups, np.float32)), x.reshape(groups, group).sum(axis=1))


SCALAR_TYPES = [
    ("char", np.int8),
    ("uchar", np.uint8),
    ("short", np.int16),
    ("ushort", np.uint16),
    ("int", np.int32),
    ("uint", np.uint32),
    ("long", np.int64),
    ("ulong", np.uint64),
    ("float", np.float32),
    ("double", np.float64),
    ("half", np.float16),
]


@pytest.mark.parametrize("ctype, dtype", SCALAR_TYPES, ids=[t for t, _ in SCALAR_TYPES])
def test_every_scalar_type(ctx, ctype, dtype):
    dev = ctx.device
    header = ""
    if ctype == "double":
        if not dev.fp64:
            pytest.skip(f"{dev.name} has no fp64 support")
        header = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    if ctype == "half":
        if not dev.fp16:
            pytest.skip(f"{dev.name} does not report cl_khr_fp16, so half kernel arguments are unsupported")
        header = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
    src = header + f"""
    __kernel void echo(__global {ctype}* out, {ctype} v) {{
        out[0] = v;
        out[1] = v - ({ctype})1;
    }}"""
    k = ctx.program(src).kernel("echo")
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        values = [info.min, info.max, info.min // 3 if info.min else info.max // 3]
    else:
        info = np.finfo(dt)
        values = [float(info.min) / 2, float(info.max) / 2, -1.0 / 3.0]
    for value in values:
        for make in (dt.type, int if dt.kind in "iu" else float):  # numpy scalar, then Python number
            out = np.zeros(2, dtype=dt)
            k[1](out, make(value))
            expected = np.array([value, value], dtype=dt) - np.array([0, 1], dtype=dt)
            np.testing.assert_array_equal(out, expected)
    # The hot path with the dtype declared once.
    OUT = ctx.buffer(2 * dt.itemsize)
    fn = k.launcher(["buffer", dt])
    for value in values:
        fn(1, None, (OUT, dt.type(value)))
        got = OUT.read(np.empty(2, dt))
        np.testing.assert_array_equal(got, np.array([value, value], dtype=dt) - np.array([0, 1], dtype=dt))


def test_bracket_forms_and_2d(ctx):
    src = """
    __kernel void index2d(__global int* out, int w, int h) {
        int x = get_global_id(0), y = get_global_id(1);
        if (x < w && y < h) out[y * w + x] = y * 1000 + x;
    }"""
    k = ctx.program(src).kernel("index2d")
    w, h = 37, 21
    expected = np.arange(h)[:, None] * 1000 + np.arange(w)[None, :]
    for config in [((w, h), (8, 4)), ((w, h),), ((w, h), None)]:
        out = np.full((h, w), -1, np.int32)
        k[config](out, np.int32(w), np.int32(h))
        np.testing.assert_array_equal(out, expected)
    flat = np.full(w * h, -1, np.int32)
    k2 = ctx.program(VECADD).kernel("vecadd")
    ones = np.ones(w * h, np.float32)
    res = np.zeros(w * h, np.float32)
    k2[w * h](ones, ones, res, np.int32(w * h))  # k[global]: runtime-chosen local size
    np.testing.assert_array_equal(res, 2 * ones)
    k(flat, np.int32(w * h), np.int32(1), global_size=(w * h, 1), local_size=None)
    np.testing.assert_array_equal(flat, np.arange(w * h))


def test_numpy_arrays_as_arguments(ctx):
    src = """
    __kernel void scale(__global float* x, __global const float* y, float s, int n) {
        int i = get_global_id(0);
        if (i < n) x[i] = x[i] * s + y[i];
    }"""
    k = ctx.program(src).kernel("scale")
    n = 500
    base = RNG.random(2 * n, dtype=np.float32)
    strided = base[::2]  # not contiguous: copied in, and the result copied back in place
    y = RNG.random(n, dtype=np.float32)
    expected = strided * np.float32(3) + y
    k[(n, 100)](strided, y, np.float32(3), np.int32(n))
    np.testing.assert_allclose(base[::2], expected, rtol=1e-6)
    # A read-only array is uploaded but never written back.
    frozen = RNG.random(n, dtype=np.float32)
    frozen.flags.writeable = False
    before = frozen.copy()
    k[n](frozen, y, np.float32(3), np.int32(n))
    np.testing.assert_array_equal(frozen, before)
    # Aligned arrays go zero-copy on host-unified devices; results are identical.
    aligned = pygpgpu_opencl.aligned_empty(n, np.float32)
    aligned[:] = y
    k[n](aligned, y, np.float32(0.5), np.int32(n))
    np.testing.assert_allclose(aligned, y * np.float32(0.5) + y, rtol=1e-6)



def test_one_numpy_array_for_two_pointers_is_one_buffer(ctx):
    """The same array for two pointer parameters is one buffer, as one pointer is in C (small
    arrays were copied apart and the unwritten copy, read back last, undid the kernel's writes;
    large ones aliased the host memory); different arrays sharing memory are refused when the
    kernel may write one."""
    k = ctx.program("""
    __kernel void bump(__global float* x, __global float* y, int n) {
        int i = get_global_id(0);
        if (i < n) x[i] += 1.0f;
    }""").kernel("bump")
    for n in (8, 1 << 17):                         # copied and zero-copy sizes on PoCL
        x = np.zeros(n, np.float32)
        k[n](x, x, np.int32(n))
        np.testing.assert_array_equal(x, np.ones(n, np.float32))
    x = np.zeros(64, np.float32)
    k[32](x[::2], x[1::2], np.int32(32))           # interleaved, no element shared: fine
    np.testing.assert_array_equal(x, np.tile(np.float32([1, 0]), 32))
    with pytest.raises(ValueError, match=r"argument 1 'y'.*overlaps.*argument 0 'x'"):
        k[63](x[1:], x[:-1], np.int32(63))
    np.testing.assert_array_equal(x, np.tile(np.float32([1, 0]), 32))


def test_a_required_work_group_size_is_used_and_checked(ctx):
    """A kernel declaring reqd_work_group_size(64, 1, 1) runs in groups of 64 when no local size
    is given (the driver refused local=None with CL_INVALID_WORK_GROUP_SIZE and a hint to pass
    None); another local size is a ValueError naming the attribute before the driver sees it."""
    k = ctx.program("""
    __kernel __attribute__((reqd_work_group_size(64, 1, 1)))
    void fixed(__global float* x, int n) {
        int i = get_global_id(0);
        if (i < n) x[i] = get_local_size(0);
    }""").kernel("fixed")
    assert k.required_local_size == (64, 1, 1)
    x = np.zeros(100, np.float32)
    k[100](x, np.int32(100))                    # global rounded up to 128
    np.testing.assert_array_equal(x, np.full(100, 64, np.float32))
    k[(100, 64)](x, np.int32(100))
    with pytest.raises(ValueError, match=r"reqd_work_group_size\(64, 1, 1\)"):
        k[(100, 32)](x, np.int32(100))
    assert ctx.program(VECADD).kernel("vecadd").required_local_size is None

def test_buffer_operations(ctx):
    n = 256
    data = RNG.random(n, dtype=np.float32)
    buf = ctx.buffer(data.nbytes)
    assert isinstance(buf, Buffer) and buf.nbytes == data.nbytes
    buf.write(data)
    np.testing.assert_array_equal(buf.read(np.empty(n, np.float32)), data)
    buf.write(data[:10], offset=4 * 100)  # partial write at a byte offset
    part = buf.read(np.empty(10, np.float32), offset=4 * 100)
    np.testing.assert_array_equal(part, data[:10])
    other = ctx.buffer(data.nbytes)
    other.copy_from(buf)
    np.testing.assert_array_equal(other.read(np.empty(n, np.float32)), buf.read(np.empty(n, np.float32)))
    other.fill(np.float32(2.5))
    np.testing.assert_array_equal(other.read(np.empty(n, np.float32)), np.full(n, 2.5, np.float32))
    other.fill(np.array([1, 2, 3], np.uint8).tobytes() + b"\0")  # a 4-byte pattern
    assert other.read()[:8].tolist() == [1, 2, 3, 0, 1, 2, 3, 0]
    raw = other.read()
    assert raw.dtype == np.uint8 and raw.nbytes == data.nbytes
    # Zero-copy buffer on an aligned array: reading back into that array only synchronises.
    host = pygpgpu_opencl.aligned_empty(n, np.float32)
    host[:] = data
    zc = ctx.buffer_from_host(host, zero_copy=True)
    assert zc.zero_copy == ctx.device.host_unified_memory
    k = ctx.program("__kernel void neg(__global float* x) { x[get_global_id(0)] = -x[get_global_id(0)]; }").kernel("neg")
    k[n](zc)
    zc.read(host)
    np.testing.assert_array_equal(host, -data)
    # An empty buffer is valid (OpenCL itself has none): empty transfers are no-ops.
    empty = ctx.buffer_from_host(np.zeros(0, np.float32))
    assert empty.nbytes == 0
    empty.read(np.zeros(0, np.float32))
    for b in (buf, other, zc, empty):
        b.close()


def test_hot_path_launcher_skips_unchanged_and_picks_up_changes(ctx):
    k = ctx.program(VECADD).kernel("vecadd")
    n = 300
    a, b = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    A, B, OUT1, OUT2 = (ctx.buffer_from_host(a), ctx.buffer_from_host(b), ctx.buffer(a.nbytes), ctx.buffer(a.nbytes))
    fn = k.launcher(["buffer", "buffer", "buffer", np.int32])
    fn(n, 64, (A, B, OUT1, n))
    fn(n, 64, (B, B, OUT2, n))  # a different buffer in slot 0 and 2
    fn(n, 64, (B, B, OUT2, 10))  # only n changes: out2[10:] stays from the previous launch
    ctx.synchronize()
    np.testing.assert_array_equal(OUT1.read(np.empty(n, np.float32)), a + b)
    np.testing.assert_array_equal(OUT2.read(np.empty(n, np.float32)), b + b)
    # The generic path and the launcher share the kernel: switching between them is safe.
    k[(n, 64)](A, A, OUT1, np.int32(n))
    np.testing.assert_array_equal(OUT1.read(np.empty(n, np.float32)), a + a)


def test_program_attributes(ctx):
    prog = ctx.program(VECADD + "\n__kernel void other(__global int* x) { x[0] = 1; }", ["-DUNUSED=1"])
    assert isinstance(prog, Program)
    assert sorted(prog.kernel_names) == ["other", "vecadd"]
    assert "-cl-std=CL1.2" in prog.options and "-DUNUSED=1" in prog.options
    assert prog.kernel("vecadd") is prog.vecadd  # one Kernel object per name
    assert prog.vecadd.num_args == 4
    assert [a.name for a in prog.vecadd.args] == ["a", "b", "out", "n"]
    assert "__kernel void vecadd(" in prog.vecadd.signature
    own_std = ctx.program(VECADD, "-cl-std=CL1.1")
    assert "-cl-std=CL1.2" not in own_std.options


def test_zero_work_items_is_a_no_op(ctx):
    """No work item runs: n says 8 elements, so one launched item (0 rounded up to a group) would write."""
    k = ctx.program(VECADD).kernel("vecadd")
    a, b = np.ones(8, np.float32), np.full(8, 2.0, np.float32)
    out = np.full(8, -5.0, np.float32)
    k[0](a, b, out, np.int32(8))
    k[(0, 64)](a, b, out, np.int32(8))
    assert (out == -5.0).all() and (a == 1.0).all() and (b == 2.0).all()
    empty = np.zeros(0, np.float32)
    k[0](empty, empty, empty, np.int32(0))       # nothing to stage either
    fn = k.launcher(["buffer", "buffer", "buffer", np.int32])
    src, dst = ctx.buffer_from_host(a), ctx.buffer(out.nbytes)
    dst.fill(np.float32(-5.0))
    fn(0, None, (src, src, dst, 8))
    fn((0,), (64,), (src, src, dst, 8))
    zero = ctx.buffer(0)
    fn(0, None, (zero, zero, zero, 0))
    ctx.synchronize()
    assert (dst.read(np.zeros(8, np.float32)) == -5.0).all()


def test_zero_copy_alignment_rule(ctx):
    dev = ctx.device
    raw = pygpgpu_opencl.aligned_empty(257, np.float32, align=4096)
    shifted = raw[1:]  # 4 bytes past a page boundary: element-aligned only
    shifted[:] = np.arange(256, dtype=np.float32)
    default = ctx.buffer_from_host(shifted, zero_copy=True)
    assert not default.zero_copy  # below CL_DEVICE_MEM_BASE_ADDR_ALIGN: copied, never aliased
    relaxed = ctx.buffer_from_host(shifted, zero_copy=True, align=4)
    assert relaxed.zero_copy == dev.host_unified_memory
    k = ctx.program("__kernel void inc(__global float* x) { x[get_global_id(0)] += 1.0f; }").kernel("inc")
    k[256](relaxed)
    relaxed.read(shifted)
    np.testing.assert_array_equal(shifted, np.arange(256, dtype=np.float32) + 1)
    default.close()
    relaxed.close()


def test_vector_arguments_by_value(ctx):
    src = """
    __kernel void vec(__global float* out, float4 a, float3 b) {
        out[0] = a.x; out[1] = a.y; out[2] = a.z; out[3] = a.w;
        out[4] = b.x; out[5] = b.y; out[6] = b.z;
    }"""
    k = ctx.program(src).kernel("vec")
    out = np.zeros(7, np.float32)
    a = np.array([1, 2, 3, 4], np.float32)
    b = np.array([5, 6, 7], np.float32)  # float3 occupies 4 floats; the padding is added
    k[1](out, a, b)
    np.testing.assert_array_equal(out, np.arange(1, 8, dtype=np.float32))
    out[:] = 0
    k[1](out, (ctypes.c_float * 4)(4, 3, 2, 1), (ctypes.c_float * 4)(9, 8, 7, 0))
    np.testing.assert_array_equal(out, [4, 3, 2, 1, 9, 8, 7])
    with pytest.raises(TypeError, match="4 x float32"):
        k[1](out, np.zeros(4, np.float64), b)
    OUT = ctx.buffer(out.nbytes)
    fn = k.launcher(["buffer", np.dtype((np.float32, 4)), np.dtype((np.float32, 4))])
    fn(1, None, (OUT, a[::-1].copy(), np.array([1, 1, 2, 0], np.float32)))
    np.testing.assert_array_equal(OUT.read(np.empty(7, np.float32)), [4, 3, 2, 1, 1, 1, 2])
