"""Closures (issue 15, item 1): a kernel or helper defined inside a function reads names of the
enclosing scope. Numbers, bools, vectors, tuples, modules, functions and kernels are compiled in
like module constants (rebinding one is a new specialization); numpy and gnp arrays become hidden
kernel arguments. Module-level vector constants work too. Each kernel's result is compared with
the same Python run on the host."""
from __future__ import annotations

import math

import numpy as np
import pytest

import pygpgpu.numpy as gnp
from conftest import assert_code_object, assert_cubin
from pygpgpu import float3, funcs, kernel
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture

G = float3(0.0, -9.8, 0.0)         # a module-level vector constant


def make_step(dt, damping, flip):
    def accel(v):                  # a helper that captures too
        return v * damping + G * dt

    @kernel
    def step(vel, out):
        for i in range(out.shape[0]):
            v = accel(vel[i])
            if flip:
                v = -v
            out[i] = v
    return step, accel


def test_numbers_bools_vectors_and_helpers_are_compiled_in(backend):
    vel = np.random.default_rng(1).normal(size=(64, 3)).astype(np.float32)
    for dt, damping, flip in ((0.1, 0.5, False), (0.25, 0.9, True)):
        step, accel = make_step(dt, damping, flip)
        out = np.zeros_like(vel)
        step[backend](vel, out)
        host = np.array([(-1 if flip else 1) * np.asarray(accel(float3(*row))) for row in vel], np.float32)
        np.testing.assert_allclose(out, host, rtol=1e-6, atol=1e-6)


def test_same_source_other_captured_values_are_other_kernels(backend):
    """Two kernels from one factory have the same source text: the generated-source disk cache
    must tell them apart by what they captured."""
    def make(scale):
        @kernel
        def scaled(x, out):
            for i in range(out.shape[0]):
                out[i] = x[i] * scale
        return scaled

    x = np.arange(8, dtype=np.float32)
    for scale in (2.0, 3.0, 2.0):
        out = np.zeros_like(x)
        make(scale)[backend](x, out)
        np.testing.assert_array_equal(out, x * np.float32(scale))


def test_rebinding_a_captured_name_translates_again(backend):
    offset = 1.0

    @kernel
    def shifted(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] + offset

    x = np.arange(5, dtype=np.float32)
    out = np.zeros_like(x)
    shifted[backend](x, out)
    np.testing.assert_array_equal(out, x + 1)
    offset = 10.0
    shifted[backend](x, out)                  # the warm path sees the cell changed
    np.testing.assert_array_equal(out, x + offset)


def test_a_vector_changed_in_place_translates_again(backend):
    wind = float3(1.0, 2.0, 3.0)

    @kernel
    def blow(out):
        for i in range(out.shape[0]):
            out[i] = wind * i

    out = np.zeros((4, 3), np.float32)
    blow[backend](out)
    np.testing.assert_array_equal(out, np.outer(np.arange(4), [1, 2, 3]))
    wind.y = 20.0                             # host vectors are mutable
    blow[backend](out)
    np.testing.assert_array_equal(out, np.outer(np.arange(4), [1, 20, 3]))


def test_captured_arrays_are_hidden_arguments(backend):
    rng = np.random.default_rng(2)
    weights = rng.random(32).astype(np.float32)
    table = rng.integers(0, 100, 32).astype(np.int64)
    hits = np.zeros(32, np.int32)              # written by the kernel: copied back

    @kernel
    def apply(x, out):
        for i in range(weights.shape[0]):     # the domain reads a captured array
            out[i] = x[i] * weights[i] + table[i]
            hits[i] = i

    x = rng.random(32).astype(np.float32)
    out = np.zeros_like(x)
    apply[backend](x, out)
    np.testing.assert_allclose(out, x * weights + table, rtol=1e-6)
    np.testing.assert_array_equal(hits, np.arange(32))
    access = apply.inspect(x, out, backend="opencl").access
    assert access["weights"] == "read" and access["hits"] == "write"

    weights = np.ones(16, np.float64)         # rebound: another array, another dtype and size
    table = np.zeros(16, np.int64)
    hits = np.zeros(16, np.int32)
    out = np.zeros(16, np.float64)
    apply[backend](x[:16].astype(np.float64), out)
    np.testing.assert_array_equal(out, x[:16].astype(np.float64))


def test_captured_device_arrays(backend):
    data = gnp.asarray(np.arange(10, dtype=np.float32), device=backend)
    n = 10

    @kernel
    def twice(out):
        for i in range(n):                    # a captured constant as the domain
            out[i] = data[i] * 2

    out = gnp.zeros(10, np.float32, device=backend)
    twice[backend](out)
    np.testing.assert_array_equal(out.get(), np.arange(10) * 2)


