"""@pygpgpu.reduce: a binary Python function and an identity as a device reduction (like Numba's
cuda.reduce), over all axes or one, on the GPU and CPU variants of the block reduction."""
from __future__ import annotations

import math

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
import pytest


@pygpgpu.reduce(identity=0.0)
def add(a, b):
    return a + b


@pygpgpu.reduce(identity=-math.inf)
def biggest(a, b):
    return max(a, b)


def clamp_sum(a, b):          # a helper the reduction function calls: plain Python, translated too
    return min(a + b, 1000)


@pygpgpu.reduce(identity=0)
def capped(a, b):
    return clamp_sum(a, b)


@pygpgpu.reduce(identity=0, dtype=np.int64)
def count_odd(a, b):
    return a + b


def up(x, backend):
    return gnp.asarray(x, device=backend)


@pytest.mark.parametrize("layout", ["gpu", "cpu"])
def test_user_reductions_match_numpy(backend, layout, monkeypatch):
    from pygpgpu_translate.array_ops import _reduction

    monkeypatch.setattr(_reduction, "cpu_layout", lambda device: layout == "cpu")
    x = np.random.default_rng(0).random((300, 700)).astype(np.float32)
    g = up(x, backend)
    s = add(g)
    assert isinstance(s, gnp.ndarray) and s.shape == () and s.dtype == np.float32
    np.testing.assert_allclose(float(s), x.astype(np.float64).sum(), rtol=2e-6)
    np.testing.assert_allclose(add(g, axis=0).get(), x.sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(add(g, axis=1, keepdims=True).get(), x.sum(axis=1, keepdims=True), rtol=1e-5)
    assert float(biggest(g)) == x.max()
    np.testing.assert_array_equal(biggest(g[:, ::-3], axis=1).get(), x[:, ::-3].max(axis=1))
    big = np.random.default_rng(1).random(1_000_003).astype(np.float64)
    np.testing.assert_allclose(float(add(up(big, backend))), big.sum(), rtol=1e-12)


def test_helpers_dtype_init_and_host_input(backend):
    i = np.arange(100, dtype=np.int32)
    assert int(capped(up(i, backend))) <= 1000
    assert capped(up(i, backend)).dtype == np.int32
    assert int(count_odd(up(i % 2 == 1, backend))) == 50         # bool data, int64 accumulator
    assert count_odd(up(i % 2 == 1, backend)).dtype == np.int64
    assert float(add(up(np.ones(10, np.float32), backend), init=5.0)) == 15.0
    assert float(add(np.ones(7, np.float32))) == 7.0             # a numpy array is uploaded once
    assert float(add(up(np.zeros(0, np.float32), backend))) == 0.0    # empty: the identity
    np.testing.assert_array_equal(add(up(np.zeros((3, 0), np.float32), backend), axis=1).get(), np.zeros(3))


def test_reduce_decorator_errors():
    with pytest.raises(TypeError, match="identity"):
        @pygpgpu.reduce
        def no_identity(a, b):
            return a + b
    with pytest.raises(TypeError, match="device arrays"):
        add([1.0, 2.0])
    assert "identity 0.0" in repr(add) and add.__name__ == "add"
