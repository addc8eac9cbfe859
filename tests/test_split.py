"""``k.split(devices)`` (issue 19, item 4): one 1-D launch divided among devices.

Here the "devices" are the test backend's device listed several times (every machine has
one); tests/test_multi_device.py runs the same on two real PoCL devices. Results are compared
with numpy and with the unsplit kernel; kernels whose work items could tell which part they are
in are refused with ValueError, each for its own reason.
"""
from __future__ import annotations

import _mp_kernels as mk
import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu import gpu, kernel


@kernel
def clip_or_default(x, y, out, lo, fallback):
    for i in range(out.shape[0]):
        v = x[i] + y[i]
        if v < lo:
            v = fallback
        out[i] = v


@kernel
def reads_length(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i] / len(x)


@kernel
def gid_style(x, out):
    gpu.work_size(out)
    i = gpu.get_global_id(0)
    out[i] = x[i]


@kernel
def image(a, out):
    for y, x in np.ndindex(out.shape):
        out[y, x] = a[y, x] * 2


@kernel
def histogram(data, counts):
    for i in range(data.shape[0]):
        gpu.atomic_add(counts, data[i], 1)


def test_split_matches_numpy_and_the_unsplit_kernel(backend):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(200_003).astype(np.float32)
    y = rng.standard_normal(200_003).astype(np.float32)
    whole = np.empty_like(x)
    clip_or_default[backend](x, y, whole, -0.5, 9.0)
    for devices, weights in (([backend, backend], None), ([backend] * 3, [1, 2, 5]), ([backend], None)):
        out = np.zeros_like(x)
        clip_or_default.split(devices, weights)(x, y, out, -0.5, 9.0)
        want = np.where(x + y < np.float32(-0.5), np.float32(9.0), x + y)
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(out, whole)


def test_split_parts_follow_the_weights(backend):
    x = np.ones(1000, np.float32)
    split = mk.scale.split([backend, backend, backend], weights=[1, 1, 2])
    parts = split.parts(x, np.empty_like(x), 2.0)
    assert [(lo, hi) for _dev, lo, hi in parts] == [(0, 250), (250, 500), (500, 1000)]
    assert all(dev.selector == split.devices[0].selector for dev, _, _ in parts)


def test_split_leaves_the_tail_of_a_longer_array_alone(backend):
    x = np.arange(10, dtype=np.float32)
    out = np.full(10, -1.0, np.float32)
    mk.scale.split([backend, backend])(x, out[:7], 1.0)        # the domain is out's 7 rows
    np.testing.assert_array_equal(out[:7], mk.scale_host(x[:7], 1.0))
    np.testing.assert_array_equal(out[7:], -1.0)


@pytest.mark.parametrize(("k", "args", "reason"), [
    (mk.reverse, lambda x: (x, np.empty_like(x)), "not accessed only at each work item's own element"),
    (histogram, lambda x: (x.astype(np.int32) % 4, np.zeros(4, np.int32)), "not accessed only"),
    (mk.uses_index, lambda x: (np.empty_like(x),), "uses the loop index 'i' as a value"),
    (reads_length, lambda x: (x, np.empty_like(x)), "reads the length of 'x'"),
    (mk.count_to, lambda x: (x, np.empty_like(x), 50), "does not follow the length of the sliced arrays"),
    (gid_style, lambda x: (x, np.empty_like(x)), "no loop domain"),
    (image, lambda x: (x.reshape(10, 10), np.empty((10, 10), x.dtype)), "2 dimensions"),
])
def test_kernels_that_cannot_be_split_say_why(backend, k, args, reason):
    x = np.arange(100, dtype=np.float32)
    with pytest.raises(ValueError, match=reason):
        k.split([backend, backend])(*args(x))


def test_kernel_method_cannot_be_split(backend):
    m = mk.Model(100)
    x = np.arange(100, dtype=np.float32)
    with pytest.raises(ValueError, match="it is a method"):
        mk.Model.apply.split([backend, backend])(m, x, np.empty_like(x))


def test_split_arguments_are_checked(backend):
    x = np.arange(100, dtype=np.float32)
    with pytest.raises(TypeError, match="list of devices"):
        mk.scale.split(backend)
    with pytest.raises(ValueError, match="positive"):
        mk.scale.split([backend, backend], weights=[1, 0])
    with pytest.raises(TypeError, match="numpy arrays"):
        mk.scale.split([backend, backend])(gnp.asarray(x, device=backend), np.empty_like(x), 1.0)
    with pytest.raises(ValueError, match="fewer than"):
        mk.scale.split([backend, backend])(x[:10], np.empty_like(x), 1.0)
