"""A configured kernel's repr says where it runs and with what work size, in words: `<kernel saxpy on
opencl>`, not the internal tuple `('opencl', None, None)`."""
from __future__ import annotations

import numpy as np

from pygpgpu_translate import kernel


@kernel
def saxpy(x, y, out, alpha):
    for i in range(out.shape[0]):
        out[i] = x[i] * alpha + y[i]


def test_configured_kernel_reprs_read_as_words():
    assert repr(saxpy["opencl"]) == "<kernel saxpy on opencl>"
    assert repr(saxpy[(1024, 256)]) == "<kernel saxpy on the default device, 1024 work items in groups of 256>"
    assert repr(saxpy["cuda:0", ((64, 64), (8, 8))]) == "<kernel saxpy on cuda:0, 64 x 64 work items in groups of 8 x 8>"
    assert repr(saxpy[100]) == "<kernel saxpy on the default device, 100 work items>"
    assert "None" not in repr(saxpy["opencl"][(100,)])


def test_the_described_kernel_runs_as_described(backend):
    x = np.arange(8, dtype=np.float32)
    out = np.zeros_like(x)
    configured = saxpy[backend]
    assert repr(configured) == f"<kernel saxpy on {backend}>"
    configured(x, x, out, np.float32(2))
    want = np.empty_like(x)
    saxpy.py_func(x, x, want, np.float32(2))
    np.testing.assert_array_equal(out, want)
