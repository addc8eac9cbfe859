"""Python complex numbers where numpy takes them: ufuncs of scalars only (gnp.subtract(0j, 2j) is
a 0-d complex128 array, as CuPy returns), and real / imag / angle / reciprocal of a complex scalar."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "true_divide", "float_power"])
@pytest.mark.parametrize("a, b", [(0j, 2j), (2j, -2j), (1, 2j), (2j, 0.5)])
def test_ufunc_of_complex_scalars(name, a, b):
    got = getattr(gnp, name)(a, b)          # no device array: the default device's 0-d array
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got.get(), want)


@pytest.mark.parametrize("name", ["real", "imag", "angle", "reciprocal", "conjugate"])
def test_parts_of_a_complex_scalar(name):
    got = getattr(gnp, name)(3 + 4j)
    want = getattr(np, name)(3 + 4j)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got.get(), want)
