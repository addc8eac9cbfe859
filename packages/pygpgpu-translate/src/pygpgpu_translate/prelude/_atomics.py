"""Pieces ``atomic_<op>:<T>`` / ``atomic_<op>.local:<T>``: one atomic with one meaning everywhere.

Every helper returns the value the location held *before* the operation. ``inc``/``dec`` are
add/subtract 1 with ordinary wrap-around (not CUDA's ``atomicInc`` limit semantics);
``cmpxchg(p, cmp, v)`` stores ``v`` if ``*p == cmp`` (floats compare bit patterns, on every
backend); float ``min``/``max`` ignore NaN like ``fmin``/``fmax``. Float add/sub/min/max/inc/dec
in OpenCL 1.2 use a compare-exchange loop (``atomic_fetch_add_explicit`` is used for float add
where ``cl_ext_float_atomics`` is enabled), and so does every double operation on every backend
(native double atomics depend on the device generation); 64-bit atomics in OpenCL need the
``cl_khr_int64_*_atomics`` pragmas, emitted as pieces.

Compare-exchange loops start from a guess instead of a plain load (a plain load racing with
the atomics is a data race that oclgrind reports); every value they act on comes from a CAS.
"""
from __future__ import annotations

from ._types import dialect_of

ATOMIC_OPS = ("add", "sub", "min", "max", "and", "or", "xor", "xchg", "cmpxchg", "inc", "dec")
ATOMIC_TYPES = ("int", "uint", "long", "ulong", "float", "double")
FLOAT_ATOMIC_OPS = ("add", "sub", "min", "max", "xchg", "cmpxchg", "inc", "dec")
_INT64_EXTENDED = ("min", "max", "and", "or", "xor")


def atomic_types(op: str) -> tuple[str, ...]:
    return ATOMIC_TYPES if op in FLOAT_ATOMIC_OPS else ATOMIC_TYPES[:4]


# per float type: (bit-pattern type in OpenCL, its compare-exchange, OpenCL literal suffix)
_OPENCL_BITS = {"float": ("uint", "atomic_cmpxchg", "f"), "double": ("ulong", "atom_cmpxchg", "")}


def function_name(op: str, type_name: str, local: bool = False) -> str:
    return f"pg_atomic_{op}_{'local_' if local else ''}{type_name}"


def ext_int64(dialect, which: str) -> str:
    return dialect_of(dialect).extension_pragma(f"int64_{which}_atomics")


def atomic_deps(dialect, op: str, type_name: str, local: bool) -> list[str]:
    """The extension pieces 64-bit atomics need (OpenCL's pragmas; empty pieces elsewhere)."""
    if type_name == "double":
        return ["ext:fp64", "ext:int64_base_atomics"]
    if type_name in ("long", "ulong"):
        return ["ext:int64_base_atomics"] + (["ext:int64_extended_atomics"] if op in _INT64_EXTENDED else [])
    return []


def atomic_source(dialect, op: str, type_name: str, local: bool) -> str:
    """The dialect writes the piece: ``opencl_atomic_source`` and ``cuda_atomic_source`` below."""
    if type_name not in atomic_types(op):
        raise KeyError(f"atomic_{op} is not defined for {type_name}")
    return dialect_of(dialect).atomic_source(op, type_name, local)


def _params(op: str, ptr: str, t: str) -> str:
    return {"cmpxchg": f"{ptr}, {t} cmp, {t} v", "inc": ptr, "dec": ptr}.get(op, f"{ptr}, {t} v")


def opencl_atomic_source(d, op: str, type_name: str, local: bool) -> str:
    """OpenCL C's atomic_* / atom_* builtins on __global or __local pointers."""
    t = d.c_type(type_name)
    space = "__local" if local else "__global"
    body = _opencl_body(op, type_name, space)
    return f"{d.prelude_fn_prefix} {t} {function_name(op, type_name, local)}({_params(op, f'volatile {space} {t}* p', t)}) {{ {body} }}\n"


def cuda_atomic_source(d, op: str, type_name: str, local: bool = False) -> str:
    """CUDA's atomic* functions (HIP has the same), one pointer type for shared and global memory."""
    t = d.c_type(type_name)
    body = _cuda_body(d, op, type_name)
    return f"{d.prelude_fn_prefix} {t} {function_name(op, type_name, local)}({_params(op, f'{t}* p', t)}) {{ {body} }}\n"


def _opencl_body(op: str, type_name: str, space: str) -> str:
    if type_name in _OPENCL_BITS:
        return _opencl_float_body(op, type_name, space)
    fn = "atom_" if type_name in ("long", "ulong") else "atomic_"
    if op in ("inc", "dec"):
        return f"return {fn}{op}(p);"
    if op == "cmpxchg":
        return f"return {fn}cmpxchg(p, cmp, v);"
    return f"return {fn}{op}(p, v);"


