"""numpy's readers of host data (fromfile, frombuffer, fromstring, fromiter, loadtxt, genfromtxt)
give device arrays of numpy's values, uploaded once; fromfunction computes on device index arrays."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp


def test_readers_give_numpys_values(backend, tmp_path):
    path = tmp_path / "data.bin"
    np.arange(6, dtype=">u4").tofile(path)          # big-endian on disk: uploaded in native order
    got = gnp.fromfile(path, dtype=">u4", device=backend)
    assert got.dtype == np.uint32
    np.testing.assert_array_equal((got + got).get(), np.arange(6) * 2)
    np.testing.assert_array_equal(gnp.frombuffer(b"\x01\x02", dtype=np.uint8, device=backend).get(), [1, 2])
    np.testing.assert_array_equal(gnp.fromstring("1 2 3", dtype=int, sep=" ", device=backend).get(), [1, 2, 3])
    np.testing.assert_array_equal(gnp.fromiter((x * x for x in range(5)), float, device=backend).get(),
                                  np.fromiter((x * x for x in range(5)), float))
    text = tmp_path / "t.txt"
    text.write_text("0 1\n2 3\n")
    np.testing.assert_array_equal(gnp.loadtxt(text, dtype="u1", device=backend).get(), np.loadtxt(text, dtype="u1"))
    np.testing.assert_array_equal(gnp.genfromtxt(text, device=backend).get(), np.genfromtxt(text))


def test_fromfunction_runs_on_device_index_arrays(backend):
    got = gnp.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int, device=backend)
    assert isinstance(got, gnp.ndarray)
    np.testing.assert_array_equal(got.get(), np.fromfunction(lambda i, j: i * 10 + j, (3, 4), dtype=int))
