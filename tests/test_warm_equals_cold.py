"""Every fast path answers as the full path does: the same inputs give the same results, the same
refusals (exception type and message) and warnings on the first call, cold, and on the hundredth, warm, when a
valid call with the same types ran in between (which is what fills a fast path's cache). Fast paths:

- gnp's elementwise fast path (array_ops/_elementwise._fast_call), compared with numpy;
- the launch memo of a configured @kernel (_memo.py), the ordinary warm path under it (the plan
  found by argument tokens: with the memo off, and with numpy arguments), and under both the
  native launcher where it is built (``pygpgpu build-native``), else the Python one, compared with
  the function run on the host;
and table-driven key tests of the memo and of the elementwise fast path: each field changed alone
misses, nothing changed hits."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from pygpgpu_core import gnp, registry
from pygpgpu_core.backend import native as _native
from pygpgpu_translate import kernel
from pygpgpu_translate.array_ops import _elementwise

CALLS = 100


def _outcome(fn, warned=None):
    """``("ok", array)`` or ``("raised", type, message)``; the messages of the warnings it gave
    (numpy's floating-point ones included: a conversion a fast path makes may warn where the full
    path does not) are appended to ``warned``."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
    except Exception as exc:      # the refusal itself is what is compared
        return ("raised", type(exc), str(exc))
    finally:
        if warned is not None:
            warned.extend(f"{w.category.__name__}: {w.message}" for w in caught)
    return ("ok", np.asarray(value.get() if hasattr(value, "get") else value))


def _same(got, want, what, first=None, words=True):
    """``got`` matches the host's ``want`` (a refusal: with ``words``, the same type and numpy's words
    within gnp's, which may name the operation; a kernel refuses before launching in its own words,
    a ValueError where the host's loop meets an IndexError) and, warm, the first call's ``first``
    exactly."""
    assert got[0] == want[0], f"{what}: {got[:3]} where the host gives {want[:3]}"
    if want[0] == "raised":
        assert not words or (got[1] is want[1] and want[2] in got[2]), f"{what}: {got[1:]} where numpy gives {want[1:]}"
        if first is not None:
            assert got[1:] == first[1:], f"{what}: warm {got[1:]}, cold {first[1:]}"
    else:
        assert got[1].dtype == want[1].dtype and got[1].shape == want[1].shape, what
        np.testing.assert_array_equal(got[1], want[1], err_msg=what)


def _operands(m, device=None):
    up = (lambda a: gnp.asarray(a, device=device)) if m is gnp else (lambda a: a)
    ro = up(np.zeros((3, 4), np.float32))
    ro.flags.writeable = False
    return {
        "i8": up(np.array([-100, -1, 0, 1, 100, 127], np.int8)),
        "u8": up(np.array([0, 1, 2, 250, 255, 7], np.uint8)),
        "i32": up(np.arange(-3, 3, dtype=np.int32)),
        "f32": up(np.linspace(-2, 3, 6, dtype=np.float32)),
        "m34": up(np.arange(12, dtype=np.float32).reshape(3, 4)),
        "v4": up(np.arange(4, dtype=np.float32)),
        "ro": ro,
    }


