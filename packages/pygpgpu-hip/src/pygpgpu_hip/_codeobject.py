"""Reading an AMDGPU code object (ELF) without a GPU: its kernels and their parameters.

hiprtc compiles C++, so ``__global__ void vecadd(...)`` is exported as a mangled symbol
unless it is ``extern "C"``; the symbol table lets ``program.kernel("vecadd")`` find either
spelling. The AMDGPU metadata note (MessagePack, code object v3+) lists each kernel's
explicit parameters with their sizes: launches are checked against it, because
``hipModuleLaunchKernel`` reads as many parameters as the kernel declares, whatever the
caller passed.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from pygpgpu_core.backend import elf
from pygpgpu_core.backend.driver.module import KernelInfo
from pygpgpu_core.binary_check import EM_AMDGPU, elf_problem, offload_bundle_problem

__all__ = ["KernelInfo", "read_code_object", "CodeObjectInfo", "code_object_problem"]

_NT_AMDGPU_METADATA = 32


@dataclass(frozen=True)
class CodeObjectInfo:
    kernels: dict
    """symbol -> KernelInfo"""


def _unpack_msgpack(data: bytes, pos: int = 0):
    """Decode one MessagePack value at ``pos``; returns (value, next position). No ext types."""
    b = data[pos]
    pos += 1
    if b <= 0x7F:
        return b, pos
    if b >= 0xE0:
        return b - 0x100, pos
    if 0x80 <= b <= 0x8F:
        return _unpack_map(data, pos, b & 0x0F)
    if 0x90 <= b <= 0x9F:
        return _unpack_array(data, pos, b & 0x0F)
    if 0xA0 <= b <= 0xBF:
        n = b & 0x1F
        return data[pos:pos + n].decode(errors="replace"), pos + n
    if b == 0xC0:
        return None, pos
    if b in (0xC2, 0xC3):
        return b == 0xC3, pos
    fixed = {0xCA: ">f", 0xCB: ">d", 0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q",
             0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}
    if b in fixed:
        (value,) = struct.unpack_from(fixed[b], data, pos)
        return value, pos + struct.calcsize(fixed[b])
    lengths = {0xC4: ">B", 0xC5: ">H", 0xC6: ">I", 0xD9: ">B", 0xDA: ">H", 0xDB: ">I",
               0xDC: ">H", 0xDD: ">I", 0xDE: ">H", 0xDF: ">I"}
    if b in lengths:
        (n,) = struct.unpack_from(lengths[b], data, pos)
        pos += struct.calcsize(lengths[b])
        if b in (0xC4, 0xC5, 0xC6):
            return bytes(data[pos:pos + n]), pos + n
        if b in (0xD9, 0xDA, 0xDB):
            return data[pos:pos + n].decode(errors="replace"), pos + n
        if b in (0xDC, 0xDD):
            return _unpack_array(data, pos, n)
        return _unpack_map(data, pos, n)
    raise ValueError(f"unsupported MessagePack byte {b:#x}")


def _unpack_array(data: bytes, pos: int, n: int):
    out = []
    for _ in range(n):
        value, pos = _unpack_msgpack(data, pos)
        out.append(value)
    return out, pos


def _unpack_map(data: bytes, pos: int, n: int):
    out = {}
    for _ in range(n):
        key, pos = _unpack_msgpack(data, pos)
        value, pos = _unpack_msgpack(data, pos)
        out[key] = value
    return out, pos


def _metadata(image: bytes, sections: "list[elf.Section]") -> "dict | None":
    for name, ntype, desc in elf.notes(image, sections):
        if name == b"AMDGPU" and ntype == _NT_AMDGPU_METADATA:
            value, _ = _unpack_msgpack(desc)
            return value if isinstance(value, dict) else None
    return None


def code_object_problem(image: bytes) -> "str | None":
    """Why ``hipModuleLoadData`` must not see ``image`` (a truncated or damaged AMDGPU ELF or
    offload bundle, or something else), or None when its structure is sound."""
    if image[:4] == b"\x7fELF":
        return elf_problem(image, EM_AMDGPU)
    if image.startswith(b"__CLANG_OFFLOAD_BUNDLE__"):
        return offload_bundle_problem(image)
    return "it is neither an AMDGPU code object (ELF) nor a clang offload bundle"


def read_code_object(image: bytes) -> CodeObjectInfo:
    """The kernels of a code object; an empty result when it cannot be parsed."""
    if not elf.is_elf64(image):
        return CodeObjectInfo({})
    try:
        sections = elf.sections(image)
        symbols: dict[str, int] = {}  # name -> symbol type
        for sym in elf.symbols(image, sections, (elf.SHT_SYMTAB, elf.SHT_DYNSYM)):
            symbols.setdefault(sym.name, sym.type)
        meta = _metadata(image, sections) or {}
    except (struct.error, ValueError, IndexError):
        return CodeObjectInfo({})
    described = {}
    for entry in meta.get("amdhsa.kernels", []) or []:
        if not isinstance(entry, dict) or not isinstance(entry.get(".name"), str):
            continue
        args = [a for a in entry.get(".args", []) or [] if isinstance(a, dict)]
        explicit = [a for a in args if not str(a.get(".value_kind", "")).startswith("hidden_")]
        symbol = str(entry.get(".symbol", entry[".name"])).removesuffix(".kd")
        described[symbol] = KernelInfo(
            name=symbol,
            param_sizes=tuple(int(a.get(".size", 0)) for a in explicit),
            static_shared=int(entry.get(".group_segment_fixed_size", 0) or 0),
            max_threads=int(entry.get(".max_flat_workgroup_size", 0) or 0),
        )
    kernels = {}
    for name, kind in symbols.items():
        if kind == elf.STT_FUNC and symbols.get(name + ".kd") == elf.STT_OBJECT:
            kernels[name] = described.get(name, KernelInfo(name, None))
    for name, info in described.items():
        kernels.setdefault(name, info)
    return CodeObjectInfo(kernels)
