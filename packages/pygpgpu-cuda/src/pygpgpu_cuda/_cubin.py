"""Kernel names inside a CUBIN (ELF) or PTX image, and C++ name resolution.

NVRTC compiles C++, so ``__global__ void vecadd(...)`` is exported as a mangled symbol
(``_Z6vecaddPKfS0_Pfi``) unless it is ``extern "C"``. Reading the entry points from the
binary lets ``program.kernel("vecadd")`` find either spelling without a GPU.
"""
from __future__ import annotations

import re
import struct

from pygpgpu_core.backend import elf
from pygpgpu_core.binary_check import EM_CUDA, elf_problem, fatbin_problem, ptx_problem

__all__ = ["is_cubin", "entry_names", "image_problem"]

_STO_CUDA_ENTRY = 0x10
_PTX_ENTRY = re.compile(rb"\.entry\s+([A-Za-z_$][\w$]*)\s*\(")


def is_cubin(image: bytes) -> bool:
    return image[:4] == b"\x7fELF"


def _cubin_entries(image: bytes) -> list[str]:
    if not elf.is_elf64(image):
        return []
    return [s.name for s in elf.symbols(image)
            if s.type == elf.STT_FUNC and s.bind in (1, 2) and s.other & _STO_CUDA_ENTRY]


def image_problem(image: bytes) -> "str | None":
    """Why ``cuModuleLoadData`` must not see ``image`` (a truncated or damaged CUBIN, fat binary
    or PTX text, or something else), or None when its structure is sound. PTX must also end
    with a NUL byte: the driver reads it as a C string."""
    if image[:4] == b"\x7fELF":
        return elf_problem(image, EM_CUDA)
    if image[:4] == b"\x50\xed\x55\xba":
        return fatbin_problem(image)
    problem = ptx_problem(image)
    if problem is None and not image.endswith(b"\0"):
        return "the PTX text does not end with a NUL byte"
    return problem


def entry_names(image: bytes) -> list[str]:
    """The ``__global__`` functions a CUBIN or PTX image exports (as the driver spells them)."""
    try:
        if is_cubin(image):
            return _cubin_entries(image)
        return [m.decode() for m in _PTX_ENTRY.findall(image)]
    except (struct.error, ValueError, IndexError):
        return []
