"""Differential test: random integer and float expressions, translated and run on the device,
against the same Python function run on the host over numpy scalars (fixed seeds).

Integer results must match exactly (Python floor division/modulo, wrap-around like numpy,
division by zero giving 0 like numpy); float results within float32 rounding.

The typed families (int8, uint8, int16, int32, int64, float32) follow numpy's NEP 50 rules on
the host: a Python literal is weak and takes the array's type (``int8 + 100`` stays int8 and
wraps), two arrays promote (``int8`` with ``uint8`` is ``int16``). Many expressions share one
kernel, so each family costs one or two compiles.
"""
from __future__ import annotations

import importlib.util
import random
import re
import sys

import numpy as np
import pytest

from pygpgpu_translate import kernel

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


# ---- typed families: int8 ... int64 and float32 with weak literals and mixed types ----------------------------
# Arrays a, b, c have the family's dtype (c holds its extremes); m and n have other dtypes, so
# expressions mix types. The domain index i is a Python int on the host: it appears where literals
# do, weak on the device too (int8_data[i] + i stays int8).
MIXED = {"int8": ("int16", "uint8"), "uint8": ("int8", "uint16"), "int16": ("uint8", "int8"),
         "int32": ("int16", "uint8"), "int64": ("int32", "uint8"), "float32": ("int8", "int16")}
N_TYPED = 60


def _typed_arrays(family, n=96, seed=11):
    rng = np.random.default_rng(seed)

    def full_range(dt):
        if np.dtype(dt).kind == "f":
            return rng.uniform(-3, 3, n).astype(dt)
        info = np.iinfo(dt)
        small = rng.integers(max(info.min, -12), min(info.max, 12) + 1, n)
        wide = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
        return np.where(rng.random(n) < 0.4, small, wide).astype(dt)

    a, b = full_range(family), full_range(family)
    if np.dtype(family).kind == "f":
        c = np.resize(np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -2.5, 3.0], family), n)
    else:
        info = np.iinfo(family)
        c = np.resize(np.array(sorted({0, 1, -1 if info.min else 2, info.min, info.max, info.min + 1, info.max - 1, 3}),
                               dtype=family), n)
    m, k = (full_range(d) for d in MIXED[family])
    return {"a": a, "b": b, "c": c, "m": m, "k": k}


