"""pygpgpu.numpy where numpy's edges are easy to miss (issue 30, items 7-9), each compared with the
installed numpy: bool bytes other than 0 and 1 (a view of int8 data as bool) read as True by every
operation and by a ``@kernel``; comparisons with None; numpy's errors for what it rejects; the
all-NaN warnings of the nan-reductions. Every test runs real kernels on each backend of the run."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu import kernel


def up(x, backend):
    return gnp.asarray(x, device=backend)


def check(got, want):
    """``got`` (a device array) equals numpy's ``want`` exactly: dtype, shape and values."""
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


# -- item 7: a bool is its byte compared with 0 ---------------------------------------------------------------
def odd_bools():
    """Bools whose bytes are 3, 255, 0, 1, 2, 0, 128, 1: numpy reads [T, T, F, T, T, F, T, T]."""
    return np.array([3, -1, 0, 1, 2, 0, -128, 1], np.int8).view(bool)


BOOL_OPS = {
    "arange + b": lambda m, b: m.arange(8) + b,
    "b * 3": lambda m, b: b * 3,
    "b.sum()": lambda m, b: b.sum(),
    "sum(axis=0)": lambda m, b: b.reshape(2, 4).sum(axis=0),
    "sum(axis=1)": lambda m, b: b.reshape(2, 4).sum(axis=1),
    "mean": lambda m, b: m.mean(b),
    "cumsum": lambda m, b: m.cumsum(b),
    "count_nonzero": lambda m, b: m.count_nonzero(b),
    "argmax": lambda m, b: m.argmax(b),
    "nonzero": lambda m, b: m.nonzero(b)[0],
    "mask": lambda m, b: m.arange(8)[b],
    "astype(int32)": lambda m, b: b.astype(np.int32),
    "b == True": lambda m, b: b == True,  # noqa: E712  (numpy's elementwise compare is the point)
    "where": lambda m, b: m.where(b, 1, 2),
}


@pytest.mark.parametrize("op", BOOL_OPS, ids=list(BOOL_OPS))
def test_bool_bytes_other_than_one_are_true(backend, op):
    b = odd_bools()
    check(BOOL_OPS[op](gnp, up(b, backend)), BOOL_OPS[op](np, b))


def test_kernel_reads_a_numpy_bool_argument_as_numpy_does(backend):
    @kernel
    def add_index(b, out):
        for i in range(out.shape[0]):
            out[i] = i + b[i]
            if b[i] == True:  # noqa: E712
                out[i] += 10

    b = odd_bools()
    out = np.zeros(8, np.int64)
    add_index[backend](b, out)
    want = np.arange(8) + b + 10 * (b == True)  # noqa: E712
    np.testing.assert_array_equal(out, want)
