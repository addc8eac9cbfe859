"""copyto with a Python scalar ``where`` (numpy takes its truth value: 3.2 copies, 0 does not), and
numpy's ComplexWarning where complex arrays convert to a real type (astype, assignment,
concatenate with casting='unsafe')."""
from __future__ import annotations

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
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c.astype(bool)                      # truth values: numpy does not warn
        c.astype(np.complex64)
