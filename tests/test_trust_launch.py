"""Launches that must never give a silently wrong result (issue 12): a bracket work size smaller
than the domain, arrays shorter than the domain, work sizes past 32-bit ids, Python ints that do
not fit the type they meet, big-endian arrays, local arrays with an automatic group size, and
numpy array subclasses."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gnp, gpu, registry
from pygpgpu_core.errors import PyGPGPUWarning
from pygpgpu_translate import kernel
from conftest import assert_code_object, assert_cubin, skip_no_device


# ---- item 1: a bracket work size smaller than the domain ------------------------------------------
@kernel
def add1(a, out):
    for i in range(out.shape[0]):
        out[i] = a[i] + 1


@kernel
def add1_2d(a, out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = a[y, x] + 1


# small batch (< 64 KiB), pooled per array (< 1 MiB, aliased on PoCL beyond), pooled on CUDA
@pytest.mark.parametrize("n", [5000, 100_000, 300_000])
def test_a_bracket_smaller_than_the_domain_leaves_the_rest_of_the_output_alone(backend, n):
    a = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    add1[backend](a, out)                       # pool memory now holds a + 1
    out = np.full(n, -7.0, np.float32)
    with pytest.warns(PyGPGPUWarning, match=r"runs only 100 work item\(s\)"):    # meant here; never silent
        add1[backend][(100, 50)](a, out)
    np.testing.assert_array_equal(out[:100], a[:100] + 1)
    assert (out[100:] == -7.0).all()            # never stale pool memory
    out = np.full(n, -7.0, np.float32)
    add1[backend][(n, 64)](a, out)              # rounded up past the domain: all of it, as before
    np.testing.assert_array_equal(out, a + 1)


def test_a_bracket_smaller_than_an_ndindex_domain(backend):
    a = np.ones((60, 50), np.float32)
    out = np.zeros((60, 50), np.float32)
    add1_2d[backend](a, out)
    out = np.full((60, 50), -7.0, np.float32)
    with pytest.warns(PyGPGPUWarning, match="runs only"):
        add1_2d[backend][((10, 20), (10, 10))](a, out)     # x reaches 10 of 50, y 20 of 60
    want = np.full((60, 50), -7.0, np.float32)
    want[:20, :10] = 2.0
    np.testing.assert_array_equal(out, want)
    out = np.full((60, 50), -7.0, np.float32)
    with pytest.warns(PyGPGPUWarning, match="runs only"):
        add1_2d[backend][(10,)](a, out)                     # a 1-D work size reaches row 0 only
    want = np.full((60, 50), -7.0, np.float32)
    want[0, :10] = 2.0
    np.testing.assert_array_equal(out, want)


# ---- item 2: arrays shorter than the domain ------------------------------------------------------
@kernel
def copy_into(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i]


@kernel
def copy_n(x, out, n):
    for i in range(n):
        out[i] = x[i] * 2


@kernel
def copy_guarded(x, out):
    for i in range(out.shape[0]):
        if i < x.shape[0]:
            out[i] = x[i]
        else:
            out[i] = -1


@kernel
def copy_img(img, out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = img[y, x] + 1


def test_an_input_shorter_than_the_domain_raises_naming_it(backend):
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(20, np.float32)
    with pytest.raises(ValueError, match=r"kernel 'copy_into' \(test_trust_launch.py:\d+\).*'x'.*\(20,\).*"
                                         r"'x' has shape \(10,\).*out \(20,\), x \(10,\)"):
        copy_into[backend](x, out)
    assert (out == 0).all()                     # nothing ran


def test_an_output_shorter_than_a_range_domain_raises(backend):
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(10, np.float32)
    with pytest.raises(ValueError, match="'out', 'x'|'x', 'out'|'out'"):
        copy_n[backend](x, out, 50)
    copy_n[backend](x, out, 10)                 # in range: fine
    np.testing.assert_array_equal(out, x[:10] * 2)


def test_a_bracket_within_the_arrays_is_fine_and_device_arrays_are_checked_too(backend):
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(20, np.float32)
    with pytest.warns(PyGPGPUWarning, match="runs only 8"):
        copy_into[backend][(8, 4)](x, out)      # reaches 8 indices: x covers them
    np.testing.assert_array_equal(out[:8], x[:8])
    dev = registry.get_device(backend)
    dx, dout = gnp.asarray(x, device=dev), gnp.zeros(20, np.float32, device=dev)
    with pytest.raises(ValueError, match="'x' has shape"):
        copy_into[backend](dx, dout)


def test_a_guarded_access_may_use_a_shorter_array(backend):
    x = np.arange(10, dtype=np.float32)
    out = np.zeros(20, np.float32)
    copy_guarded[backend](x, out)
    np.testing.assert_array_equal(out, np.concatenate([x, np.full(10, -1, np.float32)]))


def test_two_dimensional_extents_are_checked_per_axis(backend):
    img = np.ones((8, 5), np.float32)
    out = np.zeros((8, 6), np.float32)
    with pytest.raises(ValueError, match=r"'img' has shape \(8, 5\)"):
        copy_img[backend](img, out)
    copy_img[backend](np.ones((9, 7), np.float32), out)     # larger is fine
    assert (out == 2).all()


@kernel
def double_rows(v, out):
    for i in range(out.shape[0]):
        out[i] = v[i] * 2.0                 # (N, 4) float32: float4 rows


@kernel
def first_two(v, out):
    for i in range(out.shape[0]):
        out[i] = v[i, 0] + v[i, 1]


@kernel
def channels(img, out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = img[y, x, 0] + img[y, x, 2]


def test_extents_of_rows_and_leading_indices_are_checked(backend):
    v = np.arange(40, dtype=np.float32).reshape(10, 4)
    with pytest.raises(ValueError, match=r"'v' has shape \(10, 4\)"):
        double_rows[backend](v, np.zeros((20, 4), np.float32))
    with pytest.raises(ValueError, match=r"'v' has shape \(10, 4\)"):
        first_two[backend](v, np.zeros(20, np.float32))
    with pytest.raises(ValueError, match=r"'img' has shape \(4, 5, 3\)"):
        channels[backend](np.zeros((4, 5, 3), np.float32), np.zeros((4, 6), np.float32))
    out = np.zeros((10, 4), np.float32)
    double_rows[backend](v, out)
    np.testing.assert_array_equal(out, v * 2)
    out1 = np.zeros(10, np.float32)
    first_two[backend](v, out1)
    np.testing.assert_array_equal(out1, v[:, 0] + v[:, 1])
    img = np.arange(60, dtype=np.float32).reshape(4, 5, 3)
    out2 = np.zeros((4, 5), np.float32)
    channels[backend](img, out2)
    np.testing.assert_array_equal(out2, img[:, :, 0] + img[:, :, 2])


# ---- item 4: work sizes past 32-bit ids ----------------------------------------------------------
@kernel
def mark(out):
    i = gpu.get_global_id(0)
    if i < out.shape[0]:
        out[i] = 1


@pytest.mark.parametrize("dialect", ["opencl", "cuda", "hip"])
def test_work_sizes_past_32_bits_get_64_bit_ids(dialect):
    out = np.zeros(4, np.int32)
    small = mark[(1024, 256)].inspect(out, backend=dialect)
    big = mark[(2**31 + 256, 256)].inspect(out, backend=dialect)
    assert small.signature[1] == 32 and big.signature[1] == 64
    body = big.source[big.source.index("void mark"):]
    assert ("long i;" in body or "long long i;" in body) and "int i;" not in body


def test_64_bit_id_kernels_compile_on_cuda_and_hip(nvrtc_compile, hiprtc_compile):
    out = np.zeros(4, np.int32)
    src = mark[(2**31 + 256, 256)].inspect(out, backend="cuda").source
    assert_cubin(nvrtc_compile(src), src)
    src = mark[(2**31 + 256, 256)].inspect(out, backend="hip").source
    assert_code_object(hiprtc_compile(src, "gfx1030"), src)


def test_a_launch_past_2_31_work_items_runs_with_64_bit_ids(backend, device):
    if getattr(device, "is_cpu", False):
        # 2**31 work items take 15-40 s on PoCL here; the ids are checked in the source above
        pytest.skip("2**31 work items are too slow on a CPU device; runs on GPUs")
    out = np.zeros(8, np.int32)
    mark[backend][(2**31 + 256, 256)](out)      # 32-bit ids wrapped negative and wrote out of bounds
    assert (out == 1).all()


@pytest.mark.parametrize("size", [(2**64, 256), (2**64 + 5,), ((2**64, 1), (1, 1))])
def test_work_sizes_no_device_can_launch_raise_before_anything_runs(backend, size):
    out = np.zeros(4, np.int32)
    with pytest.raises(ValueError, match="global"):
        mark[backend][size](out)
    assert (out == 0).all()


def test_opencl_limits_group_counts_and_size_t():
    from pygpgpu_opencl._kernel import MAX_GROUPS, normalize_work_size
    limits = dict(max_group=4096, max_items=(4096, 4096, 4096), kernel="k")
    with pytest.raises(ValueError, match="size_t"):
        normalize_work_size(2**64, 256, **limits)
    with pytest.raises(ValueError, match="size_t"):
        normalize_work_size(2**32, None, address_bits=32, **limits)
    with pytest.raises(ValueError, match=f"needs {2**32} work groups"):
        normalize_work_size(2**40, 256, **limits)        # PoCL died with SIGILL here
    with pytest.raises(ValueError, match="explicit local size"):
        normalize_work_size(2**33, None, **limits)
    assert normalize_work_size(2**40, 4096, **limits)[1] == (2**40,)
    assert normalize_work_size(MAX_GROUPS, 1, **limits)[1] == (MAX_GROUPS,)


def test_opencl_kernel_refuses_a_launch_pocl_would_die_on():
    dev = registry.get_device("opencl") if "opencl" in registry.backend_names() else None
    if dev is None or not registry.backend_devices("opencl"):
        skip_no_device("opencl", "no OpenCL device")
    prog = dev.context().program("__kernel void k(__global int* p) { if (get_global_id(0) == 0) p[0] = 1; }", (),
                                 name="k")
    k = prog.kernel("k")
    p = np.zeros(1, np.int32)
    with pytest.raises(ValueError, match="work groups"):
        k.launch(2**40, 256, [p])
    with pytest.raises(ValueError, match="size_t"):
        k.launcher(["buffer"])(2**64, None, [dev.context().buffer(4)])
    assert p[0] == 0


# ---- item 5: Python ints that do not fit the type they meet --------------------------------------
@kernel
def add_scalar(x, c, out):
    for i in range(out.shape[0]):
        out[i] = x[i] + c


@kernel
def store_scalar(c, out):
    for i in range(out.shape[0]):
        k = c
        out[i] = k


@pytest.mark.parametrize("dtype, value", [(np.int32, 2**31), (np.int32, -2**31 - 1), (np.int32, 2**40),
                                          (np.int8, 300), (np.uint8, -1), (np.uint16, 70000),
                                          (np.uint32, -1), (np.int16, -40000), (np.int64, 2**63)])
def test_a_python_int_that_does_not_fit_the_array_type_raises_like_numpy(backend, dtype, value):
    x = np.arange(4, dtype=dtype)
    out = np.zeros(4, dtype)
    with pytest.raises(OverflowError):
        x + value                               # numpy refuses too
    with pytest.raises(OverflowError, match=rf"argument 'c'.*Python integer {value} out of bounds for "
                                            rf"{np.dtype(dtype).name}"):
        add_scalar[backend](x, value, out)
    assert (out == 0).all()


def test_python_ints_that_fit_still_work_and_numpy_scalars_convert_as_numpy_does(backend):
    x = np.arange(4, dtype=np.int8)
    out = np.zeros(4, np.int8)
    add_scalar[backend](x, 100, out)
    np.testing.assert_array_equal(out, x + 100)
    add_scalar[backend](x, -128, out)
    np.testing.assert_array_equal(out, x + -128)
    x32, out32 = np.arange(4, dtype=np.int32), np.zeros(4, np.int32)
    for c in (-2**31, 2**31 - 1):                  # the edges fit (the wrapping arithmetic is no conversion)
        add_scalar[backend](x32, c, out32)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out32, x32 + c)
    wide = np.zeros(4, np.int64)
    add_scalar[backend](np.arange(4, dtype=np.int64), 2**40, wide)     # int64 data: 2**40 fits
    np.testing.assert_array_equal(wide, np.arange(4) + 2**40)


def test_a_python_int_stored_into_a_narrower_array_raises(backend):
    out = np.zeros(4, np.int32)
    with pytest.raises(OverflowError, match=r"argument 'c'.*1099511627776 out of bounds for int32"):
        store_scalar[backend](2**40, out)
    store_scalar[backend](7, out)
    assert (out == 7).all()


def put(out, i, v):
    out[i] = v


@kernel
def store_via_helper(c, out):
    for i in range(out.shape[0]):
        put(out, i, c)


def test_a_python_int_stored_by_a_helper_is_checked_too(backend):
    out = np.zeros(4, np.int8)
    with pytest.raises(OverflowError, match=r"argument 'c'.*300 out of bounds for int8"):
        store_via_helper[backend](300, out)
    store_via_helper[backend](-5, out)
    assert (out == -5).all()


# ---- item 6: big-endian arrays -------------------------------------------------------------------
@kernel
def scale_add(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 2.0 + 1.0


@kernel
def bump(x):
    for i in range(x.shape[0]):
        x[i] += 3


@pytest.mark.parametrize("xdt, odt", [(">f4", "<f4"), ("<f4", ">f4"), (">f4", ">f4"), (">f8", ">f8")])
def test_big_endian_arrays_are_read_and_written_in_their_byte_order(backend, device, xdt, odt):
    if "8" in xdt and not getattr(device, "fp64", True):
        pytest.skip("no float64 on this device")
    x = (np.arange(50) * 0.5).astype(xdt)
    out = np.zeros(50, odt)
    scale_add[backend](x, out)
    assert out.dtype == np.dtype(odt)
    np.testing.assert_array_equal(out, x * 2.0 + 1.0)


def test_big_endian_arrays_updated_in_place(backend):
    x = np.arange(12, dtype=">i4").reshape(12)
    bump[backend](x)
    np.testing.assert_array_equal(x, np.arange(12) + 3)
    ro = np.arange(4, dtype=">i4")
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        bump[backend](ro)


# ---- item 7: local arrays with an automatic group size ------------------------------------------
GROUP = 64


@kernel
def group_sums(x, out):
    gpu.work_size(x)
    tile = gpu.local_array(GROUP, np.float32)
    i = gpu.get_global_id(0)
    lid = gpu.get_local_id(0)
    tile[lid] = x[i] if i < x.shape[0] else 0.0
    gpu.barrier()
    step = GROUP // 2
    while step > 0:
        if lid < step:
            tile[lid] += tile[lid + step]
        gpu.barrier()
        step //= 2
    if lid == 0:
        out[gpu.get_group_id(0)] = tile[0]


@kernel
def sync_only(x):
    gpu.work_size(x)
    gpu.barrier()
    x[gpu.get_global_id(0)] = 1.0


@kernel
def two_tiles(x):
    a = gpu.local_array(16, np.float32)
    b = gpu.local_array(32, np.float32)
    lid = gpu.get_local_id(0)
    a[lid % 16] = 1.0
    b[lid % 32] = 2.0
    gpu.barrier()
    x[gpu.get_global_id(0)] = a[0] + b[0]


@kernel
def big_tile(x):
    t = gpu.local_array(8192, np.float32)
    lid = gpu.get_local_id(0)
    t[lid] = 1.0
    gpu.barrier()
    x[gpu.get_global_id(0)] = t[0]


@kernel
def tile_fill(x):
    t = gpu.local_array(GROUP, np.float32)
    lid = gpu.get_local_id(0)
    t[lid] = lid
    gpu.barrier()
    x[gpu.get_global_id(0)] = t[GROUP - 1 - lid]


def test_local_arrays_set_the_automatic_group_size(backend):
    n = 8192 + 40              # not a multiple of the group: the last group is ragged
    x = (np.arange(n) % 7).astype(np.float32)
    groups = -(-n // GROUP)
    out = np.zeros(groups, np.float32)
    group_sums[backend](x, out)                 # no local size given: groups of GROUP
    want = np.array([x[g * GROUP:(g + 1) * GROUP].sum() for g in range(groups)], np.float32)
    np.testing.assert_allclose(out, want)


def test_kernels_whose_group_size_is_unknown_ask_for_one(backend):
    x = np.zeros(256, np.float32)
    with pytest.raises(ValueError, match="explicit local size"):
        sync_only[backend](x)
    sync_only[backend][(256, 64)](x)            # given: fine
    assert (x == 1).all()
    with pytest.raises(ValueError, match=r"different shapes \(\(16,\), \(32,\)\)"):
        two_tiles[backend][256](x)
    two_tiles[backend][(256, 32)](x)
    assert (x == 3).all()
    with pytest.raises(ValueError, match="implies groups of 8192"):
        big_tile[backend][8192](np.zeros(8192, np.float32))
    with pytest.raises(ValueError, match="not a multiple of the group size"):
        tile_fill[backend][1000](np.zeros(1000, np.float32))    # no domain: rounding up would add unguarded items
    y = np.zeros(1024, np.float32)
    tile_fill[backend][1024](y)
    np.testing.assert_array_equal(y, np.tile(np.arange(GROUP - 1, -1, -1), 1024 // GROUP))


# ---- numpy array subclasses -----------------------------------------------------------------------
def test_memmaps_are_arrays(backend, tmp_path):
    src = np.memmap(tmp_path / "x.dat", dtype=np.float32, mode="w+", shape=(64,))
    src[:] = np.arange(64)
    dst = np.memmap(tmp_path / "y.dat", dtype=np.float32, mode="w+", shape=(64,))
    scale_add[backend](src, dst)
    dst.flush()
    np.testing.assert_array_equal(np.fromfile(tmp_path / "y.dat", np.float32), np.arange(64) * 2.0 + 1.0)


def test_masked_arrays_and_matrices_are_refused_with_a_hint(backend):
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    with pytest.raises(TypeError, match=r"argument 'x': masked arrays.*x\.data.*x\.filled"):
        scale_add[backend](np.ma.masked_array(x, mask=x > 3), out)
    with pytest.raises(TypeError, match=r"argument 'x': np\.matrix.*np\.asarray\(x\)"):
        scale_add[backend](np.asmatrix(x.reshape(1, 16)), out)
    assert (out == 0).all()


def test_hip_style_limit_on_threads_per_dimension():
    from pygpgpu_core.backend.worksize import block_geometry
    limits = dict(max_threads=1024, max_block_dims=(1024, 1024, 1024), max_grid_dims=(2**32 - 1,) * 3,
                  device_name="TestAMD", kernel_name="k")
    assert block_geometry(2**32 - 256, 256, default_local=(256,), max_work_per_dim=2**32 - 1, **limits)[0] == 2**24 - 1
    with pytest.raises(ValueError, match="at most 4294967295 a dimension"):
        block_geometry(2**32, 256, default_local=(256,), max_work_per_dim=2**32 - 1, **limits)
    with pytest.raises(ValueError, match="needs 8589934592 blocks"):      # CUDA-style grid limit in blocks
        block_geometry(2**41, 256, default_local=(256,), **dict(limits, max_grid_dims=(2**31 - 1, 65535, 65535)))


@kernel
def fill_twice(out, n):
    for i in range(n * 2):
        if i < out.shape[0]:
            out[i] = i


def test_a_domain_too_large_for_32_bit_ids_switches_to_64_bit_indexing(backend, monkeypatch):
    # a domain computed at launch (range(n * 2) from an int32 scalar) can pass 2**31 - 2**16 only
    # there; the 32-bit plan refuses before anything runs and the 64-bit plan launches instead.
    # The threshold is lowered here so the test launches 200 work items, not 2**31.
    from pygpgpu_translate import _launch
    monkeypatch.setattr(_launch, "NARROW_MAX_WORK", 150)
    fill_twice._plans.clear()
    out = np.zeros(300, np.int32)
    fill_twice[backend](out, 50)                # 100 work items: the 32-bit plan
    assert {key[2] for key in fill_twice._plans} == {32}
    fill_twice[backend](out, 100)               # 200 work items: past the (lowered) threshold
    assert {key[2] for key in fill_twice._plans} == {32, 64}
    np.testing.assert_array_equal(out, np.where(np.arange(300) < 200, np.arange(300), 0))
    fill_twice[backend](out, 100)               # warm: same result through the 64-bit plan
    np.testing.assert_array_equal(out, np.where(np.arange(300) < 200, np.arange(300), 0))


def test_a_python_int_past_64_bits_raises_overflow_error(backend):
    out = np.zeros(4, np.int64)
    with pytest.raises(OverflowError, match=r"argument 'c'.*Python integer 36893488147419103232 out of bounds"):
        store_scalar[backend](2**65, out)
