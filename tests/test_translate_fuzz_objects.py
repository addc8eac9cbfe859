"""Differential test of values read through objects (issue 30, item 1): random float expressions
whose leaves include attributes of module-level instances at depths 1 to 3, class attributes
(read through the class and through an instance), an attribute of an object captured from the
enclosing function and a helper's default. The kernel runs on the device and the same function on
the host; then random attributes change (a leaf set, an object on the way rebound, an instance
attribute shadowing the class's) and both run again, for several rounds: the device must follow
every change, never keep a value an earlier call compiled in (fixed seeds)."""
from __future__ import annotations

import importlib.util
import random
import sys

import numpy as np
import pytest

N_EXPR = 24
ROUNDS = 4
ATTRIBUTES = ["O.a0", "O.child.a1", "O.child.child.a2", "K.c0", "I.c1", "cap.v", "scaled(x[i])"]

MODULE = '''
from pygpgpu_translate import kernel


class Node:
    pass


class K:
    c0 = {c0}
    c1 = {c1}


O = Node()
O.a0 = {a0}
O.child = Node()
O.child.a1 = {a1}
O.child.child = Node()
O.child.child.a2 = {a2}
I = K()


def scaled(v, s={s}):
    return v * s


def make():
    cap = Node()
    cap.v = {v}

    @kernel
    def fuzz_objects(x, y, out):
        for i in range(out.shape[0]):
{body}
    return cap, fuzz_objects


cap, fuzz_objects = make()
'''


def _value(rng):
    return round(rng.uniform(-3, 3), 3)


def _expr(rng, depth):
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(ATTRIBUTES + ["x[i]", "y[i]", f"{_value(rng)}"])
    p, q = _expr(rng, depth - 1), _expr(rng, depth - 1)
    kind = rng.random()
    if kind < 0.6:
        return f"({p} {rng.choice(['+', '-', '*'])} {q})"
    if kind < 0.75:
        return f"({p} / (abs({q}) + 1.0))"
    if kind < 0.9:
        return f"{rng.choice(['min', 'max'])}({p}, {q})"
    return f"({p} if {p} > {q} else {q})"


def _load(tmp_path, name, exprs, rng):
    body = "\n".join(f"            out[i, {k}] = {e}" for k, e in enumerate(exprs))
    values = {n: _value(rng) for n in ("c0", "c1", "a0", "a1", "a2", "s", "v")}
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE.format(body=body, **values))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _change(mod, rng):
    """One random change of a value the kernel reads through an object."""
    kind = rng.randrange(7)
    if kind == 0:
        mod.O.a0 = _value(rng)
    elif kind == 1:
        mod.O.child.a1 = _value(rng)
    elif kind == 2:                    # an object on the way, rebound
        child = mod.Node()
        child.a1, child.child = _value(rng), mod.Node()
        child.child.a2 = _value(rng)
        mod.O.child = child
    elif kind == 3:
        mod.K.c0 = _value(rng)
    elif kind == 4:                    # the instance shadows the class attribute (or follows it again)
        if "c1" in vars(mod.I) and rng.random() < 0.5:
            del mod.I.c1
        else:
            mod.I.c1 = _value(rng)
    elif kind == 5:
        mod.cap.v = _value(rng)
    else:
        mod.scaled.__defaults__ = (_value(rng),)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_object_attribute_reads_follow_every_change(tmp_path, backend, seed):
    rng = random.Random(300 + seed)
    exprs = [_expr(rng, 3) for _ in range(N_EXPR)]
    mod = _load(tmp_path, f"fuzz_objects_{seed}", exprs, rng)
    k = mod.fuzz_objects
    data = np.random.default_rng(seed)
    x = data.uniform(-2, 2, 32).astype(np.float32)
    y = data.uniform(-2, 2, 32).astype(np.float32)
    for round_ in range(ROUNDS):
        out = np.zeros((len(x), N_EXPR), np.float32)
        k[backend](x, y, out)
        want = np.zeros_like(out)
        k.py_func(x, y, want)
        for j, e in enumerate(exprs):
            np.testing.assert_allclose(out[:, j], want[:, j], rtol=2e-4, atol=2e-4,
                                       err_msg=f"round {round_}: {e}")
        for _ in range(rng.randint(1, 3)):
            _change(mod, rng)
