"""OpenCL backend: bad input raises clear Python errors before reaching the driver."""
from __future__ import annotations

import numpy as np
import pytest

import pygpgpu_opencl
from pygpgpu_core.errors import BackendUnavailable, ClosedError, GPGPUError
from pygpgpu_core.protocols import LocalMemory
from pygpgpu_opencl import Context, KernelNotFound
from conftest import skip_no_device

SRC = """
__kernel void vecadd(__global const float* a, __global const float* b, __global float* out, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = a[i] + b[i];
}
__kernel void with_local(__global float* out, __local float* tmp) {
    tmp[get_local_id(0)] = 1.0f;
    out[get_global_id(0)] = tmp[get_local_id(0)];
}
"""


@pytest.fixture(scope="module")
def device():
    try:
        devices = pygpgpu_opencl.backend.devices()
    except BackendUnavailable as exc:
        skip_no_device("opencl", f"no OpenCL runtime on this machine: {exc}")
    if not devices:
        skip_no_device("opencl", "the OpenCL runtime lists no device")
    return devices[0]


@pytest.fixture(scope="module")
def ctx(device):
    context = Context(device)
    yield context
    context.close()


@pytest.fixture(scope="module")
def prog(ctx):
    return ctx.program(SRC)


def _vecadd_ok(ctx, prog, n=64):
    a = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    prog.kernel("vecadd")[(n, 16)](a, a, out, np.int32(n))
    np.testing.assert_array_equal(out, 2 * a)


def test_wrong_argument_count(ctx, prog):
    k = prog.kernel("vecadd")
    buf = ctx.buffer(64)
    with pytest.raises(TypeError, match=r"takes 4 arguments \(a, b, out, n\), got 3"):
        k[16](buf, buf, buf)
    with pytest.raises(TypeError, match="takes 4 arguments"):
        k.launcher(["buffer", "buffer", "buffer", np.int32])(16, None, (buf, buf, buf))
    with pytest.raises(TypeError, match="arg_types has 2"):
        k.launcher(["buffer", "buffer"])
    _vecadd_ok(ctx, prog)  # nothing was left half-set


@pytest.mark.parametrize(
    "args, message",
    [
        (("buf", "buf", "buf", np.float32(3)), "expects int32, got numpy.float32"),
        (("buf", "buf", "buf", 2.5), "got a float"),
        (("buf", "buf", "buf", 2**40), "does not fit"),
        (("buf", "buf", "buf", "buf"), "passed by value; got a Buffer"),
        (("buf", "buf", np.int32(3), np.int32(3)), "is a pointer"),
        (("buf", "buf", np.zeros(4, np.float64), np.int32(3)), "points to float32"),
        (("buf", "buf", "buf", "text"), "cannot pass str by value"),
        (("buf", LocalMemory(64), "buf", np.int32(3)), "not a __local pointer"),
    ],
)
def test_wrong_argument_type(ctx, prog, args, message):
    buf = ctx.buffer(64)
    real = tuple(buf if isinstance(a, str) and a == "buf" else a for a in args)
    with pytest.raises((TypeError, ValueError), match=message):
        prog.kernel("vecadd")[16](*real)
    _vecadd_ok(ctx, prog)



