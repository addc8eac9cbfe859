"""``pygpgpu.vec`` holds the 50 vector types; the top-level names that numpy also has as scalar
types (``pygpgpu.int8`` was an 8-wide vector) warn and point at ``pygpgpu.vec`` and numpy's scalar."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import pygpgpu
import pygpgpu.vec as vec
from pygpgpu.vec import float4, int8, int16
from pygpgpu_core.vec_types import NUMPY_SCALAR_CLASHES, VECTOR_TYPES
from pygpgpu_translate import kernel


def test_vec_has_every_vector_type():
    for name, cls in VECTOR_TYPES.items():
        assert getattr(vec, name) is cls and name in vec.__all__
    assert len([n for n in vec.__all__ if n in VECTOR_TYPES]) == 50


def test_the_deprecated_top_level_names_are_exactly_numpys_scalar_names():
    clashing = {n for n in VECTOR_TYPES if isinstance(getattr(np, n, None), type) and issubclass(getattr(np, n), np.generic)}
    assert set(NUMPY_SCALAR_CLASHES) == clashing == set(pygpgpu._DEPRECATED_VECTORS)
    assert not clashing & set(pygpgpu.__all__)        # `from pygpgpu import *` binds none of them


@pytest.mark.parametrize("name", ["int8", "int16", "uint8", "uint16", "float16"])
def test_a_clashing_top_level_name_warns_and_points_at_vec_and_numpy(name):
    with pytest.warns(DeprecationWarning) as record:
        got = getattr(pygpgpu, name)
    assert got is VECTOR_TYPES[name]
    text = str(record[0].message)
    assert f"pygpgpu.vec.{name}" in text and f"np.{name}" in text
    with pytest.warns(DeprecationWarning):      # every use warns, not only the first (nothing cached)
        getattr(pygpgpu, name)


def test_other_top_level_vector_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pygpgpu.float4 is vec.float4 and pygpgpu.int3 is vec.int3 and pygpgpu.vec is vec


def _scaled(x, out):
    for i in range(out.shape[0]):
        v = float4(x[i], 1.0, 2.0, 3.0) * 2.0
        w = int8(i) + int16(2).sF       # vec.int8 and vec.int16: 8 and 16 ints, not numpy scalars
        u = vec.float4(1.0, 1.0, 1.0, 1.0)      # the module attribute too
        out[i] = v.x + v.w + w.s7 + u.y


def test_kernels_translate_the_vec_spellings(backend):
    x = np.arange(8, dtype=np.float32)
    want = np.empty_like(x)
    _scaled(x, want)                         # the same function on the host
    out = np.zeros_like(x)
    kernel(_scaled)[backend](x, out)
    np.testing.assert_allclose(out, want)