class _TypedGen:
    """Random expressions whose numpy type is tracked, so literals stay inside the type they meet
    (numpy raises OverflowError otherwise: that case has its own tests) and the host's
    value-dependent result types (min/max, ternaries returning one operand) never arise."""

    def __init__(self, rng, arrays):
        self.rng = rng
        self.types = {name: np.dtype(v.dtype) for name, v in arrays.items()}

    def literal(self, dt):
        r = self.rng
        if r.random() < 0.12:
            return "i"              # 0 ... 95: fits every family's type
        if dt.kind == "f":
            return r.choice(["2.5", "-0.75", "3", "0.5", "-2", "1e-3", "7.0"])
        info = np.iinfo(dt)
        lo, hi = int(info.min), int(info.max)
        v = r.choice([r.randint(max(lo, -9), min(hi, 9)), r.randint(lo, hi), hi, lo, r.randint(0, min(hi, 127))])
        return f"({v})"

    def beyond(self, dt):
        """A Python int just outside (or far outside) integer type ``dt``; a float type gets a literal."""
        if dt.kind == "f":
            return self.literal(dt)
        info, r = np.iinfo(dt), self.rng
        v = r.choice([int(info.max) + 1, int(info.max) + r.randint(2, 10**4), int(info.min) - 1, -(2**40), 2**40])
        return f"({v})" if -2**63 <= v < 2**64 else f"({int(info.max) + 1})"

    def leaf(self, dt_filter=None):
        names = [n for n, t in self.types.items() if dt_filter is None or t == dt_filter]
        name = self.rng.choice(names)
        return f"{name}[i]", self.types[name]

    def expr(self, depth, same_as=None):
        """(source, numpy dtype); ``same_as``: the result must have that dtype."""
        r = self.rng
        if depth == 0 or r.random() < 0.2:
            if same_as is not None and any(t == same_as for t in self.types.values()):
                return self.leaf(same_as)
            return self.leaf()
        x, tx = self.expr(depth - 1, same_as)
        kind = r.random()
        is_float = tx.kind == "f"
        if kind < 0.45:        # binary with another array expression or a weak literal
            ops = ["+", "-", "*"] if is_float else ["+", "-", "*", "//", "%", "&", "|", "^"]
            op = r.choice(ops)
            if r.random() < 0.5:
                lit = self.literal(tx)
                return (f"({x} {op} {lit})" if r.random() < 0.7 else f"({lit} {op} {x})"), tx
            y, ty = self.expr(depth - 1, tx if same_as is not None else None)
            t = np.result_type(tx, ty)
            if (same_as is not None and t != same_as) or (t.kind == "f" and op in "&|^//%"):
                return x, tx
            return f"({x} {op} {y})", t
        if kind < 0.55:
            if is_float:       # floor division and modulo of exact operands (contraction-proof)
                p, _ = self.leaf(tx)
                q = self.literal(tx) if r.random() < 0.5 else self.leaf(tx)[0]
                return f"({p} {r.choice(['//', '%'])} {q})", tx
            op = r.choice(['<<', '>>'])
            if r.random() < 0.35:      # a count from an array: promotes, may be negative or past the width
                y, ty = self.leaf()
                t = np.result_type(tx, ty)
                if t.kind != "f" and (same_as is None or t == same_as):
                    return f"({x} {op} {y})", t
            return f"({x} {op} {r.randint(0, tx.itemsize * 8 + 3)})", tx     # numpy: past the width gives 0 / -1
        if kind < 0.67:
            if r.random() < 0.5:
                return f"{r.choice(['abs', '-'] if is_float else ['abs', '-', '~'])}({x})", tx
            return f"({x}) ** {r.randint(0, 3)}", tx
        if kind < 0.8:
            y, ty = self.expr(depth - 1, tx)
            return f"{r.choice(['min', 'max'])}({x}, {y if ty == tx else x})", tx
        # a ternary on a comparison of leaves (exact on every backend), with an in-range literal, or
        # with a literal outside the leaf's type (numpy 2 compares Python ints by value)
        p, tp = self.leaf()
        roll = r.random()
        q = self.literal(tp) if roll < 0.3 else self.beyond(tp) if roll < 0.5 else self.leaf()[0]
        y, ty = self.expr(depth - 1, tx)
        return f"({x} if {p} {r.choice(['<', '<=', '>', '>=', '==', '!='])} {q} else {y if ty == tx else x})", tx


def _typed_kernel(tmp_path, name, family, exprs):
    body = "\n".join(f"        out[i, {k}] = {e}" for k, e in enumerate(exprs))
    src = (f"import math\nimport numpy as np\nfrom pygpgpu_translate import kernel\n\n\n@kernel\n"
           f"def {name}(a, b, c, m, k, out):\n    for i in range(out.shape[0]):\n{body}\n")
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def _typed_case(tmp_path, family, seed):
    rng = random.Random(f"{family}-{seed}")
    arrays = _typed_arrays(family, seed=seed)
    gen = _TypedGen(rng, arrays)
    exprs = [gen.expr(3)[0] for _ in range(N_TYPED)]
    k = _typed_kernel(tmp_path, f"fuzz_{family}_{seed}", family, exprs)
    out_dt = np.float32 if family == "float32" else np.int64
    return k, exprs, arrays, out_dt


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "int32", "int64"])
def test_typed_integer_expressions_match_numpy(tmp_path, backend, family, seed):
    k, exprs, arrays, out_dt = _typed_case(tmp_path, family, seed)
    args = [arrays[n] for n in "abcmk"]
    out = np.full((len(arrays["a"]), N_TYPED), -77, out_dt)
    k[backend](*args, out)
    want = np.zeros_like(out)
    with np.errstate(all="ignore"):
        k.py_func(*args, want)
    bad = [(e, np.flatnonzero(out[:, j] != want[:, j])[:3].tolist(), out[:, j][out[:, j] != want[:, j]][:3].tolist(),
            want[:, j][out[:, j] != want[:, j]][:3].tolist())
           for j, e in enumerate(exprs) if not np.array_equal(out[:, j], want[:, j])]
    assert not bad, f"{len(bad)} of {N_TYPED} {family} expressions differ (expr, rows, device, numpy): {bad}"


