"""``k.split(devices, weights)`` refuses weights that cannot share a domain (issue 30, item 9):
``[inf, 1]`` was accepted and failed at the call with "cannot convert float NaN to integer". Each
case splits over the same device twice (a split needs no second device to check its weights)
and compares the result with the kernel run on the host."""
from __future__ import annotations

import math

import _mp_kernels as mk
import numpy as np
import pytest


@pytest.mark.parametrize("weights", [[math.inf, 1], [1, math.nan], [0, 1], [-1, 2], ["a", 1], [1, 2, 3]],
                         ids=["inf", "nan", "zero", "negative", "text", "three-for-two"])
def test_split_refuses_weights_that_are_no_shares(backend, weights):
    with pytest.raises(ValueError, match="positive finite numbers"):
        mk.scale.split([backend, backend], weights=weights)


@pytest.mark.parametrize("weights", [[1e308, 1e308], [3, 1], [1e-300, 1]], ids=["huge", "3:1", "tiny"])
def test_split_runs_with_any_finite_positive_weights(backend, weights):
    x = np.linspace(-3, 3, 1001, dtype=np.float32)
    out = np.zeros_like(x)
    mk.scale.split([backend, backend], weights=weights)(x, out, 2.0)
    np.testing.assert_allclose(out, mk.scale_host(x, 2.0), rtol=1e-6, atol=1e-6)
