"""The ufuncs of pygpgpu.numpy are one table (issue 34, item 3): the names in
``pygpgpu_core.gnp._functions.UFUNC_NAMES`` (what ``gnp.<name>`` exists for) and the device rules in
``pygpgpu_translate.array_ops._elementwise.UFUNCS`` (what the kernels compute) name the same ufuncs,
and every one of them runs on the device and agrees with numpy."""
from __future__ import annotations

import numpy as np
import pygpgpu.numpy as gnp
import pytest
from pygpgpu_core.gnp._functions import UFUNC_NAMES
from pygpgpu_translate.array_ops import _elementwise


def test_the_device_rules_name_exactly_gnps_ufuncs():
    public_rules = {name for name in _elementwise.UFUNCS if not name.startswith("__")}   # __where__, __clip__: internal
    assert public_rules == set(UFUNC_NAMES)
    assert len(set(UFUNC_NAMES)) == len(UFUNC_NAMES), "a ufunc is listed twice"
    # a special rule for a name gnp does not list would never be used: it must name a listed ufunc
    assert set(_elementwise._RULES) <= set(UFUNC_NAMES), set(_elementwise._RULES) - set(UFUNC_NAMES)


@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_each_name_is_a_numpy_ufunc_and_a_gnp_function(name):
    assert isinstance(getattr(np, name), np.ufunc), name
    assert callable(getattr(gnp, name)) and getattr(gnp, name).__name__ == name


# ufuncs defined only inside (-1, 1); every other float ufunc gets inputs in [1.1, 3] (arccosh, log, sqrt)
_UNIT_DOMAIN = {"arcsin", "arccos", "arctanh"}


def _operands(uf: np.ufunc) -> list[np.ndarray]:
    """Inputs numpy has a float64 loop for (else int64), inside the ufunc's domain."""
    rng = np.random.default_rng(len(uf.__name__))
    if any(t.startswith("d" * uf.nin + "->") for t in uf.types):
        low, high = (-0.9, 0.9) if uf.__name__ in _UNIT_DOMAIN else (1.1, 3.0)
        return [rng.uniform(low, high, 16) for _ in range(uf.nin)]
    return [rng.integers(1, 7, 16, dtype=np.int64) for _ in range(uf.nin)]


@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_each_ufunc_of_the_table_runs_on_the_device(backend, name):
    uf = getattr(np, name)
    args = _operands(uf)
    with np.errstate(all="ignore"):
        want = uf(*args)
    got = getattr(gnp, name)(*(gnp.asarray(a, device=backend) for a in args))
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got.get(), want, rtol=1e-13, equal_nan=True)
