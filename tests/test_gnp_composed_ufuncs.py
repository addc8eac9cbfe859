"""numpy's ufuncs that gnp composes (divmod, modf, frexp, ldexp, nextafter, spacing) called as
numpy's own ufuncs on device arrays (``np.divmod(g, 3)``, ``divmod(np.int8(7), g)``), with
numpy's ``out`` tuples."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest


def test_divmod_of_a_numpy_scalar_and_a_device_array(backend):
    a = np.arange(-5, 6).astype(np.int8)
    g = gnp.asarray(a, device=backend)
    with np.errstate(all="ignore"):
        for got, want in zip(divmod(np.int8(7), g), divmod(np.int8(7), a)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.get(), want)
        for got, want in zip(np.divmod(g, 3), np.divmod(a, 3)):
            np.testing.assert_array_equal(got.get(), want)


def test_divmod_into_out_pair(backend):
    g = gnp.asarray(np.arange(-5, 6), device=backend)
    q, r = gnp.empty(11, np.int64, device=backend), gnp.empty(11, np.int64, device=backend)
    got = np.divmod(g, 4, out=(q, r))
    assert got[0] is q and got[1] is r
    np.testing.assert_array_equal(r.get(), np.arange(-5, 6) % 4)
    got = gnp.divmod(g, 4, out=(q, r))
    assert got[1] is r


@pytest.mark.parametrize("name, args", [("modf", ([1.5, -2.25],)), ("frexp", ([3.0, -0.1],)),
                                        ("ldexp", ([3.0, 1.5], 4)), ("nextafter", ([1.0, 2.0], 0.0)),
                                        ("spacing", ([1.0, -3.0],))])
def test_numpy_ufunc_on_device_arrays_runs_gnps(backend, name, args):
    dev = tuple(gnp.asarray(np.asarray(x), device=backend) if isinstance(x, list) else x for x in args)
    host = tuple(np.asarray(x) if isinstance(x, list) else x for x in args)
    got, want = getattr(np, name)(*dev), getattr(np, name)(*host)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert isinstance(g, gnp.ndarray)
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.get(), w)
