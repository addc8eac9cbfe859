"""The prelude's type names and the small code-generation helpers every piece shares.

Every spelling comes from the dialect object (``pygpgpu_translate._dialects``); the pieces are
given a dialect's name or the object itself.
"""
from __future__ import annotations

INT_SCALARS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong")
FLOAT_SCALARS = ("float", "double")
SCALARS = INT_SCALARS + FLOAT_SCALARS
WIDTHS = (2, 3, 4, 8, 16)
VECTORS = tuple(f"{s}{w}" for s in SCALARS for w in WIDTHS)

_BITS = {"char": 8, "uchar": 8, "short": 16, "ushort": 16, "int": 32, "uint": 32, "long": 64, "ulong": 64,
         "float": 32, "double": 64}
_SIGNED = {8: "char", 16: "short", 32: "int", 64: "long"}


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


def dialect_of(dialect):
    """The ``Dialect`` object of a dialect name (an object passes through); unknown names raise."""
    from .._dialects import dialect_for
    return dialect_for(dialect)


def own_struct(dialect, type_name: str) -> bool:
    """True where the prelude itself defines the vector struct (CUDA/HIP 8/16-wide, some CUDA 4-wide)."""
    return dialect_of(dialect).own_struct(type_name)


def c_type(dialect, type_name: str) -> str:
    """The C spelling of a PyGPGPU scalar or vector type name in ``dialect``.

    OpenCL: unchanged (``long`` is 64-bit there). CUDA/HIP: ``long`` -> ``long long``,
    ``uint`` -> ``unsigned int``; vectors use the built-in ``float4``/``longlong2``/... where the
    toolchain has one and ``pg_<type>`` structs (defined by the ``vec:<type>`` piece) otherwise."""
    return dialect_of(dialect).c_type(type_name)


def component(dialect, type_name: str, i: int) -> str:
    """Member access suffix for component ``i`` (``".x"``, ``".s5"``)."""
    return dialect_of(dialect).component(type_name, i)


def make_vector(dialect, type_name: str, comps: list[str]) -> str:
    """Expression building a vector from one expression per component."""
    return dialect_of(dialect).make_vector(type_name, comps)


def fn_prefix(dialect) -> str:
    """Storage/inlining qualifiers of every prelude function."""
    return dialect_of(dialect).prelude_fn_prefix


def float_math(dialect, scalar: str, fn: str) -> str:
    """``sqrt`` -> ``sqrtf`` for float on CUDA/HIP; OpenCL's are overloaded."""
    return dialect_of(dialect).math_name(fn, scalar)


def float_literal(scalar: str, text: str) -> str:
    return f"{text}f" if scalar == "float" else text


def check_dialect(dialect):
    return dialect_of(dialect)
