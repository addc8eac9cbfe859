"""The read/write analysis (pygpgpu_translate._access) sees arrays used only in an ``else`` or an
``elif`` branch: read there, they are uploaded; written there, they are read back. Checked on the
analysis itself (``inspect().access``) and on the results, compared with the function run on the
host."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_translate import kernel


def only_in_else(flag, a, out_if, out_else):
    for i in range(flag.shape[0]):
        if flag[i] > 0:
            out_if[i] = 1.0
        else:
            out_else[i] = a[i] * 2.0


def only_in_elif(flag, a, b, out_if, out_elif):
    for i in range(flag.shape[0]):
        if flag[i] > 1:
            out_if[i] = 3.0
        elif flag[i] > 0:
            out_elif[i] = a[i] + b[i]


def in_nested_else(flag, a, out):
    for i in range(flag.shape[0]):
        if flag[i] > 1:
            pass
        else:
            if flag[i] > 0:
                pass
            else:
                out[i] = a[i] - 1.0


CASES = {
    only_in_else: {"flag": "read", "a": "read", "out_if": "write", "out_else": "write"},
    only_in_elif: {"flag": "read", "a": "read", "b": "read", "out_if": "write", "out_elif": "write"},
    in_nested_else: {"flag": "read", "a": "read", "out": "write"},
}


def _args(func, n=9):
    names = list(CASES[func])
    out = []
    for name in names:
        if name == "flag":
            out.append(np.arange(n, dtype=np.int32) % 3)
        elif name in ("a", "b"):
            out.append(np.arange(n, dtype=np.float32) + (10 if name == "b" else 1))
        else:
            out.append(np.full(n, -5.0, np.float32))
    return out


@pytest.mark.parametrize("func", list(CASES), ids=lambda f: f.__name__)
def test_branch_only_arrays_are_in_the_analysis(func):
    assert kernel(func).inspect(*_args(func), backend="opencl").access == CASES[func]


@pytest.mark.parametrize("func", list(CASES), ids=lambda f: f.__name__)
def test_branch_only_arrays_reach_the_device_and_come_back(func, backend):
    host = _args(func)
    func(*host)
    dev = _args(func)
    kernel(func)[backend](*dev)
    for name, want, got in zip(CASES[func], host, dev):
        np.testing.assert_array_equal(got, want, err_msg=name)