def test_python_numbers_past_a_float_parameter_s_range(ctx):
    """A Python float past float32's range is +-inf, as C converts it and the CUDA and HIP
    launchers pack it, without numpy's 'overflow encountered in cast' RuntimeWarning from inside
    the library; an int past every float is an OverflowError naming the argument (it was float()'s
    bare message)."""
    import warnings

    k = ctx.program("__kernel void put(__global float* out, float s) { out[0] = s; }").kernel("put")
    out = np.zeros(1, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        k[1](out, 1e39)
        assert out[0] == np.inf
        k[1](out, -1e39)
        assert out[0] == -np.inf
    with pytest.raises(OverflowError, match=r"argument 1 's' of kernel 'put'.*does not fit"):
        k[1](out, 2**1100)
    with pytest.raises(OverflowError, match=r"argument 1 's' of kernel 'put'.*does not fit"):
        k.launcher(["buffer", np.float32])(1, None, (ctx.buffer(4), 2**1100))

def test_wrong_launcher_types(ctx, prog):
    k = prog.kernel("vecadd")
    with pytest.raises(TypeError, match="is int32, arg_types says float32"):
        k.launcher(["buffer", "buffer", "buffer", np.float32])
    with pytest.raises(TypeError, match="is a pointer"):
        k.launcher(["buffer", "buffer", np.int32, np.int32])
    with pytest.raises(TypeError, match="not a __global pointer"):
        k.launcher(["buffer", "buffer", "buffer", "buffer"])
    with pytest.raises(TypeError, match="not a __local pointer"):
        k.launcher(["local", "buffer", "buffer", np.int32])
    fn = k.launcher(["buffer", "buffer", "buffer", np.int32])
    buf = ctx.buffer(64)
    with pytest.raises(TypeError, match="expects a Buffer, got numpy array"):
        fn(16, None, (np.zeros(16, np.float32), buf, buf, 16))
    with pytest.raises(TypeError, match="expects int32, got float"):
        fn(16, None, (buf, buf, buf, 1.5))
    with pytest.raises(ValueError, match="does not fit"):
        fn(16, None, (buf, buf, buf, 2**31))
    lk = prog.kernel("with_local").launcher(["buffer", "local"])
    with pytest.raises(TypeError, match="LocalMemory"):
        lk(16, None, (buf, -5))
    with pytest.raises(ValueError, match="positive byte count"):
        LocalMemory(0)
    for not_a_count in (16.5, 16.0, "16", True):       # 16.5 was silently 16 bytes, "16" parsed
        with pytest.raises(TypeError, match="LocalMemory takes an int byte count"):
            LocalMemory(not_a_count)
    assert LocalMemory(np.int64(64)).nbytes == 64


def test_too_much_local_memory_is_refused(ctx, prog, device):
    # PoCL aborts the whole process on this, so it must never reach the driver.
    k = prog.kernel("with_local")
    out = np.zeros(16, np.float32)
    with pytest.raises(ValueError, match="CL_DEVICE_LOCAL_MEM_SIZE"):
        k[(16, 16)](out, LocalMemory(device.local_mem_size + 1))
    with pytest.raises(ValueError, match="CL_DEVICE_LOCAL_MEM_SIZE"):
        k.launcher(["buffer", "local"])(16, 16, (ctx.buffer(64), device.local_mem_size * 2))
    k[(16, 16)](out, LocalMemory(64))
    np.testing.assert_array_equal(out, np.ones(16, np.float32))


def test_bad_work_sizes(ctx, prog, device):
    k = prog.kernel("vecadd")
    buf = ctx.buffer(64)
    too_big = k.work_group_size * 2
    with pytest.raises(ValueError, match="allows at most"):
        k[(too_big, too_big)](buf, buf, buf, np.int32(1))
    with pytest.raises(ValueError, match="as many dimensions"):
        k[((16, 16), (4,))]
    with pytest.raises(TypeError, match="global size must be"):
        k[(1.5, None)]
    with pytest.raises(TypeError, match="already bound"):
        k["opencl:0"]
    with pytest.raises(ValueError, match="must be positive"):
        k[(16, 0)]


def test_unknown_kernel_lists_the_kernels(prog):
    with pytest.raises(KernelNotFound) as info:
        prog.kernel("vecad")
    assert "vecad" in str(info.value) and "vecadd" in str(info.value) and "with_local" in str(info.value)
    assert isinstance(info.value, LookupError) and isinstance(info.value, GPGPUError)
    with pytest.raises(AttributeError, match="its kernels are"):
        prog.nonexistent


def test_buffer_size_errors(ctx):
    buf = ctx.buffer(16)
    with pytest.raises(ValueError, match="do not fit"):
        buf.write(np.zeros(5, np.float32))
    with pytest.raises(ValueError, match="do not fit"):
        buf.read(np.zeros(2, np.float32), offset=12)
    with pytest.raises(ValueError, match="read-only"):
        frozen = np.zeros(4, np.float32)
        frozen.flags.writeable = False
        buf.read(frozen)
    with pytest.raises(ValueError, match="C-contiguous"):
        buf.read(np.zeros(8, np.float32)[::2])
    with pytest.raises(TypeError, match="numpy array"):
        buf.write([1.0, 2.0])
    with pytest.raises(ValueError, match="negative"):
        ctx.buffer(-1)
    with pytest.raises(ValueError, match="largest single allocation"):
        ctx.buffer(ctx.device.max_mem_alloc_size + 1)
    with pytest.raises(TypeError, match="ambiguous"):
        buf.fill(1.5)
    with pytest.raises(ValueError, match="not a multiple"):
        buf.fill(b"abc")


def test_closed_buffer_raises_before_the_driver(ctx, prog):
    buf = ctx.buffer(64)
    buf.close()
    buf.close()  # idempotent
    assert buf.closed
    for action in (lambda: buf.write(np.zeros(4, np.float32)), lambda: buf.read(np.zeros(4, np.float32)),
                   lambda: buf.fill(np.float32(0)), lambda: buf.handle):
        with pytest.raises(ClosedError, match="Buffer is closed"):
            action()
    ok = ctx.buffer(64)
    with pytest.raises(ClosedError):
        prog.kernel("vecadd")[16](buf, ok, ok, np.int32(16))
    fn = prog.kernel("vecadd").launcher(["buffer", "buffer", "buffer", np.int32])
    fn(16, None, (ok, ok, ok, 16))
    ok2 = ctx.buffer(64)
    ok2.close()
    with pytest.raises(ClosedError):  # a buffer closed after it was last set is noticed too
        fn(16, None, (ok, ok2, ok, 16))
    ok.close()
    with pytest.raises(ClosedError):
        fn(16, None, (ok, ok, ok, 16))
    with ctx.buffer(8) as scoped:
        assert not scoped.closed
    assert scoped.closed


def test_closed_context_raises_and_closes_its_objects(device):
    ctx = Context(device)
    prog = ctx.program(SRC)
    k = prog.kernel("vecadd")
    fn = k.launcher(["buffer", "buffer", "buffer", np.int32])
    buf = ctx.buffer(64)
    ctx.close()
    ctx.close()  # idempotent
    with pytest.raises(ClosedError, match="Context is closed"):
        ctx.buffer(16)
    with pytest.raises(ClosedError, match="Context is closed"):
        ctx.program(SRC)
    with pytest.raises(ClosedError, match="Context is closed"):
        ctx.synchronize()
    with pytest.raises(ClosedError, match="its Context was closed"):
        buf.write(np.zeros(4, np.float32))
    with pytest.raises(ClosedError):
        k[16](buf, buf, buf, np.int32(16))
    with pytest.raises(ClosedError):
        fn(16, None, (buf, buf, buf, 16))
    with pytest.raises(ClosedError):
        prog.kernel("vecadd")
    with Context(device) as scoped:
        scoped.buffer(8)
    assert scoped.closed


def test_closed_program_closes_its_kernels(ctx):
    prog = ctx.program(SRC)
    k = prog.kernel("vecadd")
    prog.close()
    with pytest.raises(ClosedError, match="its Program was closed"):
        k[16](ctx.buffer(64), ctx.buffer(64), ctx.buffer(64), np.int32(16))


def test_buffer_from_another_context_is_rejected(device, prog):
    other = Context(device)
    try:
        foreign = other.buffer(64)
        mine = prog.context.buffer(64)
        with pytest.raises(ValueError, match="another Context"):
            prog.kernel("vecadd")[16](foreign, mine, mine, np.int32(16))
        with pytest.raises(ValueError, match="same Context"):
            mine.copy_from(foreign)
    finally:
        other.close()


def test_bad_program_source(ctx):
    with pytest.raises(TypeError, match="must be a str"):
        ctx.program(b"__kernel void k() {}")
    with pytest.raises(ValueError, match="empty"):
        ctx.program("   ")
    with pytest.raises(TypeError, match="build options must be strings"):
        ctx.program(SRC, [1])