@pytest.mark.parametrize("seed", [1, 2])
def test_typed_float32_expressions_match_numpy(tmp_path, backend, seed):
    k, exprs, arrays, out_dt = _typed_case(tmp_path, "float32", seed)
    args = [arrays[n] for n in "abcmk"]
    out = np.full((len(arrays["a"]), N_TYPED), -77, out_dt)
    k[backend](*args, out)
    want = np.zeros_like(out)
    with np.errstate(all="ignore"):
        k.py_func(*args, want)
    for j, e in enumerate(exprs):
        np.testing.assert_allclose(out[:, j], want[:, j], rtol=1e-4, atol=1e-4, err_msg=e)


def test_typed_families_really_mix_literals_and_types():
    """The generator produces what the tests claim: weak literals beside arrays, mixed dtypes."""
    for family in MIXED:
        rng = random.Random(f"{family}-1")
        arrays = _typed_arrays(family, seed=1)
        exprs = [_TypedGen(rng, arrays).expr(3)[0] for _ in range(N_TYPED)]
        text = " ".join(exprs)
        assert "m[i]" in text and "k[i]" in text and "(" in text
        assert re.search(r"[ (]i[ )]", text), "the loop index appears as a weak operand"
        assert sum(e.count(" (") + e.count("((") for e in exprs) > N_TYPED // 2


# ---- scalar arguments and literals at and beyond the edge of the type they meet ------------------------------
@kernel
def add_scalar(a, s, out):
    for i in range(out.shape[0]):
        out[i] = (a[i] + s) // 3


@kernel
def compare_scalar(a, s, out):
    for i in range(out.shape[0]):
        out[i, 0] = 1 if a[i] < s else 0
        out[i, 1] = 1 if a[i] == s else 0
        out[i, 2] = (s >= a[i]) + 2 * (a[i] != s) + 4 * (a[i] > s) + 8 * (s <= a[i] < 300)


@kernel
def min_scalar(a, s, out):
    for i in range(out.shape[0]):
        out[i] = min(a[i], s)


def _host(k, *args, out):
    want = np.zeros_like(out)
    with np.errstate(all="ignore"):
        k.py_func(*args, want)
    return want


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "int32", "int64"])
def test_in_range_python_scalars_are_weak(backend, family):
    info = np.iinfo(family)
    a = np.array([info.min, info.max, 0, 1, info.max // 2 + 3, 7], family)
    for s in (int(info.max), int(info.min), 100, int(info.max) // 2 + 9):
        out = np.full(len(a), -1, np.int64)
        add_scalar[backend](a, s, out)
        np.testing.assert_array_equal(out, _host(add_scalar, a, s, out=out), err_msg=f"{family} + {s}")


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "int32"])
def test_numpy_scalars_are_strong(backend, family):
    info = np.iinfo(family)
    a = np.array([info.min, info.max, 0, 1, -1 if info.min else 2, 7], family)
    for s in (np.int16(300), np.uint8(200), np.int64(2**40), np.int8(-5)):
        out = np.full(len(a), -1, np.int64)
        add_scalar[backend](a, s, out)
        np.testing.assert_array_equal(out, _host(add_scalar, a, s, out=out), err_msg=f"{family} + {s!r}")


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "int32", "int64"])
def test_out_of_range_python_scalars_raise_overflow_error(backend, family):
    """numpy: ``np.int8(5) + 300`` raises OverflowError; the kernel must too, not wrap."""
    info = np.iinfo(family)
    a = np.array([1, 2, 3], family)
    for s in (int(info.max) + 1, int(info.min) - 1, 2**40 if info.bits < 64 else -2**63 - 5):
        with pytest.raises(OverflowError):
            _host(add_scalar, a, s, out=np.zeros(3, np.int64))
        out = np.full(3, -1, np.int64)
        with pytest.raises(OverflowError, match="s"):
            add_scalar[backend](a, s, out)
        assert out.tolist() == [-1, -1, -1], "nothing may run before the error"


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "int32"])
def test_out_of_range_literal_raises_overflow_error(tmp_path, backend, family):
    info = np.iinfo(family)
    lit = int(info.max) + 1
    k = _typed_kernel(tmp_path, f"lit_{family}", family, [f"a[i] + {lit}"])
    arrays = _typed_arrays(family, n=8)
    args = [arrays[n] for n in "abcmk"]
    with pytest.raises(OverflowError):
        _host(k, *args, out=np.zeros((8, 1), np.int64))
    with pytest.raises(OverflowError, match=str(lit)):
        k[backend](*args, np.zeros((8, 1), np.int64))


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64"])
def test_comparisons_with_out_of_range_scalars_follow_numpy(backend, family):
    """numpy compares a Python int with any integer type by value: ``np.int8(100) < 300`` is True.
    The kernel compares in a type that holds both (the argument is never converted to int8)."""
    info = np.iinfo(family)
    a = np.array([info.min, info.max, 0, 1, 100 if info.max > 100 else 50], family)
    for s in (int(info.max) + 1, int(info.max) + 200, int(info.min) - 1, 2**40, -2**40, int(info.max), 1):
        if info.bits == 64 and not -2**63 <= s < 2**63:
            continue
        out = np.full((len(a), 3), -1, np.int64)
        want = _host(compare_scalar, a, s, out=out)
        compare_scalar[backend](a, s, out)
        np.testing.assert_array_equal(out, want, err_msg=f"{family} compared with {s}")


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "int32"])
def test_min_max_with_out_of_range_scalars_raise_overflow_error(backend, family):
    """min/max return one operand, whose type on the host depends on the value (np.int8 or the Python
    int); the kernel gives the result the array's type, so a Python int that does not fit it is
    refused (OverflowError) rather than wrapped. In-range ints follow the host exactly."""
    info = np.iinfo(family)
    a = np.array([info.min, info.max, 0, 1], family)
    for s in (int(info.max) + 1, int(info.min) - 1):
        out = np.full(len(a), -1, np.int64)
        with pytest.raises(OverflowError, match="'s'"):
            min_scalar[backend](a, s, out)
        assert out.tolist() == [-1] * len(a), "nothing may run before the error"
    for s in (int(info.max), int(info.min), 1):
        out = np.full(len(a), -1, np.int64)
        min_scalar[backend](a, s, out)
        np.testing.assert_array_equal(out, _host(min_scalar, a, s, out=out), err_msg=f"min({family}, {s})")


