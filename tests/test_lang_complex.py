"""Complex numbers in kernels (issue 15, item 9): complex64/complex128 arrays, complex scalars
(arguments, literals, locals, helpers) with + - * / and small integer powers, abs, .real, .imag,
conjugate(), cmath.exp and cmath.sqrt, compared with numpy within a few ulp of the operands'
magnitudes (numpy's formulas; a compiler may fuse a*b + c, as numpy's own SIMD loops do)."""
from __future__ import annotations

import cmath

import numpy as np
import pytest

from pygpgpu_translate import kernel
from test_vec_helpers import rtc_compile  # noqa: F401 - fixture

DTYPES = [np.complex64, np.complex128]
I = 1j                        # a module-level complex constant


def rand(n, dtype, seed, scale=1.0):
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal(n) + 1j * rng.standard_normal(n)) * scale).astype(dtype)


def ulps(dtype, k=4):
    return k * np.finfo(np.empty(0, dtype).real.dtype).eps


def assert_close(got, want, scale, dtype, k=4):
    """|got - want| within k ulp of ``scale`` (the magnitude the rounding errors are relative to)."""
    err = np.abs(np.asarray(got, np.complex128) - np.asarray(want, np.complex128))
    bound = ulps(dtype, k) * np.maximum(np.asarray(scale, np.float64), np.finfo(np.float64).tiny)
    bad = err > bound
    assert not bad.any(), f"{bad.sum()} elements off, worst {(err / bound).max():.1f}x the bound at {np.argmax(err / bound)}"


@kernel
def arith(a, b, s, d, p, q):
    for i in range(a.shape[0]):
        s[i] = a[i] + b[i]
        d[i] = a[i] - b[i]
        p[i] = a[i] * b[i]
        q[i] = a[i] / b[i]


@pytest.mark.parametrize("dtype", DTYPES)
def test_arithmetic_matches_numpy(backend, dtype):
    n = 4000
    a, b = rand(n, dtype, 1), rand(n, dtype, 2)
    b[:8] = [1, -2, 1j, -3j, 1e-30 + 1j, 1 + 1e-30j, 2 + 2j, -0.5 - 0.25j]      # both Smith branches
    s, d, p, q = (np.zeros(n, dtype) for _ in range(4))
    arith[backend](a, b, s, d, p, q)
    assert_close(s, a + b, np.abs(a) + np.abs(b), dtype)
    assert_close(d, a - b, np.abs(a) + np.abs(b), dtype)
    assert_close(p, a * b, np.abs(a) * np.abs(b), dtype)
    assert_close(q, a / b, np.abs(a) / np.abs(b), dtype, k=8)


@kernel
def divide_by_zero(a, q):
    for i in range(a.shape[0]):
        q[i] = a[i] / 0j


def test_division_by_zero_gives_numpys_inf_and_nan(backend):
    a = np.array([1 + 1j, -2 + 0j, 0 + 3j, 0j], np.complex128)
    q = np.zeros_like(a)
    divide_by_zero[backend](a, q)
    with np.errstate(all="ignore"):
        want = a / np.complex128(0j)
    np.testing.assert_array_equal(q, want)


