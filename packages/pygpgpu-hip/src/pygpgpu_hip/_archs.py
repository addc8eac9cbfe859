"""Which gfx targets the installed compiler can build, checked before compiling.

hiprtc (through comgr) aborts the whole process, with no error code, when asked for a
target its device libraries lack (ROCm 5.2.3 and gfx1100), for an unknown name (gfx9999) or
for a target feature the ISA does not have (gfx1030:xnack+). So every target is validated
here first: its syntax, its features, and the presence of ``oclc_isa_version_<N>.bc`` among
the device libraries of the compiler that will be used.
"""
from __future__ import annotations

import glob
import os
import re
import threading
from pathlib import Path

from pygpgpu_core.errors import CompileError

from ._library import rocm_roots

__all__ = ["parse_target", "device_lib_dir", "isas_in_dir", "comgr_isas", "validate_target", "UnsupportedTarget"]

_TARGET = re.compile(r"^gfx([0-9]{1,2}[0-9a-f]{1,2}[0-9a-f]?)((?::[a-z]+[+-])*)$")
# Target features and the ISAs that have them (LLVM AMDGPUUsage "Processors" table).
_XNACK = {"801", "810", "900", "902", "904", "906", "908", "909", "90a", "90c", "940", "941", "942", "950",
          "1010", "1011", "1012", "1013"}
_SRAMECC = {"906", "908", "90a", "940", "941", "942", "950"}
_FEATURES = {"xnack": _XNACK, "sramecc": _SRAMECC}
_ISA_FILE = re.compile(r"oclc_isa_version_([0-9a-f]+)\.bc")

_lock = threading.Lock()
_comgr_cache: dict = {}


def parse_target(target: str) -> tuple[str, str, tuple[str, ...]]:
    """``"gfx90a:sramecc+:xnack-"`` -> ``("gfx90a", "90a", ("sramecc+", "xnack-"))``; ValueError if malformed."""
    if not isinstance(target, str):
        raise TypeError(f"a HIP target must be a str such as 'gfx1030', got {type(target).__name__}")
    text = target.strip()
    m = _TARGET.match(text)
    if not m:
        raise ValueError(
            f"{target!r} is not an AMD GPU target; expected 'gfx' + the ISA version, optionally with features, "
            "e.g. 'gfx1030', 'gfx90a' or 'gfx90a:sramecc+:xnack-'"
        )
    isa = m.group(1)
    features = tuple(f for f in m.group(2).split(":") if f)
    seen = set()
    for feature in features:
        name = feature[:-1]
        if name not in _FEATURES:
            raise ValueError(f"target {target!r}: unknown feature {feature!r}; AMD targets know only sramecc and xnack")
        if name in seen:
            raise ValueError(f"target {target!r}: feature {name!r} is given twice")
        seen.add(name)
        if isa not in _FEATURES[name]:
            raise ValueError(f"target {target!r}: gfx{isa} has no {name} setting; drop ':{feature}'")
    return f"gfx{isa}", isa, features


def device_lib_dir() -> "Path | None":
    """The folder of ROCm device-library bitcode (``oclc_isa_version_*.bc``), or None."""
    candidates: list[Path] = []
    for var in ("PYGPGPU_HIP_DEVICE_LIB_PATH", "HIP_DEVICE_LIB_PATH"):
        if os.environ.get(var):
            candidates.append(Path(os.environ[var]))
    for root in rocm_roots():
        candidates += [root / "amdgcn" / "bitcode", root / "lib" / "amdgcn" / "bitcode"]
        candidates += [Path(p) for p in sorted(glob.glob(str(root / "llvm" / "lib" / "clang" / "*" / "lib" / "amdgcn" / "bitcode")), reverse=True)]
        candidates += [Path(p) for p in sorted(glob.glob(str(root / "lib" / "*-linux-gnu" / "amdgcn" / "bitcode")))]
        candidates += [Path(p) for p in sorted(glob.glob(str(root / "lib" / "llvm-*" / "lib" / "clang" / "*" / "lib" / "amdgcn" / "bitcode")), reverse=True)]
    for folder in candidates:
        if folder.is_dir() and any(folder.glob("oclc_isa_version_*.bc")):
            return folder
    return None


def isas_in_dir(folder: Path) -> frozenset:
    """ISA suffixes ("90a", "1030", ...) that have device-library bitcode in ``folder``."""
    found = set()
    for path in folder.glob("oclc_isa_version_*.bc"):
        m = _ISA_FILE.fullmatch(path.name)
        if m:
            found.add(m.group(1))
    return frozenset(found)


def comgr_isas(library_dir: "str | None") -> "frozenset | None":
    """ISAs whose device libraries are embedded in the libamd_comgr beside ``library_dir``.

    hiprtc compiles through comgr, which carries its own copy of the device libraries, so
    this is what hiprtc can really build. None when no comgr is found or it names none.
    """
    if not library_dir:
        return None
    paths = sorted(glob.glob(os.path.join(library_dir, "libamd_comgr.so*")) +
                   glob.glob(os.path.join(library_dir, "amd_comgr*.dll")))
    if not paths:
        return None
    path = os.path.realpath(paths[-1])
    try:
        stamp = (path, os.stat(path).st_mtime_ns)
    except OSError:
        return None
    with _lock:
        if stamp in _comgr_cache:
            return _comgr_cache[stamp]
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    found = frozenset(m.decode() for m in re.findall(rb"oclc_isa_version_([0-9a-f]+)\.bc", data)) or None
    with _lock:
        _comgr_cache[stamp] = found
    return found


class UnsupportedTarget(CompileError, ValueError):
    """The requested gfx target cannot be built by the installed compiler (refused before compiling)."""


def validate_target(target: str, supported: "frozenset | None", where: str) -> str:
    """Return the cleaned target or raise UnsupportedTarget naming what the installation supports.

    ``supported`` is the set of ISA suffixes the compiler's device libraries cover (None when
    they could not be located: then only the syntax and features are checked).
    """
    try:
        base, isa, features = parse_target(target)
    except ValueError as exc:
        raise UnsupportedTarget(str(exc)) from None
    if supported is not None and isa not in supported:
        listing = ", ".join(f"gfx{s}" for s in sorted(supported, key=lambda s: (len(s), s)))
        raise UnsupportedTarget(
            f"cannot compile for {base}: the ROCm device libraries in {where} have no code for it "
            f"(they cover {listing}). Install a ROCm release whose device libraries include {base}, "
            "point PYGPGPU_HIP_DEVICE_LIB_PATH at such device libraries, or compile for a listed target"
        )
    return ":".join((base,) + features)
