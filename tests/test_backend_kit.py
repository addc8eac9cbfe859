"""The driver kit that the CUDA and HIP backends share (``pygpgpu_core.backend``), run here on a
simulated driver (sim_driver.py: host memory, a launch that reads its arguments through the
pointer array as the real drivers do), and the pieces it is made of: the lazy library loader,
the error table, the argument packer, the ELF reader. The same kit runs on the H200 through the
CUDA tests (test_cuda_device.py, test_hip_kernels_on_cuda.py)."""
from __future__ import annotations

import gc
import ctypes
import ctypes.util
import os
import struct

import numpy as np
import pytest

from pygpgpu_core import vec_types
from pygpgpu_core.errors import BackendUnavailable, ClosedError, ContextLost, DriverError
from pygpgpu_core.forking import ForkedProcessError
from pygpgpu_core.protocols import LocalMemory
from sim_driver import SimBackend, SimKernel, array_at


def _vecadd(gid, a, b, out, n):
    i = gid[0]
    if i < n:
        array_at(out, np.float32, n)[i] = array_at(a, np.float32, n)[i] + array_at(b, np.float32, n)[i]


def _scale3(gid, out, v_bytes, n):
    """out[i] = (x + y + z) * i for a float3 passed by value (12 bytes in CUDA's and HIP's layout)."""
    i = gid[0]
    if i < n:
        x, y, z = struct.unpack("<3f", v_bytes)
        array_at(out, np.float32, n)[i] = (x + y + z) * i


SHARED_SEEN: list = []


def _uses_shared(gid, out):
    array_at(out, np.int32, 1)[0] = 1


KERNELS = {
    "vecadd": SimKernel("Q Q Q i", _vecadd),
    "scale3": SimKernel("Q 12s i", _scale3),
    "uses_shared": SimKernel("Q", _uses_shared, max_threads=64),
}


@pytest.fixture
def sim(monkeypatch):
    monkeypatch.setenv("PYGPGPU_SIM_STAGING_THRESHOLD", str(64 << 10))
    monkeypatch.setenv("PYGPGPU_SIM_STAGING_CHUNK", str(16 << 10))
    backend = SimBackend(KERNELS)
    yield backend
    for dev in backend.devices():
        if dev._context is not None:
            dev._context.close()


@pytest.fixture
def ctx(sim):
    return sim.devices()[0].context()


def test_the_simulated_call_table_binds_every_role_cuda_and_hip_bind():
    """The simulation covers what the kit calls, and CUDA and HIP bind all of it."""
    from pygpgpu_cuda._driver import FUNCTIONS as CUDA
    from pygpgpu_hip._driver import FUNCTIONS as HIP
    from sim_driver import SimDriver

    kit = {r for r in vars(SimDriver(KERNELS).calls()) if r not in ("backend", "lib", "path", "errors")}
    kit -= {"set_current_unchecked", "launch_unchecked"}
    assert kit <= set(CUDA) and kit <= set(HIP), (kit - set(CUDA), kit - set(HIP))
    assert CUDA["launch"].fast and HIP["launch"].fast and CUDA["set_current"].fast and HIP["set_current"].fast


def test_buffers_round_trip_fill_copy_and_view(ctx):
    a = np.arange(1000, dtype=np.float32)
    buf = ctx.buffer_from_host(a)
    back = np.empty_like(a)
    buf.read(back)
    np.testing.assert_array_equal(back, a)
    for value in (np.uint8(7), np.int16(-3), np.float32(2.5), np.float64(1.25), b"\x01\x02\x03\x04\x05\x06\x07\x08"):
        buf.fill(value)
        buf.read(back)
        expected = np.frombuffer(bytes(np.asarray(value).tobytes() if not isinstance(value, bytes) else value)
                                 * (a.nbytes // len(np.asarray(value).tobytes() if not isinstance(value, bytes)
                                                    else value)), np.float32)
        np.testing.assert_array_equal(back.view(np.uint8), expected.view(np.uint8))
    other = ctx.buffer(a.nbytes)
    buf.write(a)
    other.copy_from(buf)
    view = other.view(400, 400)
    part = np.empty(100, np.float32)
    view.read(part)
    np.testing.assert_array_equal(part, a[100:200])
    assert not view.owns_memory and buf.owns_memory and not buf.zero_copy
    with pytest.raises(ValueError, match="does not fit"):
        buf.write(np.zeros(1001, np.float32))
    with pytest.raises(ValueError, match="outside"):
        buf.view(3900, 400)
    buf.close()
    buf.close()
    with pytest.raises(ClosedError, match="this SIM buffer"):
        buf.read(back)


