"""Counter-based random numbers: the device half of ``gpu.uniform/normal/randint``.

``philox:uint``
    ``pg_philox4x32_10(c0, c1, c2, c3, k0, k1)`` -> ``pg_philox4`` (a struct of ``uint w[4]``):
    Philox-4x32-10 of four counter words and two key words (Random123's known answers).
``random_uniform:<float|double>``, ``random_normal:<float|double>``
    ``pg_uniform_<T>(ulong seed, ulong counter)`` / ``pg_normal_<T>(seed, counter)``.
``random_randint:long``
    ``pg_randint_long(ulong seed, ulong counter, long low, long high)``: in [low, high), ``low``
    when ``high <= low``.

The arithmetic is ``pygpgpu_core.gpu_random``'s, operation for operation: the uniform floats
are exact products of integers and powers of two, so they are bit-identical to the host; the
normal's log and cos are each platform's. No expression has the ``a * b + c`` shape a compiler
may contract into an FMA, so contraction cannot change a result either.
"""
from __future__ import annotations

from ._types import c_type, float_math, fn_prefix
from ._vec import fp64_deps

__all__ = ["RANDOM_FAMILIES", "random_types", "random_deps", "random_source", "function_name"]

RANDOM_FAMILIES = ("philox", "random_uniform", "random_normal", "random_randint")
_TYPES = {"philox": ("uint",), "random_uniform": ("float", "double"), "random_normal": ("float", "double"),
          "random_randint": ("long",)}
# exact decimal spellings (hex floats are not C++ before 17): 2**-24 and 2**-53
_P24 = "5.9604644775390625e-08"
_P53 = "1.1102230246251565e-16"


def random_types(family: str) -> tuple[str, ...]:
    return _TYPES[family]


def function_name(family: str, type_name: str) -> str:
    if family == "philox":
        return "pg_philox4x32_10"
    return f"pg_{family[len('random_'):]}_{type_name}"


def random_deps(dialect: str, family: str, type_name: str) -> list[str]:
    if family == "philox":
        return []
    return ["philox:uint"] + fp64_deps(dialect, type_name)


def _words(dialect: str) -> tuple[str, str, str]:
    return c_type(dialect, "uint"), c_type(dialect, "ulong"), c_type(dialect, "long")


def _philox(dialect: str) -> str:
    u32, u64, _ = _words(dialect)
    fp = fn_prefix(dialect)
    return f"""typedef struct {{ {u32} w[4]; }} pg_philox4;
{fp} pg_philox4 pg_philox4x32_10({u32} c0, {u32} c1, {u32} c2, {u32} c3, {u32} k0, {u32} k1) {{
    for (int r = 0; r < 10; ++r) {{
        if (r) {{ k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }}
        {u64} p0 = ({u64})c0 * 0xD2511F53u;
        {u64} p1 = ({u64})c2 * 0xCD9E8D57u;
        {u32} n0 = ({u32})(p1 >> 32) ^ c1 ^ k0;
        {u32} n2 = ({u32})(p0 >> 32) ^ c3 ^ k1;
        c0 = n0; c1 = ({u32})p1; c2 = n2; c3 = ({u32})p0;
    }}
    pg_philox4 out;
    out.w[0] = c0; out.w[1] = c1; out.w[2] = c2; out.w[3] = c3;
    return out;
}}
"""


def _draw(u32: str) -> str:
    """The Philox call keyed by (seed, counter): counter words (lo, hi, 0, 0), key (lo, hi)."""
    return (f"pg_philox4x32_10(({u32})counter, ({u32})(counter >> 32), 0u, 0u, "
            f"({u32})seed, ({u32})(seed >> 32))")


def _top53(u64: str, a: str, b: str) -> str:
    return f"(((({u64})x.w[{a}] << 32) | x.w[{b}]) >> 11)"


def random_source(dialect: str, family: str, type_name: str) -> str:
    if family == "philox":
        return _philox(dialect)
    u32, u64, i64 = _words(dialect)
    fp = fn_prefix(dialect)
    head = f"{fp} {{ret}} {function_name(family, type_name)}({u64} seed, {u64} counter{{extra}}) {{{{\n" \
           f"    pg_philox4 x = {_draw(u32)};\n"
    if family == "random_randint":
        # the high half of r * n from 32-bit limbs, as on the host: no dialect's mul_hi spelling needed
        return head.format(ret=i64, extra=f", {i64} low, {i64} high") + f"""    if (high <= low) return low;
    {u64} r = (({u64})x.w[0] << 32) | x.w[1];
    {u64} n = ({u64})high - ({u64})low;
    {u64} r_lo = r & 0xFFFFFFFFu, r_hi = r >> 32, n_lo = n & 0xFFFFFFFFu, n_hi = n >> 32;
    {u64} t = r_hi * n_lo + ((r_lo * n_lo) >> 32);
    {u64} w = (t & 0xFFFFFFFFu) + r_lo * n_hi;
    return ({i64})(({u64})low + r_hi * n_hi + (t >> 32) + (w >> 32));
}}
"""
    t = type_name
    sqrt, log, cos = (float_math(dialect, t, f) for f in ("sqrt", "log", "cos"))
    if family == "random_uniform":
        body = (f"    return ({t})(x.w[0] >> 8) * {_P24}f;\n" if t == "float"
                else f"    return ({t}){_top53(u64, '0', '1')} * {_P53};\n")
    elif t == "float":
        body = (f"    float u1 = (float)((x.w[0] >> 8) | 1u) * {_P24}f;\n"
                f"    float u2 = (float)(x.w[1] >> 8) * {_P24}f;\n"
                f"    float r = {sqrt}(-2.0f * {log}(u1));\n"
                f"    return r * {cos}(6.2831855f * u2);\n")
    else:
        body = (f"    double u1 = (double)({_top53(u64, '0', '1')} | 1u) * {_P53};\n"
                f"    double u2 = (double){_top53(u64, '2', '3')} * {_P53};\n"
                f"    double r = {sqrt}(-2.0 * {log}(u1));\n"
                f"    return r * {cos}(6.283185307179586 * u2);\n")
    return head.format(ret=c_type(dialect, t), extra="") + body + "}\n"
