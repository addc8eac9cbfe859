"""The key under which a @kernel call stages gnp views into contiguous copies (_kernel.
_contiguous_views: equal views share one copy, so ``k(v, v)`` sees one array through both). Table-
driven: for each field of the key (buffer, offset, shape, strides, dtype), two views differing
only in that field get a copy each and the kernel reads the right data (compared with numpy);
two equal views (distinct objects) share one copy."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gnp
from pygpgpu_translate import _kernel, kernel


@kernel
def read_both_reversed(a, b, out_a, out_b, n):
    for i in range(n):
        out_a[i] = a[a.shape[0] - 1 - i]
        out_b[i] = b[b.shape[0] - 1 - i]


def _host(a, b, out_a, out_b, n):
    for i in range(n):
        out_a[i] = a[a.shape[0] - 1 - i]
        out_b[i] = b[b.shape[0] - 1 - i]


# field -> (a, b) of the arrays g and h: only that field of the key differs between a and b
CASES = {
    "nothing": lambda g, h: (g[0:12:2], g[0:12:2]),
    "buffer": lambda g, h: (g[0:12:2], h[0:12:2]),
    "offset": lambda g, h: (g[0:12:2], g[1:13:2]),
    "shape": lambda g, h: (g[0:12:2], g[0:8:2]),
    "strides": lambda g, h: (g[0:12:2], g[0:18:3]),
    "dtype": lambda g, h: (g[0:12:2], g.view(np.int32)[0:12:2]),
}


@pytest.mark.parametrize("field", list(CASES))
def test_changing_one_field_of_the_staging_key_misses(backend, field, monkeypatch):
    staged = []
    real = _kernel._contiguous_views

    def spy(values):
        values, views = real(values)
        staged.append(len(views))
        return values, views

    monkeypatch.setattr(_kernel, "_contiguous_views", spy)
    hg = np.arange(1, 25, dtype=np.float32)
    hh = hg + 100
    ha, hb = CASES[field](hg, hh)
    a, b = CASES[field](gnp.asarray(hg, device=backend), gnp.asarray(hh, device=backend))
    assert a is not b
    n = min(ha.shape[0], hb.shape[0])
    want_a, want_b = np.zeros(n, ha.dtype), np.zeros(n, hb.dtype)
    _host(ha, hb, want_a, want_b, n)
    out_a, out_b = gnp.zeros(n, ha.dtype, device=backend), gnp.zeros(n, hb.dtype, device=backend)
    read_both_reversed[backend](a, b, out_a, out_b, n)
    np.testing.assert_array_equal(out_a.get(), want_a)
    np.testing.assert_array_equal(out_b.get(), want_b)
    assert staged[-1] == (1 if field == "nothing" else 2), staged
