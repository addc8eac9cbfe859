"""The translator's prelude pieces written in WGSL (``Dialect.prelude_piece``), and the atomics
written inline (``Dialect.prelude_call``).

Each piece defines the function of the same name as the shared C piece (``pg_pymod_int``,
``pg_min_float4``...), so the translator's calls stay as they are. Vector pieces apply the scalar
one per component. WGSL defines what C leaves undefined (integer overflow wraps, ``x / 0`` is
``x``, ``MIN / -1`` is ``MIN``, shift counts are taken modulo the width), so the bodies only
pick Python's and numpy's results where those differ.

Atomics cannot be functions: WGSL functions take no pointers into storage or workgroup memory,
so ``pg_atomic_add_int(&a[i], v)`` is written ``atomicAdd(&a[i], v)`` where it is called, and
its piece is empty. WGSL has atomics on i32/u32 only; the others are refused by name.
"""
from __future__ import annotations

import re
from typing import Callable

__all__ = ["piece", "call", "ATOMIC_CALL"]

_WGSL = {"int": "i32", "uint": "u32", "float": "f32", "half": "f16"}
_INTS = ("int", "uint")

# funcs.<name>: (arguments, returns the scalar (else the argument type), WGSL's builtin)
_FUNCS = {"dot": (2, True, "dot"), "cross": (2, False, "cross"), "length": (1, True, "length"),
          "distance": (2, True, "distance"), "normalize": (1, False, "normalize"), "reflect": (2, False, "reflect"),
          "clamp": (3, False, "clamp"), "mix": (3, False, "mix"), "step": (2, False, "step"),
          "smoothstep": (3, False, "smoothstep"), "fma": (3, False, "fma"), "sign": (1, False, "sign"),
          "radians": (1, False, "radians"), "degrees": (1, False, "degrees"), "min": (2, False, "min"),
          "max": (2, False, "max"), "abs": (1, False, "abs")}
# 8- and 16-bit integers are 32-bit values under an alias (_packed); the pieces whose result stays
# within the operands' range need no wrapping, so they are the 32-bit ones under the narrow name
_NARROW = {"uchar": "pg_u8", "char": "pg_i8", "ushort": "pg_u16", "short": "pg_i16"}
_NARROW_FAMILIES = ("funcs.min", "funcs.max", "funcs.clamp", "pymin", "pymax")
# funcs.* on u32 that WGSL has no builtin for
_UNSIGNED_FUNCS = {"sign": "return select(0u, 1u, a > 0u);"}


def _nan(t: str, x: str) -> str:
    """``x`` is NaN, on its bits at f32 (WGSL lets a compiler assume no NaN reaches ``x != x``)."""
    return f"((bitcast<u32>({x}) & 0x7fffffffu) > 0x7f800000u)" if t == "f32" else f"({x} != {x})"


def _signed_zero(t: str, x: str) -> str:
    """Zero with the sign bit of ``x`` (C's ``copysign(0, x)``)."""
    if t == "f32":
        return f"bitcast<f32>(bitcast<u32>({x}) & 0x80000000u)"
    return f"select({t}(0.0), -{t}(0.0), {x} < {t}(0.0) || (1.0 / f32({x})) < 0.0)"


def _int_divmod(op: str, s: str) -> str:
    if s == "uint":      # WGSL's a / 0u is a: Python's (numpy's) 0
        return f"return select(a {'/' if op == 'pyfloordiv' else '%'} b, 0u, b == 0u);"
    # WGSL truncates; floor it. b == -1 needs no care (MIN / -1 is MIN, wrapping like numpy)
    body = ("if (b == 0) { return 0; } var q = a / b; let r = a % b; "
            "if (r != 0 && ((r < 0) != (b < 0))) { q = q - 1; }" if op == "pyfloordiv" else
            "if (b == 0) { return 0; } var r = a % b; if (r != 0 && ((r < 0) != (b < 0))) { r = r + b; }")
    return body + (" return q;" if op == "pyfloordiv" else " return r;")


# C's fmod, exact: WGSL's float % is x - y * trunc(x / y), off by the rounding of x / y. Long
# division on the exponents: each step subtracts the largest y * 2^k not above the remainder, which
# is exact (the two are within a factor of 2); at most the exponents' difference of steps.
def not_equal(t: str) -> str:
    """``pg_wgsl_ne_<t>``: IEEE's ``a != b`` (true where either is NaN; lavapipe's ``!=`` was false
    for NaN, which WGSL allows), NaN tested on the bits. Written once at the top of every kernel."""
    if t == "f16":
        return "fn pg_wgsl_ne_f16(a: f16, b: f16) -> bool { return pg_wgsl_ne_f32(f32(a), f32(b)); }\n"
    return ("fn pg_wgsl_ne_f32(a: f32, b: f32) -> bool {\n"
            "    return (bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u || (bitcast<u32>(b) & 0x7fffffffu) > 0x7f800000u"
            " || a != b;\n}\n")