def test_float32_with_huge_python_scalars_follows_numpy(backend):
    a = np.array([1.5, -2.0, 0.0, 3.0e38], np.float32)
    for s in (1e300, -1e300, 2**40, 1e-50):
        out = np.zeros(4, np.float32)
        want = _host(add_scalar, a, s, out=out)
        add_scalar[backend](a, s, out)
        np.testing.assert_array_equal(out, want, err_msg=f"float32 + {s!r}")


@kernel
def index_plus_data(a, out):
    for i in range(out.shape[0]):
        out[i] = (a[i] + i) // 3


def test_loop_index_is_weak_like_python(backend):
    """On the host ``i`` is a Python int, so ``int8 + i`` stays int8 and wraps (NEP 50)."""
    a = np.full(64, 100, np.int8)
    out = np.zeros(64, np.int64)
    index_plus_data[backend](a, out)
    np.testing.assert_array_equal(out, _host(index_plus_data, a, out=out))


@kernel
def power_and_invert(a, out):
    for i in range(out.shape[0]):
        out[i, 0] = a[i] ** 2
        out[i, 1] = a[i] ** 3
        out[i, 2] = ~a[i]
        out[i, 3] = 1 if a[i] ** 2 > 100 else 0


@pytest.mark.parametrize("family", ["int8", "uint8", "int16", "uint16", "int32"])
def test_power_and_invert_wrap_like_numpy(backend, family):
    """x ** n with a constant n (multiplied out) wraps after each product; ~ on uint8 is 245, not -11."""
    info = np.iinfo(family)
    a = np.array([info.min, info.max, 0, 1, 15, 100, info.max // 3, 2**11 if info.bits > 16 else 7], family)
    out = np.full((len(a), 4), -1, np.int64)
    power_and_invert[backend](a, out)
    np.testing.assert_array_equal(out, _host(power_and_invert, a, out=out), err_msg=family)


# ---- mixed int/float paths: a local bound to an int on one path and a float on another ---------------------
# (issue 30 item 6) Numba unifies int and float to float64; here to float64, or float32 where it is
# the kernel's default float. Values are small ints and dyadic floats, exact in either, so the
# device must equal the host's numpy/Python run exactly.
N_MIXED = 24


def _mixed_value(rng, kind):
    if kind == "int":
        base = rng.choice(["a[i]", "b[i]", "c[i]", "(a[i] + b[i])", "(c[i] * 3)", "(a[i] // 4)", "(b[i] % 7)"])
        return base if rng.random() < 0.6 else f"({base} + {rng.randint(-5, 5)})"
    return rng.choice([str(rng.choice([0.5, -1.25, 2.0, 0.125, 3.75])), "x[i]", "(x[i] * 2.0)", "(x[i] + 0.5)",
                       "(x[i] - a[i])"])


def _mixed_block(rng, k):
    """Statements binding ``t{k}`` to an int on one path and a float on another, then storing it."""
    t = f"t{k}"
    first, second = ("int", "float") if rng.random() < 0.6 else ("float", "int")
    cond = rng.choice(["a[i] > 0", "x[i] < 0.5", "c[i] % 2 == 0", "i % 3 == 1", "b[i] < a[i]"])
    shape = rng.random()
    if shape < 0.45:          # if without else
        lines = [f"{t} = {_mixed_value(rng, first)}", f"if {cond}:", f"    {t} = {_mixed_value(rng, second)}"]
    elif shape < 0.75:        # if / else
        lines = [f"if {cond}:", f"    {t} = {_mixed_value(rng, first)}", "else:",
                 f"    {t} = {_mixed_value(rng, second)}"]
    else:                     # loop-carried: the int becomes a float on some iterations
        lines = [f"{t} = {_mixed_value(rng, first)}", f"for j in range({rng.randint(1, 3)}):",
                 f"    if {cond.replace('i % 3', '(i + j) % 3')}:", f"        {t} = {t} + {_mixed_value(rng, second)}"]
    use = rng.choice([t, f"{t} * 2", f"{t} + a[i]", f"-{t}", f"{t} - c[i]"])
    return lines + [f"out[i, {k}] = {use}"]


def _mixed_kernel(tmp_path, name, blocks, default_float):
    body = "\n".join("        " + line for block in blocks for line in block)
    deco = "@kernel" if default_float is None else f"@kernel(default_float=np.{default_float})"
    src = (f"import numpy as np\nfrom pygpgpu_translate import kernel\n\n\n{deco}\n"
           f"def {name}(a, b, c, x, out):\n    for i in range(out.shape[0]):\n{body}\n")
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def _mixed_inputs(n=64, seed=5):
    rng = np.random.default_rng(seed)
    a = rng.integers(-60, 61, n).astype(np.int64)
    b = rng.integers(-60, 61, n).astype(np.int32)
    c = rng.integers(-15, 16, n).astype(np.int8)              # int8 arithmetic below never wraps
    x = (rng.integers(-32, 33, n) / 8).astype(np.float32)          # dyadic: exact in float32
    return a, b, c, x


@pytest.mark.parametrize("default_float", [None, "float64"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_mixed_int_float_paths_match_python(tmp_path, backend, seed, default_float):
    rng = random.Random(f"mixed-{seed}")
    blocks = [_mixed_block(rng, k) for k in range(N_MIXED)]
    k = _mixed_kernel(tmp_path, f"fuzz_mixed_{seed}_{default_float}", blocks, default_float)
    a, b, c, x = _mixed_inputs()
    out = np.full((len(a), N_MIXED), -77.0)
    k[backend](a, b, c, x, out)
    want = np.zeros_like(out)
    with np.errstate(all="ignore"):
        k.py_func(a, b, c, x, want)
    bad = ["\n".join(blocks[j]) for j in range(N_MIXED) if not np.array_equal(out[:, j], want[:, j])]
    assert not bad, f"{len(bad)} of {N_MIXED} blocks differ:\n" + "\n--\n".join(bad[:3])
    src = k.inspect(a, b, c, x, out, backend="opencl").source
    local = "double" if default_float else "float"
    assert re.search(rf"\b{local} t\d+;", src), "the int/float locals have the default float's type"


def test_mixed_paths_really_mix():
    rng = random.Random("mixed-1")
    text = "\n".join(line for k in range(N_MIXED) for line in _mixed_block(rng, k))
    assert "if " in text and "else:" in text and "for j in range" in text
    assert re.search(r"= a\[i\]|= b\[i\]|= c\[i\]", text) and re.search(r"= (x\[i\]|-?\d+\.\d+)", text)
