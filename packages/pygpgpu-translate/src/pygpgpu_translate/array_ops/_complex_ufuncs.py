"""The ufuncs numpy defines for complex64/complex128, as kernel expressions.

One table (``COMPLEX_RULES``): ufunc name -> rule. A rule takes the loop's input dtypes (complex)
and returns the Python expression of one element, ``{0}``/``{1}`` the converted inputs, and the
source of the helper functions it calls. Helpers are written with what kernels have for complex
values (``+ - * /``, ``abs``, ``.real``, ``.imag``, ``np.exp``/``np.sqrt`` of a complex value,
``np.complex64(re, im)``) and real math on the parts, following numpy's own loops where those
are arithmetic (``reciprocal``, integer ``power``, ``expm1``, ``log1p``, ``sign``, the
lexicographic comparisons and ``maximum``/``minimum``, whose NaN rules are numpy's), and the
textbook (Kahan's) formulas where numpy calls the C library (``log``, ``sin``, ``arcsin``...),
which agree with numpy's to a few ulp of the result away from the branch cuts.

A name numpy has a complex loop for but this table lacks is refused by :func:`complex_rule`.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ._codegen import np_type

__all__ = ["COMPLEX_RULES", "complex_rule", "part_dtype", "less_source"]


def part_dtype(dt: np.dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128."""
    return np.dtype(np.float32) if np.dtype(dt) == np.complex64 else np.dtype(np.float64)


def _types(dt: np.dtype) -> "tuple[str, str, str]":
    """(complex type, part type, suffix) as generated source spells them."""
    return np_type(dt), np_type(part_dtype(dt)), np.dtype(dt).name


def _helper(fn: str, params: str, body: str) -> Callable:
    """A rule calling helper ``fn``; its ``body`` uses ``{C}`` (the complex type), ``{T}`` (the part
    type), ``{M}(re, im)`` (a complex number from its parts) and other helpers as ``_gnp_<fn>_{S}``."""
    def rule(dts):
        name = f"_gnp_{fn}_{np.dtype(dts[0]).name}"
        args = ", ".join("{%d}" % k for k in range(len(params.split(","))))
        return f"{name}({args})", "".join(_sources(fn, dts[0], {}).values())
    return rule


def _sources(fn: str, dt: np.dtype, into: dict) -> dict:
    """The source of helper ``fn`` for ``dt`` after those it calls, each once (name -> source)."""
    C, T, S = _types(dt)
    if "cmk" not in into:        # complex(re, im) of the part type: np.complex64 takes one argument
        into["cmk"] = f"def _gnp_cmk_{S}(re, im):\n    return {C}(complex({T}(re), {T}(im)))\n"
    for dep in _DEPENDS.get(fn, ()):
        _sources(dep, dt, into)
    if fn not in into:
        params, body = _HELPERS[fn]
        into[fn] = f"def _gnp_{fn}_{S}({params}):\n" + body.format(C=C, T=T, S=S, M=f"_gnp_cmk_{S}")
    return into


# ---- numpy's arithmetic loops ---------------------------------------------------------------------------------
# numpy's SIMD loops (x86-64 with FMA, AArch64) multiply with two fused multiply-adds:
# re = fma(ar, br, -(ai * bi)), im = fma(ar, bi, ai * br); ``funcs.fma`` rounds once, as theirs
_MULTIPLY = "    return {M}(funcs.fma(a.real, b.real, -(a.imag * b.imag)), funcs.fma(a.real, b.imag, a.imag * b.real))\n"
_SQUARE = "    return {M}(funcs.fma(z.real, z.real, -(z.imag * z.imag)), funcs.fma(z.real, z.imag, z.imag * z.real))\n"
_RINT = "    return {M}(np.rint(z.real), np.rint(z.imag))\n"
_RECIPROCAL = """    ar = z.real
    ai = z.imag
    if abs(ai) <= abs(ar):
        r = ai / ar
        d = ar + ai * r
        return {M}({T}(1) / d, -r / d)
    r = ar / ai
    d = ar * r + ai
    return {M}(r / d, {T}(-1) / d)
"""

