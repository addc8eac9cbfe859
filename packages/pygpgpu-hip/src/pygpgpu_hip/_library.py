"""Where ROCm keeps the HIP runtime (libamdhip64) and hiprtc: the candidates the lazy
loaders (``_driver.driver``, ``_hiprtc.hiprtc``) try, in order.

ROCm 5 exports the hiprtc* symbols from libamdhip64 itself; ROCm 6 and 7 ship them in
libhiprtc.so.6 / .7. ``PYGPGPU_HIP_LIB`` and ``PYGPGPU_HIPRTC_LIB`` override the search
(a file path or a library name).
"""
from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

__all__ = ["hip_candidates", "hiprtc_candidates", "rocm_roots", "INSTALL_HINT"]

INSTALL_HINT = (
    "Install the ROCm HIP runtime (Debian/Ubuntu: apt-get install libamdhip64-dev hipcc rocm-device-libs; "
    "AMD's repositories: the rocm-hip-runtime package; Windows: the AMD HIP SDK), "
    "or point PYGPGPU_HIP_LIB at libamdhip64.so"
)


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


def hip_candidates() -> list[str]:
    """The HIP runtime's names, then the same names in the ROCm folders."""
    return _candidates(_hip_names())


def hiprtc_candidates() -> list[str]:
    """hiprtc's names, then the same names in the ROCm folders."""
    return _candidates(_hiprtc_names())
