"""A kernel pickled by value (defined in a function, ``__main__``, a notebook cell) keeps the
options it was decorated with: ``debug`` (its bounds checks still raise after unpickling),
``fastmath``, ``contract``, ``default_float`` and ``backend``. The unpickling process keeps one kernel per
(payload, sources, options): each option is part of that key, so the same function pickled
with another option is another kernel, and the same pickle twice is one."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from pygpgpu_translate import kernel

pytest.importorskip("cloudpickle")

BASE = {"debug": False, "fastmath": False, "contract": True, "default_float": "float32", "backend": None}
CHANGED = {"debug": True, "fastmath": True, "contract": False, "default_float": "float64", "backend": "opencl"}


def _make(**options):
    @kernel(**options)
    def shifted_copy(x, out, k):
        for i in range(out.shape[0]):
            out[i] = x[i + k]
    return shifted_copy


def _observed(k) -> dict:
    return {"debug": k.debug, "fastmath": k.fastmath, "contract": k.contract, "default_float": k.default_float.name,
            "backend": k.backend}


@pytest.fixture
def fresh_process(monkeypatch):
    """Unpickle as a process that has not unpickled these kernels before."""
    from pygpgpu_translate import _pickling
    monkeypatch.setattr(_pickling, "_by_value", {})


@pytest.mark.parametrize("option", sorted(CHANGED))
def test_each_option_survives_pickling_by_value_and_is_part_of_the_key(fresh_process, option):
    base = _make(**BASE)
    changed = _make(**{**BASE, option: CHANGED[option]})
    back_base = pickle.loads(pickle.dumps(base))
    back_changed = pickle.loads(pickle.dumps(changed))
    assert _observed(back_base) == _observed(base) == BASE
    assert _observed(back_changed) == _observed(changed) == {**BASE, option: CHANGED[option]}
    assert back_changed is not back_base                     # another option: a miss
    assert pickle.loads(pickle.dumps(base)) is back_base     # nothing changed: a hit


def test_an_unpickled_debug_kernel_still_checks_bounds(fresh_process, backend):
    k = pickle.loads(pickle.dumps(_make(debug=True)))
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(6, np.float32)
    k[backend](x, out, 2)
    np.testing.assert_array_equal(out, x[2:])
    with pytest.raises(IndexError, match="index 8 is out of bounds for axis 0 with size 8"):
        k[backend](x, out, 3)                             # out[5] = x[8]
