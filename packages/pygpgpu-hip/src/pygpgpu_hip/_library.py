"""Finding and loading the HIP runtime (libamdhip64) and hiprtc, on first use only.

ROCm 5 exports the hiprtc* symbols from libamdhip64 itself; ROCm 6 and 7 ship them in
libhiprtc.so.6 / .7. ``PYGPGPU_HIP_LIB`` and ``PYGPGPU_HIPRTC_LIB`` override the search
(a file path or a library name). Nothing here is imported by ``import pygpgpu_hip``'s
backend object until a device or a compile is asked for.
"""
from __future__ import annotations

import ctypes
import glob
import os
import sys
import threading
from pathlib import Path

from pygpgpu_core.errors import BackendUnavailable

__all__ = ["hip_library", "hiprtc_library", "rocm_roots", "library_path", "INSTALL_HINT"]

INSTALL_HINT = (
    "install the ROCm HIP runtime (Debian/Ubuntu: apt-get install libamdhip64-dev hipcc rocm-device-libs; "
    "AMD's repositories: the rocm-hip-runtime package; Windows: the AMD HIP SDK), "
    "or point PYGPGPU_HIP_LIB at libamdhip64.so"
)

_lock = threading.Lock()
_hip: "ctypes.CDLL | None" = None
_hip_error: "str | None" = None
_hiprtc: "ctypes.CDLL | None" = None
_hiprtc_error: "str | None" = None


def rocm_roots() -> list[Path]:
    """Install prefixes to look in: ``$ROCM_PATH``, ``$HIP_PATH``, /opt/rocm(-*), /usr."""
    roots: list[Path] = []
    for var in ("ROCM_PATH", "HIP_PATH"):
        value = os.environ.get(var)
        if value:
            roots.append(Path(value))
    if sys.platform != "win32":
        roots.append(Path("/opt/rocm"))
        roots.extend(Path(p) for p in sorted(glob.glob("/opt/rocm-*"), reverse=True))
        roots.append(Path("/usr"))
    seen: set = set()
    unique = []
    for root in roots:
        if root not in seen:
            seen.add(root)
            unique.append(root)
    return unique


def _library_dirs() -> list[Path]:
    dirs = []
    for root in rocm_roots():
        dirs += [root / "lib", root / "lib64", root / "bin"]
    return [d for d in dirs if d.is_dir()]


def _candidates(names: list[str]) -> list[str]:
    """Plain names first (the loader's own search path), then the same names in ROCm folders."""
    out = list(names)
    for folder in _library_dirs():
        for name in names:
            path = folder / name
            if path.exists():
                out.append(str(path))
    return out


def _try_load(candidates: list[str]) -> "tuple[ctypes.CDLL | None, list[str]]":
    tried = []
    for cand in candidates:
        try:
            return ctypes.CDLL(cand), tried
        except OSError as exc:
            tried.append(f"{cand} ({exc})" if os.sep in cand else cand)
    return None, tried


def _hip_names() -> list[str]:
    if sys.platform == "win32":
        return ["amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll"]
    return ["libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"]


def _hiprtc_names() -> list[str]:
    if sys.platform == "win32":
        names = []
        for folder in _library_dirs():
            names += sorted((os.path.basename(p) for p in glob.glob(str(folder / "hiprtc*.dll"))
                             if "builtins" not in p), reverse=True)
        return names
    return ["libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so"]


def hip_library() -> ctypes.CDLL:
    """The loaded HIP runtime. Raises BackendUnavailable (cached) saying how to install it."""
    global _hip, _hip_error
    with _lock:
        if _hip is not None:
            return _hip
        if _hip_error is None:
            override = os.environ.get("PYGPGPU_HIP_LIB", "").strip()
            if override:
                lib, tried = _try_load([override])
                if lib is None:
                    _hip_error = f"PYGPGPU_HIP_LIB={override!r} could not be loaded: {tried[0]}"
            else:
                lib, tried = _try_load(_candidates(_hip_names()))
                if lib is None:
                    _hip_error = f"the HIP runtime library was not found (tried {', '.join(tried)}); {INSTALL_HINT}"
            if lib is not None:
                _hip = lib
                return lib
        raise BackendUnavailable("hip", _hip_error)


def hiprtc_library() -> ctypes.CDLL:
    """The library exporting hiprtc*: libhiprtc, or libamdhip64 itself on ROCm 5."""
    global _hiprtc, _hiprtc_error
    with _lock:
        if _hiprtc is not None:
            return _hiprtc
        cached_error = _hiprtc_error
    if cached_error is not None:
        raise BackendUnavailable("hip", cached_error)
    override = os.environ.get("PYGPGPU_HIPRTC_LIB", "").strip()
    if override:
        lib, tried = _try_load([override])
        error = None if lib is not None else f"PYGPGPU_HIPRTC_LIB={override!r} could not be loaded: {tried[0]}"
    else:
        lib, tried = _try_load(_candidates(_hiprtc_names()))
        error = None
        if lib is None:
            try:
                runtime = hip_library()
            except BackendUnavailable as exc:
                runtime, error = None, f"hiprtc was not found (tried {', '.join(tried) or 'nothing'}) and {exc.reason}"
            if runtime is not None:
                if hasattr(runtime, "hiprtcCreateProgram"):
                    lib = runtime  # ROCm 5: hiprtc lives inside libamdhip64
                else:
                    error = (f"hiprtc was not found (tried {', '.join(tried)}) and the HIP runtime does not export it; "
                             "install ROCm's hiprtc (package hiprtc or rocm-hip-runtime-dev), point PYGPGPU_HIPRTC_LIB "
                             "at libhiprtc.so, or use the offline compiler with PYGPGPU_HIP_COMPILER=clang")
    with _lock:
        if lib is not None:
            _hiprtc = lib
            return lib
        _hiprtc_error = error
    raise BackendUnavailable("hip", error)


def library_path(lib: ctypes.CDLL) -> "str | None":
    """The file a loaded library came from (Linux: /proc/self/maps), or None if unknown."""
    name = getattr(lib, "_name", "") or ""
    if os.sep in name and os.path.exists(name):
        return os.path.realpath(name)
    base = os.path.basename(name).split(".so")[0]
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ")[-1]
                if base and os.path.basename(path).startswith(base + ".so"):
                    return os.path.realpath(path)
    except OSError:
        pass
    return None


def reset_for_tests() -> None:
    """Forget load failures so a test can change PYGPGPU_HIP_LIB (loaded libraries stay loaded)."""
    global _hip, _hip_error, _hiprtc, _hiprtc_error
    with _lock:
        _hip = _hip_error = _hiprtc = _hiprtc_error = None