def test_modules_functions_and_tuples_are_captured(backend):
    import math as m
    xp = np
    shape = (4, 5)
    weights = (0.5, 2, True)

    def square(v):
        return v * v

    @kernel
    def mix(x, out):
        for y, c in np.ndindex(shape):        # a captured tuple as the domain
            v = x[y, c]
            out[y, c] = m.sqrt(square(v)) * weights[0] + xp.abs(v) * weights[1] + weights[2] + shape[1]

    x = np.random.default_rng(3).normal(size=shape).astype(np.float32)
    out = np.zeros_like(x)
    mix[backend](x, out)
    host = np.abs(x) * 0.5 + np.abs(x) * 2 + 1 + 5
    np.testing.assert_allclose(out, host, rtol=1e-6)


def test_a_captured_builtin_function(backend):
    norm = funcs.normalize

    @kernel
    def unit(vecs, out):
        for i in range(out.shape[0]):
            out[i] = norm(vecs[i])

    vecs = np.random.default_rng(4).normal(size=(16, 4)).astype(np.float32)
    out = np.zeros_like(vecs)
    unit[backend](vecs, out)
    np.testing.assert_allclose(out, vecs / np.linalg.norm(vecs, axis=1, keepdims=True), rtol=1e-5)


def test_a_kernel_method_of_a_class_defined_in_a_function(backend):
    bias = 0.25

    class Model:
        def __init__(self):
            self.w = np.full(8, 2.0, np.float32)

        @kernel
        def apply(self, x, out):
            for i in range(out.shape[0]):
                out[i] = x[i] * self.w[i] + bias

    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    Model().apply[backend](x, out)
    np.testing.assert_array_equal(out, x * 2 + np.float32(bias))


# ---- errors ----------------------------------------------------------------------------------------
def test_writing_a_captured_name_is_a_syntax_error_at_the_write():
    total = 0.0

    @kernel
    def accumulate(x):
        nonlocal total
        for i in range(x.shape[0]):
            total = total + x[i]                  # the write

    with pytest.raises(SyntaxError, match="cannot assign to 'total', a name of the enclosing function") as info:
        accumulate.inspect(np.zeros(3, np.float32), backend="opencl")
    assert info.value.lineno == accumulate.py_func.__code__.co_firstlineno + 4
    assert "hint:" in info.value.msg
    assert total == 0.0


def test_a_captured_list_is_a_clear_error_at_the_use_line():
    coeffs = [1.0, 2.0]

    @kernel
    def poly(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * coeffs[0]             # the use

    with pytest.raises(SyntaxError, match=r"(?s)'coeffs' is a list.*pass a numpy array") as info:
        poly.inspect(np.zeros(3, np.float32), np.zeros(3, np.float32), backend="opencl")
    assert info.value.lineno == poly.py_func.__code__.co_firstlineno + 3


def test_a_name_assigned_after_the_call_says_so():
    @kernel
    def early(out):
        for i in range(out.shape[0]):
            out[i] = late

    with pytest.raises(SyntaxError, match=r"'late', a name of the function enclosing early\(\), has no value yet"):
        early.inspect(np.zeros(3, np.float32), backend="opencl")
    late = 1.0
    assert late


def test_a_helper_cannot_capture_an_array():
    table = np.arange(4, dtype=np.float32)

    def lookup(i):
        return table[i]

    @kernel
    def k(out):
        for i in range(out.shape[0]):
            out[i] = lookup(i)

    with pytest.raises(SyntaxError, match="helper lookup.. reads the array 'table'.*only a kernel takes captured "
                       "arrays") as info:
        k.inspect(np.zeros(4, np.float32), backend="opencl")
    assert info.value.lineno == lookup.__code__.co_firstlineno + 1


# ---- CUDA and HIP ----------------------------------------------------------------------------------
def test_closures_compile_for_cuda_and_hip(rtc_compile):
    dialect, compile_ = rtc_compile
    step, _ = make_step(0.1, 0.5, True)
    data = np.arange(8, dtype=np.float32)
    k = 3

    @kernel
    def gather(out):
        for i in range(out.shape[0]):
            out[i] = data[i] * k + math.pi

    for kern, args in ((step, (np.zeros((8, 3), np.float32), np.zeros((8, 3), np.float32))),
                       (gather, (np.zeros(8, np.float32),))):
        src = kern.inspect(*args, backend=dialect).source
        image = compile_(src)
        (assert_cubin if dialect == "cuda" else assert_code_object)(image, src)


def test_split_takes_captured_constants_and_refuses_captured_arrays(backend):
    scale = 3.0
    table = np.ones(8, np.float32)

    @kernel
    def scaled(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * scale

    @kernel
    def looked_up(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i] * table[i]

    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    scaled.split([backend, backend])(x, out)
    np.testing.assert_array_equal(out, x * 3)
    with pytest.raises(ValueError, match="reads arrays from its enclosing function"):
        looked_up.split([backend, backend])(x, out)
