"""Type names per dialect and the small code-generation helpers every piece shares."""
from __future__ import annotations

DIALECTS = ("opencl", "cuda", "hip")

INT_SCALARS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong")
FLOAT_SCALARS = ("float", "double")
SCALARS = INT_SCALARS + FLOAT_SCALARS
WIDTHS = (2, 3, 4, 8, 16)
VECTORS = tuple(f"{s}{w}" for s in SCALARS for w in WIDTHS)

_BITS = {"char": 8, "uchar": 8, "short": 16, "ushort": 16, "int": 32, "uint": 32, "long": 64, "ulong": 64,
         "float": 32, "double": 64}
_SIGNED = {8: "char", 16: "short", 32: "int", 64: "long"}

_CUDA_SCALAR = {
    "char": "signed char",
    "uchar": "unsigned char",
    "short": "short",
    "ushort": "unsigned short",
    "int": "int",
    "uint": "unsigned int",
    "long": "long long",
    "ulong": "unsigned long long",
    "float": "float",
    "double": "double",
}
# Built-in CUDA/HIP vector names of the 2/3/4-wide types ("long" is 64-bit: longlong).
_CUDA_VEC_BASE = {
    "char": "char", "uchar": "uchar", "short": "short", "ushort": "ushort", "int": "int", "uint": "uint",
    "long": "longlong", "ulong": "ulonglong", "float": "float", "double": "double",
}
# CUDA 13 deprecates these 4-wide built-ins (their alignment changed); the prelude defines its own.
_CUDA_OWN_STRUCT = {"long4", "ulong4", "double4"}


def split_type(type_name: str) -> tuple[str, int]:
    """``"float4"`` -> ``("float", 4)``; ``"int"`` -> ``("int", 1)``."""
    for s in sorted(SCALARS, key=len, reverse=True):
        if type_name.startswith(s):
            rest = type_name[len(s):]
            if rest == "":
                return s, 1
            if rest.isdigit() and int(rest) in WIDTHS:
                return s, int(rest)
    raise KeyError(f"unknown type {type_name!r}: expected one of {SCALARS} with optional width {WIDTHS}")


def is_int(type_name: str) -> bool:
    return split_type(type_name)[0] in INT_SCALARS


def bits(scalar: str) -> int:
    return _BITS[scalar]


def is_unsigned(scalar: str) -> bool:
    return scalar.startswith("u")


def comparison_type(type_name: str) -> str:
    """Type of a comparison result: signed int of the element size, same width."""
    s, w = split_type(type_name)
    c = _SIGNED[_BITS[s]]
    return c if w == 1 else f"{c}{w}"


def own_struct(dialect: str, type_name: str) -> bool:
    """True where the prelude itself defines the vector struct (CUDA/HIP 8/16-wide, some CUDA 4-wide)."""
    if dialect == "opencl":
        return False
    _, w = split_type(type_name)
    return w in (8, 16) or (dialect == "cuda" and type_name in _CUDA_OWN_STRUCT)


def c_type(dialect: str, type_name: str) -> str:
    """The C spelling of a PyGPGPU scalar or vector type name in ``dialect``.

    OpenCL: unchanged (``long`` is 64-bit there). CUDA/HIP: ``long`` -> ``long long``,
    ``uint`` -> ``unsigned int``; vectors use the built-in ``float4``/``longlong2``/... where the
    toolchain has one and ``pg_<type>`` structs (defined by the ``vec:<type>`` piece) otherwise."""
    s, w = split_type(type_name)
    if dialect == "opencl":
        return type_name
    if w == 1:
        return _CUDA_SCALAR[s]
    if own_struct(dialect, type_name):
        return f"pg_{type_name}"
    return f"{_CUDA_VEC_BASE[s]}{w}"


def component(dialect: str, type_name: str, i: int) -> str:
    """Member access suffix for component ``i`` (``".x"``, ``".s5"``)."""
    _, w = split_type(type_name)
    if dialect == "opencl":
        return f".s{i:x}"
    if w > 4:
        return f".s{i:X}"
    return "." + "xyzw"[i]


def make_vector(dialect: str, type_name: str, comps: list[str]) -> str:
    """Expression building a vector from one expression per component."""
    if dialect == "opencl":
        return f"(({type_name})({', '.join(comps)}))"
    return f"pg_make_{type_name}({', '.join(comps)})"


def fn_prefix(dialect: str) -> str:
    """Storage/inlining qualifiers of every prelude function."""
    if dialect == "opencl":
        return "static inline"
    return "__device__ __forceinline__"


def float_math(dialect: str, scalar: str, fn: str) -> str:
    """``sqrt`` -> ``sqrtf`` for float on CUDA/HIP; OpenCL's are overloaded."""
    if dialect != "opencl" and scalar == "float":
        return fn + "f"
    return fn


def float_literal(scalar: str, text: str) -> str:
    return f"{text}f" if scalar == "float" else text


def check_dialect(dialect: str) -> str:
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}: expected one of {DIALECTS}")
    return dialect
