"""One process, one kernel object, several backends: each backend/device pair gets its own
specialization, and alternating between them gives the right answer every time."""
from __future__ import annotations

import numpy as np
import pytest

import pygpgpu.numpy as gnp
from pygpgpu import kernel
from conftest import RUN_BACKENDS


def square(v):
    return v * v


@kernel
def apply_all(x, out):
    for i in range(out.shape[0]):
        out[i] = square(x[i]) + 1.0


def _need_two_backends():
    if len(RUN_BACKENDS) < 2:
        pytest.skip(f"needs two execution backends, this run has {RUN_BACKENDS or 'none'}")


def test_same_kernel_object_alternates_between_backends():
    _need_two_backends()
    x = np.linspace(-3, 3, 10_001, dtype=np.float32)
    for round_ in range(3):
        for name in RUN_BACKENDS + RUN_BACKENDS[::-1]:
            out = np.full_like(x, -1)
            apply_all[name](x + round_, out)
            np.testing.assert_allclose(out, (x + round_) ** 2 + 1.0, rtol=1e-6, err_msg=name)


def test_device_arrays_move_between_backends():
    _need_two_backends()
    first, second = RUN_BACKENDS[:2]
    x = np.arange(4096, dtype=np.float32)
    g = gnp.asarray(x, device=first)
    out = gnp.empty_like(g)
    apply_all[first](g, out)
    moved = out.to(second)
    back = gnp.empty_like(moved)
    apply_all[second](moved, back)
    np.testing.assert_allclose(back.get(), (x * x + 1) ** 2 + 1, rtol=1e-6)
