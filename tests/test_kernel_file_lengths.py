"""Kernel files in debug mode (issue 13, item 11): with ``PYGPGPU_BOUNDS_CHECK=1`` a length
argument larger than the arrays passed with it is refused before the launch (told ``n`` larger
than its arrays, a handwritten kernel corrupts the heap and aborts the process much later)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from pygpgpu_core import kernel_files as kf
from pygpgpu_core.kernel_files._lengths import LengthOutOfRange

DATA = Path(__file__).parent / "kernel_files"

SOURCE = """
__kernel void partial_sums(__global const float* data, __global float* partial, const int n)
{
    int g = get_group_id(0);
    if (get_local_id(0) == 0) {
        float s = 0;
        for (int i = g * 64; i < min(n, (g + 1) * 64); i++) s += data[i];
        partial[g] = s;
    }
}

__kernel void scale(__global float* x, const int n_x, __global const float* w, const int w_len)
{
    int i = get_global_id(0);
    if (i < n_x) x[i] = x[i] * w[i % w_len];
}
"""


@pytest.fixture
def checked(monkeypatch, tmp_path):
    from conftest import first_device
    first_device("opencl")
    monkeypatch.setenv("PYGPGPU_BOUNDS_CHECK", "1")
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_generic_length_larger_than_every_array_is_refused(checked):
    src = checked / "vecadd.cl"
    shutil.copy(DATA / "vecadd.cl", src)
    m = kf.load(src)
    a = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(a)
    with pytest.raises(LengthOutOfRange, match=r"n=1100 is larger than the arrays passed as 'a' \(1000 elements\)"):
        m.vecadd[(1100, 64)](a, a, out, 1100)
    with pytest.raises(IndexError):                      # an IndexError, like the translator's debug mode
        m.vecadd[(1100, 64)](a, a, out, 1100)
    m.vecadd[(1000, 64)](a, a, out, 1000)               # the real length runs
    np.testing.assert_array_equal(out, 2 * a)
    import pygpgpu.numpy as gnp
    da, dout = gnp.asarray(a), gnp.zeros(1000, np.float32)
    with pytest.raises(LengthOutOfRange):              # device arrays: their host-side size counts too
        m.vecadd[(2000, 64)](da, da, dout, 2000)


def test_smaller_arrays_bounded_otherwise_are_not_refused(checked):
    src = checked / "lengths.cl"
    src.write_text(SOURCE)
    m = kf.load(src)
    x = np.arange(256, dtype=np.float32)
    partial = np.zeros(4, np.float32)                    # 4 sums of 64: smaller than n, and legal
    m.partial_sums[(256, 64)](x, partial, 256)
    np.testing.assert_allclose(partial, x.reshape(4, 64).sum(axis=1))
    w = np.array([1, 2], np.float32)
    m.scale[(256, 64)](x, 256, w, 2)
    np.testing.assert_array_equal(x[:4], [0, 2, 2, 6])


def test_named_lengths_are_checked_against_their_own_array(checked):
    src = checked / "lengths.cl"
    src.write_text(SOURCE)
    m = kf.load(src)
    x = np.zeros(256, np.float32)
    w = np.ones(2, np.float32)
    with pytest.raises(LengthOutOfRange, match=r"w_len=3 .*'w' \(2 elements\)"):
        m.scale[(256, 64)](x, 256, w, 3)
    with pytest.raises(LengthOutOfRange, match=r"n_x=300 .*'x' \(256 elements\)"):
        m.scale[(300, 64)](x, 300, w, 2)


def test_without_the_debug_mode_nothing_is_checked(monkeypatch, tmp_path):
    monkeypatch.delenv("PYGPGPU_BOUNDS_CHECK", raising=False)
    src = tmp_path / "lengths.cl"
    src.write_text(SOURCE)
    m = kf.load(src)
    assert m.__kernel_file__.parsed.kernels["scale"]   # loads; plans carry no checks
    from pygpgpu_core.kernel_files._lengths import length_checks
    assert [c[1] for c in length_checks(m.scale._decl)] == ["n_x", "w_len"]
