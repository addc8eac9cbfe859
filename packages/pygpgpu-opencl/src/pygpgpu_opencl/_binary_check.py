"""Structure checks of program binaries before they reach the driver.

Drivers trust the binaries given to ``clCreateProgramWithBinary``; a damaged one can crash
the process instead of failing the call. Every binary is checked, whatever its checksum says
(the disk cache's and ``program.binary``'s checksums only prove the bytes are the ones stored):
PoCL's format, NVIDIA's (PTX text) and ELF files (Intel, AMD) structurally; other formats pass
to the driver unchecked.

PoCL
PoCL trusts the size fields of a binary given to ``clCreateProgramWithBinary``: a truncated
file or a damaged length makes it read past the end and abort or crash the process. The
layout (format versions 9 to 12: PoCL 3.x to 6.x): a 77-byte header (``poclbin\\0``, device hash,
version, kernel count, flags, root-entry count, build hash), from version 10 a ``u64`` of
program-scope variable bytes when flag bit 1 is set, then each root entry of the program's files
as ``u64 size`` and its records, then one record per kernel: ``u64 struct_size, u64 files_size,
...`` with its files in the last ``files_size`` bytes (versions 10-12 added fields inside the
kernel record, which its ``struct_size`` spans). A file is ``u32 len, name, u32 len, content``.
Other PoCL versions are refused (rebuilt from source); other formats pass unchecked.
"""
from __future__ import annotations

import hashlib
import struct

from pygpgpu_core.binary_check import elf_problem

__all__ = ["seal", "unseal", "checked_binary", "pocl_binary_problem", "ptx_binary_problem"]

# ``program.binary`` hands out the driver's bytes behind this header and their SHA-256, so a
# binary we produced loads on any driver version, and a damaged copy is caught before the driver.
_SEAL = b"PYGPGPU-CLBIN1\0"

_MAGIC = b"poclbin\0"
_CHECKED_VERSIONS = {9, 10, 11, 12}
_HEADER = 77
_HAS_SCOPE_VARS = 1 << 1      # flag: a u64 of program-scope variable bytes follows the header (version >= 10)


def _files_end_exactly(blob: bytes, start: int, end: int) -> bool:
    pos = start
    while pos < end:
        for _part in ("name", "content"):
            if pos + 4 > end:
                return False
            (n,) = struct.unpack_from("<I", blob, pos)
            pos += 4 + n
            if pos > end:
                return False
    return pos == end


def pocl_binary_problem(blob: bytes) -> "str | None":
    """Why ``blob`` would crash PoCL (truncated, a length out of bounds, a format version this
    check does not know), or None when its structure is sound or it is not a PoCL binary."""
    if not blob.startswith(_MAGIC) or len(blob) < _HEADER:
        return None if not blob.startswith(_MAGIC) else "it is shorter than a PoCL binary header"
    version, kernels, flags, roots = struct.unpack_from("<IIQI", blob, 16)
    if version not in _CHECKED_VERSIONS:
        # Another PoCL release: its layout is unknown here, and a damaged binary would crash it.
        return (f"it is a PoCL binary of format version {version}, which cannot be checked here "
                f"(checked: {sorted(_CHECKED_VERSIONS)}); pass source= so it is rebuilt instead")
    size = len(blob)
    pos = _HEADER + (8 if version >= 10 and flags & _HAS_SCOPE_VARS else 0)
    for _root in range(max(roots, 1) if version == 9 else roots):   # 9: one section, whatever the count
        if pos + 8 > size:
            return "it ends inside the program section"
        (total,) = struct.unpack_from("<Q", blob, pos)
        if pos + 8 + total > size or not _files_end_exactly(blob, pos + 8, pos + 8 + total):
            return "its program section does not fit the binary (truncated or damaged)"
        pos += 8 + total
    for k in range(kernels):
        if pos + 20 > size:
            return f"it ends before kernel record {k + 1} of {kernels}"
        record, files = struct.unpack_from("<QQ", blob, pos)
        if record < 20 + files or pos + record > size:
            return f"kernel record {k + 1} of {kernels} does not fit the binary (truncated or damaged)"
        if not _files_end_exactly(blob, pos + record - files, pos + record):
            return f"the files of kernel record {k + 1} of {kernels} are damaged"
        pos += record
    if pos != size:
        return f"{size - pos} bytes follow the last of its {kernels} kernel record(s)"
    return None


def ptx_binary_problem(blob: bytes) -> "str | None":
    """Why a PTX binary (NVIDIA's OpenCL) is unusable: truncated (unbalanced braces, no entry
    point) or holding a stray NUL, or None when it looks whole."""
    text = blob.rstrip(b"\0")
    if b"\0" in text:
        return "the PTX text holds a NUL byte before its end"
    if b".entry" not in text or text.count(b"{") != text.count(b"}"):
        return "the PTX text is incomplete (a truncated file)"
    return None


def _looks_like_ptx(blob: bytes) -> bool:
    head = blob[:512]
    return b".version" in head and b".target" in head


def seal(raw: bytes) -> bytes:
    """The driver's binary behind our header and checksum (what ``program.binary`` returns)."""
    return _SEAL + hashlib.sha256(raw).digest() + raw


def unseal(blob: bytes) -> bytes:
    """The driver's bytes inside a binary from ``program.binary`` (``blob`` itself when it has
    no seal); the checksum is :func:`checked_binary`'s business."""
    return blob[len(_SEAL) + 32:] if blob.startswith(_SEAL) else blob


def checked_binary(blob: bytes) -> "tuple[bytes, str | None]":
    """``(bytes to hand the driver, problem)``: a sealed binary is unwrapped and its checksum
    verified; then the driver's bytes are checked as far as their format is known (PTX is made
    NUL-terminated, since the driver reads it as a C string). ``problem`` says why ``blob``
    would crash or confuse the driver."""
    if blob.startswith(_SEAL):
        head = len(_SEAL) + 32
        raw = blob[head:]
        if len(blob) < head or hashlib.sha256(raw).digest() != blob[len(_SEAL):head]:
            return raw, "its checksum does not match (a truncated or damaged copy of program.binary)"
        blob = raw
    if not blob:
        return blob, "it is empty"
    if blob.startswith(_MAGIC):
        return blob, pocl_binary_problem(blob)
    if _looks_like_ptx(blob):
        return blob.rstrip(b"\0") + b"\0", ptx_binary_problem(blob)
    if blob.startswith(b"\x7fELF"):
        return blob, elf_problem(blob)
    return blob, None
