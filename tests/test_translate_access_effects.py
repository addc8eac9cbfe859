"""What the read/write analysis (pygpgpu_translate._access) changes at launch, observed from outside:
arrays the kernel only loads may be read-only numpy arrays (they are never copied back)."""
from __future__ import annotations

import numpy as np

from pygpgpu_translate import kernel


@kernel
def scale_into(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] * 2.0


def test_read_only_input_arrays_are_accepted(backend):
    for n in (100, 300_000):                   # a small batch and a staged (or zero-copy) array
        x = np.arange(n, dtype=np.float32)
        x.flags.writeable = False
        out = np.zeros(n, np.float32)
        scale_into[backend](x, out)
        np.testing.assert_array_equal(out, x * 2.0)
        np.testing.assert_array_equal(x, np.arange(n, dtype=np.float32))
