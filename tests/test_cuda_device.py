"""CUDA execution through the low-level API: runs on an NVIDIA GPU, skips (with the reason)
where the CUDA backend has no device, e.g. in CI."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from pygpgpu_core import registry
from pygpgpu_core.errors import ClosedError, CompileError, GPGPUError
from pygpgpu_core.protocols import LocalMemory
from conftest import skip_no_device

VECADD = r"""
extern "C" __global__ void vecadd(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}
"""


@pytest.fixture(scope="module")
def cuda_device():
    """The first CUDA device; skipped with the reason where CUDA has none."""
    selected = os.environ.get("PYGPGPU_TEST_BACKENDS", "").strip()
    if selected and "cuda" not in [b.strip() for b in selected.split(",")]:
        skip_no_device("cuda", f"PYGPGPU_TEST_BACKENDS={selected!r} does not select cuda")
    try:
        devices = registry.backend_devices("cuda")
    except GPGPUError as exc:
        if selected:
            pytest.fail(f"PYGPGPU_TEST_BACKENDS asks for cuda but: {exc}")
        skip_no_device("cuda", f"no CUDA device: {exc}")
    return devices[0]


@pytest.fixture(scope="module")
def ctx(cuda_device):
    return cuda_device.context()


def test_device_properties(cuda_device):
    d = cuda_device
    assert d.selector == "cuda:0" and d.backend.name == "cuda" and d.backend.dialect == "cuda"
    assert d.arch == f"sm_{d.cc[0]}{d.cc[1]}"
    assert d.compute_units > 0 and d.global_mem_size > 1 << 30 and d.max_work_group_size >= 256
    assert d.fp64 and not d.fp16 and not d.host_unified_memory
    assert isinstance(d.extensions, frozenset)
    assert d.context() is d.context()
    version = d.backend.version()
    assert "driver" in version and "NVRTC" in version
    print(d, version)


def test_vecadd_total_work_semantics(ctx):
    n = 1000  # not a multiple of the local size: the grid is rounded up
    a = np.random.rand(n).astype(np.float32)
    b = np.random.rand(n).astype(np.float32)
    k = ctx.program(VECADD).kernel("vecadd")
    da, db, dout = ctx.buffer_from_host(a), ctx.buffer_from_host(b), ctx.buffer(a.nbytes)
    k.launch((n,), (128,), [da, db, dout, np.int32(n)])
    out = np.empty_like(a)
    dout.read(out)
    np.testing.assert_allclose(out, a + b, rtol=1e-6)
    assert k.geometry((n,), (128,)) == (8, 1, 1, 128, 1, 1)
    assert k.geometry(n, None)[3] == 256


def test_saxpy_with_numpy_arguments_and_cpp_name(ctx):
    src = r"""
    __global__ void saxpy(float a, const float* x, float* y, long long n) {
        long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }"""
    n = 100_003
    x = np.random.rand(n).astype(np.float32)
    y = np.random.rand(n).astype(np.float32)
    expected = 2.5 * x + y
    k = ctx.program(src).kernel("saxpy")  # found through its mangled symbol
    assert k.symbol.startswith("_Z5saxpy")
    k.launch(n, None, [np.float32(2.5), x, y, np.int64(n)])
    np.testing.assert_allclose(y, expected, rtol=1e-6)


def test_struct_by_value(ctx):
    class Params(ctypes.Structure):
        _fields_ = [("scale", ctypes.c_float), ("offset", ctypes.c_int), ("bias", ctypes.c_double)]

    src = r"""
    struct Params { float scale; int offset; double bias; };
    extern "C" __global__ void apply(Params p, const float* x, double* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = x[i] * p.scale + p.offset + p.bias;
    }"""
    n = 513
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float64)
    ctx.program(src).kernel("apply").launch(n, 64, [Params(0.5, -7, 0.25), x, out, np.int32(n)])
    np.testing.assert_allclose(out, x * 0.5 - 7 + 0.25)


def test_local_memory_block_reduction(ctx):
    src = r"""
    extern "C" __global__ void block_sum(const float* x, float* out, int n) {
        extern __shared__ float tile[];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        tile[threadIdx.x] = i < n ? x[i] : 0.0f;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
            __syncthreads();
        }
        if (threadIdx.x == 0) out[blockIdx.x] = tile[0];
    }"""
    n, local = 10_000, 256
    groups = -(-n // local)
    x = np.random.rand(n).astype(np.float32)
    out = np.zeros(groups, np.float32)
    k = ctx.program(src).kernel("block_sum")
    k.launch(n, local, [x, LocalMemory(local * 4), out, np.int32(n)])
    expected = np.add.reduceat(x.astype(np.float64), np.arange(0, n, local))
    np.testing.assert_allclose(out, expected, rtol=1e-4)


def test_vector_types_by_value(ctx):
    from pygpgpu_core import vec_types

    src = r"""
    extern "C" __global__ void vecs(float4 a, float3 b, int2 c, float* out) {
        out[0] = a.x; out[1] = a.w; out[2] = b.x; out[3] = b.z; out[4] = c.x; out[5] = c.y;
    }"""
    out = np.zeros(6, np.float32)
    args = [vec_types.float4(1, 2, 3, 4), vec_types.float3(5, 6, 7), vec_types.int2(8, 9), out]
    ctx.program(src).kernel("vecs").launch(1, 1, args)
    assert out.tolist() == [1, 4, 5, 7, 8, 9]


SCALARS = [
    ("signed char", np.int8, -100), ("unsigned char", np.uint8, 200),
    ("short", np.int16, -30000), ("unsigned short", np.uint16, 60000),
    ("int", np.int32, -2_000_000_000), ("unsigned int", np.uint32, 4_000_000_000),
    ("long long", np.int64, -(2**62) + 5), ("unsigned long long", np.uint64, 2**63 + 7),
    ("float", np.float32, 1.25), ("double", np.float64, -3.0e300), ("bool", np.bool_, True),
]


@pytest.mark.parametrize("ctype,dtype,value", SCALARS, ids=[s[0].replace(" ", "_") for s in SCALARS])
def test_every_scalar_type_by_value(ctx, ctype, dtype, value):
    src = 'extern "C" __global__ void store(SCALAR_T v, SCALAR_T* out) { out[threadIdx.x] = v; }'
    k = ctx.program(src, [f"-DSCALAR_T={ctype}"]).kernel("store")
    out = np.zeros(4, dtype)
    k.launch(4, 4, [dtype(value), out])
    assert (out == dtype(value)).all()
    # the same through the warm path, with a plain Python number adopting the declared type
    dout = ctx.buffer(out.nbytes)
    k.launcher([np.dtype(dtype), "buffer"])(4, 4, [value, dout])
    got = np.zeros_like(out)
    dout.read(got)
    assert (got == dtype(value)).all()


def test_bracket_syntax_and_2d(ctx):
    src = r"""
    extern "C" __global__ void coords(int* out, int w, int h) {
        int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        if (x < w && y < h) out[y * w + x] = y * 1000 + x;
    }"""
    k = ctx.program(src).kernel("coords")
    w, h = 37, 19
    expected = np.add.outer(np.arange(h) * 1000, np.arange(w)).astype(np.int32)
    for config in [((w, h), (8, 4)), ((w, h), None)]:
        out = np.full((h, w), -1, np.int32)
        k[config](out, np.int32(w), np.int32(h))
        np.testing.assert_array_equal(out, expected)
    vec = ctx.program(VECADD).kernel("vecadd")
    a = np.arange(300, dtype=np.float32)
    out = np.zeros_like(a)
    vec[300](a, a, out, np.int32(300))
    np.testing.assert_array_equal(out, 2 * a)
    out[:] = 0
    vec[(300, 32)](a, a, out, np.int32(300))
    np.testing.assert_array_equal(out, 2 * a)


def test_launcher_hot_path(ctx):
    n = 4096
    k = ctx.program(VECADD).kernel("vecadd")
    a = np.random.rand(n).astype(np.float32)
    da, db, dout = ctx.buffer_from_host(a), ctx.buffer_from_host(a), ctx.buffer(a.nbytes)
    fn = k.launcher(["buffer", "buffer", "buffer", np.int32])
    assert k.launcher(["buffer", "buffer", "buffer", np.int32]) is fn
    args = (da, db, dout, n)
    for _ in range(200):
        fn((n,), (256,), args)
    ctx.synchronize()
    reps = 2000
    t0 = time.perf_counter()
    for _ in range(reps):
        fn((n,), (256,), args)
    per_call = (time.perf_counter() - t0) / reps
    ctx.synchronize()
    out = np.empty_like(a)
    dout.read(out)
    np.testing.assert_allclose(out, 2 * a)
    print(f"warm launcher call: {per_call * 1e6:.2f} us")
    assert per_call < 100e-6  # loose: a shared CI-less GPU box; the benchmark has the real target


def test_bad_arguments_raise_before_the_driver(ctx):
    k = ctx.program(VECADD).kernel("vecadd")
    buf = ctx.buffer(64)
    if k.param_sizes is not None:
        assert k.param_sizes == (8, 8, 8, 4)
        with pytest.raises(TypeError, match="4 parameters"):
            k.launcher(["buffer", "buffer", np.int32])
        with pytest.raises(TypeError, match="argument 3"):
            k.launcher(["buffer", "buffer", "buffer", np.float64])
    fn = k.launcher(["buffer", "buffer", "buffer", np.int32])
    with pytest.raises(TypeError, match="takes 4 arguments"):
        fn(16, None, (buf, buf, buf))
    with pytest.raises(TypeError, match="argument 1"):
        fn(16, None, (buf, np.zeros(4, np.float32), buf, 16))
    with pytest.raises(TypeError, match="cannot be a kernel argument"):
        k.launch(16, None, [buf, buf, buf, object()])
    with pytest.raises(ValueError, match="at most"):
        fn(16, 4096, (buf, buf, buf, 16))
    dead = ctx.buffer(64)
    dead.close()
    dead.close()  # idempotent
    with pytest.raises(ClosedError):
        fn(16, None, (buf, dead, buf, 16))
    with pytest.raises(KeyError, match="vecadd"):
        ctx.program(VECADD).kernel("vec_add")


def test_compile_error_from_program(ctx):
    with pytest.raises(CompileError) as info:
        ctx.program('extern "C" __global__ void k(float* x) { x[0] = nope; }')
    assert "nope" in info.value.log


def test_large_transfer_round_trip_through_pinned_staging(ctx):
    n = (40 << 20) // 4 + 3  # several staging chunks and a ragged tail
    assert n * 4 > ctx.staging_threshold
    host = np.random.rand(n).astype(np.float32)
    buf = ctx.buffer(host.nbytes)
    t0 = time.perf_counter()
    buf.write(host)
    t1 = time.perf_counter()
    back = np.empty_like(host)
    buf.read(back)
    t2 = time.perf_counter()
    np.testing.assert_array_equal(back, host)
    print(f"staged 40 MiB: H2D {host.nbytes / (t1 - t0) / 1e9:.1f} GB/s, D2H {host.nbytes / (t2 - t1) / 1e9:.1f} GB/s")
    # partial, offset transfers stay inside the staging logic too
    part = np.random.rand(n // 2).astype(np.float32)
    buf.write(part, offset=4 * 1000)
    whole = np.empty_like(host)
    buf.read(whole)
    np.testing.assert_array_equal(whole[1000:1000 + part.size], part)
    np.testing.assert_array_equal(whole[:1000], host[:1000])
    # page-locked host arrays go straight to the DMA engine
    pinned = ctx.pinned_empty(n, np.float32)
    buf.read(pinned)
    np.testing.assert_array_equal(pinned, whole)
    with pytest.raises(ValueError, match="does not fit"):
        buf.write(np.zeros(n + 1, np.float32))


def test_fill_copy_view_and_foreign_pointer(ctx):
    buf = ctx.buffer(4 * 1000)
    out = np.empty(1000, np.float32)
    buf.fill(np.float32(1.5))
    buf.read(out)
    assert (out == 1.5).all()
    buf.fill(np.uint8(7))
    buf.read(out)
    assert (out.view(np.uint8) == 7).all()
    d = ctx.buffer(8 * 999)
    d.fill(np.float64(-2.75))
    got = np.empty(999, np.float64)
    d.read(got)
    assert (got == -2.75).all()
    other = ctx.buffer(buf.nbytes)
    buf.fill(np.int16(-3))
    other.copy_from(buf)
    shorts = np.empty(2000, np.int16)
    other.read(shorts)
    assert (shorts == -3).all()
    view = other.view(400, 400)
    view.fill(np.int32(11))
    other.read(shorts)
    assert (shorts[200:400].view(np.int32) == 11).all() and (shorts[:200] == -3).all()
    wrapped = ctx.buffer_from_pointer(other.ptr, other.nbytes, owner=other)
    assert not wrapped.owns_memory
    wrapped.close()  # must not free other's memory
    other.read(shorts)
    assert (shorts[:200] == -3).all()
    iface = other.cuda_array_interface((2000,), np.int16)
    assert iface["data"][0] == other.ptr and iface["typestr"] == "<i2" and iface["version"] == 3


def test_host_mapped_memory_is_used_in_place_by_kernels(ctx):
    host, buf = ctx.host_mapped(3 * 256)
    a, b, out = (host[k * 256:k * 256 + 64].view(np.float32) for k in range(3))
    a[:] = np.arange(16)
    b[:] = 100
    out[:] = -1
    k = ctx.program(VECADD).kernel("vecadd")
    k.launch(16, 16, [buf.view(0, 64), buf.view(256, 64), buf.view(512, 64), np.int32(16)])
    ctx.synchronize()
    np.testing.assert_array_equal(out, np.arange(16) + 100)   # no copy: the kernel wrote here
    assert not buf.owns_memory
    buf.close()
    assert host[0] == 0                                      # the host bytes outlive the buffer


def test_arrays_that_come_back_are_page_locked_then_released(ctx):
    from pygpgpu_core.backend.hostpin import PIN_MIN

    pins = ctx._pin_cache()
    x = np.arange(PIN_MIN // 4, dtype=np.float32)
    back = np.empty_like(x)
    buf = ctx.buffer(x.nbytes)
    before = len(pins)
    buf.write(x)                                             # first transfer: pageable
    assert len(pins) == before
    x += 1
    buf.write(x)                                             # second: registered, DMA'd in place
    assert len(pins) == before + 1
    buf.read(back)
    np.testing.assert_array_equal(back, x)
    x[:] = 7                                                 # same pages, new contents
    buf.write(x)
    buf.read(back)                                           # back's second transfer: registered
    assert (back == 7).all() and len(pins) == before + 2
    ptr = x.ctypes.data
    del x                                                    # the cache still holds the memory
    buf.read(back)                                           # any lookup lets go of the dead array
    assert ptr not in {e.ptr for e in pins._pinned.values()} and len(pins) == before + 1
    assert (back == 7).all()
    with pytest.raises(ValueError, match="resize"):
        back.resize(2 * back.size)                           # numpy sees the cache's reference


def test_foreign_arrays_share_memory_zero_copy(ctx):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed here")
    x = cupy.arange(1000, dtype=cupy.float32)
    out = cupy.zeros(1000, dtype=cupy.float32)
    k = ctx.program(VECADD).kernel("vecadd")
    k.launch(1000, 256, [x, x, out, np.int32(1000)])  # __cuda_array_interface__ arguments
    ctx.synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(out), 2 * np.arange(1000, dtype=np.float32))
    wrapped = ctx.buffer_from_pointer(out.data.ptr, out.nbytes, owner=out)
    wrapped.fill(np.float32(3.0))
    ctx.synchronize()
    assert float(out.sum()) == 3000.0


def test_wait_for_a_foreign_stream(ctx):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed here")
    n = 1 << 22
    producer = cupy.cuda.Stream(non_blocking=True)  # not ordered with our stream by itself
    with producer:
        x = cupy.zeros(n, dtype=cupy.float32)
        for _ in range(200):
            x += 1.0
    ctx.queue.wait_for_stream(producer.ptr)
    host = np.empty(n, np.float32)
    ctx.buffer_from_pointer(x.data.ptr, x.nbytes, owner=x).read(host)
    assert (host == 200.0).all()


def test_launcher_of_a_closed_program(ctx):
    prog = ctx.program(VECADD + "\n// closed below\n")
    k = prog.kernel("vecadd")
    buf = ctx.buffer(64)
    fn = k.launcher(["buffer", "buffer", "buffer", np.int32])
    fn(16, None, (buf, buf, buf, 16))
    prog.close()
    prog.close()
    with pytest.raises(ClosedError):
        fn(16, None, (buf, buf, buf, 16))
    with pytest.raises(ClosedError):
        prog.kernel("vecadd")
    assert ctx.program(VECADD + "\n// closed below\n") is not prog  # rebuilt on demand
    ctx.synchronize()


def test_illegal_address_reports_lost_context():
    """A faulting kernel poisons the CUDA context for the whole process: run it in a child."""
    code = textwrap.dedent(
        """
        import numpy as np
        from pygpgpu_core import registry
        from pygpgpu_core.errors import ContextLost
        ctx = registry.backend_devices("cuda")[0].context()
        src = 'extern "C" __global__ void bad(float* p) { p[(size_t)1 << 40] = 1.0f; }'
        k = ctx.program(src).kernel("bad")
        buf = ctx.buffer(16)
        try:
            k.launch(1, 1, [buf])
            ctx.synchronize()
        except ContextLost as exc:
            print("LOST", exc.name, "|", exc)
        try:
            ctx.synchronize()
        except ContextLost as exc:
            print("STILL", exc.name)
        """
    )
    try:
        registry.backend_devices("cuda")
    except GPGPUError as exc:
        skip_no_device("cuda", f"no CUDA device: {exc}")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "LOST CUDA_ERROR_ILLEGAL_ADDRESS" in proc.stdout
    assert "context is lost" in proc.stdout and "Restart" in proc.stdout
    assert "STILL CUDA_ERROR_ILLEGAL_ADDRESS" in proc.stdout


def test_cuda_and_opencl_in_one_process(ctx):
    try:
        cl_device = registry.get_device("opencl")
    except GPGPUError as exc:
        skip_no_device("opencl", f"no OpenCL device to mix with: {exc}")
    cl_src = r"""
    __kernel void vecadd(__global const float* a, __global const float* b, __global float* out, int n) {
        int i = get_global_id(0);
        if (i < n) out[i] = a[i] + b[i];
    }"""
    cu_kernel = ctx.program(VECADD).kernel("vecadd")
    cl_kernel = cl_device.context().program(cl_src).kernel("vecadd")
    n = 5000
    for step in range(3):
        a = np.full(n, step, np.float32)
        b = np.arange(n, dtype=np.float32)
        for kernel in (cu_kernel, cl_kernel, cu_kernel):
            out = np.zeros(n, np.float32)
            kernel.launch((n,), (250,), [a, b, out, np.int32(n)])
            np.testing.assert_array_equal(out, a + b)


def test_context_close_frees_everything(cuda_device):
    from pygpgpu_cuda import Context

    ctx = Context(cuda_device)
    buf = ctx.buffer(1024)
    prog = ctx.program(VECADD)
    ctx.close()
    ctx.close()
    assert buf.closed and prog.closed
    with pytest.raises(ClosedError):
        ctx.buffer(16)
    assert cuda_device.context().buffer(16).nbytes == 16  # the shared context is unaffected


def test_program_from_binary_round_trip(ctx):
    built = ctx.program(VECADD)
    again = ctx.program_from_binary(built.binary)
    a = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(a)
    again.kernel("vecadd")[(1024, 128)](a, a, out, np.int32(a.size))
    np.testing.assert_array_equal(out, 2 * a)
