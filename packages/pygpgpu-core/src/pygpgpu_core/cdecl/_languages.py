"""The languages handwritten kernel files are written in: one description object per language.

OpenCL C, CUDA C++ and HIP C++ differ in what the declaration parser must know: the size of
``long``, vector sizes and alignments, which words make a function a kernel, C++'s name rules
and what the compiler predefines. Each language is one :class:`Language`; the parser looks it up
once by the kernel file's language name (``kernel_files``' kinds: ``"opencl"`` for ``.cl``,
``"cuda"`` for ``.cu``, ``"hip"`` for ``.hip``) and then asks it, never comparing names. The
values were measured with the vendor compilers (PoCL, NVRTC, hiprtc) by ``sizeof``/``alignof``
probe kernels (tests/test_import_cdecl.py, tests/test_kernel_file_structs.py).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Union

__all__ = ["Language", "LANGUAGES", "register_language", "OPENCL_C", "CUDA_CPP", "HIP_CPP", "language"]


@dataclass(frozen=True)
class Language:
    name: str
    """The name kernel files of this language are parsed under (``ParsedFile.dialect``): the
    translator's dialect of the same name, and the backend that runs them when no bracket names one."""
    suffix: str
    """The file suffix of kernel files in this language (``cl`` for ``saxpy.cl``); it also names
    the import hook (``pygpgpu.climport``) and the cache folder beside the file (``__clcache__``)."""
    long_bytes: int
    """Size of C ``long``: 8 in OpenCL C; the host ABI's in CUDA/HIP C++ (8 on LP64, 4 on Windows)."""
    long_long_reserved: bool
    """``long long`` is not a 64-bit integer: OpenCL C reserves it for 128 bits and drivers
    disagree on its size (PoCL 8 bytes, NVIDIA refuses an 8-byte argument), so it is refused."""
    vector_widths: "tuple[int, ...]"
    """Widths of the built-in vector types (``float2`` ... ``float16`` in OpenCL C)."""
    vector3_padded: bool
    """3-component vectors occupy and align like 4-component ones (OpenCL: ``float3`` is 16
    bytes); otherwise they are packed and aligned like their element (``float3``: 12, aligned 4)."""
    vector_align_cap: int
    """Other vectors align to their size capped at this many bytes (CUDA's vector_types.h: 16,
    so ``double4`` is 32 bytes aligned 16); 0: no cap (OpenCL, HIP)."""
    kernel_words: "frozenset[str]"
    """Specifiers that make a function a kernel (``__kernel``, ``__global__``)."""
    kernels_need_extern_c: bool
    """C++: a kernel's symbol is name-mangled unless declared ``extern "C"``, so only those are
    imported (the others are listed as skipped, saying why)."""
    tags_are_type_names: bool
    """C++: ``struct S {...}`` makes ``S`` a type name without a typedef."""
    attributes_after_brace: bool
    """``} __attribute__((aligned(N))) Name;`` applies to the type (NVRTC ignores it, warning 1835)."""
    predefined: "Mapping[str, str]"
    """Macros the device compiler predefines, so ``#ifdef __OPENCL_VERSION__`` in a header shared
    with host code selects the branch the compiler will."""


OPENCL_C = Language(
    name="opencl", suffix="cl", long_bytes=8, long_long_reserved=True, vector_widths=(2, 3, 4, 8, 16), vector3_padded=True,
    vector_align_cap=0, kernel_words=frozenset({"__kernel", "kernel", "__kernel_exec", "kernel_exec"}), kernels_need_extern_c=False,
    tags_are_type_names=False, attributes_after_brace=True,
    predefined=MappingProxyType({"__OPENCL_VERSION__": "120", "__OPENCL_C_VERSION__": "120", "CL_VERSION_1_0": "100",
                                 "CL_VERSION_1_1": "110", "CL_VERSION_1_2": "120", "__ENDIAN_LITTLE__": "1"}))

CUDA_CPP = Language(
    name="cuda", suffix="cu", long_bytes=ctypes.sizeof(ctypes.c_long), long_long_reserved=False, vector_widths=(1, 2, 3, 4),
    vector3_padded=False, vector_align_cap=16, kernel_words=frozenset({"__global__"}), kernels_need_extern_c=True,
    tags_are_type_names=True, attributes_after_brace=False,
    predefined=MappingProxyType({"__CUDACC__": "1", "__CUDACC_RTC__": "1", "__CUDA_ARCH__": "900",
                                 "__cplusplus": "201703L"}))

HIP_CPP = Language(
    name="hip", suffix="hip", long_bytes=ctypes.sizeof(ctypes.c_long), long_long_reserved=False, vector_widths=(1, 2, 3, 4),
    vector3_padded=False, vector_align_cap=0, kernel_words=frozenset({"__global__"}), kernels_need_extern_c=True,
    tags_are_type_names=True, attributes_after_brace=True,
    predefined=MappingProxyType({"__HIPCC__": "1", "__HIP__": "1", "__HIPCC_RTC__": "1", "__HIP_DEVICE_COMPILE__": "1",
                                 "__HIP_PLATFORM_AMD__": "1", "__cplusplus": "201703L"}))

_registered: "dict[str, Language]" = {lang.name: lang for lang in (OPENCL_C, CUDA_CPP, HIP_CPP)}
LANGUAGES: "Mapping[str, Language]" = MappingProxyType(_registered)
"""Every language by name: the one table of kernel-file languages (a live view: a language added
by :func:`register_language` appears here, in ``kernel_files.KINDS`` and as an import hook)."""


def register_language(lang: Language) -> Language:
    """Add a kernel-file language (a backend plug-in whose devices compile C-like source of their
    own). Its kernel files then import like the built-ins' (``pygpgpu.<suffix>import``, files
    named ``*.<suffix>``), run on the backend named ``lang.name``. ValueError when the name or
    the suffix is another language's."""
    for other in _registered.values():
        if other.name != lang.name and other.suffix == lang.suffix:
            raise ValueError(f"the kernel-file suffix {lang.suffix!r} is {other.name}'s; give {lang.name} another")
    if lang.name in _registered and _registered[lang.name] != lang:
        raise ValueError(f"a kernel language named {lang.name!r} is registered already")
    _registered[lang.name] = lang
    return lang


def language(which: "Union[str, Language]") -> Language:
    """The :class:`Language` named ``which`` (a Language passes through); ValueError for a name
    that is none of :data:`LANGUAGES`."""
    if isinstance(which, Language):
        return which
    found = LANGUAGES.get(which)
    if found is None:
        raise ValueError(f"unknown kernel language {which!r}; expected one of {', '.join(LANGUAGES)}")
    return found
