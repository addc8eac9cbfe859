"""Small C functions the lowering calls for Python semantics and atomics.

Each is generated per (dialect, type) and emitted once per program, only when used.
"""
from __future__ import annotations

from ._types import Scalar

__all__ = ["support_function"]


def _q(d) -> str:
    return d.device_fn_prefix


def support_function(d, kind: str, t: Scalar, extra: str = "") -> tuple[str, str]:
    """Return (C name, C definition) for a support function of ``kind`` at type ``t``."""
    T = d.type_name(t)
    tag = t.name
    name = f"pyg_{kind}_{tag}" + (f"_{extra}" if extra else "")
    q = _q(d)
    # Integer division by zero (and INT_MIN / -1) traps on CPUs, and a guard branch is not enough:
    # compilers may speculate the division (seen with PoCL). So divide by a divisor that is never
    # 0 or -1 and select the Python result afterwards: x // 0 and x % 0 give 0 (as numpy does),
    # x // -1 is the wrapped negation, x % -1 is 0.
    if kind in ("floordiv", "mod"):
        U = d.type_name(Scalar(("uint" if t.kind == "i" else "uint") + str(t.bits)))
        bad = "(b == 0 || b == -1)" if t.kind == "i" else "(b == 0)"
        head = f"{q}{T} {name}({T} a, {T} b) {{ {T} s = {bad} ? ({T})1 : b; {T} q = a / s; {T} r = a % s; "
        if t.kind == "i":
            head += "if (r != 0 && ((r < 0) != (s < 0))) { q -= 1; r += s; } "
        if kind == "floordiv":
            tail = (f"return b == 0 ? ({T})0 : (b == -1 ? ({T})(({U})0 - ({U})a) : q); }}" if t.kind == "i"
                    else f"return b == 0 ? ({T})0 : q; }}")
        else:
            tail = f"return {bad} ? ({T})0 : r; }}"
        body = head + tail
    elif kind == "fmod_py":
        fm = d.math_name("fmod", t)
        body = (f"{q}{T} {name}({T} a, {T} b) {{ {T} r = {fm}(a, b); "
                f"if (r != 0 && ((r < 0) != (b < 0))) r += b; return r; }}")
    elif kind == "ffloordiv":
        fm, fl = d.math_name("fmod", t), d.math_name("floor", t)
        body = f"{q}{T} {name}({T} a, {T} b) {{ return {fl}(a / b); }}"
    elif kind == "ipow":      # wrapping multiplication in the unsigned type (signed overflow is UB)
        U = d.type_name(Scalar(f"uint{t.bits}"))
        body = (f"{q}{T} {name}({T} b, {T} e) {{ if (e < 0) return (b == 1) ? 1 : ((b == -1) ? ((e & 1) ? -1 : 1) : 0); "
                f"{U} r = 1, x = ({U})b; while (e) {{ if (e & 1) r *= x; x *= x; e >>= 1; }} return ({T})r; }}")
    elif kind == "abs":
        U = d.type_name(Scalar(f"uint{max(t.bits, 32)}"))
        body = f"{q}{T} {name}({T} a) {{ return a < 0 ? ({T})(({U})0 - ({U})a) : a; }}"
    elif kind == "min":
        body = f"{q}{T} {name}({T} a, {T} b) {{ return b < a ? b : a; }}"
    elif kind == "max":
        body = f"{q}{T} {name}({T} a, {T} b) {{ return b > a ? b : a; }}"
    elif kind in ("nanmin", "nanmax"):
        op = "<" if kind == "nanmin" else ">"
        body = f"{q}{T} {name}({T} a, {T} b) {{ return (a != a || b != b) ? a + b : (b {op} a ? b : a); }}"
    elif kind == "clsign":
        body = f"{q}{T} {name}({T} a) {{ return a > 0 ? ({T})1 : (a < 0 ? ({T})-1 : (a == a ? a : ({T})0)); }}"
    elif kind == "sign":
        if t.kind == "f":
            body = f"{q}{T} {name}({T} a) {{ return a > 0 ? ({T})1 : (a < 0 ? ({T})-1 : a); }}"
        else:
            body = f"{q}{T} {name}({T} a) {{ return ({T})((a > 0) - (a < 0)); }}"
    elif kind.startswith("atomic_"):
        return _atomic(d, kind[7:], t, extra, name, q)
    else:
        raise KeyError(kind)
    return name, body


