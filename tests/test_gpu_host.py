"""The gpu namespace on the host: atomics on numpy arrays, kernel-only errors, the builtin table."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gpu
from pygpgpu_core.errors import GPGPUError

INT_DTYPES = [np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("name", ["get_global_id", "get_local_id", "get_group_id", "get_global_size",
                                  "get_local_size", "get_num_groups"])
def test_work_item_functions_raise_outside_kernels(name):
    with pytest.raises(gpu.KernelOnlyError, match=r"only means something inside a @kernel") as info:
        getattr(gpu, name)(0)
    assert isinstance(info.value, GPGPUError)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_atomics_return_old_value(dtype):
    a = np.array([10, 10, 12, 0b1100, 0b1100, 0b1100, 5, 5, 5, 7, 7], dtype=dtype)
    assert gpu.atomic_add(a, 0, 5) == 10 and a[0] == 15
    assert gpu.atomic_sub(a, 1, 3) == 10 and a[1] == 7
    assert gpu.atomic_min(a, 2, 4) == 12 and a[2] == 4
    assert gpu.atomic_max(a, 2, 9) == 4 and a[2] == 9
    assert gpu.atomic_and(a, 3, 0b1010) == 0b1100 and a[3] == 0b1000
    assert gpu.atomic_or(a, 4, 0b0011) == 0b1100 and a[4] == 0b1111
    assert gpu.atomic_xor(a, 5, 0b0110) == 0b1100 and a[5] == 0b1010
    assert gpu.atomic_xchg(a, 6, 42) == 5 and a[6] == 42
    assert gpu.atomic_cmpxchg(a, 7, 5, 99) == 5 and a[7] == 99
    assert gpu.atomic_cmpxchg(a, 8, 6, 99) == 5 and a[8] == 5  # no store when cmp differs
    assert gpu.atomic_inc(a, 9) == 7 and a[9] == 8
    assert gpu.atomic_dec(a, 10) == 7 and a[10] == 6
    assert isinstance(gpu.atomic_add(a, 0, 0), np.generic) and a.dtype == dtype


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_atomic_inc_dec_wrap_around(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min], dtype=dtype)
    assert gpu.atomic_inc(a, 0) == info.max and a[0] == info.min
    assert gpu.atomic_dec(a, 1) == info.min and a[1] == info.max


def test_float_atomics():
    a = np.array([1.5, 2.0, 2.0, 3.0, 3.0, -0.0], dtype=np.float32)
    assert gpu.atomic_add(a, 0, 0.25) == 1.5 and a[0] == 1.75
    assert gpu.atomic_sub(a, 1, 0.5) == 2.0 and a[1] == 1.5
    assert gpu.atomic_min(a, 2, -1.0) == 2.0 and a[2] == -1.0
    assert gpu.atomic_max(a, 3, 4.0) == 3.0 and a[3] == 4.0
    assert gpu.atomic_xchg(a, 4, 8.0) == 3.0 and a[4] == 8.0
    assert gpu.atomic_inc(a, 4) == 8.0 and a[4] == 9.0
    assert gpu.atomic_dec(a, 4) == 9.0 and a[4] == 8.0
    # compare-exchange compares bit patterns: -0.0 is not +0.0
    assert gpu.atomic_cmpxchg(a, 5, 0.0, 1.0) == 0.0 and np.signbit(a[5])
    assert gpu.atomic_cmpxchg(a, 5, -0.0, 1.0) == 0.0 and a[5] == 1.0
    assert a.dtype == np.float32


def test_atomics_on_2d_index_and_histogram_as_plain_python():
    data = np.random.default_rng(3).integers(0, 8, 500).astype(np.int32)
    counts = np.zeros(8, np.int32)
    for i in range(data.size):
        gpu.atomic_add(counts, data[i], 1)
    np.testing.assert_array_equal(counts, np.bincount(data, minlength=8))
    m = np.zeros((2, 3), np.uint32)
    gpu.atomic_add(m, (1, 2), 7)
    assert m[1, 2] == 7


@pytest.mark.parametrize(
    "call, exc, msg",
    [
        (lambda: gpu.atomic_add(np.zeros(2, np.float16), 0, 1), TypeError,
         "int32, uint32, int64, uint64, float32 and float64 arrays, not float16"),
        (lambda: gpu.atomic_add(np.zeros(2, np.int16), 0, 1), TypeError, "not int16"),
        (lambda: gpu.atomic_and(np.zeros(2, np.float32), 0, 1), TypeError, "not defined for float32"),
        (lambda: gpu.atomic_xor(np.zeros(2, np.float64), 0, 1), TypeError, "not defined for float64"),
        (lambda: gpu.atomic_add([0, 1], 0, 1), TypeError, "numpy array"),
    ],
)
def test_atomic_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_atomic_on_read_only_array():
    a = np.zeros(2, np.int32)
    a.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        gpu.atomic_add(a, 0, 1)


def test_barrier_fence_local_array_work_size_on_host():
    gpu.barrier()
    gpu.barrier(gpu.LOCAL | gpu.GLOBAL)
    gpu.mem_fence(gpu.GLOBAL)
    with pytest.raises(ValueError, match="gpu.LOCAL"):
        gpu.barrier(0)
    with pytest.raises(ValueError, match="gpu.LOCAL"):
        gpu.barrier("local")
    tile = gpu.local_array(256, np.float32)
    assert tile.shape == (256,) and tile.dtype == np.float32 and not tile.any()
    assert gpu.local_array((16, 16), np.int32).shape == (16, 16)
    assert gpu.work_size(np.zeros(3), np.zeros((2, 2))) is None


def test_math_on_host():
    x = np.linspace(0.1, 4, 20, dtype=np.float32)
    np.testing.assert_allclose(gpu.rsqrt(x), 1 / np.sqrt(x), rtol=1e-6)
    assert gpu.rsqrt(x).dtype == np.float32
    refs = {"native_sqrt": np.sqrt, "native_rsqrt": lambda v: 1 / np.sqrt(v), "native_recip": lambda v: 1 / v,
            "native_exp": np.exp, "native_exp2": np.exp2, "native_exp10": lambda v: 10**v, "native_log": np.log,
            "native_log2": np.log2, "native_log10": np.log10, "native_sin": np.sin, "native_cos": np.cos,
            "native_tan": np.tan}
    for name, ref in refs.items():
        np.testing.assert_allclose(getattr(gpu, name)(x), ref(x.astype(np.float64)), rtol=2e-6, err_msg=name)
        assert getattr(gpu, name)(x).dtype == np.float32, name
    np.testing.assert_allclose(gpu.native_divide(x, 3), x / np.float32(3), rtol=1e-6)
    np.testing.assert_allclose(gpu.native_powr(x, 1.5), x.astype(np.float64) ** 1.5, rtol=1e-6)
