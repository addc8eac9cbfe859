"""Arrays of 8- and 16-bit elements (bool, int8, uint8, int16, uint16) in WGSL storage buffers.

WGSL storage holds 32-bit words only, while numpy keeps these elements at their own size (a bool
is a byte). A kernel binds such an array as ``array<u32>`` and reads element ``i`` from word
``i / per_word`` at its bit offset; an array the kernel writes is ``array<atomic<u32>>`` and each
write clears the element's bits and sets the new ones with ``atomicAnd``/``atomicOr``, so writes of
neighbouring elements by other work items (bytes of the same word) are kept. One function per
array does each (``pg_load_<array>``, ``pg_store_<array>``; WGSL functions reach module-scope
bindings by name, and cannot take pointers into storage), written once the kernel's signature
says whether the array is written. A bool element reads as its byte (the translator compares it
with 0, as numpy reads any non-zero byte as True) and is written from a bool.

In values (locals, workgroup and private arrays, kernel arguments) these types are 32-bit
integers under their own alias (``pg_u8 = u32``...), so a conversion to one of them can wrap as
numpy's does (``_target.WGSL.cast``)."""
from __future__ import annotations

__all__ = ["ALIASES", "ALIAS_DECLARATIONS", "PACKED", "WIDTH_NAMES", "cast", "accessors", "binding_type"]

# the translator's short names -> the alias WGSL kernels declare them as
ALIASES = {"uchar": "pg_u8", "char": "pg_i8", "ushort": "pg_u16", "short": "pg_i16"}
ALIAS_DECLARATIONS = ["alias pg_u8 = u32;", "alias pg_i8 = i32;", "alias pg_u16 = u32;", "alias pg_i16 = i32;"]
# element type in a kernel binding -> (bits, signed); bool arrays hold bytes (numpy's layout)
PACKED = {"bool": (8, False), "pg_u8": (8, False), "pg_i8": (8, True), "pg_u16": (16, False), "pg_i16": (16, True)}
WIDTH_NAMES = {"bool": "bool", "pg_u8": "uint8", "pg_i8": "int8", "pg_u16": "uint16", "pg_i16": "int16"}


def cast(alias: str, expr: str) -> str:
    """``expr`` converted to an 8/16-bit type held in 32 bits: wrapped to its width (and sign),
    as C's and numpy's conversions are. Through ``i32`` first, so a negative literal needs no u32."""
    bits, signed = PACKED[alias]
    word = f"bitcast<u32>(i32({expr}))"
    if signed:
        return f"(bitcast<i32>({word} << {32 - bits}u) >> {32 - bits}u)"
    return f"({word} & {hex((1 << bits) - 1)}u)"


def binding_type(written: bool) -> str:
    """The element type of the binding of a packed array."""
    return "atomic<u32>" if written else "u32"


def accessors(array: str, elem: str, written: bool) -> "list[str]":
    """The module-scope functions reading (and, when written, writing) element ``i`` of ``array``."""
    bits, signed = PACKED[elem]
    per_word, mask = 32 // bits, hex((1 << bits) - 1)
    word = f"{array}[i / {per_word}u]"
    read = f"atomicLoad(&{word})" if written else word
    shift = f"(i % {per_word}u) * {bits}u"
    if signed:
        value, ret = f"bitcast<i32>(w << ({32 - bits}u - s)) >> {32 - bits}u", "i32"
    else:
        value, ret = f"(w >> s) & {mask}u", "u32"
    lines = [f"fn pg_load_{array}(i: u32) -> {ret} {{",
             f"    let w = {read};",
             f"    let s = {shift};",
             f"    return {value};",
             "}"]
    if written:
        bits_of = "select(0u, 1u, v)" if elem == "bool" else f"(bitcast<u32>(v) & {mask}u)"
        lines += [f"fn pg_store_{array}(i: u32, v: {'bool' if elem == 'bool' else ret}) {{",
                  f"    let s = {shift};",
                  f"    atomicAnd(&{word}, ~({mask}u << s));",
                  f"    atomicOr(&{word}, {bits_of} << s);",
                  "}"]
    return lines
