"""Complex numbers: ``complex:<float|double>`` defines the struct and every operation on it.

``pg_complex64`` / ``pg_complex128`` are ``{T re; T im;}``: numpy's complex64/complex128 layout
(8/16 bytes, the real part first), so complex arrays pass as they are. Functions, ``<T>`` the
part type: ``pg_cmake_<T>(re, im)``, ``pg_creal_<T>``, ``pg_cimag_<T>``, ``pg_cadd_<T>``,
``pg_csub_<T>``, ``pg_cmul_<T>``, ``pg_cdiv_<T>``, ``pg_cneg_<T>``, ``pg_cconj_<T>``,
``pg_ceq_<T>`` (an int, 1 when both parts are equal), ``pg_cabs_<T>`` (``hypot``),
``pg_cexp_<T>`` and ``pg_csqrt_<T>``.

The arithmetic is numpy's: ``a*b`` is ``(ar*br - ai*bi, ar*bi + ai*br)``, division is Smith's
algorithm exactly as numpy's loops write it (a zero divisor gives numpy's inf/nan), ``sqrt``
is the C99/FreeBSD ``csqrt`` numpy falls back to (scaled near overflow, exact signed zeros),
``exp`` is ``exp(re) * (cos(im), sin(im))`` with a zero imaginary part kept exact. A compiler
may contract ``a*b + c`` into an FMA here, as numpy's own SIMD loops do for complex64 on
machines that have FMA: results agree with numpy to a few ulp of the operands' magnitudes.
"""
from __future__ import annotations

from ._types import c_type, dialect_of, float_math, fn_prefix
from ._vec import fp64_deps

__all__ = ["COMPLEX_TYPES", "complex_deps", "complex_source", "complex_cname"]

COMPLEX_TYPES = ("float", "double")
# csqrt scales by 1/4 above this (FreeBSD's THRESH: hypot(a, b) + |a| must not overflow)
_THRESH = {"float": "7.4462863e+37f", "double": "7.446288774449766e+307"}


def complex_cname(type_name: str) -> str:
    return "pg_complex64" if type_name == "float" else "pg_complex128"


def complex_deps(dialect: str, type_name: str) -> list[str]:
    return fp64_deps(dialect, type_name)


def complex_source(dialect: str, t: str) -> str:
    T = c_type(dialect, t)
    C = complex_cname(t)
    fp = fn_prefix(dialect)
    m = {f: float_math(dialect, t, f) for f in ("fabs", "hypot", "sqrt", "exp", "cos", "sin", "copysign")}
    one, half, zero, two, quarter = (("1.0f", "0.5f", "0.0f", "2.0f", "0.25f") if t == "float"
                                     else ("1.0", "0.5", "0.0", "2.0", "0.25"))
    d = dialect_of(dialect)
    inf = d.inf32 if t == "float" else d.inf64
    isinf, isnan = "isinf", "isnan"
    return f"""typedef struct {{ {T} re; {T} im; }} {C};
{fp} {C} pg_cmake_{t}({T} re, {T} im) {{ {C} z; z.re = re; z.im = im; return z; }}
{fp} {T} pg_creal_{t}({C} a) {{ return a.re; }}
{fp} {T} pg_cimag_{t}({C} a) {{ return a.im; }}
{fp} {C} pg_cadd_{t}({C} a, {C} b) {{ return pg_cmake_{t}(a.re + b.re, a.im + b.im); }}
{fp} {C} pg_csub_{t}({C} a, {C} b) {{ return pg_cmake_{t}(a.re - b.re, a.im - b.im); }}
{fp} {C} pg_cmul_{t}({C} a, {C} b) {{
    return pg_cmake_{t}(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}}
{fp} {C} pg_cdiv_{t}({C} a, {C} b) {{
    {T} abs_br = {m['fabs']}(b.re), abs_bi = {m['fabs']}(b.im);
    if (abs_br >= abs_bi) {{
        if (abs_br == {zero} && abs_bi == {zero}) return pg_cmake_{t}(a.re / abs_br, a.im / abs_bi);
        {T} rat = b.im / b.re;
        {T} scl = {one} / (b.re + b.im * rat);
        return pg_cmake_{t}((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl);
    }}
    {T} rat = b.re / b.im;
    {T} scl = {one} / (b.im + b.re * rat);
    return pg_cmake_{t}((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl);
}}
{fp} {C} pg_cneg_{t}({C} a) {{ return pg_cmake_{t}(-a.re, -a.im); }}
{fp} {C} pg_cconj_{t}({C} a) {{ return pg_cmake_{t}(a.re, -a.im); }}
{fp} int pg_ceq_{t}({C} a, {C} b) {{ return a.re == b.re && a.im == b.im; }}
{fp} {T} pg_cabs_{t}({C} a) {{ return {m['hypot']}(a.re, a.im); }}
{fp} {C} pg_cexp_{t}({C} a) {{
    {T} e = {m['exp']}(a.re);
    if (a.im == {zero}) return pg_cmake_{t}(e, a.im);
    return pg_cmake_{t}(e * {m['cos']}(a.im), e * {m['sin']}(a.im));
}}
{fp} {C} pg_csqrt_{t}({C} z) {{
    {T} a = z.re, b = z.im, r;
    int scale = 0;
    if (a == {zero} && b == {zero}) return pg_cmake_{t}({zero}, b);
    if ({isinf}(b)) return pg_cmake_{t}({inf}, b);
    if ({isnan}(a)) {{ {T} n = (b - b) / (b - b); return pg_cmake_{t}(a, n); }}
    if ({isinf}(a)) {{
        if (a < {zero}) return pg_cmake_{t}({m['fabs']}(b - b), {m['copysign']}(a, b));
        return pg_cmake_{t}(a, {m['copysign']}(b - b, b));
    }}
    if ({m['fabs']}(a) >= {_THRESH[t]} || {m['fabs']}(b) >= {_THRESH[t]}) {{ a *= {quarter}; b *= {quarter}; scale = 1; }}
    {C} out;
    if (a >= {zero}) {{
        r = {m['sqrt']}((a + {m['hypot']}(a, b)) * {half});
        out = pg_cmake_{t}(r, b / ({two} * r));
    }} else {{
        r = {m['sqrt']}((-a + {m['hypot']}(a, b)) * {half});
        out = pg_cmake_{t}({m['fabs']}(b) / ({two} * r), {m['copysign']}(r, b));
    }}
    if (scale) {{ out.re *= {two}; out.im *= {two}; }}
    return out;
}}
"""