# C expression for the new value of a read-modify-write given old ``o`` and operand ``v``
_RMW = {"add": "o + v", "sub": "o - v", "min": "(v < o ? v : o)", "max": "(v > o ? v : o)", "and": "o & v",
        "or": "o | v", "xor": "o ^ v", "xchg": "v", "inc": "o + 1", "dec": "o - 1"}
_NATIVE_CL32 = {"add": "atomic_add", "sub": "atomic_sub", "min": "atomic_min", "max": "atomic_max",
                "and": "atomic_and", "or": "atomic_or", "xor": "atomic_xor", "xchg": "atomic_xchg",
                "inc": "atomic_inc", "dec": "atomic_dec", "cmpxchg": "atomic_cmpxchg"}
_NATIVE_CL64 = {k: "atom_" + v[7:] for k, v in _NATIVE_CL32.items()}
_NATIVE_CUDA = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin", "max": "atomicMax", "and": "atomicAnd",
                "or": "atomicOr", "xor": "atomicXor", "xchg": "atomicExch", "cmpxchg": "atomicCAS"}


def _atomic(d, op, t, space, name, q):
    T = d.type_name(t)
    bits = t.bits
    if d.name == "opencl":
        sp = "__local" if space == "local" else "__global"
        ptr = f"volatile {sp} {T}*"
        if t.kind in "iu":
            native = (_NATIVE_CL32 if bits == 32 else _NATIVE_CL64)[op]
            if op == "cmpxchg":
                return name, f"{q}{T} {name}({ptr} p, {T} c, {T} v) {{ return {native}(p, c, v); }}"
            if op in ("inc", "dec"):
                return name, f"{q}{T} {name}({ptr} p) {{ return {native}(p); }}"
            return name, f"{q}{T} {name}({ptr} p, {T} v) {{ return {native}(p, v); }}"
        U = "uint" if bits == 32 else "ulong"
        cas = "atomic_cmpxchg" if bits == 32 else "atom_cmpxchg"
        uptr = f"volatile {sp} {U}*"
    else:
        ptr = f"{T}*"
        if t.kind in "iu":
            cu = {"int32": "int", "uint32": "unsigned int", "uint64": "unsigned long long",
                  "int64": "unsigned long long"}[t.name]
            cast = f"({cu}*)" if t.name == "int64" else ""
            if op in ("inc", "dec"):
                return name, f"{q}{T} {name}({ptr} p) {{ return ({T})atomicAdd({cast}p, ({cu}){'1' if op == 'inc' else '-1'}); }}"
            if op == "cmpxchg":
                return name, f"{q}{T} {name}({ptr} p, {T} c, {T} v) {{ return ({T})atomicCAS({cast}p, ({cu})c, ({cu})v); }}"
            if op == "sub" and bits == 64:
                return name, f"{q}{T} {name}({ptr} p, {T} v) {{ return ({T})atomicAdd({cast}p, ({cu})(0 - v)); }}"
            if not (t.name == "int64" and op in ("min", "max")):
                return name, f"{q}{T} {name}({ptr} p, {T} v) {{ return ({T}){_NATIVE_CUDA[op]}({cast}p, ({cu})v); }}"
            if d.name == "cuda":     # sm_35+: signed 64-bit min/max; HIP 5.x lacks them (CAS loop below)
                return name, (f"{q}{T} {name}({ptr} p, {T} v) {{ return ({T}){_NATIVE_CUDA[op]}((long long*)p, (long long)v); }}")
        if t.name == "float32" and op in ("add", "xchg"):
            return name, f"{q}{T} {name}({ptr} p, {T} v) {{ return {_NATIVE_CUDA[op]}(p, v); }}"
        U = "unsigned int" if bits == 32 else "unsigned long long"
        cas = "atomicCAS"
        uptr = f"{U}*"
    # compare-exchange loop over the bit pattern: floats, and int ops with no native form
    to_bits = f"union {{ {T} t; {U} u; }}"
    if op == "cmpxchg":
        return name, (f"{q}{T} {name}({ptr} p, {T} c, {T} v) {{ {to_bits} cc, vv, r; cc.t = c; vv.t = v; "
                      f"r.u = {cas}(({uptr})p, cc.u, vv.u); return r.t; }}")
    params = f"{ptr} p" if op in ("inc", "dec") else f"{ptr} p, {T} v"
    return name, (f"{q}{T} {name}({params}) {{ {to_bits} old, nw; {U} seen = *(({uptr})p); "
                  f"do {{ old.u = seen; {T} o = old.t; nw.t = {_RMW[op]}; "
                  f"seen = {cas}(({uptr})p, old.u, nw.u); }} while (seen != old.u); return old.t; }}")
