"""The debug bounds check names the first out-of-range axis, as numpy does, when an index is out
of range on several axes at once (``a[5, 7]`` of a (2, 3) array: axis 0), in 2 and 3 dimensions,
for reads and writes. The message's head is compared with numpy's own IndexError."""
from __future__ import annotations

import numpy as np
import pytest
from pygpgpu import kernel


@kernel(debug=True)
def read_at(a, idx, out):
    out[0] = a[idx[0], idx[1]]


@kernel(debug=True)
def read_at3(a, idx, out):
    out[0] = a[idx[0], idx[1], idx[2]]


@kernel(debug=True)
def write_at(a, idx):
    a[idx[0], idx[1]] = 1.0


def _numpy_words(a, index) -> str:
    with pytest.raises(IndexError) as want:
        a[index]
    return str(want.value)                    # "index 5 is out of bounds for axis 0 with size 2"


@pytest.mark.parametrize("index", [(5, 7), (2, 3), (0, 3), (-3, 9), (1, -4)])
def test_a_two_dimensional_read_names_numpys_axis(backend, index):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    words = _numpy_words(a, index)
    with pytest.raises(IndexError) as got:
        read_at[backend, 1](a, np.array(index, np.int32), np.zeros(1, np.float32))
    assert words in str(got.value)
    with pytest.raises(IndexError) as got:
        write_at[backend, 1](a, np.array(index, np.int32))
    assert words in str(got.value)
    np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32).reshape(2, 3))     # the write was skipped


@pytest.mark.parametrize("index", [(4, 9, 9), (0, 9, 9), (0, 0, 9), (-5, 0, 5)])
def test_a_three_dimensional_read_names_numpys_axis(backend, index):
    a = np.zeros((2, 3, 4), np.float32)
    words = _numpy_words(a, index)
    with pytest.raises(IndexError) as got:
        read_at3[backend, 1](a, np.array(index, np.int32), np.zeros(1, np.float32))
    assert words in str(got.value)
