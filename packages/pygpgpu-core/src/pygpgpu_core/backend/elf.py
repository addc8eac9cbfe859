"""Reading a 64-bit little-endian ELF image without a GPU: sections, symbols and notes.

CUBINs and AMDGPU code objects are ELF files. NVRTC and hiprtc compile C++, so
``__global__ void vecadd(...)`` is exported as a mangled symbol unless it is ``extern "C"``:
reading the symbol table lets ``program.kernel("vecadd")`` find either spelling, and the notes
carry the AMDGPU kernel metadata. Structure is checked by :mod:`pygpgpu_core.binary_check`
before a driver sees an image; readers here raise ``struct.error``, ``ValueError`` or
``IndexError`` on a damaged one (callers treat that as "no symbols").
"""
from __future__ import annotations

import struct
from typing import Iterator, NamedTuple, Sequence

__all__ = ["Section", "Symbol", "is_elf64", "sections", "symbols", "notes",
           "SHT_SYMTAB", "SHT_NOTE", "SHT_DYNSYM", "STT_OBJECT", "STT_FUNC"]

SHT_SYMTAB, SHT_NOTE, SHT_DYNSYM = 2, 7, 11
STT_OBJECT, STT_FUNC = 1, 2


class Section(NamedTuple):
    name: int
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int


class Symbol(NamedTuple):
    name: str
    type: int
    """STT_* (``st_info & 0xf``)."""
    bind: int
    """STB_* (``st_info >> 4``): 1 global, 2 weak."""
    other: int
    """``st_other`` (CUDA marks kernel entries with 0x10 there)."""


def is_elf64(image: bytes) -> bool:
    """An ELF header of a 64-bit little-endian image."""
    return len(image) >= 64 and image[:4] == b"\x7fELF" and image[4] == 2 and image[5] == 1


def sections(image: bytes) -> list[Section]:
    """The section headers."""
    (shoff,) = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    return [Section(*struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize)) for i in range(shnum)]


def symbols(image: bytes, of: "Sequence[Section] | None" = None,
            tables: Sequence[int] = (SHT_SYMTAB,)) -> Iterator[Symbol]:
    """Every named symbol of the symbol tables of these types (``.symtab``; ``SHT_DYNSYM`` too
    when asked), in table order."""
    secs = sections(image) if of is None else of
    for sec in secs:
        if sec.type not in tables:
            continue
        strtab = secs[sec.link].offset
        for pos in range(sec.offset, sec.offset + sec.size, sec.entsize or 24):
            st_name, st_info, st_other = struct.unpack_from("<IBB", image, pos)
            if not st_name:
                continue
            start = strtab + st_name
            name = image[start:image.index(b"\0", start)].decode(errors="replace")
            yield Symbol(name, st_info & 0xF, st_info >> 4, st_other)


def notes(image: bytes, of: "Sequence[Section] | None" = None) -> Iterator[tuple[bytes, int, bytes]]:
    """``(name, type, descriptor)`` of every note in the ``SHT_NOTE`` sections."""
    for sec in sections(image) if of is None else of:
        if sec.type != SHT_NOTE:
            continue
        pos, end = sec.offset, sec.offset + sec.size
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", image, pos)
            name_start = pos + 12
            desc_start = name_start + ((namesz + 3) & ~3)
            yield image[name_start:name_start + namesz].rstrip(b"\0"), ntype, image[desc_start:desc_start + descsz]
            pos = desc_start + ((descsz + 3) & ~3)
