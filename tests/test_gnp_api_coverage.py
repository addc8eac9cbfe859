"""Every numpy name CuPy has is in gnp or says what to use instead (issue 32): the names of
``_not_implemented.NOT_IMPLEMENTED`` raise NotImplementedError (called, indexed or read from), and
the shorthands (numpy's other names for gnp functions) match numpy on real kernels."""
from __future__ import annotations

import numpy as np
import pygpgpu
import pygpgpu.numpy as gnp
import pytest
from pygpgpu_core.gnp import _not_implemented
from pygpgpu_core.gnp._not_implemented import NOT_IMPLEMENTED, NotInGnp


@pytest.mark.parametrize("name", sorted(NOT_IMPLEMENTED))
def test_missing_names_say_what_to_use_instead(name):
    assert hasattr(np, name), f"{name} is not a numpy name"
    stub = getattr(gnp, name)
    if not isinstance(stub, NotInGnp):
        pytest.fail(f"gnp.{name} is implemented now: remove it from NOT_IMPLEMENTED")
    for use in (lambda: stub(1), lambda: stub[0:3], lambda: stub.anything):
        with pytest.raises(NotImplementedError, match=rf"gnp\.{name} .*; use \S"):
            use()
    import pygpgpu_core.gnp as core_gnp
    assert name in core_gnp.__all__


def test_stubs_never_replace_what_gnp_defines():
    assert isinstance(gnp.sum, type(gnp.sqrt)) and not isinstance(gnp.gradient, NotInGnp)
    defined = {"vectorize": object()}
    assert "vectorize" not in _not_implemented.stubs_for_missing(defined)
    assert "piecewise" in _not_implemented.stubs_for_missing(defined)


def test_stubs_stay_out_of_introspection():
    import copy
    stub = gnp.vectorize
    assert not hasattr(stub, "__wrapped__")
    assert copy.copy(stub) is not None
    assert "vectorize" in repr(stub)


def check(got, want):
    assert isinstance(got, gnp.ndarray), type(got)
    want = np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got.get(), want)


HOST = np.array([[0.0, 1.5, -np.inf], [np.inf, np.nan, -2.5]])


def test_shorthands_match_numpy(backend):
    g = gnp.asarray(HOST, device=backend)
    check(gnp.concat([g, g], axis=1), np.concat([HOST, HOST], axis=1))
    check(gnp.permute_dims(g, (1, 0)), np.permute_dims(HOST, (1, 0)))
    check(gnp.matrix_transpose(g), np.matrix_transpose(HOST))
    with pytest.raises(ValueError, match="at least 2-dimensional"):
        gnp.matrix_transpose(g[0])
    with pytest.warns(DeprecationWarning):          # (deprecated in numpy 2, as gnp says too)
        check(gnp.row_stack([g[0], g[1]]), np.vstack([HOST[0], HOST[1]]))
    for name in ("isposinf", "isneginf", "fix", "flatnonzero", "argwhere", "iscomplex", "isreal"):
        check(getattr(gnp, name)(g), getattr(np, name)(HOST))
        check(getattr(np, name)(g), getattr(np, name)(HOST))
    ints = np.arange(-3, 9, dtype=np.int16).reshape(3, 4)
    gi = gnp.asarray(ints, device=backend)
    for name in ("fix", "flatnonzero", "argwhere", "isposinf"):
        check(getattr(gnp, name)(gi), getattr(np, name)(ints))
    check(gnp.argwhere(gnp.asarray(np.array(3), device=backend)), np.argwhere(np.array(3)))
    q, r = gnp.divmod(gi, 4)
    wq, wr = np.divmod(ints, 4)
    check(q, wq)
    check(r, wr)
    assert gnp.iscomplexobj(g) is np.iscomplexobj(HOST) is False
    assert gnp.isrealobj(g) is np.isrealobj(HOST) is True
    assert gnp.array_equiv(gi, gi[1] * 0 + gi) is np.array_equiv(ints, ints)
    assert gnp.array_equiv(gi[0], gi) == np.array_equiv(ints[0], ints)
    assert gnp.array_equiv(gi[:, :2], gi) == np.array_equiv(ints[:, :2], ints)
    check(gnp.diagflat(gi[:2, :2], -1), np.diagflat(ints[:2, :2], -1))
    f = gnp.asfortranarray(gi)
    check(f, np.asfortranarray(ints))
    assert gnp.isfortran(f) is np.isfortran(np.asfortranarray(ints)) is True
    assert gnp.isfortran(gi) is False
    with pygpgpu.device(backend):
        check(gnp.asanyarray([1, 2]), np.asanyarray([1, 2]))
        check(gnp.diagflat([1, 2]), np.diagflat([1, 2]))


def test_numpys_aliases_keep_their_full_signatures(backend):
    # numpy 2's np.concat is np.concatenate and np.permute_dims is np.transpose: one dispatch entry each
    g = gnp.asarray(np.arange(6.0).reshape(2, 3), device=backend)
    out = gnp.zeros((4, 3), np.float32, device=backend)
    assert np.concat([g, g], out=out, casting="same_kind") is out
    check(out, np.concatenate([np.arange(6.0).reshape(2, 3)] * 2).astype(np.float32))
    check(np.permute_dims(g, (1, 0)), np.arange(6.0).reshape(2, 3).T)