def exact_fmod(t: str) -> str:
    """``pg_wgsl_fmod_<t>``, written once at the top of every kernel (``WGSL.headers``: ``math.fmod``
    calls it too, and a math call cannot ask for a prelude piece). NaN and infinity are tested on
    the bits at f32, since WGSL lets a compiler assume no NaN reaches a comparison."""
    if t == "f16":       # exact through f32 (the result fits f16); naga types frexp(f16).exp as i16
        return "fn pg_wgsl_fmod_f16(x: f16, y: f16) -> f16 { return f16(pg_wgsl_fmod_f32(f32(x), f32(y))); }\n"
    bad_x = "((bitcast<u32>(x) & 0x7fffffffu) >= 0x7f800000u)"
    bad_y = f"(ay == 0.0 || {_nan(t, 'y')})"
    sign = "bitcast<f32>(bitcast<u32>(r) | (bitcast<u32>(x) & 0x80000000u))"      # -0.0 too
    return (f"fn pg_wgsl_fmod_{t}(x: {t}, y: {t}) -> {t} {{ let ay = abs(y); var r = abs(x); "
            f"if ({bad_x} || {bad_y}) {{ return bitcast<f32>(0x7fc00000u); }} "
            "let ey = frexp(ay).exp; "
            f"loop {{ if (r < ay) {{ break; }} var d = ldexp(ay, frexp(r).exp - ey); if (d > r) {{ d = d * {t}(0.5); }} "
            f"r = r - d; }} return {sign}; }}\n")


def _float_divmod(op: str, t: str) -> str:
    """CPython's float_divmod on the exact fmod above."""
    z = f"{t}(0.0)"
    nan = f"if ({_nan(t, 'a')} || {_nan(t, 'b')}) {{ return a + b; }} "
    if op == "pymod":
        return (f"{nan}var m = pg_wgsl_fmod_{t}(a, b); if ({_nan(t, 'm')}) {{ return m; }} if (m != {z}) {{ if ((b < {z}) != (m < {z})) {{ m = m + b; }} }} "
                f"else {{ m = {_signed_zero(t, 'b')}; }} return m;")
    return (f"{nan}if (b == {z}) {{ return a / b; }} let m = pg_wgsl_fmod_{t}(a, b); if ({_nan(t, 'm')}) {{ return m; }} var d = (a - m) / b; "
            f"if (m != {z}) {{ if ((b < {z}) != (m < {z})) {{ d = d - {t}(1.0); }} }} "
            f"var f = {_signed_zero(t, 'a / b')}; "
            f"if (d != {z}) {{ f = floor(d); if (d - f > {t}(0.5)) {{ f = f + {t}(1.0); }} }} return f;")


def _pow(s: str) -> str:
    t = _WGSL[s]
    negative = "" if s == "uint" else (
        "if (b0 < 0) { if (a == 1) { return 1; } if (a == -1) { return select(1, -1, (b0 & 1) != 0); } return 0; } ")
    return (f"{negative}var b = b0; var r = 1u; var x = bitcast<u32>(a); "
            f"while (b != {t}(0)) {{ if ((b & {t}(1)) != {t}(0)) {{ r = r * x; }} x = x * x; b = b >> 1u; }} "
            f"return bitcast<{t}>(r);")


def _shift(op: str, s: str) -> str:
    t = _WGSL[s]
    if op == "pyshl":
        return f"if (u32(b) < 32u) {{ return a << u32(b); }} return {t}(0);"
    beyond = "0u" if s == "uint" else "select(0, -1, a < 0)"
    return f"if (u32(b) < 32u) {{ return a >> u32(b); }} return {beyond};"


def _float_simple(op: str, t: str) -> str:
    z, one = f"{t}(0.0)", f"{t}(1.0)"
    return {"pymin": "return select(a, b, b < a);", "pymax": "return select(a, b, b > a);",
            "npminimum": f"if ({_nan(t, 'a')} || {_nan(t, 'b')}) {{ return a + b; }} return select(a, b, b < a);",
            "npmaximum": f"if ({_nan(t, 'a')} || {_nan(t, 'b')}) {{ return a + b; }} return select(a, b, b > a);",
            "npsign": f"if (a > {z}) {{ return {one}; }} if (a < {z}) {{ return -{one}; }} "
                      f"if (a == {z}) {{ return {z}; }} return a;"}[op]


_PY_BODIES: "dict[str, Callable[[str, str], str]]" = {
    "pyfloordiv": lambda s, t: _int_divmod("pyfloordiv", s) if s in _INTS else _float_divmod("pyfloordiv", t),
    "pymod": lambda s, t: _int_divmod("pymod", s) if s in _INTS else _float_divmod("pymod", t),
    "pypow": lambda s, t: _pow(s), "pyshl": lambda s, t: _shift("pyshl", s), "pyshr": lambda s, t: _shift("pyshr", s),
    "pyneg": lambda s, t: "return -a;",
    **{op: (lambda op: lambda s, t: _float_simple(op, t))(op) for op in ("pymin", "pymax", "npminimum",
                                                                       "npmaximum", "npsign")}}
_UNARY = ("pyneg", "npsign")


def _split(type_name: str) -> "tuple[str, int]":
    base = type_name.rstrip("0123456789")
    return base, int(type_name[len(base):] or 1)