# name -> (probe, companion): the probe is compared cold and warm; the companion is a valid call
# with the probe's operand types (and out dtype), which fills the fast path's cache
ELEMENTWISE = {
    "int8_plus_int_past_int8": (lambda m, a: a["i8"] + 300, lambda m, a: a["i8"] + 3),
    "int8_plus_int_that_wraps": (lambda m, a: a["i8"] + 100, lambda m, a: a["i8"] + 3),
    "uint8_minus_a_negative_int": (lambda m, a: a["u8"] - (-1), lambda m, a: a["u8"] - 1),
    "int32_below_an_int_past_int32": (lambda m, a: a["i32"] < 2**40, lambda m, a: a["i32"] < 2),
    "float32_plus_a_float_past_float32": (lambda m, a: a["f32"] + 1e39, lambda m, a: a["f32"] + 1.5),
    "float32_times_nan": (lambda m, a: a["f32"] * float("nan"), lambda m, a: a["f32"] * 1.5),
    "int32_plus_a_huge_int": (lambda m, a: a["i32"] + 2**70, lambda m, a: a["i32"] + 2),
    "broadcast_row": (lambda m, a: a["m34"] + a["v4"], lambda m, a: a["m34"] + a["m34"]),
    "broadcast_column": (lambda m, a: a["v4"][:3, None] * a["m34"], lambda m, a: a["m34"] * a["m34"]),
    "out_read_only": (lambda m, a: np.add(a["m34"], 1.0, out=a["ro"]),
                      lambda m, a: np.add(a["m34"], 1.0, out=a["m34"].copy())),
    "out_of_another_shape": (lambda m, a: np.add(a["v4"], 1.0, out=a["m34"]),
                             lambda m, a: np.add(a["m34"], 1.0, out=a["m34"].copy())),
    "numpy_scalar_past_int8": (lambda m, a: a["i8"] + np.int16(300), lambda m, a: a["i8"] + np.int16(3)),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_gnp_elementwise_fast_path_warm_equals_cold(backend, name, monkeypatch):
    monkeypatch.setattr(_elementwise, "_fast", {})           # cold: nothing remembered
    probe, companion = ELEMENTWISE[name]
    want = _outcome(lambda: probe(np, _operands(np)))
    want_companion = _outcome(lambda: companion(np, _operands(np)))
    dev = registry.get_device(backend)
    cold_warnings: list = []
    first = _outcome(lambda: probe(gnp, _operands(gnp, dev)), cold_warnings)
    _same(first, want, f"{name}, call 1")
    for call in range(1, CALLS + 1):
        if call > 1:
            warned: list = []
            _same(_outcome(lambda: probe(gnp, _operands(gnp, dev)), warned), want, f"{name}, call {call}", first)
            assert warned == cold_warnings, f"{name}, call {call}: warm warnings {warned}, cold {cold_warnings}"
        _same(_outcome(lambda: companion(gnp, _operands(gnp, dev))), want_companion,
              f"{name} (companion), call {call}")
    if want_companion[0] == "ok":
        assert _elementwise._fast, "the companion never reached the fast path: nothing was tested warm"


# ---- the launch memo (and the native launcher under it) ------------------------------------------

def add_small(x, c):
    for i in range(x.shape[0]):
        x[i] = x[i] + c


def copy_in(x, out):
    for i in range(out.shape[0]):
        out[i] = x[i]


def first_n(x, out, n):
    for i in range(n):
        out[i] = x[i] * 2


def _host_copy(a):
    if not isinstance(a, np.ndarray):
        return a
    c = a.copy()
    c.flags.writeable = a.flags.writeable
    return c


def _host_outcome(func, args):
    args = [_host_copy(a) for a in args]
    out = _outcome(lambda: func(*args))
    return out if out[0] == "raised" else ("ok", np.concatenate([np.ravel(a) for a in args
                                                                 if isinstance(a, np.ndarray)]))


def _is_array(a) -> bool:
    return isinstance(a, np.ndarray) or hasattr(a, "get")


def _values(arrays) -> np.ndarray:
    return np.concatenate([np.ravel(a.get() if hasattr(a, "get") else a) for a in arrays])


def _call_args(args, dev, path):
    """The arguments as the call passes them: gnp arrays on ``dev``, or numpy arrays (copies)."""
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            g = _host_copy(a) if path == "numpy_arguments" else gnp.asarray(a, device=dev)
            g.flags.writeable = a.flags.writeable
            out.append(g)
        else:
            out.append(a)
    return out


def _ro(a):
    a = a.copy()
    a.flags.writeable = False
    return a


I8 = np.array([1, 2, 3, -4], np.int8)
F32 = np.arange(8, dtype=np.float32)
# name -> (function, probe arguments, companion arguments: valid, same types)
MEMO = {
    "int_past_int8": (add_small, (I8, 300), (I8, 3)),
    "int_past_int32": (add_small, (I8, 2**40), (I8, 3)),
    "negative_int_fits": (add_small, (I8, -100), (I8, 3)),
    "float_for_an_int8_array": (add_small, (I8, 1.5), (I8, 2.5)),
    "read_only_written": (add_small, (_ro(I8), 1), (I8, 1)),
    "shorter_input": (copy_in, (F32[:4], np.zeros(8, np.float32)), (F32, np.zeros(8, np.float32))),
    "work_size_past_the_array": (first_n, (F32, np.zeros(8, np.float32), 9), (F32, np.zeros(8, np.float32), 8)),
}


@pytest.mark.parametrize("path", ["memo", "plan_warm_path", "numpy_arguments"])
@pytest.mark.parametrize("name", sorted(MEMO))
def test_launch_memo_warm_equals_cold(backend, name, path, monkeypatch):
    """``memo``: resident gnp arrays, the companion's call kept by the memo; ``plan_warm_path``: the
    memo switched off, the warm path's plan lookup by argument tokens; ``numpy_arguments``: host
    arrays (never memoized) through the warm path. The launcher under them is the native one where
    it is built (``pygpgpu build-native``), else the Python one (it is chosen when a program's
    launcher is made, once per process: ``PYGPGPU_NATIVE=0`` set here would not reach a kernel
    another test built)."""
    from pygpgpu_translate import _memo
    if path == "plan_warm_path":
        monkeypatch.setattr(_memo, "ENABLED", False)
    func, probe, companion = MEMO[name]
    dev = registry.get_device(backend)
    kf = kernel(func)
    k = kf[backend]
    want, want_companion = _host_outcome(func, probe), _host_outcome(func, companion)
    comp_args = _call_args(companion, dev, path)   # the same objects every call: a call the memo keeps
    first = None
    for call in range(1, CALLS + 1):
        args = _call_args(probe, dev, path)
        got = _outcome(lambda: k(*args))
        if got[0] == "ok":
            got = ("ok", _values([a for a in args if _is_array(a)]))
        _same(got, want, f"{name}, call {call}", first, words=False)
        first = first or got
        for g, a in zip([g for g in comp_args if _is_array(g)], [a for a in companion if isinstance(a, np.ndarray)]):
            g[...] = a
        got = _outcome(lambda: k(*comp_args))
        if got[0] == "ok":
            got = ("ok", _values([g for g in comp_args if _is_array(g)]))
        _same(got, want_companion, f"{name} (companion), call {call}", words=False)
    assert (k._memo is not None) == (path == "memo"), "the memo kept the companion's call or not, as expected"
    assert kf._plans, "no plan: nothing ran warm"
    launchers = {hasattr(p.launcher, "python") for p in kf._plans.values()}   # the native one keeps its fallback
    assert launchers == {_native.load() is not None}, launchers


# ---- the memo's key: each input of its check changed alone misses ------------------------------------

def axpy(x, out, a):
    for i in range(out.shape[0]):
        out[i] = out[i] + a * x[i]


MEMO_KEY = {
    "nothing": lambda x, out, a: (x, out, a),
    "x_buffer": lambda x, out, a: (x.copy(), out, a),
    "x_shape": lambda x, out, a: (x.reshape(2, 8)[0], out[:8], a),
    "x_dtype": lambda x, out, a: (x.astype(np.float64), out, a),
    "out_buffer": lambda x, out, a: (x, out.copy(), a),
    "scalar_type": lambda x, out, a: (x, out, np.float64(a)),
    "arrays_swapped": lambda x, out, a: (out, x, a),
}


@pytest.mark.parametrize("field", list(MEMO_KEY))
def test_launch_memo_key(backend, field, monkeypatch):
    dev = registry.get_device(backend)
    kf = kernel(axpy)
    k = kf[backend]
    x = gnp.asarray(np.arange(16, dtype=np.float32), device=dev)
    out = gnp.zeros(16, np.float32, device=dev)
    k(x, out, 1.0)
    k(x, out, 1.0)
    assert k._memo is not None
    (plan,) = [p for p in kf._plans.values() if p.device is dev]
    ordinary = []
    real_run = plan.run

    def counted(*args, **kwargs):
        ordinary.append(1)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(plan, "run", counted)
    args = MEMO_KEY[field](x, out, 1.0)
    want = np.asarray(args[1]).copy() + 1.0 * np.asarray(args[0])[:np.asarray(args[1]).shape[0]]
    k(*args)
    np.testing.assert_allclose(np.asarray(args[1]), want)
    took_ordinary = bool(ordinary) or len(kf._plans) > 1
    assert took_ordinary == (field != "nothing"), f"{field}: {'a miss' if took_ordinary else 'a hit'}"


# ---- the elementwise fast path's key: (operation, operand types, out dtype, device, context) ---------

FAST_KEY = {
    "nothing": lambda m, a: m.add(a["f32"], 1.5),
    "operation": lambda m, a: m.subtract(a["f32"], 1.5),
    "array_dtype": lambda m, a: m.add(a["f32"].astype(np.float64), 1.5),
    "scalar_type": lambda m, a: m.add(a["f32"], 2),
    "numpy_scalar_type": lambda m, a: m.add(a["f32"], np.float64(1.5)),
    "operand_order": lambda m, a: m.add(1.5, a["f32"]),
    "out_dtype": lambda m, a: m.add(a["f32"], 1.5, out=m.zeros(6, np.float64) if m is np else
                                    gnp.zeros(6, np.float64, device=a["f32"].device)),
}


@pytest.mark.parametrize("field", list(FAST_KEY))
def test_gnp_elementwise_fast_path_key(backend, field, monkeypatch):
    """Each field of the key changed alone is a miss (the full path runs and remembers a new entry,
    and the result is numpy's); nothing changed is a hit (no new entry)."""
    monkeypatch.setattr(_elementwise, "_fast", {})
    dev = registry.get_device(backend)
    a = _operands(gnp, dev)
    np.testing.assert_array_equal(gnp.add(a["f32"], 1.5).get(), np.add(_operands(np)["f32"], 1.5))
    assert len(_elementwise._fast) == 1
    got = FAST_KEY[field](gnp, a)
    want = FAST_KEY[field](np, _operands(np))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)
    assert len(_elementwise._fast) == (1 if field == "nothing" else 2), field