def _opencl_float_body(op: str, f: str, space: str) -> str:
    u_t, cas, sfx = _OPENCL_BITS[f]
    as_f, as_u = f"as_{f}", f"as_{u_t}"
    if op == "xchg":
        return "return atomic_xchg(p, v);" if f == "float" else f"return {as_f}(atom_xchg((volatile {space} ulong*)p, {as_u}(v)));"
    u = f"(volatile {space} {u_t}*)p"
    if op == "cmpxchg":
        return f"return {as_f}({cas}({u}, {as_u}(cmp), {as_u}(v)));"
    update = {
        "add": f"{as_f}(assumed) + v",
        "sub": f"{as_f}(assumed) - v",
        "inc": f"{as_f}(assumed) + 1.0{sfx}",
        "dec": f"{as_f}(assumed) - 1.0{sfx}",
        "min": f"fmin({as_f}(assumed), v)",
        "max": f"fmax({as_f}(assumed), v)",
    }[op]
    guess = f"{as_u}(v)" if op in ("min", "max") else f"({u_t})0"
    loop = (
        f"volatile {space} {u_t}* u = {u}; {u_t} assumed = {guess}; "
        f"for (;;) {{ {u_t} old = {cas}(u, assumed, {as_u}({update})); "
        f"if (old == assumed) return {as_f}(old); assumed = old; }}"
    )
    if op == "add" and f == "float":
        feature = "__opencl_c_ext_fp32_local_atomic_add" if space == "__local" else "__opencl_c_ext_fp32_global_atomic_add"
        return (
            f"\n#if defined({feature}) && defined(__opencl_c_atomic_order_relaxed)\n"
            f"  return atomic_fetch_add_explicit((volatile {space} atomic_float*)p, v, memory_order_relaxed);\n"
            f"#else\n  {loop}\n#endif\n"
        )
    return loop


def _cuda_body(d, op: str, type_name: str) -> str:
    if type_name in _CUDA_BITS:
        return _cuda_float_body(op, type_name)
    t = d.c_type(type_name)
    if type_name == "long":
        # Two's complement makes the unsigned 64-bit atomics exact for signed values.
        u = "unsigned long long"
        if op in ("min", "max"):
            if d.int64_min_max_atomics:
                return f"return atomic{op.capitalize()}(p, v);"
            pick = "<" if op == "min" else ">"
            return (
                f"{u} assumed = ({u})v; for (;;) {{ long long a = (long long)assumed; "
                f"{u} old = atomicCAS(({u}*)p, assumed, ({u})(v {pick} a ? v : a)); "
                f"if (old == assumed) return (long long)old; assumed = old; }}"
            )
        cast_p = f"({u}*)p"
        return "return (long long)" + _cuda_int_call(op, cast_p, f"({u})v", f"({u})cmp", "1ull", "~0ull") + ";"
    one = "1ull" if type_name == "ulong" else "1"
    neg_one = "~0ull" if type_name == "ulong" else f"({t})-1"
    if type_name == "ulong":
        return "return " + _cuda_int_call(op, "p", "v", "cmp", one, neg_one) + ";"
    if op == "sub":
        return "return atomicSub(p, v);"
    if op == "dec":
        return "return atomicSub(p, 1);"
    return "return " + _cuda_int_call(op, "p", "v", "cmp", one, neg_one) + ";"


def _cuda_int_call(op: str, p: str, v: str, cmp: str, one: str, neg_one: str) -> str:
    return {
        "add": f"atomicAdd({p}, {v})",
        "sub": f"atomicAdd({p}, 0ull - {v})" if "ull" in one else f"atomicSub({p}, {v})",
        "min": f"atomicMin({p}, {v})",
        "max": f"atomicMax({p}, {v})",
        "and": f"atomicAnd({p}, {v})",
        "or": f"atomicOr({p}, {v})",
        "xor": f"atomicXor({p}, {v})",
        "xchg": f"atomicExch({p}, {v})",
        "cmpxchg": f"atomicCAS({p}, {cmp}, {v})",
        "inc": f"atomicAdd({p}, {one})",
        "dec": f"atomicAdd({p}, {neg_one})",
    }[op]


# per float type on CUDA/HIP: (bit-pattern type, float -> bits, bits -> float, literal/math suffix)
_CUDA_BITS = {
    "float": ("unsigned int", "__float_as_uint({})", "__uint_as_float({})", "f"),
    "double": ("unsigned long long", "(unsigned long long)__double_as_longlong({})",
               "__longlong_as_double((long long)({}))", ""),
}


def _cuda_float_body(op: str, f: str) -> str:
    u, to_u, to_f, sfx = _CUDA_BITS[f]
    if f == "float" and op in ("add", "sub", "inc", "dec", "xchg"):      # native float atomics
        arg = {"add": "v", "sub": "-v", "inc": "1.0f", "dec": "-1.0f", "xchg": "v"}[op]
        return f"return atomic{'Exch' if op == 'xchg' else 'Add'}(p, {arg});"
    if op == "xchg":
        return "return " + to_f.format(f"atomicExch(({u}*)p, {to_u.format('v')})") + ";"
    if op == "cmpxchg":
        return "return " + to_f.format(f"atomicCAS(({u}*)p, {to_u.format('cmp')}, {to_u.format('v')})") + ";"
    o = to_f.format("assumed")
    update = {"add": f"{o} + v", "sub": f"{o} - v", "inc": f"{o} + 1.0{sfx}", "dec": f"{o} - 1.0{sfx}",
              "min": f"fmin{sfx}({o}, v)", "max": f"fmax{sfx}({o}, v)"}[op]
    guess = to_u.format("v") if op in ("min", "max") else f"({u})0"
    return (
        f"{u}* u = ({u}*)p; {u} assumed = {guess}; "
        f"for (;;) {{ {u} old = atomicCAS(u, assumed, {to_u.format(update)}); "
        f"if (old == assumed) return {to_f.format('old')}; assumed = old; }}"
    )
