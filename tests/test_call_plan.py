"""One CallPlan per (kernel, device, signature), built complete by its constructor and sealed
(issue 33, item 1; _launch.CallPlan): what a warm call needs is decided there from the
translation and the signature tokens, and nothing sets a fact of the plan afterwards. The
kernels run for real and are compared with numpy."""
from __future__ import annotations

import numpy as np
import pytest

from pygpgpu_core import gnp, registry
from pygpgpu_translate import kernel


def scale(x, out, a):
    for i in range(out.shape[0]):
        out[i] = a * x[i]


def _plan(kf, dev):
    (plan,) = [p for p in kf._plans.values() if p.device is dev]
    return plan


def test_a_plan_holds_its_signature_facts_from_its_constructor(backend):
    dev = registry.get_device(backend)
    kf = kernel(scale)
    x = np.arange(8, dtype=">f4")                  # byte-swapped: the plan's swapped positions
    out = np.zeros(8, np.float32)
    kf[backend](x, out, 3)
    np.testing.assert_array_equal(out, 3 * np.arange(8, dtype=np.float32))
    plan = _plan(kf, dev)
    assert plan.tokens[0][0] == "a" and plan.tokens[2] == "i" and plan.swapped == (0,)
    assert plan.narrow                             # 8 elements: 32-bit ids
    assert plan._memo_hit is False                 # numpy arrays are never memoized


def test_a_plan_is_sealed_after_its_constructor(backend):
    dev = registry.get_device(backend)
    kf = kernel(scale)
    x = gnp.asarray(np.arange(8, dtype=np.float32), device=dev)
    out = gnp.zeros(8, np.float32, device=dev)
    k = kf[backend]
    k(x, out, 2.0)
    plan = _plan(kf, dev)
    hit, _keep = plan._memo_hit                    # resident arrays: the memo was generated with the plan
    assert callable(hit)
    for name, value in [("narrow", False), ("int_checks", ()), ("swapped", (0,)), ("pack", []),
                        ("tokens", ()), ("program", None), ("_memo_hit", False)]:
        with pytest.raises(AttributeError, match="built complete"):
            setattr(plan, name, value)
    k(x, out, 2.0)                                 # the plan still works, and memoizes
    k(x, out, 2.0)
    assert k._memo is not None
    np.testing.assert_array_equal(np.asarray(out), 2 * np.arange(8, dtype=np.float32))


def test_the_kernel_and_its_default_view_share_one_memo(backend):
    """``k(...)`` is ``k[default](...)``: the memo check is written once (ConfiguredKernel)."""
    dev = registry.get_device(backend)
    kf = kernel(backend=backend)(scale)
    x = gnp.asarray(np.arange(8, dtype=np.float32), device=dev)
    out = gnp.zeros(8, np.float32, device=dev)
    kf(x, out, 1.0)
    kf(x, out, 1.0)
    assert kf._root._memo is not None
    (plan,) = kf._plans.values()

    def ordinary(*args, **kwargs):
        raise AssertionError("the ordinary warm path ran")

    object.__setattr__(plan, "run", ordinary)      # only a memo hit can launch now
    kf(x, out, 4.0)                                # a changed scalar: a hit, packed into a copy
    np.testing.assert_array_equal(np.asarray(out), 4 * np.arange(8, dtype=np.float32))