def test_large_transfers_go_through_the_pinned_staging_and_arrive_whole(ctx, sim):
    assert ctx.staging_threshold == 64 << 10 and ctx.staging_chunk == 16 << 10   # from $PYGPGPU_SIM_*
    host = np.random.default_rng(0).random(100_003).astype(np.float32)      # ~390 KiB: 25 chunks, a ragged tail
    buf = ctx.buffer(host.nbytes)
    sim.sim.log.clear()
    buf.write(host)
    back = np.empty_like(host)
    buf.read(back)
    np.testing.assert_array_equal(back, host)
    event_waits = sim.sim.log.count("event_synchronize") + sim.sim.log.count("event_query")  # polled on the main thread
    assert sim.sim.log.count("host_alloc") == 2 and event_waits >= 2 * 25
    small = np.arange(10, dtype=np.int64)
    sim.sim.log.clear()
    ctx.buffer_from_host(small).read(small)
    assert not {"event_synchronize", "event_query"} & set(sim.sim.log)    # small copies go straight through


def test_an_array_transferred_again_is_page_locked_in_place(ctx, sim):
    from pygpgpu_core.backend.hostpin import PIN_MIN

    host = np.ones(PIN_MIN // 4, np.float32)
    buf = ctx.buffer(host.nbytes)
    buf.write(host)
    assert host.ctypes.data not in sim.sim.registered
    buf.write(host)
    assert sim.sim.registered.get(host.ctypes.data) == host.nbytes


def test_pinned_and_host_mapped_memory(ctx, sim):
    pinned = ctx.pinned_empty((4, 5), np.float64)
    pinned[:] = 3.0
    buf = ctx.buffer(pinned.nbytes)
    buf.write_async(pinned)
    ctx.synchronize()
    out = ctx.pinned_empty(20, np.float64)
    buf.read_async(out)
    ctx.synchronize()
    np.testing.assert_array_equal(out, 3.0)
    host, mapped = ctx.host_mapped(64)
    host[:] = 9
    assert mapped.ptr == host.ctypes.data and not mapped.owns_memory
    assert ctx.memory_info() == (1 << 30, 2 << 30)


def test_kernel_launch_with_numpy_arrays_and_a_launcher(ctx, sim):
    prog = ctx.program("vecadd, scale3, uses_shared")
    assert prog.kernel_names() == ["vecadd", "scale3", "uses_shared"] and prog.binary_kind == "sim"
    assert ctx.program("vecadd, scale3, uses_shared") is prog           # programs are cached per source
    k = prog.vecadd
    assert k.param_sizes == (8, 8, 8, 4) and k.max_threads == 256   # the device's limit, below the binary's
    n = 300
    a, b = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
    out = np.zeros(n, np.float32)
    k.launch((n,), (64,), [a, b, out, n])                                # a Python int adopts the int parameter
    np.testing.assert_array_equal(out, a + b)
    assert sim.sim.launches[-1][:2] == ((5, 1, 1), (64, 1, 1))           # grid = ceil(300 / 64)
    da, db, dout = ctx.buffer_from_host(a), ctx.buffer_from_host(b), ctx.buffer(a.nbytes)
    launch = k.launcher(["buffer", "buffer", "buffer", np.int32])
    assert k.launcher(["buffer", "buffer", "buffer", np.int32]) is launch
    launch(n, None, (da, da, dout, n))
    dout.read(out)
    np.testing.assert_array_equal(out, 2 * a)
    k[(n, 32)](db, db, dout, np.int32(n))
    dout.read(out)
    np.testing.assert_array_equal(out, 2 * b)
    with pytest.raises(TypeError, match="has 4 parameters, but 3"):
        k.launcher(["buffer", "buffer", np.int32])
    with pytest.raises(TypeError, match="argument 3 of kernel 'vecadd': the parameter is 4 bytes"):
        k.launcher(["buffer", "buffer", "buffer", np.float64])
    with pytest.raises(TypeError, match="takes 4 arguments"):
        launch(n, None, (da, da, dout))
    with pytest.raises(OverflowError, match="argument 3 of kernel 'vecadd': 1099511627776 does not fit"):
        launch(n, None, (da, da, dout, 2**40))
    with pytest.raises(ValueError, match="at most"):
        launch(n, 2048, (da, da, dout, n))
    with pytest.raises(KeyError, match="no kernel named 'nope'"):
        prog.kernel("nope")


def test_vectors_by_value_use_the_packed_layout(ctx, sim):
    k = ctx.program("scale3").kernel("scale3")
    n = 8
    out = np.zeros(n, np.float32)
    k.launch(n, None, [out, vec_types.float3(1, 2, 3), np.int32(n)])   # 12 bytes, as the kernel declares
    np.testing.assert_array_equal(out, 6.0 * np.arange(n))
    launch = k.launcher(["buffer", vec_types.float3, np.int32])
    buf = ctx.buffer(out.nbytes)
    launch(n, None, (buf, vec_types.float3(0.5, 0.5, 1), n))
    buf.read(out)
    np.testing.assert_array_equal(out, 2.0 * np.arange(n))


def test_local_memory_is_dynamic_shared_memory_within_the_device_limit(ctx, sim):
    k = ctx.program("uses_shared").kernel("uses_shared")
    flag = np.zeros(1, np.int32)
    k.launch(1, 1, [flag, LocalMemory(1000), LocalMemory(24)])          # not parameters: shared bytes
    assert flag[0] == 1 and sim.sim.launches[-1][2] == 1024
    with pytest.raises(ValueError, match=r"asks for 70000 bytes of local memory; simulated GPU allows at most 65536"):
        k.launch(1, 1, [flag, LocalMemory(70000)])
    with pytest.raises(ValueError, match="at most 64"):                 # the kernel's own limit (metadata)
        k.launch(128, 128, [flag])


def test_driver_errors_name_the_call_and_fatal_ones_lose_the_context(ctx, sim):
    k = ctx.program("vecadd").kernel("vecadd")
    buf = ctx.buffer(16)
    launch = k.launcher(["buffer", "buffer", "buffer", np.int32])
    sim.sim.fail_next_launch = 701
    with pytest.raises(DriverError, match=r"launch failed with sim status 701 \(701\): kernel 'vecadd' needs too many"):
        launch(4, None, (buf, buf, buf, 4))
    sim.sim.fail_next_launch = 700
    with pytest.raises(ContextLost, match="SIM_ILLEGAL_ADDRESS.*the simulated context is lost"):
        launch(4, None, (buf, buf, buf, 4))
    with pytest.raises(DriverError, match="is not a SIM stream"):
        ctx.queue.wait_for_stream(0x12345)


def test_closing_a_program_or_context_refuses_later_use_and_frees_everything(sim):
    dev = sim.devices()[0]
    ctx = dev.context()
    prog = ctx.program("vecadd")
    k = prog.vecadd
    launch = k.launcher(["buffer", "buffer", "buffer", np.int32])
    buf = ctx.buffer(64)
    prog.close()
    with pytest.raises(ClosedError, match="program of kernel 'vecadd'"):
        launch(4, None, (buf, buf, buf, 4))
    with pytest.raises(ClosedError):
        k.launcher(["buffer", "buffer", "buffer", np.int32])
    dead = ctx.buffer(8)
    dead.close()
    live = ctx.program("vecadd").vecadd.launcher(["buffer", "buffer", "buffer", np.int32])
    with pytest.raises(ClosedError, match="argument 1"):
        live(4, None, (buf, dead, buf, 4))
    ctx.pinned_empty(16)
    ctx.close()
    assert buf.closed and not sim.sim.modules and not sim.sim.streams
    with pytest.raises(ClosedError):
        ctx.buffer(16)
    assert dev.context() is not ctx


def test_a_forked_child_forgets_the_context_and_refuses_with_advice(sim):
    from pygpgpu_core.backend.driver import context as kit_context

    ctx = sim.devices()[0].context()
    launch = ctx.program("vecadd").vecadd.launcher(["buffer", "buffer", "buffer", np.int32])
    buf = ctx.buffer(64)
    kit_context._forget_contexts_after_fork("sim")    # what the fork handler does in the child
    with pytest.raises(ForkedProcessError, match="spawn"):
        launch(4, None, (buf, buf, buf, 4))
    with pytest.raises(ForkedProcessError):
        ctx.buffer(16)
    assert sim.sim.memory  # nothing was given back through the driver: it is the parent's


def test_cross_context_copies_go_through_the_host(monkeypatch):
    one, two = SimBackend(KERNELS), SimBackend(KERNELS)
    a = one.devices()[0].context().buffer_from_host(np.arange(16, dtype=np.int32))
    b = two.devices()[0].context().buffer(64)
    b.copy_from(a)
    out = np.zeros(16, np.int32)
    b.read(out)
    np.testing.assert_array_equal(out, np.arange(16))


# -- the pieces ---------------------------------------------------------------------------------

def test_lazy_library_loads_once_binds_roles_and_explains_what_is_missing(monkeypatch):
    from pygpgpu_core.backend.library import Function, LazyLibrary

    libm = ctypes.util.find_library("m") or "libm.so.6"
    functions = {"cos": Function("cos", (ctypes.c_double,), ctypes.c_double, fast=True),
                 "missing": Function("no_such_function_anywhere", (), optional=True)}
    lib = LazyLibrary("demo", "the demo library", functions, candidates=lambda: ["libdoesnotexist.so.9", libm],
                      hint="Install demo", env="PYGPGPU_DEMO_LIB")
    assert not lib.loaded and lib.calls is None
    calls = lib()
    assert lib() is calls and lib.loaded and calls.cos(0.0) == 1.0 and calls.cos_unchecked is not calls.cos
    assert calls.missing is None and not calls.has("missing") and calls.has("cos")

    required = LazyLibrary("demo", "the demo library", {"x": Function("no_such_function_anywhere")},
                           candidates=lambda: [libm], hint="Install demo", too_old="this demo is too old")
    with pytest.raises(BackendUnavailable, match="has no no_such_function_anywhere: this demo is too old. Install demo"):
        required()
    nowhere = LazyLibrary("demo", "the demo library", {}, candidates=lambda: ["libdoesnotexist.so.9"],
                          hint="Install demo", env="PYGPGPU_DEMO_LIB")
    with pytest.raises(BackendUnavailable, match=r"the demo library could not be loaded \(tried libdoesnotexist"):
        nowhere()
    monkeypatch.setenv("PYGPGPU_DEMO_LIB", libm)
    with pytest.raises(BackendUnavailable, match="could not be loaded"):
        nowhere()                                                  # the failure is remembered...
    nowhere.reset()
    assert nowhere().path                                          # ...until reset; the override is used
    monkeypatch.setenv("PYGPGPU_DEMO_LIB", "/nonexistent/libdemo.so")
    override = LazyLibrary("demo", "the demo library", {}, candidates=lambda: [libm], hint="Install demo",
                           env="PYGPGPU_DEMO_LIB")
    with pytest.raises(BackendUnavailable, match=r"PYGPGPU_DEMO_LIB='/nonexistent/libdemo.so' could not be loaded"):
        override()


def test_error_table_names_hints_and_fatal_codes():
    from pygpgpu_core.backend.errors import ErrorTable

    table = ErrorTable("demo", fatal={700: "DEMO_FAULT"}, hints={2: "free memory"}, lost="restart",
                       unknown="demo {code}", ask_name=lambda calls, code: {2: "DEMO_OOM"}.get(code))
    table.check(0, "x")
    with pytest.raises(DriverError, match=r"demoMalloc failed with DEMO_OOM \(2\): free memory"):
        table.check(2, "demoMalloc_v2", calls=object())            # _v2 dropped from the call's name
    with pytest.raises(DriverError, match=r"demo 5 \(5\): my own hint"):
        table.check(5, "demoX", "my own hint")
    with pytest.raises(ContextLost, match=r"a kernel faulted \(DEMO_FAULT\); restart"):
        table.check(700, "demoLaunch")


def test_elf_symbols_of_a_cubin_and_a_code_object(nvrtc_compile):
    from pygpgpu_core.backend import elf
    from pygpgpu_cuda._cubin import entry_names

    src = 'extern "C" __global__ void a(float* x) { x[0] = 1; }\n__global__ void b(int* y) { y[0] = 2; }\n'
    image = nvrtc_compile(src, "sm_90")
    assert elf.is_elf64(image) and not elf.is_elf64(image[:40])
    names = {s.name for s in elf.symbols(image) if s.type == elf.STT_FUNC}
    assert "a" in names and any(n.startswith("_Z1bPi") for n in names)
    assert sorted(entry_names(image)) == sorted(n for n in names if n == "a" or n.startswith("_Z1bPi"))


def test_packer_lays_arguments_out_as_a_c_struct_and_points_at_each():
    from pygpgpu_core.backend.args import ArgumentLayout

    class Expected(ctypes.Structure):
        _fields_ = [("p", ctypes.c_uint64), ("c", ctypes.c_int8), ("v", ctypes.c_float * 3), ("d", ctypes.c_double)]

    class Ptr:
        ptr = 0xABCDEF

    layout = ArgumentLayout(["buffer", np.int8, vec_types.float3, np.float64])
    layout.pack([Ptr(), 5, vec_types.float3(1, 2, 3), 0.25])
    assert layout.offsets == [Expected.p.offset, Expected.c.offset, Expected.v.offset, Expected.d.offset]
    expected = Expected(0xABCDEF, 5, (ctypes.c_float * 3)(1, 2, 3), 0.25)
    size = ctypes.sizeof(Expected)
    assert bytes(layout.storage)[:size] == bytes(expected)
    base = ctypes.addressof(layout.storage)
    assert [p - base for p in layout.pointers] == layout.offsets
    loose = ArgumentLayout(["buffer"], exact=False)                # parameter sizes unknown: zeroed slack
    assert len(loose.pointers) == 65 and ctypes.sizeof(loose.storage) >= 4096
    assert os.environ.get("PYGPGPU_SIM_STAGING_THRESHOLD") is None


def test_a_kit_backend_that_cannot_enumerate_says_what_to_define():
    from pygpgpu_core.backend.driver.device import DriverBackend

    class Unfinished(DriverBackend):
        name = "unfinished"

    with pytest.raises(NotImplementedError, match=r"Unfinished must define _enumerate\(\)"):
        Unfinished().devices()


@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_refused_page_lock_raises_and_leaves_nothing_to_free(ctx, sim, monkeypatch):
    """The driver refusing cuMemHostAlloc is an exception; the half-made block's finalizer is quiet."""
    refuse = lambda out, n, flags: 2   # noqa: E731  CUDA_ERROR_OUT_OF_MEMORY
    refuse.__name__ = "cuMemHostAlloc"
    monkeypatch.setattr(ctx.calls, "host_alloc", refuse)
    with pytest.raises(DriverError, match="page-lock"):
        ctx.pinned_empty(1 << 20)
    gc.collect()


def test_waits_end_in_a_synchronize_and_contexts_drain_at_exit(ctx, sim):
    """A wait polls the stream, then synchronizes the idle stream once (CUDA flushes device printf
    output only at a synchronize); the interpreter's exit drains every live context."""
    from pygpgpu_core.backend import handles

    launch = ctx.program("vecadd").vecadd.launcher(["buffer", "buffer", "buffer", np.int32])
    buf = ctx.buffer(64)
    launch(4, None, (buf, buf, buf, 4))
    sim.sim.log.clear()
    ctx.synchronize()
    assert sim.sim.log[-1] == "stream_synchronize", sim.sim.log
    assert ctx in set(handles._drain_at_exit)
    launch(4, None, (buf, buf, buf, 4))
    sim.sim.log.clear()
    handles._at_exit()
    handles._exiting = False          # the test process goes on
    assert "stream_synchronize" in sim.sim.log, sim.sim.log
