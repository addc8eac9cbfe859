"""pygpgpu_core.funcs on the host: vector objects, scalars and arrays against numpy formulas."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from pygpgpu_core import funcs
from pygpgpu_translate._builtins import FUNCS
from pygpgpu_translate._dialects import dialect_for
from pygpgpu_core.vec_types import double3, float2, float3, float4, int4, uint4

RNG = np.random.default_rng(7)


def _arr(*shape, dtype=np.float32):
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def test_every_function_has_a_builtin_row_with_its_docs():
    expected = {"dot", "cross", "length", "distance", "normalize", "clamp", "mix", "step", "smoothstep", "fma",
                "sign", "radians", "degrees", "reflect", "min", "max", "abs"}
    assert set(FUNCS) == expected == set(funcs.__all__)
    for name, row in FUNCS.items():
        assert row.name == f"funcs.{name}" and row.host is getattr(funcs, name)
        assert row.doc and inspect.getdoc(row.host).startswith(row.doc)
        assert row.arity == (len(inspect.signature(row.host).parameters),) * 2
        assert row.types.result in ("same", "base")
        for t in ("float4", "float"):
            if "float" in row.types.kinds or "floatn" in row.types.kinds:
                assert dialect_for("cuda").builtin_function(name, t) is None    # the prelude's pg_<f>_<t>


def test_opencl_prefers_its_builtins():
    opencl = dialect_for("opencl")
    assert opencl.builtin_function("dot", "float4") == "dot"
    assert opencl.builtin_function("min", "int4") == "min"
    assert opencl.builtin_function("abs", "int4") is None          # OpenCL's abs(int) is unsigned
    assert opencl.builtin_function("reflect", "float3") is None    # OpenCL has no reflect


def test_geometric_on_vectors():
    a, b = float4(1, 2, 3, 4), float4(-2, 0.5, 1, 3)
    an, bn = np.asarray(a), np.asarray(b)
    assert funcs.dot(a, b) == pytest.approx(float(an @ bn))
    assert isinstance(funcs.dot(a, b), np.float32)
    assert funcs.length(a) == pytest.approx(float(np.linalg.norm(an)))
    assert funcs.distance(a, b) == pytest.approx(float(np.linalg.norm(an - bn)))
    n = funcs.normalize(a)
    assert isinstance(n, float4)
    np.testing.assert_allclose(np.asarray(n), an / np.linalg.norm(an), rtol=1e-6)
    assert funcs.normalize(float4(0)) == float4(0)
    c = funcs.cross(float3(1, 2, 3), float3(-1, 4, 0.5))
    np.testing.assert_allclose(np.asarray(c), np.cross([1, 2, 3], [-1, 4, 0.5]), rtol=1e-6)
    c4 = funcs.cross(float4(1, 2, 3, 9), float4(-1, 4, 0.5, 9))
    np.testing.assert_allclose(np.asarray(c4), list(np.cross([1, 2, 3], [-1, 4, 0.5])) + [0], rtol=1e-6)
    i, nrm = float3(1, -1, 0), float3(0, 1, 0)
    assert funcs.reflect(i, nrm) == float3(1, 1, 0)
    assert type(funcs.normalize(double3(1, 2, 2))) is double3


def test_geometric_on_arrays_last_axis_is_components():
    a, b = _arr(10, 3), _arr(10, 3)
    np.testing.assert_allclose(funcs.dot(a, b), np.sum(a * b, axis=-1), rtol=1e-5)
    assert funcs.dot(a, b).dtype == np.float32
    np.testing.assert_allclose(funcs.length(a), np.linalg.norm(a, axis=-1), rtol=1e-5)
    np.testing.assert_allclose(funcs.distance(a, b), np.linalg.norm(a - b, axis=-1), rtol=1e-5)
    np.testing.assert_allclose(funcs.normalize(a), a / np.linalg.norm(a, axis=-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(funcs.cross(a, b), np.cross(a, b), rtol=1e-4, atol=1e-5)
    n = funcs.normalize(b)
    np.testing.assert_allclose(funcs.reflect(a, n), a - 2 * np.sum(a * n, axis=-1, keepdims=True) * n, rtol=1e-4, atol=1e-5)
    assert funcs.normalize(a).dtype == np.float32


def test_scalar_forms():
    assert funcs.dot(2.0, 3.0) == 6.0
    assert funcs.length(-3.0) == 3.0
    assert funcs.normalize(-5.0) == -1.0 and funcs.normalize(0.0) == 0.0
    assert funcs.clamp(5, 0, 3) == 3 and funcs.clamp(-1.5, 0.0, 3.0) == 0.0
    assert funcs.mix(1.0, 3.0, 0.25) == 1.5
    assert funcs.step(1.0, 0.5) == 0.0 and funcs.step(1.0, 1.0) == 1.0
    assert funcs.smoothstep(0.0, 1.0, 0.5) == 0.5
    assert funcs.fma(2.0, 3.0, 1.0) == 7.0
    assert funcs.sign(-2.5) == -1.0 and funcs.sign(0.0) == 0.0 and funcs.sign(float("nan")) == 0.0
    assert funcs.sign(-7) == -1
    assert funcs.radians(180.0) == pytest.approx(np.pi)
    assert funcs.degrees(np.pi) == pytest.approx(180.0)
    assert funcs.min(3, 2) == 2 and funcs.max(3, 2) == 3 and funcs.abs(-4) == 4


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_on_arrays_match_formulas(dtype):
    x, lo, hi = _arr(50, dtype=dtype), _arr(50, dtype=dtype), _arr(50, dtype=dtype)
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    t = RNG.random(50).astype(dtype)
    np.testing.assert_array_equal(funcs.clamp(x, lo, hi), np.minimum(np.maximum(x, lo), hi))
    np.testing.assert_allclose(funcs.mix(lo, hi, t), lo + (hi - lo) * t, rtol=1e-6)
    np.testing.assert_array_equal(funcs.step(lo, x), np.where(x < lo, 0, 1).astype(dtype))
    tt = np.clip((x - lo) / (hi - lo), 0, 1)
    np.testing.assert_allclose(funcs.smoothstep(lo, hi, x), tt * tt * (3 - 2 * tt), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(funcs.fma(x, lo, hi), x.astype(np.float64) * lo + hi, rtol=1e-6)
    np.testing.assert_array_equal(funcs.sign(x), np.sign(x))
    np.testing.assert_allclose(funcs.radians(x), x * np.pi / 180, rtol=1e-6)
    np.testing.assert_allclose(funcs.degrees(x), x * 180 / np.pi, rtol=1e-6)
    np.testing.assert_array_equal(funcs.min(x, lo), np.minimum(x, lo))
    np.testing.assert_array_equal(funcs.max(x, 0.5), np.maximum(x, dtype(0.5)))
    np.testing.assert_array_equal(funcs.abs(x), np.abs(x))
    for f in (funcs.clamp(x, lo, hi), funcs.mix(lo, hi, t), funcs.step(lo, x), funcs.smoothstep(lo, hi, x),
              funcs.fma(x, lo, hi), funcs.radians(x), funcs.min(x, lo)):
        assert f.dtype == dtype


def test_elementwise_on_vectors_keep_type_and_broadcast_scalars():
    v = float4(-2, 0.25, 0.75, 3)
    assert funcs.clamp(v, 0.0, 1.0) == float4(0, 0.25, 0.75, 1)
    assert funcs.mix(float4(0), float4(4), 0.5) == float4(2)
    assert funcs.step(0.5, v) == float4(0, 0, 1, 1)
    assert funcs.min(v, 0.5) == float4(-2, 0.25, 0.5, 0.5)
    assert funcs.max(v, float4(1)) == float4(1, 1, 1, 3)
    assert funcs.abs(v) == float4(2, 0.25, 0.75, 3)
    assert funcs.sign(v) == float4(-1, 1, 1, 1)
    assert funcs.clamp(int4(-5, 0, 5, 10), 0, 6) == int4(0, 0, 5, 6)
    assert funcs.abs(int4(-5, 0, 5, -2**31)) == int4(5, 0, 5, -2**31)  # wraps like two's complement C
    assert funcs.min(uint4(1, 2, 3, 4), uint4(4, 3, 2, 1)) == uint4(1, 2, 2, 1)
    assert type(funcs.fma(float2(1, 2), float2(3), float2(1))) is float2
    with pytest.raises(TypeError, match="mixed vector types"):
        funcs.min(float4(1), float2(1))


def test_fma_single_rounding_float32():
    a = np.float32(1 + 2**-12)
    # a*a = 1 + 2**-11 + 2**-24: plain float32 multiply-add loses the last term, fma keeps it.
    assert funcs.fma(a, a, np.float32(-1)) == np.float32(2**-11 + 2**-24)


@pytest.mark.parametrize("call", [
    lambda: funcs.normalize(int4(1, 2, 3, 4)), lambda: funcs.dot(int4(1), int4(2)), lambda: funcs.mix(int4(1), int4(2), 1),
    lambda: funcs.radians(int4(1)), lambda: funcs.cross(int4(1), int4(2)), lambda: funcs.smoothstep(0, 1, int4(1)),
])
def test_float_only_functions_refuse_integer_vectors(call):
    with pytest.raises(TypeError, match=r"works on float vectors.*convert"):
        call()
