"""Wide kernels (issue 17, item 2): a streamed 1-D @kernel handles several consecutive elements per
work item with one vector load/store per array (``pygpgpu_translate._wide``). Each test runs real
kernels on the ``backend`` fixture and compares with numpy: every size around the lane groups,
views at element offsets 0-3 (misaligned pointers take the scalar lanes), in-place and aliased
arguments, ``i`` used as a value, bracket work sizes, and kernels that must not be widened."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from pygpgpu_core import gnp, gpu, registry
from pygpgpu_core.errors import PyGPGPUWarning
from pygpgpu_translate import _cpu_choices, _wide, kernel


@pytest.fixture(autouse=True, scope="module")
def wide_on_cpus_too():
    """CPU devices (PoCL) get the one-element kernel (_cpu_choices); these tests run the wide one
    there as on a GPU, so that its vector and lane-by-lane paths run on every device."""
    was, _cpu_choices.ENABLED = _cpu_choices.ENABLED, False
    yield
    _cpu_choices.ENABLED = was


SIZES = list(range(0, 71)) + [1023, 4096 + 3]
BIG = 100_003          # > 64 KiB per array: numpy arguments are staged one by one (zero-copy on PoCL)


@kernel
def saxpy(a, x, y, out):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]


@kernel
def mixed(x, y, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 2 + y[i]


@kernel
def double_in_place(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2


@kernel
def plus_one(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] + 1


@kernel
def plus_index(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] + i


@kernel
def shifted(x, out):                  # reads x[i + 1]: not streamed, never widened
    for i in range(out.shape[0]):
        out[i] = x[i + 1] - x[i]


@kernel
def count_positive(x, out, count):    # an atomic on another array: never widened
    for i in range(out.shape[0]):
        out[i] = x[i] * 3
        if x[i] > 0:
            gpu.atomic_add(count, 0, 1)


@kernel
def grid_add(x, out):                 # a 2-D domain: never widened
    for r, c in np.ndindex(out.shape):
        out[r, c] = x[r, c] + r * 10 + c


@kernel
def with_print(x, out):                # print: never widened (its lines are for reading, one printf is enough)
    for i in range(out.shape[0]):
        if x[i] > 1e30:
            print("huge", i)
        out[i] = x[i]


@kernel
def with_inner_loop(x, out):          # an inner loop: never widened (LANES copies of a loop gain nothing)
    for i in range(out.shape[0]):
        s = x[i]
        for _k in range(3):
            s = s * 2
        out[i] = s


@kernel
def keep_positive(x, out):            # out written under a condition: read, modified, written back
    for i in range(out.shape[0]):
        if x[i] > 0:
            out[i] = x[i]


@kernel
def bumped_scalar(a, x, out):         # a scalar parameter reassigned in the body: each lane starts from a
    for i in range(out.shape[0]):
        a = a + 1.0
        out[i] = a * x[i]


@kernel
def running(x, out):                  # a local set above the loop and reassigned in it: per lane, from 0
    s = 0.0
    for i in range(out.shape[0]):
        s = s + x[i]
        out[i] = s


@kernel
def padded(x, out):                   # x may be shorter than the domain: read only where it exists
    for i in range(out.shape[0]):
        if i < x.shape[0]:
            out[i] = x[i] * 2
        else:
            out[i] = -1


@kernel
def two_outputs(x, a, b):             # two written arrays, each once and unconditionally
    for i in range(x.shape[0]):
        a[i] = x[i] + 1
        b[i] = x[i] * 2


@kernel
def two_outputs_branchy(x, a, b):     # two written arrays under conditions: both loaded and stored back
    for i in range(x.shape[0]):
        if x[i] > 0:
            a[i] = x[i]
        else:
            b[i] = x[i]


def _lanes(k, *args, backend="opencl"):
    return k.inspect(*args, backend=backend.split(":")[0]).lanes


def _data(dtype, n, offset=0, seed=0):
    """``n`` values of ``dtype`` starting ``offset`` elements into a larger array (a view)."""
    rng = np.random.default_rng(seed + n + 7 * offset)
    dt = np.dtype(dtype)
    if dt.kind == "f":          # eighths: a * x + y is exact, with or without a fused multiply-add
        full = (rng.integers(-1000, 1000, n + 8) / 8).astype(dt)
    else:
        info = np.iinfo(dt)
        full = rng.integers(max(info.min, -100), min(info.max, 100), n + 8).astype(dt)
    return full[offset:offset + n]


# ---- widened kernels: every size and offset ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "uint8", "int16", "uint64"])
def test_saxpy_every_size_and_offset(backend, dtype):
    if dtype == "float64" and not getattr(registry.get_device(backend), "fp64", True):
        pytest.skip(f"{backend} has no float64")
    dt = np.dtype(dtype)
    a = dt.type(3)
    assert _lanes(saxpy, a, _data(dt, 8), _data(dt, 8), np.zeros(8, dt), backend=backend) == min(4, 16 // dt.itemsize)
    for n in SIZES + [BIG]:
        for offset in range(4):
            x, y = _data(dt, n, offset), _data(dt, n, (offset + 1) % 4, seed=1)
            out = np.full(n, 5, dt)
            saxpy[backend](a, x, y, out)
            np.testing.assert_array_equal(out, (a * x + y).astype(dt), err_msg=f"n={n} offset={offset}")


@pytest.mark.parametrize("types", [("float32", "int8", "float32"), ("float64", "float32", "float64"),
                                   ("int32", "uint8", "int32"), ("int16", "int16", "float32")])
def test_mixed_element_types(backend, types):
    tx, ty, to = (np.dtype(t) for t in types)
    if "float64" in types and not getattr(registry.get_device(backend), "fp64", True):
        pytest.skip(f"{backend} has no float64")
    widest = max(t.itemsize for t in (tx, ty, to))
    assert _lanes(mixed, _data(tx, 8), _data(ty, 8), np.zeros(8, to), backend=backend) == min(4, 16 // widest)
    for n in SIZES + [BIG]:
        for offset in range(4):
            x, y = _data(tx, n, offset), _data(ty, n, 3 - offset, seed=2)
            out = np.zeros(n, to)
            mixed[backend](x, y, out)
            want = (x * tx.type(2) + y).astype(to)          # numpy's promotion is the kernel's
            np.testing.assert_array_equal(out, want, err_msg=f"{types} n={n} offset={offset}")


def test_device_arrays_and_views(backend):
    """Resident gnp arrays (the benchmark's path: aligned buffers, vector accesses) and gnp views at
    element offsets (the kernel gets contiguous copies; writes go back into the view)."""
    for n in [0, 1, 3, 4, 5, 63, 64, 65, 1000, BIG]:
        x, y = _data(np.float32, n), _data(np.float32, n, seed=3)
        dx, dy = gnp.asarray(x, device=backend), gnp.asarray(y, device=backend)
        dout = gnp.asarray(np.zeros(n, np.float32), device=backend)
        saxpy[backend](np.float32(2), dx, dy, dout)
        np.testing.assert_array_equal(dout.get(), np.float32(2) * x + y)
        full = gnp.asarray(_data(np.float32, n + 8, seed=4), device=backend)
        host = full.get()
        for k in range(4):
            view = full[k:k + n]
            saxpy[backend](np.float32(-1), dx, dy, view)
            host[k:k + n] = np.float32(-1) * x + y
            np.testing.assert_array_equal(full.get(), host, err_msg=f"n={n} view offset {k}")


def test_misaligned_numpy_views_reach_the_kernel_unaligned():
    """On a host-unified OpenCL device (PoCL) large numpy arguments are aliased, not copied: a view
    one float into its array reaches the kernel 4 bytes off a 16-byte boundary, so these runs take
    the scalar lanes; nothing is uploaded, which shows the kernel read the views in place."""
    from conftest import host_unified_opencl_device

    dev = host_unified_opencl_device()
    for offset in range(1, 4):
        x, y = _data(np.float32, BIG, offset), _data(np.float32, BIG, offset, seed=5)
        assert x.ctypes.data % 16 and y.ctypes.data % 16
        out = np.zeros(BIG, np.float32)
        gnp.reset_transfer_stats()
        saxpy[dev.selector](np.float32(0.5), x, y, out)
        assert gnp.transfer_stats()["h2d_bytes"] == 0       # x and y were read where they are
        np.testing.assert_array_equal(out, np.float32(0.5) * x + y)


def test_foreign_pointer_at_any_offset_cuda(backend):
    """CUDA: arrays adopted through __cuda_array_interface__ start wherever their producer says (a
    torch slice): the kernel runs on them in place at byte offsets 4, 8 and 12."""
    if not backend.startswith("cuda"):
        pytest.skip("only CUDA adopts foreign device pointers")

    class Foreign:
        def __init__(self, base, offset, n, keep):
            ptr = base.__cuda_array_interface__["data"][0]
            self.__cuda_array_interface__ = {"data": (ptr + 4 * offset, False), "shape": (n,), "typestr": "<f4",
                                             "strides": None, "version": 3}
            self.keep = keep

    n = 4099
    for offset in range(4):
        xs, ys = _data(np.float32, n + 8, seed=6), _data(np.float32, n + 8, seed=7)
        bx, by = gnp.asarray(xs, device=backend), gnp.asarray(ys, device=backend)
        bo = gnp.asarray(np.zeros(n + 8, np.float32), device=backend)
        saxpy[backend](np.float32(2), Foreign(bx, offset, n, bx), Foreign(by, offset, n, by), Foreign(bo, offset, n, bo))
        got = bo.get()
        want = np.zeros(n + 8, np.float32)
        want[offset:offset + n] = np.float32(2) * xs[offset:offset + n] + ys[offset:offset + n]
        np.testing.assert_array_equal(got, want, err_msg=f"byte offset {4 * offset}")


# ---- aliasing, the index as a value, reassigned values ----------------------------------------------------
def test_in_place_and_aliased_output(backend):
    for n in [0, 1, 5, 67, BIG]:
        x = _data(np.float32, n)
        want = x * 2
        double_in_place[backend](x)
        np.testing.assert_array_equal(x, want)
        d = gnp.asarray(_data(np.int32, n), device=backend)          # one device buffer passed twice
        host = d.get()
        plus_one[backend](d, d)
        np.testing.assert_array_equal(d.get(), host + 1)
        h = _data(np.int32, n)
        h0 = h.copy()
        plus_one[backend](h, h)                                          # one numpy array passed twice
        np.testing.assert_array_equal(h, h0 + 1)
    assert _lanes(double_in_place, np.zeros(8, np.float32), backend=backend) == 4
    assert _lanes(plus_one, np.zeros(8, np.int32), np.zeros(8, np.int32), backend=backend) == 4


@pytest.mark.parametrize("dtype", ["int32", "float32", "int64"])
def test_index_used_as_a_value(backend, dtype):
    dt = np.dtype(dtype)
    for n in SIZES:
        for offset in range(4):
            x = _data(dt, n, offset)
            out = np.zeros(n, dt)
            plus_index[backend](x, out)
            np.testing.assert_array_equal(out, x + np.arange(n).astype(dt), err_msg=f"n={n} offset={offset}")
    assert _lanes(plus_index, np.zeros(8, dt), np.zeros(8, dt), backend=backend) == min(4, 16 // dt.itemsize)


def test_reassigned_parameter_and_local_start_over_in_each_lane(backend):
    for n in [1, 4, 7, 70, BIG]:
        x = _data(np.float32, n)
        out = np.zeros(n, np.float32)
        bumped_scalar[backend](np.float32(1.5), x, out)
        np.testing.assert_array_equal(out, np.float32(2.5) * x)        # each work item: a + 1 once
        running[backend](x, out)
        np.testing.assert_array_equal(out, x)                           # each work item: 0 + x[i]
    x8 = np.zeros(8, np.float32)
    assert _lanes(bumped_scalar, np.float32(1), x8, x8, backend=backend) == 4
    assert _lanes(running, x8, x8, backend=backend) == 4


def test_conditional_write_keeps_the_other_elements(backend):
    for n in SIZES + [BIG]:
        x = _data(np.float32, n)
        out = np.full(n, 7, np.float32)
        keep_positive[backend](x, out)
        np.testing.assert_array_equal(out, np.where(x > 0, x, np.float32(7)), err_msg=f"n={n}")
    assert _lanes(keep_positive, np.zeros(8, np.float32), np.zeros(8, np.float32), backend=backend) == 4


def test_shorter_array_read_under_a_condition(backend):
    """x is read only where ``i < x.shape[0]``: vector loads must not run past its end."""
    for n, m in [(10, 6), (70, 33), (70, 0), (BIG, 50_001), (BIG, BIG - 2)]:
        x = _data(np.float32, m)
        out = np.zeros(n, np.float32)
        padded[backend](x, out)
        want = np.full(n, -1, np.float32)
        want[:m] = x * 2
        np.testing.assert_array_equal(out, want, err_msg=f"n={n} len(x)={m}")
    assert _lanes(padded, np.zeros(3, np.float32), np.zeros(8, np.float32), backend=backend) == 4


def test_two_outputs(backend):
    for n in [0, 3, 9, 70, BIG]:
        x = _data(np.float32, n)
        a, b = np.zeros(n, np.float32), np.zeros(n, np.float32)
        two_outputs[backend](x, a, b)
        np.testing.assert_array_equal(a, x + 1)
        np.testing.assert_array_equal(b, x * 2)
        a, b = np.full(n, 9, np.float32), np.full(n, 8, np.float32)
        two_outputs_branchy[backend](x, a, b)
        np.testing.assert_array_equal(a, np.where(x > 0, x, np.float32(9)))
        np.testing.assert_array_equal(b, np.where(x > 0, np.float32(8), x))
    x8 = np.zeros(8, np.float32)
    assert _lanes(two_outputs, x8, x8, x8, backend=backend) == 4
    assert _lanes(two_outputs_branchy, x8, x8, x8, backend=backend) == 4


def test_one_device_array_as_several_parameters(backend):
    """Parameters that are one buffer see each other's writes in program order, as unwidened: x is
    read after a was written, and a and b are both written (the vector path checks the pointers)."""
    for n in [1, 4, 70, BIG]:
        x = _data(np.float32, n)
        d = gnp.asarray(x, device=backend)
        two_outputs[backend](d, d, d)                 # a = x + 1, then b = (that) * 2, in one memory
        np.testing.assert_array_equal(d.get(), (x + 1) * 2)
        dx, d2 = gnp.asarray(x, device=backend), gnp.asarray(np.zeros(n, np.float32), device=backend)
        two_outputs[backend](dx, d2, d2)              # b's store comes last
        np.testing.assert_array_equal(d2.get(), x * 2)
        np.testing.assert_array_equal(dx.get(), x)
        d3 = gnp.asarray(x, device=backend)
        two_outputs_branchy[backend](d3, d3, d3)      # every element keeps its value, through a or b
        np.testing.assert_array_equal(d3.get(), x)
        d4, d5 = gnp.asarray(x, device=backend), gnp.asarray(np.full(n, 3, np.float32), device=backend)
        two_outputs_branchy[backend](d4, d5, d5)
        np.testing.assert_array_equal(d5.get(), x)


def test_bracket_work_sizes(backend):
    """A bracket work size counts work items of the unwidened kernel: a partial one reaches the same
    elements (whole groups), a larger one all of them."""
    n = 1000
    x, y = _data(np.float32, n), _data(np.float32, n, seed=8)
    for work in [(n, 64), (n + 100, 32), (100, 64), (64, 64), (1,), (999,), (3, 1)]:
        out = np.full(n, 4, np.float32)
        total = work[0] if len(work) == 1 else -(-work[0] // work[1]) * work[1]
        reach = min(n, total)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always", PyGPGPUWarning)
            saxpy[backend][work if len(work) == 2 else work[0]](np.float32(2), x, y, out)
        assert len(got) == (reach < n), (work, got)           # a partial launch is never silent
        want = np.full(n, 4, np.float32)
        want[:reach] = np.float32(2) * x[:reach] + y[:reach]
        np.testing.assert_array_equal(out, want, err_msg=f"work size {work}")


@kernel
def plus_big(x, out, k):
    for i in range(out.shape[0]):
        out[i] = x[i] + k + i


def test_64_bit_indexing(backend):
    """A Python int past 32 bits makes the plan index in 64 bits: the wide kernel's lane index too."""
    big = 2**40
    for n in [1, 6, 70, 4099]:
        for offset in range(2):
            x = _data(np.int64, n, offset)
            out = np.zeros(n, np.int64)
            plus_big[backend](x, out, big)
            np.testing.assert_array_equal(out, x + big + np.arange(n))
    found = plus_big.inspect(np.zeros(8, np.int64), np.zeros(8, np.int64), big, backend=backend.split(":")[0])
    assert found.lanes == 2 and found.signature[1] == 64
    assert "long long _pyg_i0;" in found.source or "long _pyg_i0;" in found.source


# ---- kernels that are not widened still run ---------------------------------------------------------------
def test_kernels_that_are_not_widened(backend):
    for n in [1, 5, 70, 4099]:
        x = _data(np.float32, n + 1)
        out = np.zeros(n, np.float32)
        shifted[backend](x, out)
        np.testing.assert_array_equal(out, x[1:] - x[:-1])
        xs = _data(np.int32, n)
        outs = np.zeros(n, np.int32)
        count = np.zeros(1, np.int32)
        count_positive[backend](xs, outs, count)
        np.testing.assert_array_equal(outs, xs * 3)
        assert count[0] == np.count_nonzero(xs > 0)
        g = _data(np.float32, 3 * n).reshape(3, n)
        outg = np.zeros_like(g)
        grid_add[backend](g, outg)
        r, c = np.indices(g.shape)
        np.testing.assert_allclose(outg, g + r * 10 + c)
        out2 = np.zeros(n, np.float32)
        with_inner_loop[backend](x[:n], out2)
        np.testing.assert_array_equal(out2, x[:n] * 8)
    x8, i8 = np.zeros(9, np.float32), np.zeros(8, np.int32)
    assert _lanes(shifted, x8, x8[:8], backend=backend) == 1
    assert _lanes(count_positive, i8, i8, np.zeros(1, np.int32), backend=backend) == 1
    assert _lanes(grid_add, np.zeros((2, 4), np.float32), np.zeros((2, 4), np.float32), backend=backend) == 1
    assert _lanes(with_inner_loop, x8, x8, backend=backend) == 1
    assert _lanes(with_print, x8, x8, backend=backend) == 1
    out3 = np.zeros(8, np.float32)
    with_print[backend](x8[:8], out3)
    np.testing.assert_array_equal(out3, x8[:8])


def test_switched_off(monkeypatch, backend):
    """``PYGPGPU_WIDE_LOADS=0`` (``_wide.ENABLED``): one element per work item, the source cache apart."""
    monkeypatch.setattr(_wide, "ENABLED", False)

    @kernel
    def narrow_saxpy(a, x, y, out):
        for i in range(out.shape[0]):
            out[i] = a * x[i] + y[i]

    x, y = _data(np.float32, 70), _data(np.float32, 70, seed=9)
    out = np.zeros(70, np.float32)
    narrow_saxpy[backend](np.float32(2), x, y, out)
    np.testing.assert_array_equal(out, np.float32(2) * x + y)
    assert _lanes(narrow_saxpy, np.float32(2), x, y, out, backend=backend) == 1
    monkeypatch.setattr(_wide, "ENABLED", True)

    # the same source text: translated again, not served from the disk cache
    @kernel
    def narrow_saxpy(a, x, y, out):
        for i in range(out.shape[0]):
            out[i] = a * x[i] + y[i]

    assert _lanes(narrow_saxpy, np.float32(2), x, y, out, backend=backend) == 4


# ---- the vector accesses in the generated code ------------------------------------------------------------
def _saxpy_args(dtype):
    dt = np.dtype(dtype)
    return dt.type(2), np.zeros(8, dt), np.zeros(8, dt), np.zeros(8, dt)


@pytest.mark.parametrize("dtype, load, store", [
    ("float32", "ld.global.v4.f32", "st.global.v4.f32"),
    ("float64", "ld.global.v2.f64", "st.global.v2.f64"),
    ("int32", "ld.global.v4.u32", "st.global.v4.u32"),
])
def test_cuda_saxpy_compiles_to_128_bit_accesses(nvrtc_compile, dtype, load, store):
    source = saxpy.inspect(*_saxpy_args(dtype), backend="cuda").source
    ptx = nvrtc_compile(source, "compute_90").decode(errors="replace")
    assert ptx.count(load) == 2 and ptx.count(store) == 1, "\n".join(
        line for line in ptx.splitlines() if "ld.global" in line or "st.global" in line)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint64"])
def test_hip_saxpy_compiles(hiprtc_compile, dtype):
    from conftest import assert_code_object

    source = saxpy.inspect(*_saxpy_args(dtype), backend="hip").source
    assert "make_" in source          # the vector store builds its value with HIP's own constructor
    assert_code_object(hiprtc_compile(source, "gfx90a"), source)


def _wide_kernels(dtype):
    """(kernel, arguments) of every widened kernel above, at ``dtype``."""
    dt = np.dtype(dtype)
    v = np.zeros(8, dt)
    found = [(saxpy, (dt.type(2), v, v, v)), (mixed, (v, np.zeros(8, np.int8), v)), (double_in_place, (v,)),
             (plus_index, (v, v)), (keep_positive, (v, v)), (two_outputs, (v, v, v)),
             (two_outputs_branchy, (v, v, v)), (bumped_scalar, (dt.type(1), v, v)), (running, (v, v))]
    return found + ([(padded, (v, v))] if dt.kind != "u" else [])      # it stores -1


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64"])
def test_every_wide_kernel_compiles_for_cuda_and_hip(nvrtc_compile, hiprtc_compile, dtype):
    from conftest import assert_code_object, assert_cubin

    for k, args in _wide_kernels(dtype):
        for dialect in ("cuda", "hip"):
            found = k.inspect(*args, backend=dialect)
            assert found.lanes == min(4, 16 // max(np.dtype(dtype).itemsize, 1)), (k.__name__, dialect)
            if dialect == "cuda":
                assert_cubin(nvrtc_compile(found.source, "sm_90"), found.source)
            else:
                assert_code_object(hiprtc_compile(found.source, "gfx90a"), found.source)


def test_opencl_source_uses_vector_pointer_casts():
    source = saxpy.inspect(*_saxpy_args("float32"), backend="opencl").source
    assert "(*(__global const float4*)(x + _pyg_i0))" in source
    assert "(*(__global float4*)(out + _pyg_i0)) = (float4)(" in source


# ---- under oclgrind: no access outside any array, whatever the size ---------------------------------------
OCLGRIND_SCRIPT = '''
import sys
sys.path.insert(0, {here!r})
import numpy as np
from pygpgpu_core import mempool
mempool.size_class = lambda n: max(int(n), 4)     # exact-size buffers: one element past the end is caught
import test_wide_loads as w

f4 = np.float32
for n in list(range(1, 10)) + [17, 33]:
    x, y = w._data(f4, n), w._data(f4, n, seed=1)
    out = np.zeros(n, f4)
    w.saxpy["opencl"](f4(2), x, y, out)
    assert np.array_equal(out, f4(2) * x + y)
    w.mixed["opencl"](w._data(np.float64, n), w._data(np.int8, n), np.zeros(n, np.float64))
    w.plus_index["opencl"](w._data(np.int32, n), np.zeros(n, np.int32))
    w.keep_positive["opencl"](x, out)
    for m in (0, 1, n - 1, n):
        w.padded["opencl"](w._data(f4, m), out)
        assert np.array_equal(out[:m], w._data(f4, m) * 2) and (out[m:] == -1).all()
    w.two_outputs_branchy["opencl"](x, np.zeros(n, f4), np.zeros(n, f4))
    assert w.saxpy.inspect(f4(2), x, y, out, backend="opencl").lanes == 4
print("RAN", flush=True)
'''


def test_wide_kernels_are_clean_under_oclgrind(oclgrind_icd, tmp_path):
    from pathlib import Path

    from conftest import run_under_oclgrind

    out, text, bad = run_under_oclgrind(tmp_path, OCLGRIND_SCRIPT.format(here=str(Path(__file__).parent)))
    assert "RAN" in out, out
    assert not bad, text[:4000]
