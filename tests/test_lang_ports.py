"""Spellings that code ported from Numba, Warp and Taichi reaches for (issue 31): each runs on the
device and is compared with numpy or with the same function run on the host."""
from __future__ import annotations

import functools
import pickle

import numpy as np
import pytest

from pygpgpu import float2, float4, gpu, kernel
from pygpgpu_core.gpu import ATOMIC_DTYPES
from pygpgpu_translate._kernel import build_options
from pygpgpu_translate.prelude import PRELUDE_NAMES

C_NAMES = {"int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "float": np.float32,
           "double": np.float64}


@pytest.fixture
def on(backend):
    """Each backend that executes kernels in this run (PoCL here; CUDA and OpenCL on a GPU machine)."""
    return backend


# ---- gpu.local_array(shape=..., dtype=...) ------------------------------------------------------------
@kernel
def stage_through_local(x, out):
    for i in range(out.shape[0]):
        tile = gpu.local_array(shape=(16,), dtype=np.float64)
        tile[gpu.get_local_id(0)] = x[i] * 2.0
        out[i] = tile[gpu.get_local_id(0)]


def test_local_array_takes_shape_and_dtype_as_keywords(on):
    x = np.arange(16, dtype=np.float64)
    out = np.zeros_like(x)
    stage_through_local[on](x, out)
    np.testing.assert_array_equal(out, x * 2.0)


def test_local_array_names_an_unknown_keyword():
    @kernel
    def bad(out):
        for i in range(out.shape[0]):
            t = gpu.local_array(shape=8, dtype=np.float32, order=1)
            out[i] = t[0]

    with pytest.raises(SyntaxError, match="gpu.local_array takes shape and dtype, not 'order'"):
        bad.inspect(np.zeros(4, np.float32), backend="opencl")


# ---- host atomics accept every type the device's atomics accept ------------------------------------------
@pytest.mark.parametrize("piece", sorted(n for n in PRELUDE_NAMES if n.startswith("atomic_") and ".local" not in n))
def test_host_atomic_takes_what_the_device_takes(piece):
    op, c_type = piece.split(":")
    dtype = np.dtype(C_NAMES[c_type])
    assert dtype in ATOMIC_DTYPES
    a = np.array([5, 7], dtype)
    fn = getattr(gpu, op)
    args = {"atomic_inc": (), "atomic_dec": (), "atomic_cmpxchg": (7, 3)}.get(op, (3,))
    old = fn(a, 1, *args)
    assert old == 7


@kernel
def running_max(x, best):
    for i in range(x.shape[0]):
        gpu.atomic_max(best, 0, x[i])
        gpu.atomic_add(best, 1, x[i])


def test_float64_atomics_agree_with_the_host(on):
    x = np.random.default_rng(1).random(256) * 100.0
    device, host = np.zeros(2), np.zeros(2)
    running_max[on](x, device)
    running_max.py_func(x, host)
    assert device[0] == host[0] == x.max()
    np.testing.assert_allclose(device[1], host[1])


# ---- @kernel(contract=False): numpy's rounding for a * b + c ---------------------------------------------
def fused(a, b, c, out):
    for i in range(out.shape[0]):
        out[i] = a[i] * b[i] + c[i]


