"""gnp.cross against numpy: 3-component vectors along any axes, broadcast stacks, empty stacks,
numpy's deprecated 2-component vectors (with its DeprecationWarning), mixed dtypes and numpy's
errors. Real kernels on each backend of the run."""
from __future__ import annotations

import warnings

import numpy as np
import pygpgpu.numpy as gnp
import pytest

PARAMS = [((3,), (3,), -1, -1, -1), ((1, 3), (1, 3), 1, -1, -1), ((2, 4, 5, 3), (2, 4, 5, 3), -1, -1, 0),
          ((4, 1, 3), (5, 3), -1, -1, -1), ((0, 3), (0, 3), -1, -1, -1), ((3, 0, 2), (3, 0, 2), 0, 0, 0)]
DEPRECATED = [((1, 2), (1, 2), -1, -1, 1), ((1, 2), (1, 3), -1, -1, 1), ((2, 2), (1, 3), -1, -1, 0),
              ((3, 3), (1, 2), 0, -1, -1), ((2, 4, 5, 2), (2, 4, 5, 2), 0, 0, -1),
              ((2, 0, 3), (2, 0, 3), 0, 0, 0)]
DTYPES = [("float32", "float32"), ("int32", "float64"), ("uint8", "int8"), ("int64", "int64"), ("uint16", "uint16"),
          ("bool", "int32")]


def operands(sa, sb, da, db):
    a = (np.arange(int(np.prod(sa))) % 7 + 1).reshape(sa).astype(da)
    b = (np.arange(int(np.prod(sb))) % 5 + 2).reshape(sb).astype(db)
    return a, b


def check(got, want):
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got.get(), want)


@pytest.mark.parametrize("params", PARAMS, ids=str)
@pytest.mark.parametrize("dtypes", DTYPES, ids=str)
def test_cross_of_three_component_vectors(backend, params, dtypes):
    sa, sb, axa, axb, axc = params
    a, b = operands(sa, sb, *dtypes)
    check(gnp.cross(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend), axa, axb, axc),
          np.cross(a, b, axa, axb, axc))


@pytest.mark.parametrize("params", DEPRECATED, ids=str)
@pytest.mark.parametrize("dtypes", DTYPES[:3], ids=str)
def test_cross_of_two_component_vectors_warns_as_numpy(backend, params, dtypes):
    sa, sb, axa, axb, axc = params
    a, b = operands(sa, sb, *dtypes)
    if np.lib.NumpyVersion(np.__version__) >= "2.5.0.dev0":   # numpy 2.5 removed what 2.0 deprecated
        with pytest.raises(ValueError) as want_error:
            np.cross(a, b, axa, axb, axc)
        with pytest.raises(ValueError) as got_error:
            gnp.cross(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend), axa, axb, axc)
        assert str(got_error.value) == str(want_error.value)
        return
    with pytest.warns(DeprecationWarning):
        want = np.cross(a, b, axa, axb, axc)
    with pytest.warns(DeprecationWarning):
        got = gnp.cross(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend), axa, axb, axc)
    check(got, want)


def test_cross_axis_sets_all_three(backend):
    a, b = operands((3, 4), (3, 4), "float64", "float64")
    check(gnp.cross(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend), axis=0), np.cross(a, b, axis=0))


@pytest.mark.parametrize("case", ["4 components", "bool x bool", "axisc out of range"])
def test_cross_raises_numpys_errors(backend, case):
    sa, sb, da, kw = {"4 components": ((4,), (3,), "float32", {}), "bool x bool": ((3,), (3,), "bool", {}),
                      "axisc out of range": ((3,), (3,), "float32", {"axisc": 2})}[case]
    a, b = operands(sa, sb, da, da)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(Exception) as want:
            np.cross(a, b, **kw)
        with pytest.raises(want.type):
            gnp.cross(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend), **kw)


def test_two_component_vectors_raise_as_numpy_2_5_does(backend, monkeypatch):
    # numpy 2.5 turned 2.0's deprecation into this ValueError; gnp follows the numpy installed beside it
    from pygpgpu_core.gnp import _cross
    monkeypatch.setattr(_cross, "_TWO_COMPONENTS_REMOVED", True)
    a, b = operands((4, 2), (4, 3), "float32", "float32")
    with pytest.raises(ValueError, match="but they are 2 and 3 dimensional instead"):
        gnp.cross(gnp.asarray(a, device=backend), gnp.asarray(b, device=backend))
