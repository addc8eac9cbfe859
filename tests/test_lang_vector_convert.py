"""Vectors convert the same on both sides (issue 15, item 8): ``float3.convert(v)`` works inside
kernels and ``float3(uchar3_value)`` on the host, one rule everywhere: component by component,
floats truncate toward zero, ints wrap. Each helper runs on the host and inside a kernel."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import assert_code_object, assert_cubin
from pygpgpu import float2, float3, int3, int4, kernel, uchar3
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture


def shade(c):                          # a uchar3 colour -> float3, both spellings
    return float3(c) * 0.5 + float3.convert(c) * 0.25


def to_uchar(v):                       # a float3 -> uchar3: truncating, wrapping
    return uchar3.convert(v)


def to_int(v):
    return int3(v)


def mixed(v):                          # parts of another type inside a constructor
    return int4(float2(v.x, v.y), v.z, -2.5)


def test_the_host_converts_vectors_of_another_base_type():
    assert float3(uchar3(1, 2, 255)).tolist() == [1.0, 2.0, 255.0]
    assert uchar3(float3(300.7, -1.5, 2.9)).tolist() == [44, 255, 2]       # as uchar3.convert
    assert int4(float2(1.9, -1.9), 3, 4).tolist() == [1, -1, 3, 4]
    assert uchar3(float3(300.7, -1.5, 2.9)) == uchar3.convert(float3(300.7, -1.5, 2.9))


@kernel
def shade_all(img, out):
    for i in range(out.shape[0]):
        out[i] = shade(img[i])


@kernel
def quantize_all(v, q, r):
    for i in range(v.shape[0]):
        q[i] = to_uchar(v[i])
        r[i] = to_int(v[i])


@kernel
def mixed_all(v, out):
    for i in range(v.shape[0]):
        out[i] = mixed(v[i])


def test_shade_runs_the_same_on_host_and_device(backend):
    img = np.random.default_rng(0).integers(0, 256, (32, 3)).astype(np.uint8)
    out = np.zeros((32, 3), np.float32)
    shade_all[backend](img, out)
    host = np.array([np.asarray(shade(uchar3(*row))) for row in img], np.float32)
    np.testing.assert_array_equal(out, host)


def test_quantize_runs_the_same_on_host_and_device(backend):
    rng = np.random.default_rng(1)
    v = np.concatenate([rng.uniform(-300, 300, (30, 3)), [[300.7, -1.5, 2.9], [-0.9, 255.9, 511.5]]]).astype(np.float32)
    q = np.zeros((32, 3), np.uint8)
    r = np.zeros((32, 3), np.int32)
    quantize_all[backend](v, q, r)
    np.testing.assert_array_equal(q, np.array([np.asarray(to_uchar(float3(*row))) for row in v]))
    np.testing.assert_array_equal(r, np.array([np.asarray(to_int(float3(*row))) for row in v]))
    assert q[30].tolist() == [44, 255, 2] and q[31].tolist() == [0, 255, 255]


def test_mixed_parts_run_the_same_on_host_and_device(backend):
    v = np.array([[1.9, -1.9, 3.5], [-7.2, 8.8, -0.5]], np.float32)
    out = np.zeros((2, 4), np.int32)
    mixed_all[backend](v, out)
    np.testing.assert_array_equal(out, np.array([np.asarray(mixed(float3(*row))) for row in v]))


@pytest.mark.parametrize("body, message", [
    ("float3.convert(x[i, 0])", r"takes a vector of 3 components, got a float32 scalar"),
    ("float3.convert(x[i, 0], x[i, 1])", r"takes one vector"),
    ("float3.convert(int4(1, 2, 3, 4))", r"needs 3 components, got a int4"),
])
def test_convert_errors_point_at_the_argument(body, message, tmp_path):
    import importlib.util
    path = tmp_path / "bad_convert.py"
    path.write_text("from pygpgpu import kernel, float3, int4\n\n@kernel\ndef bad(x, out):\n"
                    "    for i in range(out.shape[0]):\n"
                    f"        out[i] = {body}\n")
    spec = importlib.util.spec_from_file_location("bad_convert", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(SyntaxError, match=message) as info:
        mod.bad.inspect(np.zeros((4, 4), np.float32), np.zeros((4, 3), np.float32), backend="opencl")
    assert info.value.lineno == 6 and info.value.filename == str(path)


def test_vector_conversions_compile_for_cuda_and_hip(rtc_compile):
    dialect, compile_ = rtc_compile
    for k, args in ((shade_all, (np.zeros((4, 3), np.uint8), np.zeros((4, 3), np.float32))),
                    (quantize_all, (np.zeros((4, 3), np.float32), np.zeros((4, 3), np.uint8), np.zeros((4, 3), np.int32))),
                    (mixed_all, (np.zeros((4, 3), np.float32), np.zeros((4, 4), np.int32)))):
        src = k.inspect(*args, backend=dialect).source
        image = compile_(src)
        (assert_cubin if dialect == "cuda" else assert_code_object)(image, src)