# numpy's npy_cpow: small integer exponents by repeated squaring (1/x by Smith's division), else exp(b log a)
_POWER = """    br = b.real
    bi = b.imag
    if br == 0 and bi == 0:
        return {M}(1, 0)
    if a.real == 0 and a.imag == 0:
        if br > 0 and bi == 0:
            return {M}(0, 0)
        return {M}(np.nan, np.nan)
    if bi == 0 and br == np.trunc(br) and br > -100 and br < 100:
        n = np.int32(br)
        if n == 1:
            return a
        if n == 2:
            return a * a
        if n == 3:
            return a * a * a
        if n < 0:
            n = -n
        aa = {M}(1, 0)
        p = a
        mask = np.int32(1)
        while True:
            if (n & mask) != 0:
                aa = aa * p
            mask = mask << 1
            if n < mask:
                break
            p = p * p
        if br < 0:
            return {M}(1, 0) / aa
        return aa
    return np.exp(b * _gnp_clog_{S}(a))
"""

# numpy 2's sign of a complex number: z / |z|, with its rules for NaN, infinities and zero
_SIGN = """    m = abs(z)
    if m != m:
        return {M}(np.nan, np.nan)
    if np.isinf(m):
        if np.isinf(z.real):
            if np.isinf(z.imag):
                return {M}(np.nan, np.nan)
            return {M}(np.copysign({T}(1), z.real), 0)
        return {M}(0, np.copysign({T}(1), z.imag))
    if m == 0:
        return {M}(0, 0)
    return {M}(z.real / m, z.imag / m)
"""

# numpy's lexicographic order (CLT/CLE/CGT/CGE of its loops): a NaN part makes the real-part test fail
_ORDER = {
    "less": "    return (a.real < b.real and a.imag == a.imag and b.imag == b.imag) or (a.real == b.real and a.imag < b.imag)\n",
    "less_equal": ("    return (a.real < b.real and a.imag == a.imag and b.imag == b.imag) or "
                   "(a.real == b.real and a.imag <= b.imag)\n"),
    "greater": ("    return (a.real > b.real and a.imag == a.imag and b.imag == b.imag) or "
                "(a.real == b.real and a.imag > b.imag)\n"),
    "greater_equal": ("    return (a.real > b.real and a.imag == a.imag and b.imag == b.imag) or "
                      "(a.real == b.real and a.imag >= b.imag)\n"),
}

# maximum/minimum keep a NaN first operand, else the larger (smaller); fmax/fmin keep the number
_EXTREMES = {
    "maximum": ("    if a.real != a.real or a.imag != a.imag or _gnp_cge_{S}(a, b):\n        return a\n    return b\n",
                "cge"),
    "minimum": ("    if a.real != a.real or a.imag != a.imag or _gnp_cle_{S}(a, b):\n        return a\n    return b\n",
                "cle"),
    "fmax": ("    if b.real != b.real or b.imag != b.imag or _gnp_cge_{S}(a, b):\n        return a\n    return b\n",
             "cge"),
    "fmin": ("    if b.real != b.real or b.imag != b.imag or _gnp_cle_{S}(a, b):\n        return a\n    return b\n",
             "cle"),
}

# numpy's clip of complex numbers (clip.cpp): max(x, lo) then min(., hi), each keeping a NaN first
# operand, with the plain lexicographic order (no NaN rule of its own)
_CLIP = """    m = x
    if not (x.real != x.real or x.imag != x.imag or x.real > lo.real or (x.real == lo.real and x.imag > lo.imag)):
        m = lo
    if m.real != m.real or m.imag != m.imag or m.real < hi.real or (m.real == hi.real and m.imag < hi.imag):
        return m
    return hi
"""

# ---- C library functions numpy calls (clog, csin...): the textbook forms on the parts ------------------------
_LOG = "    return {M}(np.log(abs(z)), np.arctan2(z.imag, z.real))\n"
_LOG_SCALED = "    w = _gnp_clog_{S}(z)\n    return {M}(w.real * {T}(%r), w.imag * {T}(%r))\n"
# log|1+z| = log1p(x(2+x) + y^2) / 2 near 0, where log(hypot(1+x, y)) would cancel (measured: 2e-15
# relative off numpy at z = 0.02+0.09j in complex128 on CUDA); hypot where the square could overflow
_LOG1P = ("    re = z.real + {T}(1)\n"
          "    if abs(z.real) < {T}(1) and abs(z.imag) < {T}(1):\n"
          "        return {M}(np.log1p(z.real * (z.real + {T}(2)) + z.imag * z.imag) / {T}(2), np.arctan2(z.imag, re))\n"
          "    return {M}(np.log(np.hypot(re, z.imag)), np.arctan2(z.imag, re))\n")
