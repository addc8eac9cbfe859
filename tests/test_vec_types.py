"""Host-side vector types: construction, components, swizzles, arithmetic, comparisons, layouts."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from pygpgpu_core import vec_types as vt
from pygpgpu_core.vec_types import (
    VECTOR_TYPES,
    char4,
    double3,
    float2,
    float3,
    float4,
    float8,
    float16,
    int2,
    int3,
    int4,
    long2,
    uchar4,
    uint4,
    ulong16,
    vector_dtype,
    vector_type,
    vector_type_of_dtype,
)

SIZES = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4, "long": 8, "ulong": 8, "float": 4, "double": 8}


def test_fifty_types_exported():
    assert len(VECTOR_TYPES) == 50
    for name, cls in VECTOR_TYPES.items():
        assert name in vt.__all__
        assert getattr(vt, name) is cls
        assert cls.name == name


@pytest.mark.parametrize("name", sorted(VECTOR_TYPES))
def test_dtype_layout_every_type(name):
    cls = VECTOR_TYPES[name]
    size = SIZES[cls.scalar_name]
    assert np.dtype(cls.base).itemsize == size
    slots = 4 if cls.width == 3 else cls.width
    assert cls.dtype.itemsize == slots * size
    assert cls.dtype_packed.itemsize == cls.width * size
    assert vector_dtype(cls.base, cls.width) == cls.dtype
    assert vector_dtype(cls.scalar_name and cls.base, cls.width, layout="packed") == cls.dtype_packed
    assert vector_type_of_dtype(cls.dtype) == (cls, "opencl")
    assert vector_type_of_dtype(cls.dtype_packed) == (cls, "opencl" if cls.width != 3 else "packed")
    expected_fields = list("xyzw"[: cls.width]) if cls.width <= 4 else [f"s{i:X}" for i in range(cls.width)]
    assert list(cls.dtype.names) == expected_fields
    assert all(cls.dtype.fields[f][1] == i * size for i, f in enumerate(expected_fields))
    # One vector round-trips through an array of vectors, in both layouts.
    values = np.arange(1, cls.width + 1)
    v = cls(*values.tolist())
    for layout, dt in (("opencl", cls.dtype), ("packed", cls.dtype_packed)):
        arr = np.zeros(3, dt)
        arr[1] = v.to_numpy(layout)
        assert cls.from_numpy(arr[1]) == v
        assert cls.from_numpy(arr[0]) == cls(0)
    assert vector_type(cls.base, cls.width) is cls
    assert vector_type(cls.scalar_name, cls.width) is cls


def test_float3_opencl_16_bytes_packed_12():
    assert float3.dtype.itemsize == 16
    assert float3.dtype_packed.itemsize == 12
    assert double3.dtype.itemsize == 32 and double3.dtype_packed.itemsize == 24
    a = np.zeros(4, float3.dtype)
    a["y"] = [1, 2, 3, 4]
    raw = a.view(np.float32).reshape(4, 4)
    np.testing.assert_array_equal(raw[:, 1], [1, 2, 3, 4])
    p = np.zeros(4, float3.dtype_packed)
    p["z"] = [5, 6, 7, 8]
    np.testing.assert_array_equal(p.view(np.float32).reshape(4, 3)[:, 2], [5, 6, 7, 8])


def test_construction():
    assert float4(1, 2, 3, 4).tolist() == [1, 2, 3, 4]
    assert float4(2.5).tolist() == [2.5] * 4
    assert float4(float2(1, 2), 3.0, 4.0).tolist() == [1, 2, 3, 4]
    assert float4(1.0, float2(2, 3), 4.0).tolist() == [1, 2, 3, 4]
    assert float4(float3(1, 2, 3), 4).tolist() == [1, 2, 3, 4]
    assert float8(float4(1), float2(2), 3, 4).tolist() == [1, 1, 1, 1, 2, 2, 3, 4]
    assert float4([1, 2, 3, 4]).tolist() == [1, 2, 3, 4]
    assert float4(np.arange(4, dtype=np.float64)).tolist() == [0, 1, 2, 3]
    assert float16(*range(16)).sF == 15
    assert isinstance(float4(1).x, np.float32)
    assert isinstance(int4(1).x, np.int32)


def test_construction_c_conversions():
    assert uchar4(300, -1, 2, 3).tolist() == [44, 255, 2, 3]  # integers wrap
    assert int3(1.9, -1.9, 2).tolist() == [1, -1, 2]  # floats truncate toward zero
    assert float4.convert(int4(1, -2, 3, 4)).tolist() == [1.0, -2.0, 3.0, 4.0]
    assert int4.convert(float4(1.7, -1.7, 0, 2)).tolist() == [1, -1, 0, 2]


@pytest.mark.parametrize(
    "args, message",
    [((1, 2, 3), "needs 4 components"), ((1, 2, 3, 4, 5), "needs 4 components"), ((int2(1, 2), 3), "needs 4")],
)
def test_construction_errors(args, message):
    with pytest.raises(TypeError, match=message):
        float4(*args)


def test_components_and_swizzles():
    v = float4(1, 2, 3, 4)
    assert (v.x, v.y, v.z, v.w) == (1, 2, 3, 4)
    assert (v.s0, v.s3) == (1, 4)
    assert v.xy == float2(1, 2)
    assert v.zyx == float3(3, 2, 1)
    assert v.wzyx == float4(4, 3, 2, 1)
    assert v.xxyy == float4(1, 1, 2, 2)
    assert v.s10 == float2(2, 1)
    assert v.lo == float2(1, 2) and v.hi == float2(3, 4)
    assert v.even == float2(1, 3) and v.odd == float2(2, 4)
    w = float16(*range(16))
    assert w.sA == 10 and w.sf == 15
    assert w.lo == float8(*range(8)) and w.hi == float8(*range(8, 16))
    assert w.s0123 == float4(0, 1, 2, 3)
    assert w.sFEDCBA9876543210 == float16(*range(15, -1, -1))
    assert float3(1, 2, 3).lo == float2(1, 2)
    assert float3(1, 2, 3).even == float2(1, 3)
    assert int3(1, 2, 3).zzz == int3(3, 3, 3)


@pytest.mark.parametrize("attr", ["q", "xq", "s4", "xyzwx", "xyzwxyzwx"])
def test_bad_swizzles(attr):
    with pytest.raises(AttributeError):
        getattr(float4(1), attr)


def test_swizzle_xyzw_not_on_wide_and_padding_slot():
    with pytest.raises(AttributeError):
        float8(1).x  # noqa: B018 - OpenCL: .xyzw only up to width 4
    with pytest.raises(AttributeError, match="padding"):
        float3(1).hi  # noqa: B018


def test_component_and_swizzle_writes():
    v = float4(1, 2, 3, 4)
    v.x = 10
    v.s3 = 40
    assert v == float4(10, 2, 3, 40)
    v.yx = float2(5, 6)              # as in kernels: each named component from the vector, in order
    assert v == float4(6, 5, 3, 40)
    v.zw = 0                         # a number to every component named
    assert v == float4(6, 5, 0, 0)
    with pytest.raises(ValueError, match="3 components"):
        v.xyz = float2(0, 0)
    with pytest.raises(AttributeError):
        v.q = 1


@pytest.mark.parametrize("name", ["float4", "double3", "int4", "uint8", "short16", "char2", "ulong4"])
def test_arithmetic_matches_numpy(name):
    cls = VECTOR_TYPES[name]
    rng = np.random.default_rng(1)
    is_int = np.issubdtype(cls.base, np.integer)
    lo = 0 if not np.issubdtype(cls.base, np.signedinteger) and is_int else -50
    a_np = rng.integers(lo, 50, cls.width).astype(cls.base)
    b_np = rng.integers(1, 20, cls.width).astype(cls.base)
    a, b = cls(a_np), cls(b_np)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(a + b), a_np + b_np)
        np.testing.assert_array_equal(np.asarray(a - b), a_np - b_np)
        np.testing.assert_array_equal(np.asarray(a * b), a_np * b_np)
        np.testing.assert_array_equal(np.asarray(a // b), a_np // b_np)
        np.testing.assert_array_equal(np.asarray(a % b), a_np % b_np)
        np.testing.assert_array_equal(np.asarray(-a), -a_np)
        np.testing.assert_array_equal(np.asarray(a + 3), a_np + cls.base(3))
        np.testing.assert_array_equal(np.asarray(3 + a), cls.base(3) + a_np)
        np.testing.assert_array_equal(np.asarray(100 - a), cls.base(100) - a_np)
        np.testing.assert_array_equal(np.asarray(a * 2), a_np * cls.base(2))
        if is_int:
            np.testing.assert_array_equal(np.asarray(a & b), a_np & b_np)
            np.testing.assert_array_equal(np.asarray(a | b), a_np | b_np)
            np.testing.assert_array_equal(np.asarray(a ^ b), a_np ^ b_np)
            np.testing.assert_array_equal(np.asarray(~a), ~a_np)
            np.testing.assert_array_equal(np.asarray(a << 2), a_np << cls.base(2))
            np.testing.assert_array_equal(np.asarray(a >> 1), a_np >> cls.base(1))
        else:
            np.testing.assert_allclose(np.asarray(a / b), a_np / b_np, rtol=1e-6)
            np.testing.assert_allclose(np.asarray(1 / b), 1 / b_np, rtol=1e-6)
    assert (a + b).base is cls.base and type(a + b) is cls


def test_python_floor_semantics_on_int_vectors():
    a = int4(7, -7, 7, -7)
    b = int4(2, 2, -2, -2)
    assert (a // b).tolist() == [7 // 2, -7 // 2, 7 // -2, -7 // -2]
    assert (a % b).tolist() == [7 % 2, -7 % 2, 7 % -2, -7 % -2]
    assert (a // 0).tolist() == [0, 0, 0, 0]  # same as the device helpers
    assert (float2(-7.5, 7.5) % 2.0).tolist() == [-7.5 % 2.0, 7.5 % 2.0]


def test_opencl_shift_and_wrap_semantics():
    assert (int4(1) << 33).tolist() == [2] * 4  # count modulo 32
    assert (uchar4(250) + 10).tolist() == [4] * 4  # wraps
    assert (char4(-128) * -1).tolist() == [-128] * 4


def test_int_vector_rejects_true_division_and_float_scalars():
    with pytest.raises(TypeError, match="//"):
        int4(1) / 2
    with pytest.raises(TypeError, match="float"):
        int4(1) + 2.5
    with pytest.raises(TypeError, match="integer vector"):
        float4(1) & 1
    with pytest.raises(TypeError, match="same type"):
        float4(1) + int4(1)
    with pytest.raises(TypeError, match="same type"):
        float4(1) + float2(1)


def test_comparisons_give_minus_one_in_signed_int_vectors():
    a, b = float4(1, 2, 3, 4), float4(4, 2, 2, 4)
    assert (a < b) == int4(-1, 0, 0, 0)
    assert (a <= b) == int4(-1, -1, 0, -1)
    assert (a > b) == int4(0, 0, -1, 0)
    assert (a >= 3.0) == int4(0, 0, -1, -1)
    assert a.eq(b) == int4(0, -1, 0, -1)
    assert a.ne(b) == int4(-1, 0, -1, 0)
    assert type(double3(1) < double3(2)) is vector_type(np.int64, 3)
    assert type(uchar4(1) < uchar4(2)) is vector_type(np.int8, 4)
    assert type(uint4(1) < uint4(2)) is int4
    assert type(ulong16(1) < ulong16(2)) is vector_type(np.int64, 16)


def test_equality_is_exact_value_equality():
    assert float4(1, 2, 3, 4) == float4(1, 2, 3, 4)
    assert float4(1, 2, 3, 4) != float4(1, 2, 3, 5)
    assert float4(1) != int4(1)
    assert float4(1) != (1, 1, 1, 1)
    with pytest.raises(TypeError, match="ambiguous"):
        bool(float4(1) < float4(2))


def test_numpy_interop():
    v = float4(1, 2, 3, 4)
    a = np.asarray(v)
    assert a.dtype == np.float32 and a.shape == (4,)
    a[0] = 100  # a copy: the vector keeps its value
    assert v.x == 1
    rec = v.to_numpy()
    assert rec.dtype == float4.dtype and rec["z"] == 3
    arr = np.zeros(5, float4.dtype)
    arr[2] = v.to_numpy()
    assert float4.from_numpy(arr[2]) == v
    assert float4(arr[2]) == v
    assert list(v) == [1, 2, 3, 4] and len(v) == 4 and v[2] == 3
    assert repr(v) == "float4(1.0, 2.0, 3.0, 4.0)"
    with pytest.raises(TypeError, match="fields"):
        int2.from_numpy(np.zeros((), float4.dtype))


def test_copy_pickle_and_unhashable():
    v = long2(2**40, -3)
    assert copy.copy(v) == v and copy.copy(v) is not v
    assert pickle.loads(pickle.dumps(v)) == v
    with pytest.raises(TypeError):
        hash(v)


def test_numpy_scalars_and_ufuncs_keep_vector_type():
    v = float4(1, 4, 9, 16)
    assert np.float32(2) * v == float4(2, 8, 18, 32)
    assert np.int32(3) + int4(1) == int4(4)
    assert np.float64(20) - v == float4(19, 16, 11, 4)  # scalars adopt the vector's type (OpenCL)
    assert np.sqrt(v) == float4(1, 2, 3, 4)
    assert np.less(np.float32(5), v) == int4(0, 0, -1, -1)
    frac, whole = np.modf(float4(1.5, 2.25, -0.5, 3))
    assert frac == float4(0.5, 0.25, -0.5, 0) and whole == float4(1, 2, -0.0, 3)
    # with a whole array on the other side the result is an ordinary array
    res = np.ones(4, np.float32) + v
    assert isinstance(res, np.ndarray) and res.tolist() == [2, 5, 10, 17]


@pytest.mark.parametrize("width, opencl, packed", [(3, 16, 12), (4, 16, 16), (2, 8, 8)])
def test_vector_dtype_layouts_and_an_unknown_layout(width, opencl, packed):
    """The two layouts differ only for 3-wide vectors; any other layout name is refused."""
    assert vt.vector_dtype(np.float32, width, "opencl").itemsize == opencl
    assert vt.vector_dtype(np.float32, width, "packed").itemsize == packed
    with pytest.raises(ValueError, match="layout must be 'opencl' or 'packed', got 'cuda'"):
        vt.vector_dtype(np.float32, width, "cuda")
