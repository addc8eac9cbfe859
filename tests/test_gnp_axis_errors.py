"""numpy's AxisError (not an IndexError from inside gnp) for an axis out of range in partition and
argpartition, functions and methods; arange with an explicit step=None (numpy's step 1); correlate's
ValueError for 0-d operands; argsort and squeeze of 0-d arrays (numpy takes axis 0 or -1 there).
Compared with numpy on each backend of the run."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

CALLS = {
    "partition": lambda m, a, ax: m.partition(a, 2, axis=ax),
    "argpartition": lambda m, a, ax: m.argpartition(a, 2, axis=ax),
    "a.argpartition": lambda m, a, ax: a.argpartition(2, axis=ax),
}


@pytest.mark.parametrize("axis", [3, -4, 7])
@pytest.mark.parametrize("call", CALLS)
def test_partition_axis_out_of_range_is_numpys_axis_error(backend, call, axis):
    host = np.arange(40.0).reshape(2, 2, 10)
    with pytest.raises(np.exceptions.AxisError):
        CALLS[call](np, host, axis)
    with pytest.raises(np.exceptions.AxisError):
        CALLS[call](gnp, gnp.asarray(host, device=backend), axis)


@pytest.mark.parametrize("axis", [0, 1, -1, -3, None])
@pytest.mark.parametrize("call", CALLS)
def test_partition_in_range_axes_still_partition(backend, call, axis):
    host = np.random.default_rng(5).random((3, 4, 10))
    got = CALLS[call](gnp, gnp.asarray(host, device=backend), axis).get()
    want = CALLS[call](np, host, axis)
    if "arg" in call:       # any valid partition: compare the values the indices pick
        got = np.take_along_axis(host.ravel() if axis is None else host, got, axis=-1 if axis is None else axis)
        want = np.take_along_axis(host.ravel() if axis is None else host, want, axis=-1 if axis is None else axis)
    kth_got = np.take(got, 2, axis=-1 if axis is None else axis)
    kth_want = np.take(want, 2, axis=-1 if axis is None else axis)
    np.testing.assert_array_equal(kth_got, kth_want)


@pytest.mark.parametrize("args", [(0, 100, None), (5, None, None), (2.5, 10, None)], ids=str)
@pytest.mark.parametrize("dtype", [None, "float32", "int16"])
def test_arange_step_none_is_numpys_default_step(backend, args, dtype):
    import pygpgpu
    want = np.arange(*args, dtype=dtype)
    with pygpgpu.device(backend):
        got = gnp.arange(*args, dtype=dtype)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("mode", ["valid", "same", "full"])
@pytest.mark.parametrize("which", ["a", "v"])
def test_correlate_refuses_zero_dimensional_operands_as_numpy(backend, mode, which):
    zero_d, one_d = np.float32(2.0), np.array([1.0, 3.0], np.float32)
    a, v = (zero_d, one_d) if which == "a" else (one_d, zero_d)
    with pytest.raises(ValueError):
        np.correlate(a, v, mode=mode)
    with pytest.raises(ValueError, match="too small depth"):
        gnp.correlate(gnp.asarray(a, device=backend), gnp.asarray(v, device=backend), mode=mode)
    # convolve takes them, as numpy's does (a 0-d operand is a 1-element sequence there)
    np.testing.assert_array_equal(gnp.convolve(gnp.asarray(a, device=backend), gnp.asarray(v, device=backend),
                                               mode=mode).get(), np.convolve(a, v, mode=mode))


ZERO_D_CALLS = {
    "argsort()": lambda m, a: m.argsort(a), "a.argsort(axis=0)": lambda m, a: a.argsort(axis=0),
    "argsort(axis=None)": lambda m, a: m.argsort(a, axis=None), "argsort(axis=1)": lambda m, a: m.argsort(a, axis=1),
    "a.squeeze(axis=-1)": lambda m, a: a.squeeze(axis=-1), "squeeze(axis=0)": lambda m, a: m.squeeze(a, axis=0),
    "squeeze(axis=(0, -1))": lambda m, a: m.squeeze(a, axis=(0, -1)), "a.squeeze(axis=1)": lambda m, a: a.squeeze(axis=1),
    "sort()": lambda m, a: m.sort(a),
}


@pytest.mark.parametrize("call", ZERO_D_CALLS)
def test_zero_dimensional_axis_rules_of_argsort_and_squeeze_as_numpy(backend, call):
    host = np.array(3.0)
    try:
        want = ZERO_D_CALLS[call](np, host)
    except np.exceptions.AxisError:
        with pytest.raises(np.exceptions.AxisError):
            ZERO_D_CALLS[call](gnp, gnp.asarray(host, device=backend))
        return
    got = ZERO_D_CALLS[call](gnp, gnp.asarray(host, device=backend))
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)
