"""Assignment drops a value's extra leading axes of length 1 as numpy's setitem does ((1, 4) into a
(4,) row, device or numpy values), refuses other extra axes, and refuses a nested list that numpy refuses.
Compared with numpy on each backend of the run."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest

CASES = {   # (the key assigned to, the value's shape)
    "row <- (1, 4)": (1, (1, 4)),
    "row <- (1, 1, 4)": (2, (1, 1, 4)),
    "slice <- (1, 2)": ((0, slice(0, 2)), (1, 2)),
    "column <- (1, 3)": ((slice(None), 3), (1, 3)),
}


@pytest.mark.parametrize("source", ["device", "numpy"])
@pytest.mark.parametrize("case", CASES)
def test_setitem_drops_leading_unit_axes_as_numpy(backend, case, source):
    key, shape = CASES[case]
    value = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    want = np.zeros((3, 4))
    want[key] = value
    got = gnp.zeros((3, 4), device=backend)
    got[key] = gnp.asarray(value, device=backend) if source == "device" else value
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("source", ["device", "numpy"])
def test_setitem_still_refuses_extra_axes_longer_than_one(backend, source):
    value = np.ones((2, 4))
    with pytest.raises(ValueError):
        np.zeros((3, 4))[1] = value
    with pytest.raises(ValueError):
        gnp.zeros((3, 4), device=backend)[1] = gnp.asarray(value, device=backend) if source == "device" else value


def test_setitem_refuses_a_nested_list_numpy_refuses(backend):
    with pytest.raises(ValueError):
        np.zeros((3, 4))[0, :2] = [[5, 6]]
    with pytest.raises(ValueError):
        gnp.zeros((3, 4), device=backend)[0, :2] = [[5, 6]]