_EXP2 = f"    return np.exp({{M}}(z.real * {{T}}({np.log(2.0)!r}), z.imag * {{T}}({np.log(2.0)!r})))\n"
_EXPM1 = ("    a = np.sin(z.imag / {T}(2))\n"
          "    return {M}(np.expm1(z.real) * np.cos(z.imag) - {T}(2) * a * a, np.exp(z.real) * np.sin(z.imag))\n")
_SIN = "    return {M}(np.sin(z.real) * np.cosh(z.imag), np.cos(z.real) * np.sinh(z.imag))\n"
_COS = "    return {M}(np.cos(z.real) * np.cosh(z.imag), -(np.sin(z.real) * np.sinh(z.imag)))\n"
_SINH = "    return {M}(np.sinh(z.real) * np.cos(z.imag), np.cosh(z.real) * np.sin(z.imag))\n"
_COSH = "    return {M}(np.cosh(z.real) * np.cos(z.imag), np.sinh(z.real) * np.sin(z.imag))\n"
# Kahan's tanh (FreeBSD's ctanh): no overflow for large real parts
_TANH = """    x = z.real
    y = z.imag
    if abs(x) >= {T}(22):
        e = np.exp(-abs(x))
        return {M}(np.copysign({T}(1), x), {T}(4) * np.sin(y) * np.cos(y) * e * e)
    t = np.tan(y)
    beta = {T}(1) + t * t
    s = np.sinh(x)
    rho = np.sqrt({T}(1) + s * s)
    den = {T}(1) + beta * s * s
    return {M}(beta * rho * s / den, t / den)
"""
_TAN = "    w = _gnp_ctanh_{S}({M}(-z.imag, z.real))\n    return {M}(w.imag, -w.real)\n"
# Kahan's "Branch cuts for complex elementary functions" (1987): the C99 branch cuts numpy has
_ASIN = """    s1 = np.sqrt({M}(1, 0) - z)
    s2 = np.sqrt({M}(1, 0) + z)
    return {M}(np.arctan2(z.real, (s1 * s2).real), np.arcsinh((s1.conjugate() * s2).imag))
"""
_ACOS = """    s1 = np.sqrt({M}(1, 0) - z)
    s2 = np.sqrt({M}(1, 0) + z)
    return {M}({T}(2) * np.arctan2(s1.real, s2.real), np.arcsinh((s2.conjugate() * s1).imag))
"""
_ASINH = "    w = _gnp_casin_{S}({M}(-z.imag, z.real))\n    return {M}(w.imag, -w.real)\n"
_ACOSH = """    s1 = np.sqrt(z - {M}(1, 0))
    s2 = np.sqrt(z + {M}(1, 0))
    return {M}(np.arcsinh((s1.conjugate() * s2).real), {T}(2) * np.arctan2(s1.imag, s2.real))
"""
# the real part is log(((1+x)^2 + y^2) / ((1-x)^2 + y^2)) / 4, through log1p where that ratio is near 1
_ATANH = """    x = z.real
    y = z.imag
    d = ({T}(1) - x) * ({T}(1) - x) + y * y
    q = {T}(4) * x / d
    re = np.log1p(q) / {T}(4)
    if abs(q) > {T}(0.5):
        re = np.log((({T}(1) + x) * ({T}(1) + x) + y * y) / d) / {T}(4)
    return {M}(re, np.arctan2({T}(2) * y, ({T}(1) - x) * ({T}(1) + x) - y * y) / {T}(2))
"""
_ATAN = "    w = _gnp_catanh_{S}({M}(-z.imag, z.real))\n    return {M}(w.imag, -w.real)\n"

_HELPERS = {
    "multiply": ("a, b", _MULTIPLY), "cclip": ("x, lo, hi", _CLIP), "square": ("z", _SQUARE), "rint": ("z", _RINT),
    "reciprocal": ("z", _RECIPROCAL), "power": ("a, b", _POWER), "sign": ("z", _SIGN),
    "clog": ("z", _LOG), "log2": ("z", _LOG_SCALED % (1 / np.log(2.0), 1 / np.log(2.0))),
    "log10": ("z", _LOG_SCALED % (1 / np.log(10.0), 1 / np.log(10.0))), "log1p": ("z", _LOG1P),
    "exp2": ("z", _EXP2), "expm1": ("z", _EXPM1), "sin": ("z", _SIN), "cos": ("z", _COS), "sinh": ("z", _SINH),
    "cosh": ("z", _COSH), "ctanh": ("z", _TANH), "tan": ("z", _TAN), "casin": ("z", _ASIN), "arccos": ("z", _ACOS),
    "arcsinh": ("z", _ASINH), "arccosh": ("z", _ACOSH), "catanh": ("z", _ATANH), "arctan": ("z", _ATAN),
    **{f"c{name[0]}{'e' if name.endswith('equal') else 't'}": ("a, b", body) for name, body in _ORDER.items()},
    **{name: ("a, b", body) for name, (body, _) in _EXTREMES.items()},
}
# helpers a helper calls (their sources go first)
_DEPENDS = {"power": ("clog",), "log2": ("clog",), "log10": ("clog",), "tan": ("ctanh",), "arcsinh": ("casin",),
            "arctan": ("catanh",), **{name: (dep,) for name, (_, dep) in _EXTREMES.items()}}


