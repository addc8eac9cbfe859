"""Loop starts and ``if`` guards that prove an index such as ``y - 1`` non-negative (issue 17,
item 5): the generated source carries no negative-index wrap for them (pygpgpu_translate._signs,
``guard_bounds`` and ``lower_bound``), still wraps where the guard proves less, and every kernel
computes what the same function computes on the host (where Python reads a negative index from
the end)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from pygpgpu_translate import kernel

WRAP = re.compile(r"< 0\) \?")       # ((i < 0) ? (i + n) : i), the emitted wrap


# ---- proven: no wrap ------------------------------------------------------------------------------
@kernel
def stencil_else(u, out):
    for y, x in np.ndindex(out.shape):
        if y == 0 or x == 0 or y == out.shape[0] - 1 or x == out.shape[1] - 1:
            out[y, x] = u[y, x]
        else:                                   # y != 0 and x != 0, both >= 0: y - 1, x - 1 >= 0
            out[y, x] = 0.25 * (u[y - 1, x] + u[y + 1, x] + u[y, x - 1] + u[y, x + 1])


@kernel
def inner_loop_from_one(u, out):
    for x in range(out.shape[1]):
        for y in range(1, out.shape[0] - 1):
            out[y, x] = u[y - 1, x] + u[y + 1, x]


@kernel
def domain_from_two(x, out):
    for i in range(2, out.shape[0]):
        out[i] = x[i - 1] + x[i - 2]


@kernel
def guard_greater(x, out):
    for i in range(out.shape[0]):
        if i > 0:
            out[i] = x[i - 1]


@kernel
def guard_at_least(x, out):
    for i in range(out.shape[0]):
        if i >= 3:
            out[i] = x[i - 3] + x[i - 2]


@kernel
def guard_flipped_and_chained(x, out):
    for i in range(out.shape[0]):
        if 0 < i < out.shape[0] - 1:
            out[i] = x[i - 1] + x[i + 1]


@kernel
def guard_conjunction_and_elif(x, out, k):
    for i in range(out.shape[0]):
        if i >= 2 and k > 0:
            out[i] = x[i - 2] + x[k - 1]        # a scalar argument proven positive too
        elif i == 0:
            out[i] = x[i]
        else:                                   # i >= 0, i != 0: i >= 1 here
            out[i] = x[i - 1]


@kernel
def else_of_less_than(x, out):
    for i in range(out.shape[0]):
        if i < 1:
            out[i] = 0.0
        else:
            out[i] = x[i - 1]


@kernel
def flat_wrapped_sum(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i + i + 1] - x[i + i]         # one flat unsigned chain: (uint)i + (uint)i + 1u


PROVEN = [flat_wrapped_sum, stencil_else, inner_loop_from_one, domain_from_two, guard_greater, guard_at_least,
          guard_flipped_and_chained, guard_conjunction_and_elif, else_of_less_than]


# ---- not proven: the wrap stays (and matters: these read negative indices) -----------------------
@kernel
def else_of_guard(x, out):
    for i in range(out.shape[0]):
        if i > 0:
            out[i] = 1.0
        else:                                   # i <= 0: i - 1 is -1
            out[i] = x[i - 1]


@kernel
def guard_too_weak(x, out):
    for i in range(out.shape[0]):
        if i > 0:
            out[i] = x[i - 2]                   # i = 1 reads x[-1]


@kernel
def guard_at_least_zero(x, out):
    for i in range(out.shape[0]):
        if i >= 0:
            out[i] = x[i - 1]


@kernel
def loop_from_zero(u, out):
    for x in range(out.shape[1]):
        for y in range(0, out.shape[0]):
            out[y, x] = u[y - 1, x]


@kernel
def guard_then_reassigned(x, out):
    for i in range(out.shape[0]):
        j = i
        if j > 0:
            j = j - 3
            out[i] = x[j - 1]                   # j was reassigned after the test


@kernel
def guard_disjunction(x, out, k):
    for i in range(out.shape[0]):
        if i > 0 or k > 0:                      # either may hold alone
            out[i] = x[i - 1]


@kernel
def not_equal_unknown_sign(x, out, k):
    for i in range(out.shape[0]):
        if k != 0:                              # k may be negative
            out[i] = x[k - 1] + x[i]


@kernel
def negated_guard(x, out):
    for i in range(out.shape[0]):
        if not i > 0:
            out[i] = x[i - 1]


@kernel
def loop_downwards(x, out):
    for i in range(out.shape[0]):
        acc = 0.0
        for j in range(3, -3, -1):
            acc += x[j - 1]
        out[i] = acc


WRAPPED = [else_of_guard, guard_too_weak, guard_at_least_zero, loop_from_zero, guard_then_reassigned,
           guard_disjunction, not_equal_unknown_sign, negated_guard, loop_downwards]


def _args(k, n=12):
    x = np.arange(1, 41, dtype=np.float32) * 1.5
    if k in (stencil_else, inner_loop_from_one, loop_from_zero):
        u = np.arange(1, n * n + 1, dtype=np.float32).reshape(n, n)
        return (u, np.zeros_like(u))
    out = np.zeros(n, np.float32)
    if k in (guard_conjunction_and_elif, guard_disjunction):
        return (x, out, 2)
    if k is not_equal_unknown_sign:
        return (x, out, -3)
    return (x, out)


@pytest.mark.parametrize("k", PROVEN, ids=lambda k: k.__name__)
def test_proven_indices_have_no_wrap(k):
    for backend in ("opencl", "cuda"):
        source = k.inspect(*_args(k), backend=backend).source
        assert not WRAP.findall(source), f"{k.__name__} ({backend}) still wraps:\n{source}"


@pytest.mark.parametrize("k", WRAPPED, ids=lambda k: k.__name__)
def test_unproven_indices_keep_the_wrap(k):
    source = k.inspect(*_args(k), backend="opencl").source
    assert WRAP.findall(source), f"{k.__name__} lost its wrap:\n{source}"


@pytest.mark.parametrize("k", PROVEN + WRAPPED, ids=lambda k: k.__name__)
def test_results_match_python(backend, k):
    args = _args(k)
    want = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    k.py_func(*want)
    k[backend](*args)
    np.testing.assert_array_equal(args[1], want[1], err_msg=k.__name__)


def test_wrapped_cases_do_read_negative_indices():
    """The WRAPPED kernels are meaningful: run on the host, each reads some index below zero."""
    class Recording(np.ndarray):
        def __getitem__(self, item):
            idx = item if isinstance(item, tuple) else (item,)
            if any(isinstance(v, (int, np.integer)) and v < 0 for v in idx):
                Recording.negative = True
            return super().__getitem__(item)

    for k in WRAPPED:
        Recording.negative = False
        args = list(_args(k))
        args[0] = args[0].view(Recording)
        k.py_func(*args)
        assert Recording.negative, k.__name__
