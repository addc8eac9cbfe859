"""copyto with a Python scalar ``where`` (numpy takes its truth value: 3.2 copies, 0 does not), and
numpy's ComplexWarning where complex arrays convert to a real type (astype, assignment,
concatenate with casting='unsafe')."""
from __future__ import annotations

import warnings

import numpy as np
import pygpgpu.numpy as gnp
import pytest


@pytest.mark.parametrize("where", [3.2, 0, 4, -4, True, False, 1 + 1j, 0.0])
def test_copyto_with_a_scalar_where(backend, where):
    dst = gnp.zeros((3, 2), device=backend)
    gnp.copyto(dst, gnp.ones((3, 2), device=backend), where=where)
    want = np.zeros((3, 2))
    np.copyto(want, np.ones((3, 2)), where=where)
    np.testing.assert_array_equal(dst.get(), want)


def test_copyto_with_false_where_still_checks_casting(backend):
    with pytest.raises(TypeError, match="safe"):
        gnp.copyto(gnp.zeros(3, np.int32, device=backend), gnp.ones(3, device=backend), casting="safe", where=False)


def test_complex_to_real_warns_as_numpy(backend):
    c = gnp.asarray(np.array([1 + 2j, 3 - 1j]), device=backend)
    with pytest.warns(np.exceptions.ComplexWarning):
        r = c.astype(np.float64)
    np.testing.assert_array_equal(r.get(), [1.0, 3.0])
    dst = gnp.zeros(2, device=backend)
    with pytest.warns(np.exceptions.ComplexWarning):
        dst[...] = c
    with pytest.warns(np.exceptions.ComplexWarning):
        gnp.concatenate((c, c), dtype=np.float32, casting="unsafe")

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c.astype(bool)                      # truth values: numpy does not warn
        c.astype(np.complex64)


@pytest.mark.parametrize("dt", [np.float32, np.bool_, np.int32], ids=lambda t: np.dtype(t).name)
def test_complex_operands_in_a_real_loop_convert_first(backend, dt):
    c = np.array([1 + 2j, 0j, 3 - 1j, 1j])
    g = gnp.asarray(c, device=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        got = gnp.add(g, g, dtype=dt, casting="unsafe")
        want = np.add(c, c, dtype=dt, casting="unsafe")
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)


def test_where_of_a_complex_condition(backend):
    c = np.array([1 + 2j, 0j, 3 - 1j, 1j])
    g = gnp.asarray(c, device=backend)
    np.testing.assert_array_equal(gnp.where(g, gnp.asarray([1.0, 2, 3, 4], device=backend), 0).get(),
                                  np.where(c, [1.0, 2, 3, 4], 0))
    np.testing.assert_array_equal(gnp.where(g.astype(np.complex64), g, g * 2).get(), np.where(c, c, c * 2))
