"""gnp.i0 (one generated kernel with numpy's Chebyshev series) and gnp.kaiser against numpy: both
branches of the series, negative arguments, float32/float64/int/bool inputs, empty arrays, the
window's special lengths. Real kernels on each backend of the run."""
from __future__ import annotations

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
import pytest


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int8", "bool"])
def test_i0_matches_numpy(backend, dtype):
    x = np.linspace(-30, 30, 241).astype(dtype)      # |x| <= 8 and > 8, on both sides of 0
    got = gnp.i0(gnp.asarray(x, device=backend))
    want = np.i0(x)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got.get(), want, rtol=1e-14 if want.dtype == np.float64 else 1e-6)


def test_i0_of_a_strided_matrix_and_an_empty_array(backend):
    x = np.linspace(0, 12, 24).reshape(4, 6)
    g = gnp.asarray(x, device=backend)
    np.testing.assert_allclose(gnp.i0(g[:, ::2]).get(), np.i0(x[:, ::2]), rtol=1e-14)
    assert gnp.i0(gnp.asarray(np.zeros((0, 3)), device=backend)).shape == (0, 3)


def test_i0_refuses_complex_as_numpy(backend):
    with pytest.raises(TypeError):
        np.i0(np.array([1 + 1j]))
    with pytest.raises(TypeError):
        gnp.i0(gnp.asarray(np.array([1.0 + 1j], np.complex128), device=backend))


@pytest.mark.parametrize("M,beta", [(10, 14), (30, 0), (1024, 5), (0, 1), (1, 3), (2, 2.5), (7, 8.6)])
def test_kaiser_matches_numpy(backend, M, beta):
    with pygpgpu.device(backend):
        got = gnp.kaiser(M, beta)
    want = np.kaiser(M, beta)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-15)