@kernel
def functions(z, ab, re, im, cj, cj2, ex, sq, r2, i2):
    for i in range(z.shape[0]):
        ab[i] = abs(z[i])
        re[i] = z[i].real
        im[i] = z[i].imag
        cj[i] = z[i].conjugate()
        cj2[i] = np.conj(z[i]) + np.real(z[i]) * I
        ex[i] = cmath.exp(z[i])
        sq[i] = cmath.sqrt(z[i])
        r2[i] = np.sqrt(z[i]) - np.exp(z[i])
        i2[i] = np.imag(z[i] * 2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_functions_match_numpy(backend, dtype):
    n = 3000
    z = rand(n, dtype, 3, scale=2.0)
    big = 3e37 if dtype == np.complex64 else 3e307          # past csqrt's scaling threshold
    z[:10] = [0, -0.0, 4, -4, 1j, -1j, complex(-4, -0.0), complex(big, big), complex(-big, 1), 2.5]
    real = np.empty(0, dtype).real.dtype
    outs = [np.zeros(n, real), np.zeros(n, real), np.zeros(n, real), np.zeros(n, dtype), np.zeros(n, dtype),
            np.zeros(n, dtype), np.zeros(n, dtype), np.zeros(n, dtype), np.zeros(n, real)]
    functions[backend](z, *outs)
    ab, re, im, cj, cj2, ex, sq, r2, i2 = outs
    mag = np.abs(z.astype(np.complex128))
    assert_close(ab, np.abs(z), mag, dtype, k=2)
    np.testing.assert_array_equal(re, z.real)
    np.testing.assert_array_equal(im, z.imag)
    np.testing.assert_array_equal(cj, np.conj(z))
    np.testing.assert_array_equal(cj2, np.conj(z) + z.real * 1j)
    with np.errstate(all="ignore"):
        want_ex, want_sq = np.exp(z[10:]), np.sqrt(z)
    assert_close(ex[10:], want_ex, np.abs(want_ex), dtype, k=8)
    assert_close(sq, want_sq, np.abs(want_sq), dtype, k=4)
    np.testing.assert_array_equal(np.signbit(sq[:7].imag), np.signbit(want_sq[:7].imag))    # signed zeros
    assert_close(r2[10:], want_sq[10:] - want_ex, np.abs(want_sq[10:]) + np.abs(want_ex), dtype, k=8)
    np.testing.assert_array_equal(i2, (z * 2).imag)


@kernel
def mixed(a64, x64, out128, a_times_2, lit):
    for i in range(a64.shape[0]):
        out128[i] = a64[i] * x64[i]          # complex64 and float64: complex128, as numpy
        a_times_2[i] = a64[i] * 2            # stays complex64
        lit[i] = a64[i] * (1 + 2j) + 0.5     # a literal adopts complex64


def test_mixed_types_follow_numpy(backend):
    n = 1000
    a = rand(n, np.complex64, 4)
    x = np.random.default_rng(5).uniform(-1, 1, n) * (1 + 1e-9)
    out128, t2, lit = np.zeros(n, np.complex128), np.zeros(n, np.complex64), np.zeros(n, np.complex64)
    mixed[backend](a, x, out128, t2, lit)
    want = a * x
    assert want.dtype == np.complex128
    assert_close(out128, want, np.abs(a) * np.abs(x), np.complex128)     # complex64 arithmetic would miss this
    np.testing.assert_array_equal(t2, a * 2)
    assert_close(lit, a * np.complex64(1 + 2j) + np.float32(0.5), np.abs(a) * 3 + 0.5, np.complex64)
    src = mixed.inspect(a, x, out128, t2, lit, backend="opencl").source
    assert "pg_cmul_double" in src and src.count("pg_cmul_float(") >= 2     # only the float64 product widens


def rotate(z, turns):
    return z * cmath.exp(2j * 3.141592653589793 * turns)


def _matvec(m, v, out, alpha):
    for r in range(m.shape[0]):
        acc = 0j
        for c in range(m.shape[1]):
            acc += m[r, c] * v[c]
        out[r] = rotate(alpha * acc, 0.25) ** 2 + (acc ** 0)


matvec = kernel(_matvec)
# Python numbers (1j, 0.25, a Python complex alpha) on their own are the default float's precision:
# complex128 data wants default_float=np.float64, as float64 data does
matvec64 = kernel(default_float=np.float64)(_matvec)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("alpha", [0.5 - 1.5j, np.complex64(2 + 1j), np.complex128(-1 + 0.25j)],
                         ids=["python", "np64", "np128"])
def test_locals_loops_helpers_and_scalar_arguments(backend, dtype, alpha):
    rows, cols = 40, 25
    m = rand(rows * cols, dtype, 6).reshape(rows, cols)
    v = rand(cols, dtype, 7)
    out = np.zeros(rows, dtype)
    (matvec64 if dtype == np.complex128 else matvec)[backend](m, v, out, alpha)
    acc = (m.astype(np.complex128) @ v.astype(np.complex128))
    want = (complex(alpha) * acc * 1j) ** 2 + 1
    scale = (abs(complex(alpha)) * (np.abs(m) @ np.abs(v))) ** 2 + 1
    assert_close(out, want, scale, dtype, k=8 * cols)


@kernel
def compare(a, b, eq, ne, truth, built, built64):
    for i in range(a.shape[0]):
        eq[i] = a[i] == b[i]
        ne[i] = a[i] != b[i]
        truth[i] = 1 if a[i] else 0
        built[i] = complex(a[i].real, b[i].imag)
        built64[i] = np.complex128(a[i].imag)


def test_comparisons_truth_and_constructors(backend):
    a = np.array([1 + 1j, 0j, 2 - 1j, 3j, -0.0 + 0j], np.complex64)
    b = np.array([1 + 1j, 0j, 2 + 1j, 3 + 3j, 0j], np.complex64)
    eq, ne, truth = np.zeros(5, np.bool_), np.zeros(5, np.bool_), np.zeros(5, np.int32)
    built, built64 = np.zeros(5, np.complex64), np.zeros(5, np.complex128)
    compare[backend](a, b, eq, ne, truth, built, built64)
    np.testing.assert_array_equal(eq, a == b)
    np.testing.assert_array_equal(ne, a != b)
    np.testing.assert_array_equal(truth, (a != 0).astype(np.int32))
    np.testing.assert_array_equal(built, a.real + 1j * b.imag)
    np.testing.assert_array_equal(built64, a.imag.astype(np.complex128))


# ---- errors ------------------------------------------------------------------------------------------------------
def _rejects(body_src, match, exc=(SyntaxError, TypeError)):
    src = "import cmath, math\nimport numpy as np\n" + body_src
    path = f"/tmp/pygpgpu_complex_{abs(hash(body_src))}.py"
    with open(path, "w") as f:
        f.write(src)
    ns: dict = {}
    exec(compile(src, path, "exec"), ns)
    with pytest.raises(exc, match=match):
        kernel(ns["k"]).inspect(np.zeros(4, np.complex64), np.zeros(4, np.float32), backend="opencl")


@pytest.mark.parametrize("body, match", [
    ("    x[i] = z[i]", r"a complex64 value is used where a float32 is expected; take z.real, z.imag or abs\(z\)"),
    ("    x[i] = 1 if z[i] < z[0] else 0", "complex numbers compare only with == and !="),
    ("    z[i] = z[i] // 2", "operator // is not defined for complex numbers"),
    ("    z[i] = math.sin(z[i])", r"math.sin\(\) does not take complex numbers"),
    ("    z[i] = z[i] ** 0.5", "integer constant exponent"),
    ("    x[i] = z[i].angle", "complex numbers have no attribute 'angle'"),
])
def test_wrong_uses_are_errors(body, match):
    _rejects(f"def k(z, x):\n  for i in range(z.shape[0]):\n{body}\n", match)


def test_complex_kernels_are_type_errors_where_complex_is_used_as_an_index():
    _rejects("def k(z, x):\n  for i in range(z.shape[0]):\n    x[z[i]] = 1.0\n", "array index must be an integer")


_COMPILE = {
    "arith": (arith, lambda dt: tuple(np.zeros(4, dt) for _ in range(6))),
    "functions": (functions, lambda dt: (np.zeros(4, dt),) + tuple(np.zeros(4, np.empty(0, dt).real.dtype) for _ in range(3))
                  + tuple(np.zeros(4, dt) for _ in range(5)) + (np.zeros(4, np.empty(0, dt).real.dtype),)),
    "matvec": (matvec, lambda dt: (np.zeros((3, 2), dt), np.zeros(2, dt), np.zeros(3, dt), 1 + 1j)),
    "compare": (compare, lambda dt: (np.zeros(4, dt), np.zeros(4, dt), np.zeros(4, bool), np.zeros(4, bool),
                                     np.zeros(4, np.int32), np.zeros(4, np.complex64), np.zeros(4, np.complex128))),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(_COMPILE))
def test_complex_kernels_compile_for_cuda_and_hip(name, dtype, rtc_compile):
    dialect, compile_ = rtc_compile
    k, args = _COMPILE[name]
    src = k.inspect(*args(dtype), backend=dialect).source
    assert "pg_complex" in src
    assert compile_(src)