_ORDER_HELPER = {"less": "clt", "less_equal": "cle", "greater": "cgt", "greater_equal": "cge"}


def _truth(k: int) -> str:
    return f"({{{k}}} != 0)"


# ufunc name -> rule for complex loops
COMPLEX_RULES: dict[str, Callable] = {
    "add": lambda d: "({0} + {1})", "subtract": lambda d: "({0} - {1})",
    "true_divide": lambda d: "({0} / {1})", "divide": lambda d: "({0} / {1})",
    "negative": lambda d: "(-{0})", "positive": lambda d: "{0}", "conjugate": lambda d: "np.conj({0})",
    "absolute": lambda d: "abs({0})",
    "equal": lambda d: "({0} == {1})", "not_equal": lambda d: "({0} != {1})",
    "logical_and": lambda d: f"({_truth(0)} and {_truth(1)})", "logical_or": lambda d: f"({_truth(0)} or {_truth(1)})",
    "logical_xor": lambda d: f"({_truth(0)} != {_truth(1)})", "logical_not": lambda d: "({0} == 0)",
    "isnan": lambda d: "(np.isnan({0}.real) or np.isnan({0}.imag))",
    "isinf": lambda d: "(np.isinf({0}.real) or np.isinf({0}.imag))",
    "isfinite": lambda d: "(np.isfinite({0}.real) and np.isfinite({0}.imag))",
    "exp": lambda d: "np.exp({0})", "sqrt": lambda d: "np.sqrt({0})",
    "log": _helper("clog", *_HELPERS["clog"]), "tanh": _helper("ctanh", *_HELPERS["ctanh"]),
    "arcsin": _helper("casin", *_HELPERS["casin"]), "arctanh": _helper("catanh", *_HELPERS["catanh"]),
    "float_power": _helper("power", *_HELPERS["power"]), "__clip__": _helper("cclip", *_HELPERS["cclip"]),
    **{name: _helper(name, *_HELPERS[name]) for name in ("multiply", "square", "rint", "reciprocal", "power", "sign", "log2", "log10", "log1p",
                                                          "exp2", "expm1", "sin", "cos", "sinh", "cosh", "tan",
                                                          "arccos", "arcsinh", "arccosh", "arctan", "maximum",
                                                          "minimum", "fmax", "fmin")},
    **{name: _helper(fn, *_HELPERS[fn]) for name, fn in _ORDER_HELPER.items()},
}


def complex_rule(name: str, dts: tuple) -> "tuple[str, str | None]":
    """The expression (and helper source) of ufunc ``name`` on complex loop dtypes ``dts``."""
    rule = COMPLEX_RULES.get(name)
    if rule is None:
        op = name.strip("_")           # internal operations: __clip__ is gnp.clip
        raise TypeError(f"gnp.{op} does not support complex operands yet ({', '.join(str(d) for d in dts)}); "
                        f"compute it from z.real and z.imag, or on the host with np.{op}(g.get())")
    r = rule(dts)
    return r if isinstance(r, tuple) else (r, None)


def less_source(dt: np.dtype) -> "tuple[str, str]":
    """(name, source) of ``less(a, b)`` in numpy's sort order for complex ``dt``: lexicographic,
    with NaN parts last (R + Rj < R + nanj < nan + Rj < nan + nanj), numpy's CFLOAT_LT."""
    S = np.dtype(dt).name
    name = f"_gnp_sort_less_{S}"
    src = (f"def {name}(a, b):\n"
           "    if a.real < b.real:\n"
           "        return a.imag == a.imag or b.imag != b.imag\n"
           "    if a.real > b.real:\n"
           "        return b.imag != b.imag and a.imag == a.imag\n"
           "    if a.real == b.real or (a.real != a.real and b.real != b.real):\n"
           "        return a.imag < b.imag or (b.imag != b.imag and a.imag == a.imag)\n"
           "    return b.real != b.real\n")
    return name, src
