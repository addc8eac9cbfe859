"""Compiling HIP C++ to AMD GPU code objects, with no GPU needed.

``compile_hip`` uses hiprtc when it loads, else the offline clang path; set
``PYGPGPU_HIP_COMPILER`` to ``hiprtc``, ``clang`` or ``hipcc`` to choose. The target is
always passed as ``--offload-arch`` (hiprtc otherwise wants a device to pick one) and is
validated first, because an unsupported target aborts the process inside hiprtc.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Sequence

from pygpgpu_core.cache import DiskCache, cache_key
from pygpgpu_core.errors import BackendUnavailable
from pygpgpu_core.logs import get_logger, log_build

from . import _archs, _clang, _hiprtc
from ._archs import UnsupportedTarget

__all__ = [
    "compile_hip",
    "compile_cached",
    "compile_with_log",
    "build_code_object",
    "hiprtc_version",
    "compiler_kind",
    "compiler_identity",
    "supported_targets",
    "UnsupportedTarget",
]

_COMPILERS = ("hiprtc", "clang", "hipcc")
_identity_cache: dict = {}
_identity_lock = threading.Lock()


def hiprtc_version() -> tuple[int, int]:
    """``hiprtcVersion()`` as ``(major, minor)``; raises BackendUnavailable when hiprtc is missing."""
    return _hiprtc.version()


def compiler_kind() -> str:
    """``$PYGPGPU_HIP_COMPILER`` if set, else "hiprtc" when it loads, else "clang"."""
    forced = os.environ.get("PYGPGPU_HIP_COMPILER", "").strip().lower()
    if forced:
        if forced not in _COMPILERS:
            raise ValueError(f"PYGPGPU_HIP_COMPILER={forced!r} is not one of {', '.join(_COMPILERS)}")
        return forced
    if os.environ.get("PYGPGPU_HIPRTC_LIB", "").strip():
        return "hiprtc"  # asked for explicitly: report its failure rather than switch compilers
    try:
        _hiprtc.version()
        return "hiprtc"
    except BackendUnavailable as no_hiprtc:
        try:
            _clang.find_compiler("clang")
        except BackendUnavailable as no_clang:
            raise BackendUnavailable(
                "hip", f"no HIP compiler is installed: {no_hiprtc.reason}; and {no_clang.reason}") from None
        return "clang"


def _supported_isas(kind: str) -> tuple["frozenset | None", str]:
    """ISA suffixes the chosen compiler has device libraries for, and where that was read."""
    if kind == "hiprtc":
        lib_dir = _hiprtc.library_dir()
        embedded = _archs.comgr_isas(lib_dir)
        if embedded:
            return embedded, f"the comgr library next to hiprtc ({lib_dir})"
    folder = _archs.device_lib_dir()
    if folder is not None:
        return _archs.isas_in_dir(folder), str(folder)
    return None, "(not found)"


def supported_targets(kind: "str | None" = None) -> list[str]:
    """Base gfx targets the installed compiler can build (empty if its device libraries were not found)."""
    isas, _ = _supported_isas(kind or compiler_kind())
    return [f"gfx{s}" for s in sorted(isas or (), key=lambda s: (len(s), s))]


def compiler_identity(kind: "str | None" = None) -> str:
    """A string naming the compiler and its version: changes whenever its output may change."""
    kind = kind or compiler_kind()
    with _identity_lock:
        if kind in _identity_cache:
            return _identity_cache[kind]
    if kind == "hiprtc":
        major, minor = _hiprtc.version()
        parts = [f"hiprtc {major}.{minor}"]
        try:
            from ._driver import format_version, runtime_version

            parts.append(f"HIP runtime {format_version(runtime_version())}")
        except Exception:  # hiprtc without the runtime (ROCm 6+ split libraries) is fine
            pass
        lib_dir = _hiprtc.library_dir()
        if lib_dir:
            parts.append(lib_dir)
        identity = " / ".join(parts)
    else:
        identity = f"{kind} " + _clang.compiler_version(_clang.find_compiler(kind))
    with _identity_lock:
        _identity_cache[kind] = identity
    return identity


def _normalize_options(options: "Sequence[str] | str") -> list[str]:
    if isinstance(options, str):
        options = [options] if options.strip() else []
    out = []
    for opt in options:
        if not isinstance(opt, str):
            raise TypeError(f"compiler options must be strings, got {opt!r}")
        if opt.startswith(("--offload-arch", "--gpu-architecture", "-arch")):
            raise ValueError(f"pass the target as arch=..., not as the option {opt!r}")
        out.append(opt)
    return out


def compile_with_log(source: str, arch: str = "gfx1030", options: "Sequence[str] | str" = (), *,
                     name: str = "kernel.hip") -> tuple[bytes, str]:
    """``compile_hip`` that also returns the compiler's messages (warnings) as a string."""
    if not isinstance(source, str):
        raise TypeError(f"source must be a str of HIP C++, got {type(source).__name__}")
    opts = _normalize_options(options)
    kind = compiler_kind()
    supported, where = _supported_isas(kind)
    target = _archs.validate_target(arch, supported, where)
    if kind == "hiprtc":
        return _hiprtc.compile_program(source, name, [f"--offload-arch={target}"] + opts)
    return _clang.compile_offline(source, target, opts, name, kind)


def compile_hip(source: str, arch: str = "gfx1030", options: "Sequence[str] | str" = (), *,
                name: str = "kernel.hip") -> bytes:
    """Compile HIP C++ ``source`` into a code object (an AMDGPU ELF) for ``arch``.

    Needs no GPU. ``arch`` is a gfx target, optionally with features ("gfx90a:xnack-").
    Raises UnsupportedTarget (a CompileError and ValueError) before compiling when the
    installed device libraries cannot build ``arch``, CompileError with the log when the
    source does not compile, and BackendUnavailable when no compiler is installed.
    """
    return compile_with_log(source, arch, options, name=name)[0]


_cache = DiskCache("hip")
logger = get_logger("hip")


def build_code_object(source: str, arch: str, options: "Sequence[str] | str" = (), *, name: str = "kernel.hip",
                      use_cache: bool = True) -> tuple[bytes, str, bool]:
    """``(code object, log, cache_hit)`` through the per-user disk cache.

    The key covers everything that changes the code object: the source, the target, the
    options, the compiler and its version, and the package version (docs/architecture.md#caches).
    """
    from . import __version__

    opts = _normalize_options(options)
    kind = compiler_kind()
    key = cache_key("hip-code-object", __version__, compiler_identity(kind), arch, tuple(opts), source)
    if use_cache:
        code = _cache.get(key, ".hsaco")
        if code is not None:
            logger.debug("binary cache hit: %s for %s (key %s)", name, arch, key)
            return code, "", True
    logger.debug("binary cache miss: compiling %s for %s with %s (key %s)", name, arch, kind, key)
    started = time.perf_counter()
    code, log = compile_with_log(source, arch, opts, name=name)
    log_build(logger, name, arch, time.perf_counter() - started, key)
    _cache.put(key, code, ".hsaco")
    return code, log, False


def compile_cached(source: str, arch: str, options: "Sequence[str] | str" = (), *, name: str = "kernel.hip") -> bytes:
    """``compile_hip`` through the per-user disk cache (see build_code_object)."""
    return build_code_object(source, arch, options, name=name)[0]
