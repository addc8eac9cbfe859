"""Spellings that code ported from Numba, Warp and Taichi reaches for (issue 31): each runs on the
device and is compared with numpy or with the same function run on the host."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from conftest import first_device
from pygpgpu import gpu, kernel
from pygpgpu_core.gpu import ATOMIC_DTYPES
from pygpgpu_translate._kernel import build_options
from pygpgpu_translate.prelude import PRELUDE_NAMES

C_NAMES = {"int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64, "float": np.float32,
           "double": np.float64}


@pytest.fixture(scope="module")
def opencl():
    return first_device("opencl").selector


# ---- gpu.local_array(shape=..., dtype=...) ------------------------------------------------------------
@kernel
def stage_through_local(x, out):
    for i in range(out.shape[0]):
        tile = gpu.local_array(shape=(16,), dtype=np.float64)
        tile[gpu.get_local_id(0)] = x[i] * 2.0
        out[i] = tile[gpu.get_local_id(0)]


def test_local_array_takes_shape_and_dtype_as_keywords(opencl):
    x = np.arange(16, dtype=np.float64)
    out = np.zeros_like(x)
    stage_through_local[opencl](x, out)
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


def test_float64_atomics_agree_with_the_host(opencl):
    x = np.random.default_rng(1).random(256) * 100.0
    device, host = np.zeros(2), np.zeros(2)
    running_max[opencl](x, device)
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
def test_no_contraction_matches_numpy_bit_for_bit(opencl, dtype):
    a, b, c = _inputs(dtype)
    out = np.zeros_like(a)
    kernel(contract=False)(fused)[opencl](a, b, c, out)
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
