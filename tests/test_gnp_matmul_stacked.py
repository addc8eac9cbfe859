"""gnp.matmul / ``@`` of stacks of matrices and gnp.dot beyond 2-D, against numpy: broadcast batch axes,
1-D operands on either side, empty stacks and empty inner axes, out=, and numpy's errors. Real kernels
on each backend of the run (the batch is the launch's third axis)."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def up(x, backend):
    return gnp.asarray(x, device=backend)


def operands(sa, sb, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(sa).astype(dtype), rng.standard_normal(sb).astype(dtype)
    return rng.integers(-3, 4, sa).astype(dtype), rng.integers(-3, 4, sb).astype(dtype)


MATMUL_SHAPES = [
    ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((2, 40, 33), (2, 33, 17)),
    ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((0, 3, 2), (0, 2, 4)), ((5, 3, 0), (0,)), ((0,), (5, 0, 4)),
    ((3, 2, 0), (3, 0, 4)),
]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_matmul_of_stacks_matches_numpy(backend, sa, sb, dtype):
    a, b = operands(sa, sb, dtype)
    got = up(a, backend) @ up(b, backend)
    want = a @ b
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got.get(), want, rtol=1e-5, atol=1e-5)


def test_matmul_of_mixed_dtypes_and_strided_stacks(backend):
    a, b = operands((3, 5, 4), (3, 6, 4), "float32")
    ga, gb = up(a, backend), up(b.astype(np.int16), backend)
    got = gnp.matmul(ga[:, ::2, :], gb.transpose(0, 2, 1))
    want = np.matmul(a[:, ::2, :], b.astype(np.int16).transpose(0, 2, 1))
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got.get(), want, rtol=1e-5)


def test_matmul_of_stacks_writes_out(backend):
    a, b = operands((2, 3, 4), (2, 4, 5), "float64")
    out = gnp.zeros((2, 3, 5), dtype=np.float64, device=backend)
    res = gnp.matmul(up(a, backend), up(b, backend), out=out)
    assert res is out
    np.testing.assert_allclose(out.get(), a @ b)


@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (2, 5, 6)), ((2, 3, 4), (3, 4, 5))], ids=str)
def test_matmul_of_stacks_raises_numpys_error(backend, sa, sb):
    a, b = operands(sa, sb, "float32")
    with pytest.raises(ValueError) as numpy_error:
        np.matmul(a, b)
    with pytest.raises(type(numpy_error.value)):
        gnp.matmul(up(a, backend), up(b, backend))


DOT_SHAPES = [((2, 3, 4), (4, 5)), ((2, 3, 4), (6, 4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (4,)),
              ((4,), (2, 4, 3)), ((2, 0, 4), (3, 4, 2)), ((2, 3, 0), (0, 2))]


@pytest.mark.parametrize("sa,sb", DOT_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_dot_beyond_two_dimensions_matches_numpy(backend, sa, sb, dtype):
    a, b = operands(sa, sb, dtype)
    got = gnp.dot(up(a, backend), up(b, backend))
    want = np.dot(a, b)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got.get(), want, rtol=1e-5, atol=1e-5)


def test_dot_beyond_two_dimensions_refuses_misaligned_shapes(backend):
    a, b = operands((2, 3, 4), (5, 3, 2), "float32")
    with pytest.raises(ValueError, match="not aligned"):
        np.dot(a, b)
    with pytest.raises(ValueError, match="not aligned"):
        gnp.dot(up(a, backend), up(b, backend))


def test_matmul_of_a_stack_longer_than_one_launch(backend):
    # 65536 + 3 matrices: more than the 65535 a launch's third axis takes on CUDA/HIP, so several launches
    a, b = operands((65539, 2, 3), (3, 2), "int32")
    got = up(a, backend) @ up(b, backend)
    np.testing.assert_array_equal(got.get(), a @ b)
