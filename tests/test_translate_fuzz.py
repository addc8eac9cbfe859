"""Differential test: random integer and float expressions, translated and run on the device,
against the same Python function run on the host over numpy scalars (fixed seed).

Integer results must match exactly (Python floor division/modulo, wrap-around like numpy,
division by zero giving 0 like numpy); float results within float32 rounding.
"""
from __future__ import annotations

import importlib.util
import random
import sys

import numpy as np
import pytest

N_EXPR = 40


def _int_expr(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        # the index enters as a numpy int32 so host division by zero behaves like numpy (gives 0)
        return rng.choice(["a[i]", "b[i]", "c[i]", str(rng.randint(-9, 9)), "(a[i] - a[i] + i)"])
    kind = rng.random()
    x, y = _int_expr(rng, depth - 1), _int_expr(rng, depth - 1)
    if kind < 0.55:
        op = rng.choice(["+", "-", "*", "//", "%", "&", "|", "^"])
        return f"({x} {op} {y})"
    if kind < 0.65:
        return f"({x} {rng.choice(['<<', '>>'])} {rng.randint(0, 4)})"
    if kind < 0.75:
        return f"{rng.choice(['abs', '-', '~'])}({x})" if rng.random() < 0.6 else f"({x}) ** {rng.randint(0, 3)}"
    if kind < 0.88:
        return f"{rng.choice(['min', 'max'])}({x}, {y})"
    cmp = rng.choice(["<", "<=", ">", ">=", "==", "!="])
    return f"({x} if {y} {cmp} {_int_expr(rng, 0)} else {_int_expr(rng, depth - 1)})"


def _float_expr(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(["x[i]", "y[i]", f"{rng.uniform(-3, 3):.3f}", "a[i]"])
    kind = rng.random()
    p, q = _float_expr(rng, depth - 1), _float_expr(rng, depth - 1)
    if kind < 0.5:
        return f"({p} {rng.choice(['+', '-', '*'])} {q})"
    if kind < 0.6:
        return f"({p} / (abs({q}) + 1.0))"
    if kind < 0.7:
        return f"math.sqrt(abs({p}))" if rng.random() < 0.5 else f"math.exp(-abs({p}))"
    if kind < 0.8:
        return f"{rng.choice(['min', 'max'])}({p}, {q})"
    if kind < 0.9:
        return f"({p}) ** 2"
    cmp = rng.choice(["<", ">"])
    return f"({p} if {p} {cmp} {q} and {q} > -1.0 else {q})"


def _module(tmp_path, name, lines, kind):
    body = "\n".join(f"        out[i, {k}] = {e}" for k, e in enumerate(lines))
    src = (f"import math\nfrom pygpgpu_translate import kernel\n\n\n@kernel\ndef fuzz_{kind}(a, b, c, x, y, out):\n"
           f"    for i in range(out.shape[0]):\n{body}\n")
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, f"fuzz_{kind}")


def _inputs(n=64):
    rng = np.random.default_rng(7)
    a = rng.integers(-20, 21, n).astype(np.int32)
    b = rng.integers(-20, 21, n).astype(np.int32)
    c = np.array([0, -1, 2**31 - 1, -2**31] * (n // 4), np.int32)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    y = rng.uniform(-2, 2, n).astype(np.float32)
    return a, b, c, x, y


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_random_integer_expressions_match_python(tmp_path, backend, seed):
    rng = random.Random(seed)
    exprs = [_int_expr(rng, 3) for _ in range(N_EXPR)]
    k = _module(tmp_path, f"fuzz_int_{seed}", exprs, "int")
    a, b, c, x, y = _inputs()
    out = np.zeros((len(a), N_EXPR), np.int32)
    k[backend](a, b, c, x, y, out)
    want = np.zeros_like(out)
    with np.errstate(all="ignore"):
        k.py_func(a, b, c, x, y, want)
    bad = [(e, out[:, j][out[:, j] != want[:, j]][:3], want[:, j][out[:, j] != want[:, j]][:3])
           for j, e in enumerate(exprs) if not np.array_equal(out[:, j], want[:, j])]
    assert not bad, bad[:3]


@pytest.mark.parametrize("seed", [1, 2])
def test_random_float_expressions_match_python(tmp_path, backend, seed):
    rng = random.Random(100 + seed)
    exprs = [_float_expr(rng, 3) for _ in range(N_EXPR)]
    k = _module(tmp_path, f"fuzz_float_{seed}", exprs, "float")
    a, b, c, x, y = _inputs()
    out = np.zeros((len(a), N_EXPR), np.float32)
    k[backend](a, b, c, x, y, out)
    want = np.zeros_like(out)
    with np.errstate(all="ignore"):
        k.py_func(a, b, c, x, y, want)
    for j, e in enumerate(exprs):
        np.testing.assert_allclose(out[:, j], want[:, j], rtol=2e-4, atol=2e-4, err_msg=e)