def _type(base: str, width: int) -> str:
    return _WGSL[base] if width == 1 else f"vec{width}<{_WGSL[base]}>"


def _per_component(fn: str, scalar_fn: str, base: str, width: int, nargs: int) -> str:
    t = _type(base, width)
    args = "abc"[:nargs]
    comps = ", ".join(f"{scalar_fn}({', '.join(f'{x}.{c}' for x in args)})" for c in "xyzw"[:width])
    return f"fn {fn}({', '.join(f'{x}: {t}' for x in args)}) -> {t} {{ return {t}({comps}); }}\n"


def piece(name: str, refuse: "Callable[[str, str, str], Exception]") -> "tuple[tuple[str, ...], str] | None":
    """``(dependencies, WGSL source)`` of prelude piece ``name``; ``refuse(what, fix)`` makes the
    error of a piece WGSL cannot have. None: not a family this target writes (the shared piece,
    which fails to compile naming itself). ``refuse(what, fix, capability)``."""
    family, _, type_name = name.partition(":")
    base, width = _split(type_name)
    if family == "ext" or family.startswith("native_"):    # no pragmas; gpu.native_* are WGSL's own (_target)
        return (), ""
    if family.startswith("atomic_"):
        if type_name not in _INTS:
            raise refuse(f"atomics on {type_name} (gpu.{family.split('.')[0]}: WGSL's atomics are on int32 "
                         "and uint32 only)", "or keep the counters in an int32 or uint32 array", "float_atomics")
        return (), ""
    if base in _NARROW:
        return _narrow(family, type_name, width)
    if base not in _WGSL or width > 4:
        return None
    if family in ("vec", "vec_ops"):         # WGSL's own vectors, with their operators and scalar broadcast
        return (), ""
    t = _type(base, width)
    if family in _PY_BODIES:
        fn = f"pg_{family}_{type_name}"
        if width > 1:
            return (f"{family}:{base}",), _per_component(fn, f"pg_{family}_{base}", base, width,
                                                          1 if family in _UNARY else 2)
        if family == "pypow":
            head = f"fn {fn}(a: {t}, b0: {t}) -> {t}"
        else:
            head = f"fn {fn}({'a: ' + t if family in _UNARY else f'a: {t}, b: {t}'}) -> {t}"
        src = f"{head} {{ {_PY_BODIES[family](base, t)} }}\n"
        return (), src
    if family.startswith("funcs."):
        f = family[len("funcs."):]
        if f not in _FUNCS:
            return None
        nargs, scalar_result, builtin = _FUNCS[f]
        args = "abc"[:nargs]
        ret = _WGSL[base] if scalar_result else t
        head = f"fn pg_{f}_{type_name}({', '.join(f'{x}: {t}' for x in args)}) -> {ret}"
        if base == "uint" and f in _UNSIGNED_FUNCS:
            if width > 1:
                return (f"{family}:uint",), _per_component(f"pg_{f}_{type_name}", f"pg_{f}_uint", base, width, nargs)
            return (), f"{head} {{ {_UNSIGNED_FUNCS[f]} }}\n"
        return (), f"{head} {{ return {builtin}({', '.join(args)}); }}\n"
    return None


def _narrow(family: str, type_name: str, width: int) -> "tuple[tuple[str, ...], str] | None":
    """A piece on an 8/16-bit integer scalar (``funcs.max:uchar``: a bool array's max), or None."""
    if width != 1 or family not in _NARROW_FAMILIES:
        return None
    t = _NARROW[type_name]
    if family.startswith("funcs."):
        f = family[len("funcs."):]
        args = "abc"[:_FUNCS[f][0]]
        return (), f"fn pg_{f}_{type_name}({', '.join(f'{x}: {t}' for x in args)}) -> {t} {{ return {f}({', '.join(args)}); }}\n"
    return (), f"fn pg_{family}_{type_name}(a: {t}, b: {t}) -> {t} {{ {_float_simple(family, t)} }}\n"


# pg_atomic_<op>[_local]_<int|uint>(p, ...) -> WGSL's atomic builtins
ATOMIC_CALL = re.compile(r"pg_atomic_(add|sub|min|max|and|or|xor|xchg|cmpxchg|inc|dec)_(?:local_)?(int|uint)")
_ATOMIC = {"add": "atomicAdd({0}, {1})", "sub": "atomicSub({0}, {1})", "min": "atomicMin({0}, {1})",
           "max": "atomicMax({0}, {1})", "and": "atomicAnd({0}, {1})", "or": "atomicOr({0}, {1})",
           "xor": "atomicXor({0}, {1})", "xchg": "atomicExchange({0}, {1})",
           "cmpxchg": "atomicCompareExchangeWeak({0}, {1}, {2}).old_value",
           "inc": "atomicAdd({0}, {one})", "dec": "atomicSub({0}, {one})"}


def call(function: str, args: "list[str]") -> "str | None":
    """An atomic prelude call written inline (None: an ordinary call)."""
    m = ATOMIC_CALL.fullmatch(function)
    if m is None:
        return None
    return _ATOMIC[m.group(1)].format(*args, one="1u" if m.group(2) == "uint" else "1")
