"""numpy's scalar types, constants and dtype helpers are ``gnp.<name>``, the very numpy objects, as
CuPy re-exports them (issue 32); the helpers that look at arrays take a device array by its dtype."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu_core.gnp import _numpy_names

NAMES = list(_numpy_names.NUMPY_OBJECTS) + list(_numpy_names.NUMPY_2_OBJECTS)


@pytest.mark.parametrize("name", NAMES)
def test_numpy_names_are_numpys_objects(name):
    assert getattr(gnp, name) is getattr(np, name)


def test_the_names_cupy_tests_use_most_are_there():
    for name in ("float32", "float64", "dtype", "nan", "inf", "pi", "e", "bool_", "integer", "floating", "number",
                 "complexfloating", "finfo", "iinfo", "intp", "int8", "uint64", "float16", "complex128"):
        assert getattr(gnp, name) is getattr(np, name), name
    assert gnp.newaxis is None is np.newaxis
    assert np.isnan(gnp.nan) and gnp.inf == np.inf


def test_scalar_types_make_device_arrays_of_their_dtype(backend):
    for t in (gnp.int8, gnp.uint16, gnp.float32, gnp.float64, gnp.bool_, gnp.intp):
        g = gnp.arange(5, device=backend).astype(t)
        assert g.dtype == np.dtype(t)
        np.testing.assert_array_equal(g.get(), np.arange(5).astype(t))
    g = gnp.zeros(3, dtype=gnp.dtype("float32"), device=backend)
    assert g.dtype == np.float32
    assert gnp.issubdtype(g.dtype, gnp.floating) and not gnp.issubdtype(g.dtype, gnp.integer)


def test_dtype_helpers_take_device_arrays_by_dtype(backend):
    f32 = gnp.zeros(2, np.float32, device=backend)
    i8 = gnp.zeros(2, np.int8, device=backend)
    b = gnp.zeros(2, bool, device=backend)
    h32, h8, hb = np.zeros(2, np.float32), np.zeros(2, np.int8), np.zeros(2, bool)
    assert gnp.result_type(f32, i8, 1.0) == np.result_type(h32, h8, 1.0)
    assert gnp.result_type(i8, np.int16) == np.result_type(h8, np.int16)
    assert gnp.can_cast(i8, np.float32) == np.can_cast(h8, np.float32)
    assert gnp.can_cast(f32, np.int8) == np.can_cast(h32, np.int8)
    assert gnp.can_cast(f32, np.int8, "unsafe") == np.can_cast(h32, np.int8, "unsafe")
    assert gnp.common_type(f32, i8) is np.common_type(h32, h8)
    assert gnp.common_type(i8) is np.common_type(h8)
    assert gnp.common_type() is np.float16
    with pytest.raises(TypeError, match="non-numeric"):
        gnp.common_type(b)
    with pytest.raises(TypeError):
        np.common_type(hb)
    assert gnp.min_scalar_type(f32) == np.min_scalar_type(h32)
    assert gnp.min_scalar_type(gnp.asarray(np.int64(300), device=backend)) == np.min_scalar_type(np.int64(300))
    assert gnp.min_scalar_type(1000) == np.min_scalar_type(1000)
    assert gnp.isscalar(f32) is False and gnp.isscalar(1.5) is True and gnp.isscalar(gnp.float32(1)) is True
    m = gnp.zeros((3, 4), device=backend)
    assert (gnp.shape(m), gnp.ndim(m), gnp.size(m), gnp.size(m, 1)) == ((3, 4), 2, 12, 4)
    assert (gnp.shape([[1, 2]]), gnp.ndim(5), gnp.size([1, 2, 3])) == ((1, 2), 0, 3)
    assert gnp.binary_repr(5, 8) == np.binary_repr(5, 8) and gnp.base_repr(255, 16) == np.base_repr(255, 16)