def _inputs(dtype, n=4096):
    rng = np.random.default_rng(7)
    return [rng.standard_normal(n).astype(dtype) for _ in range(3)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_no_contraction_matches_numpy_bit_for_bit(on, dtype):
    a, b, c = _inputs(dtype)
    out = np.zeros_like(a)
    kernel(contract=False)(fused)[on](a, b, c, out)
    np.testing.assert_array_equal(out, a * b + c)


def test_no_contraction_is_in_the_source_and_the_options():
    a, b, c = _inputs(np.float32, 8)
    strict, default = kernel(contract=False)(fused), kernel(fused)
    assert strict.contract is False and default.contract is True
    ocl = strict.inspect(a, b, c, a.copy(), backend="opencl").source
    assert "#pragma OPENCL FP_CONTRACT OFF" in ocl and "(no contraction)" in ocl.splitlines()[0]
    assert "FP_CONTRACT" not in default.inspect(a, b, c, a.copy(), backend="opencl").source
    assert "--fmad=false" in build_options(None, "cuda", False, contract=False)
    assert "-ffp-contract=off" in build_options(None, "hip", False, contract=False)
    assert "--fmad=false" not in build_options(None, "cuda", False)


def test_fastmath_and_no_contraction_together_are_refused():
    with pytest.raises(ValueError, match="opposite"):
        kernel(fastmath=True, contract=False)(fused)


def test_cuda_without_contraction_has_no_fma(nvrtc_compile):
    a, b, c = _inputs(np.float32, 8)
    strict = kernel(contract=False)(fused).inspect(a, b, c, a.copy(), backend="cuda").source
    default = kernel(fused).inspect(a, b, c, a.copy(), backend="cuda").source
    strict_ptx = nvrtc_compile(strict, "compute_90", build_options(None, "cuda", False, False)).decode(errors="replace")
    default_ptx = nvrtc_compile(default, "compute_90", build_options(None, "cuda", False)).decode(errors="replace")
    assert "fma.rn.f32" in default_ptx
    assert "fma.rn" not in strict_ptx and "mul.rn.f32" in strict_ptx and "add.rn.f32" in strict_ptx


def test_hip_without_contraction_compiles(hiprtc_compile):
    a, b, c = _inputs(np.float32, 8)
    source = kernel(contract=False)(fused).inspect(a, b, c, a.copy(), backend="hip").source
    assert hiprtc_compile(source, "gfx90a", list(build_options(None, "hip", False, False)))


def test_pickling_keeps_no_contraction():
    pytest.importorskip("cloudpickle")

    def local_fused(a, b, out):
        for i in range(out.shape[0]):
            out[i] = a[i] * b[i] + out[i]

    again = pickle.loads(pickle.dumps(kernel(contract=False)(local_fused)))
    assert again.contract is False


# ---- i, j = gpu.global_ids(2): Numba's cuda.grid(2), Warp's wp.tid() ------------------------------------
@kernel
def label_2d(out):
    gpu.work_size(out)
    i, j = gpu.global_ids(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = i * 100 + j


@kernel
def label_3d(out):
    gpu.work_size(out)
    i, j, k = gpu.global_ids(3)
    if i < out.shape[0] and j < out.shape[1] and k < out.shape[2]:
        out[i, j, k] = i * 10000 + j * 100 + k


@kernel
def ids_of_groups(out):
    gpu.work_size(out)
    (g,) = gpu.group_ids(1)
    (l,) = gpu.local_ids(1)
    (i,) = gpu.global_ids(1)
    if i < out.shape[0]:
        out[i] = g * gpu.get_local_size(0) + l - i


def test_global_ids_index_arrays_in_array_order(on):
    out2 = np.full((37, 45), -1, np.int64)
    label_2d[on](out2)
    i, j = np.indices(out2.shape)
    np.testing.assert_array_equal(out2, i * 100 + j)
    out3 = np.full((5, 6, 7), -1, np.int64)
    label_3d[on](out3)
    i, j, k = np.indices(out3.shape)
    np.testing.assert_array_equal(out3, i * 10000 + j * 100 + k)


def test_global_ids_are_group_times_size_plus_local(on):
    out = np.full(1000, -1, np.int64)
    ids_of_groups[on](out)
    np.testing.assert_array_equal(out, 0)


def test_global_ids_needs_a_constant_dimension_count():
    @kernel
    def bad(out, n):
        gpu.work_size(out)
        i, j = gpu.global_ids(n)
        out[i, j] = 1

    with pytest.raises(SyntaxError, match=r"gpu.global_ids\(\) needs a constant number of dimensions"):
        bad.inspect(np.zeros((2, 2), np.int32), 2, backend="opencl")


def test_global_ids_on_the_host_says_it_is_kernel_only():
    with pytest.raises(gpu.KernelOnlyError, match="global_ids"):
        gpu.global_ids(2)


# ---- slices of shapes and tuples ------------------------------------------------------------------------
def first_plane(u, out):
    for i, j in np.ndindex(u.shape[:2]):
        out[i, j] = u[i, j, 0] + u[i, j, u.shape[-1] - 1]


def tuple_slices(x, out):
    w = (1.0, 2.0, 3.0, 4.0, 5.0)
    for i in range(out.shape[0]):
        acc = 0.0
        for c in w[1:4]:
            acc += c
        for c in w[::-2]:
            acc += c * 10.0
        rows, cols = x.shape[-2:]
        out[i] = acc + rows * 1000.0 + cols * 100000.0 + x[i, 0]


@pytest.mark.parametrize("fn", [first_plane, tuple_slices])
def test_slices_of_shapes_and_tuples_match_the_host(on, fn):
    rng = np.random.default_rng(3)
    if fn is first_plane:
        x, out = rng.random((6, 7, 3)), np.zeros((6, 7))
    else:
        x, out = rng.random((9, 4)), np.zeros(9)
    host = out.copy()
    kernel(fn)[on](x, out)
    fn(x, host)
    np.testing.assert_allclose(out, host)


def test_slicing_an_array_is_still_refused():
    @kernel
    def bad(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i:i + 2][0]

    with pytest.raises(SyntaxError, match="slices are not supported in kernels"):
        bad.inspect(np.zeros(4, np.float32), np.zeros(4, np.float32), backend="opencl")


# ---- vectors: constructed from lists, components assigned -----------------------------------------------
def vectors_like_taichi(x, out):
    for i in range(out.shape[0]):
        v = float4([x[i], 1.0, 2.0, 3.0])
        w = float4((0.5, x[i], 0.0, 0.0))
        v.y = x[i] * 2.0
        v.zw = w.xy
        w.x = 9.0
        w.wz = 7.0
        out[i, 0] = v.x + v.y
        out[i, 1] = v.z * 10.0 + v.w
        out[i, 2] = w.x + w.y + w.z + w.w


def test_vector_lists_and_component_writes_match_the_host(on):
    x = np.arange(16, dtype=np.float32)
    out, host = np.zeros((16, 3), np.float32), np.zeros((16, 3), np.float32)
    kernel(vectors_like_taichi)[on](x, out)
    vectors_like_taichi(x, host)
    np.testing.assert_array_equal(out, host)


def test_a_swizzle_naming_a_component_twice_is_not_assigned():
    @kernel
    def bad(out):
        for i in range(out.shape[0]):
            v = float2(0.0, 0.0)
            v.xx = float2(1.0, 2.0)
            out[i] = v.x

    with pytest.raises(SyntaxError, match="names a component twice"):
        bad.inspect(np.zeros(4, np.float32), backend="opencl")
    with pytest.raises(AttributeError, match="names a component twice"):
        v = float2(0.0, 0.0)
        v.xx = float2(1.0, 2.0)


# ---- helpers under functools.wraps ----------------------------------------------------------------------
def _logged(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


def _scaled_kernel(factor):
    @_logged
    def scale(v):
        return v * factor          # a name of the closure the wrapper does not have

    def run(x, out):
        for i in range(out.shape[0]):
            out[i] = scale(x[i]) + 1.0
    return run


def test_a_wrapped_helper_reads_the_wrapped_functions_names(on):
    x = np.arange(32, dtype=np.float32)
    for factor in (3.0, 5.0):
        fn = _scaled_kernel(factor)
        out, host = np.zeros_like(x), np.zeros_like(x)
        kernel(fn)[on](x, out)
        fn(x, host)
        np.testing.assert_array_equal(out, host)


# ---- module-level arrays used like Taichi fields ----------------------------------------------------------
FIELD = np.zeros(64, np.float32)
COUNTS = np.zeros(4, np.int32)


@kernel
def paint(x):
    for i in range(FIELD.shape[0]):
        FIELD[i] = x[i] * 2.0
        gpu.atomic_add(COUNTS, i % 4, 1)


@kernel
def read_field(out):
    for i in range(out.shape[0]):
        out[i] = FIELD[i] + 1.0


def test_module_arrays_are_read_and_written_like_fields(on):
    x = np.arange(64, dtype=np.float32)
    COUNTS[:] = 0
    paint[on](x)
    np.testing.assert_array_equal(FIELD, x * 2.0)
    np.testing.assert_array_equal(COUNTS, [16, 16, 16, 16])
    out = np.zeros(64, np.float32)
    read_field[on](out)
    np.testing.assert_array_equal(out, x * 2.0 + 1.0)


def test_a_rebound_module_array_is_the_one_a_call_uses(on):
    global FIELD
    kept = FIELD
    try:
        FIELD = np.arange(64, dtype=np.float64)         # another array, another dtype
        out = np.zeros(64, np.float32)
        read_field[on](out)
        np.testing.assert_array_equal(out, np.arange(64) + 1.0)
    finally:
        FIELD = kept


def _reads_field(i):
    return FIELD[i]


def test_a_helper_reading_a_module_array_says_to_pass_it():
    @kernel
    def uses_helper(out):
        for i in range(out.shape[0]):
            out[i] = _reads_field(i)

    with pytest.raises(SyntaxError, match="only a kernel takes module-level arrays"):
        uses_helper.inspect(np.zeros(4, np.float32), backend="opencl")


# ---- several top-level parallel loops: refused with the kernels to write ------------------------------------
def two_passes(x, y, n):
    scale = 2.0
    for i in range(n):
        y[i] = x[i] + 1.0
    for i in range(n):
        x[i] = y[(i + 1) % n] * scale


def test_several_parallel_loops_are_refused_with_the_split_that_runs(on, tmp_path, monkeypatch):
    with pytest.raises(SyntaxError, match="has 2 top-level parallel loops") as info:
        kernel(two_passes).inspect(np.zeros(8, np.float32), np.zeros(8, np.float32), 8, backend="opencl")
    hint = str(info.value).split("call them in order (each call is one launch, run after the one before):\n", 1)[1]
    code, calls = hint.rsplit("\n\n", 1)
    calls = calls.rsplit(" (", 1)[0]           # the error's location follows the hint
    module = tmp_path / "split_kernels.py"
    module.write_text("import numpy as np\nfrom pygpgpu import kernel\n\n" + code + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    ns = vars(importlib.import_module("split_kernels"))
    x = np.arange(16, dtype=np.float32)
    y = np.zeros_like(x)
    hx, hy = x.copy(), y.copy()
    exec(calls, {**ns, "x": x, "y": y, "n": 16, "kernel": kernel})
    two_passes(hx, hy, 16)
    np.testing.assert_array_equal(x, hx)
    np.testing.assert_array_equal(y, hy)
