"""The debug mode checks the index a kernel computed, not a narrowed copy (issue 30, item 2): an
int64 index of 2**32 + 2 must not read element 2 (nor 2**40 + 3 element 3, nor -2**32 + 1 element
1), and the IndexError shows the real value (2**31, not -2147483648; a uint64 past 2**63 as
itself). Also (item 9) a kernel file's length argument of 2**40 for an ``int`` is reported as not
fitting int, in debug mode as without it."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from pygpgpu import gpu, kernel

WIDE = [2**32 + 2, 2**40 + 3, -2**32 + 1, 2**31, -2**31 - 1, 2**63 - 1, -2**63]


@kernel(debug=True)
def gather(a, idx, out):
    for i in range(out.shape[0]):
        out[i] = a[idx[i]]


@kernel(debug=True)
def scatter(idx, out):
    for i in range(idx.shape[0]):
        out[idx[i]] = 1.0


@kernel(debug=True)
def gather_2d(m, idx, out):
    for i in range(out.shape[0]):
        out[i] = m[1, idx[i]]


@kernel(debug=True)
def count(idx, hist):
    for i in range(idx.shape[0]):
        gpu.atomic_add(hist, idx[i], 1)


PARTICLE = np.dtype([("pos", np.float32, (3,)), ("mass", np.float32)])


@kernel(debug=True)
def field(p, js, out):
    for i in range(p.shape[0]):
        out[i] = p[i].pos[js[i]]


@pytest.mark.parametrize("value", WIDE)
def test_a_wide_int64_index_is_reported_with_its_value(backend, value):
    a = np.arange(8, dtype=np.float32) + 1
    out = np.full(1, -1, np.float32)
    with pytest.raises(IndexError, match=rf"index {value} is out of bounds for axis 0 with size 8: reading array 'a'"):
        gather[backend](a, np.array([value], np.int64), out)
    np.testing.assert_array_equal(out, 0)           # skipped, never a[value mod 2**32]


@pytest.mark.parametrize("value", [2**63 + 5, 2**64 - 1, 2**32 + 1, 2**31])
def test_a_wide_uint64_index_is_reported_with_its_value(backend, value):
    a = np.arange(8, dtype=np.float32) + 1
    out = np.full(1, -1, np.float32)
    with pytest.raises(IndexError, match=rf"index {value} is out of bounds for axis 0 with size 8"):
        gather[backend](a, np.array([value], np.uint64), out)
    np.testing.assert_array_equal(out, 0)


def test_a_wide_index_next_to_in_range_indices_of_every_width(backend):
    a = np.arange(8, dtype=np.float32) + 1
    out = np.full(3, -1, np.float32)
    with pytest.raises(IndexError, match=rf"index {2**32 + 3} is out of bounds"):
        gather[backend](a, np.array([1, 2**32 + 3, -1], np.int64), out)
    np.testing.assert_array_equal(out, [2, 0, 8])   # the others read as numpy reads them
    for dt, values in ((np.int64, [0, 7, -1, -8, 3]), (np.uint64, [0, 7, 3]), (np.int32, [-8, 5]), (np.uint8, [6])):
        idx = np.array(values, dt)
        out = np.zeros(len(values), np.float32)
        gather[backend](a, idx, out)
        np.testing.assert_array_equal(out, a[idx.astype(np.int64)])


def test_a_wide_write_index_is_skipped_and_reported(backend):
    out = np.zeros(8, np.float32)
    with pytest.raises(IndexError, match=rf"index {2**32 + 1} is out of bounds .* writing array 'out'"):
        scatter[backend](np.array([2**32 + 1], np.int64), out)
    np.testing.assert_array_equal(out, 0)           # out[1] not written


def test_a_wide_index_on_the_second_axis(backend):
    m = np.arange(16, dtype=np.float32).reshape(2, 8)
    out = np.full(1, -1, np.float32)
    with pytest.raises(IndexError, match=rf"index {2**32 + 2} is out of bounds for axis 1 with size 8"):
        gather_2d[backend](m, np.array([2**32 + 2], np.int64), out)
    np.testing.assert_array_equal(out, 0)
    gather_2d[backend](m, np.array([-3], np.int64), out)
    np.testing.assert_array_equal(out, m[1, -3])


def test_a_wide_atomic_index(backend):
    hist = np.zeros(4, np.int32)
    with pytest.raises(IndexError, match=rf"index {2**32 + 1} is out of bounds .*atomic"):
        count[backend](np.array([2**32 + 1], np.int64), hist)
    np.testing.assert_array_equal(hist, 0)


def test_a_wide_record_field_index(backend):
    p = np.zeros(2, PARTICLE)
    p["pos"][:, 1] = 3
    p["mass"] = 7
    out = np.full(2, -1, np.float32)
    with pytest.raises(IndexError, match=rf"index {2**32 + 1} is out of bounds"):
        field[backend](p, np.full(2, 2**32 + 1, np.int64), out)
    np.testing.assert_array_equal(out, 0)           # not pos[1]
    field[backend](p, np.full(2, -2, np.int64), out)
    np.testing.assert_array_equal(out, 3)


DATA = Path(__file__).parent / "kernel_files"


def test_a_kernel_file_length_past_int_says_it_does_not_fit(monkeypatch, tmp_path):
    from conftest import first_device
    from pygpgpu_core import kernel_files as kf
    from pygpgpu_core.kernel_files._args import ArgumentRangeError
    from pygpgpu_core.kernel_files._lengths import LengthOutOfRange
    first_device("opencl")
    monkeypatch.setenv("PYGPGPU_CACHE_DIR", str(tmp_path / "cache"))
    src = tmp_path / "vecadd.cl"
    shutil.copy(DATA / "vecadd.cl", src)
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    for debug in ("0", "1"):
        monkeypatch.setenv("PYGPGPU_BOUNDS_CHECK", debug)
        m = kf.load(src)
        with pytest.raises(ArgumentRangeError, match=r"1099511627776 does not fit int") as exc:
            m.vecadd[(64, 64)](a, a, out, 2**40)
        assert not isinstance(exc.value, LengthOutOfRange)
