"""Structure checks of device binaries before a driver sees them.

Drivers trust the images given to ``clCreateProgramWithBinary``, ``cuModuleLoadData`` and
``hipModuleLoadData``: a truncated file or a length field pointing past the end makes them read
out of bounds and crash the process instead of failing the call. Every binary that comes from a
cache (ours, ``__clcache__``, a caller's ``program.binary``) is checked here first, whatever
its checksum says: a checksum only proves the bytes are the ones that were stored.

Each function returns None when the structure is sound, else a sentence saying what is wrong.
"""
from __future__ import annotations

import struct

__all__ = ["elf_problem", "ptx_problem", "fatbin_problem", "offload_bundle_problem",
           "EM_CUDA", "EM_AMDGPU"]

EM_CUDA = 190
EM_AMDGPU = 224
_SHT_NOBITS = 8
_FATBIN_MAGIC = 0xBA55ED50
_BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def elf_problem(blob: bytes, machine: "int | None" = None) -> "str | None":
    """Whether ``blob`` is a whole ELF file: header, program and section header tables and
    every section's and segment's bytes inside the file (``machine``: the required e_machine)."""
    size = len(blob)
    if blob[:4] != b"\x7fELF":
        return "it is not an ELF file (no ELF header)"
    if size < 52:
        return "it is shorter than an ELF header"
    cls, data = blob[4], blob[5]
    if cls not in (1, 2) or data not in (1, 2):
        return f"its ELF header is damaged (class {cls}, data encoding {data})"
    e = "<" if data == 1 else ">"
    wide = cls == 2
    if wide and size < 64:
        return "it is shorter than an ELF header"
    (e_machine,) = struct.unpack_from(e + "H", blob, 18)
    if machine is not None and e_machine != machine:
        return f"it is an ELF file for machine {e_machine}, not {machine}"
    if wide:
        phoff, shoff = struct.unpack_from(e + "QQ", blob, 32)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(e + "HHHHH", blob, 54)
        sec_fmt, seg_fmt = e + "IIQQQQIIQQ", e + "IIQQQQQQ"
    else:
        phoff, shoff = struct.unpack_from(e + "II", blob, 28)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from(e + "HHHHH", blob, 42)
        sec_fmt, seg_fmt = e + "IIIIIIIIII", e + "IIIIIIII"
    sec_size, seg_size = struct.calcsize(sec_fmt), struct.calcsize(seg_fmt)
    if phnum:
        if phentsize < seg_size or phoff + phnum * phentsize > size:
            return "its program header table does not fit the file (truncated or damaged)"
        for i in range(phnum):
            seg = struct.unpack_from(seg_fmt, blob, phoff + i * phentsize)
            offset, filesz = (seg[2], seg[5]) if wide else (seg[1], seg[4])
            if offset + filesz > size:
                return f"segment {i} ends past the end of the file (truncated or damaged)"
    if shoff:
        if shentsize < sec_size or shoff + sec_size > size:
            return "its section header table does not fit the file (truncated or damaged)"
        count = shnum or struct.unpack_from(sec_fmt, blob, shoff)[5]     # extended numbering
        if shoff + count * shentsize > size:
            return "its section header table does not fit the file (truncated or damaged)"
        if shstrndx != 0xFFFF and count and shstrndx >= count:
            return "its section name table index is out of range"
        for i in range(count):
            sec = struct.unpack_from(sec_fmt, blob, shoff + i * shentsize)
            sh_type, offset, length, link = sec[1], sec[4], sec[5], sec[6]
            if sh_type != _SHT_NOBITS and offset + length > size:
                return f"section {i} ends past the end of the file (truncated or damaged)"
            if link >= max(count, 1) and sh_type in (2, 11):       # symbol tables name their strings
                return f"section {i} links to a section that does not exist"
    elif not phnum:
        return "it has neither sections nor segments"
    return None


def ptx_problem(blob: bytes) -> "str | None":
    """Whether PTX text looks whole: no NUL before its end, a ``.version``/``.target`` header,
    an entry point, balanced braces (a truncated file fails the last)."""
    text = blob.rstrip(b"\0")
    if b"\0" in text:
        return "the PTX text holds a NUL byte before its end"
    head = text[:4096]
    if b".version" not in head or b".target" not in head:
        return "it is not PTX text (no .version/.target header)"
    if b".entry" not in text or text.count(b"{") != text.count(b"}"):
        return "the PTX text is incomplete (a truncated file)"
    return None


def fatbin_problem(blob: bytes) -> "str | None":
    """Whether an NVIDIA fat binary's header and declared size fit the bytes."""
    if len(blob) < 16:
        return "it is shorter than a fat binary header"
    magic, _version, header, fat_size = struct.unpack_from("<IHHQ", blob, 0)
    if magic != _FATBIN_MAGIC:
        return "it is not a fat binary"
    if header < 16 or header + fat_size > len(blob):
        return "its declared size runs past the end (truncated or damaged)"
    return None


def offload_bundle_problem(blob: bytes, machine: "int | None" = EM_AMDGPU) -> "str | None":
    """Whether a clang offload bundle (HIP's fat binary) is whole: every entry inside the file,
    and every embedded device ELF sound."""
    size = len(blob)
    if not blob.startswith(_BUNDLE_MAGIC) or size < len(_BUNDLE_MAGIC) + 8:
        return "it is not a clang offload bundle"
    pos = len(_BUNDLE_MAGIC)
    (count,) = struct.unpack_from("<Q", blob, pos)
    pos += 8
    if count > size // 24:
        return "its entry count does not fit the file (damaged)"
    for i in range(count):
        if pos + 24 > size:
            return f"it ends inside entry {i + 1} of {count} (truncated)"
        offset, length, triple_len = struct.unpack_from("<QQQ", blob, pos)
        pos += 24 + triple_len
        if pos > size or offset + length > size:
            return f"entry {i + 1} of {count} runs past the end of the file (truncated or damaged)"
        triple = blob[pos - triple_len:pos]
        if length and b"amdgcn" in triple:
            inner = elf_problem(blob[offset:offset + length], machine)
            if inner is not None:
                return f"its device image for {triple.decode(errors='replace')}: {inner}"
    return None
