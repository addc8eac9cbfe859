"""NVRTC (the runtime CUDA C++ compiler) through ctypes: locate, version, compile to CUBIN.

Works without a GPU and without libcuda. The library is found by cuda-pathfinder
(pip wheels, conda, system, CUDA_PATH), the same search CuPy and numba-cuda use;
``PYGPGPU_NVRTC_LIB`` names a file to use instead.
"""
from __future__ import annotations

import ctypes
import glob
import os
import re
import sys
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_void_p
from typing import Any, Sequence

from pygpgpu_core.backend.library import Function, LazyLibrary
from pygpgpu_core.errors import BackendUnavailable, CompileError, DriverError

__all__ = ["nvrtc", "nvrtc_version", "compile_cuda", "compile_with_log", "supported_archs", "parse_arch", "check_nvrtc", "LIB_ENV"]

LIB_ENV = "PYGPGPU_NVRTC_LIB"
# Where NVIDIA publishes nvidia-cuda-nvrtc wheels; the [cuda] extras carry the same marker.
NVRTC_WHEEL_PLATFORMS = {("linux", "x86_64"), ("linux", "aarch64"), ("win32", "AMD64")}


def _install_hint() -> str:
    import platform  # only on this error path: it costs milliseconds at import

    machine = platform.machine()
    if (sys.platform, machine) not in NVRTC_WHEEL_PLATFORMS:
        return (f"NVIDIA publishes no nvidia-cuda-nvrtc wheel for {sys.platform}/{machine}, so pip could not "
                f"install one: install NVRTC with the CUDA Toolkit and set {LIB_ENV} to its libnvrtc")
    return ("pip install nvidia-cuda-nvrtc (for CUDA 13 drivers) or nvidia-cuda-nvrtc-cu12 (for CUDA 12 "
            f"drivers), or set {LIB_ENV} to a libnvrtc")


_F = Function
_FUNCTIONS: dict[str, Function] = {
    "nvrtcVersion": _F("nvrtcVersion", (POINTER(c_int), POINTER(c_int))),
    "nvrtcGetNumSupportedArchs": _F("nvrtcGetNumSupportedArchs", (POINTER(c_int),)),
    "nvrtcGetSupportedArchs": _F("nvrtcGetSupportedArchs", (POINTER(c_int),)),
    "nvrtcCreateProgram": _F("nvrtcCreateProgram", (POINTER(c_void_p), c_char_p, c_char_p, c_int, c_void_p, c_void_p)),
    "nvrtcCompileProgram": _F("nvrtcCompileProgram", (c_void_p, c_int, POINTER(c_char_p))),
    "nvrtcDestroyProgram": _F("nvrtcDestroyProgram", (POINTER(c_void_p),)),
    "nvrtcGetProgramLogSize": _F("nvrtcGetProgramLogSize", (c_void_p, POINTER(c_size_t))),
    "nvrtcGetProgramLog": _F("nvrtcGetProgramLog", (c_void_p, c_char_p)),
    "nvrtcGetCUBINSize": _F("nvrtcGetCUBINSize", (c_void_p, POINTER(c_size_t))),
    "nvrtcGetCUBIN": _F("nvrtcGetCUBIN", (c_void_p, c_char_p)),
    "nvrtcGetPTXSize": _F("nvrtcGetPTXSize", (c_void_p, POINTER(c_size_t))),
    "nvrtcGetPTX": _F("nvrtcGetPTX", (c_void_p, c_char_p)),
    "nvrtcGetErrorString": _F("nvrtcGetErrorString", (c_int,), restype=c_char_p),
}


def _locate() -> list[str]:
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
    except ImportError as exc:
        raise BackendUnavailable("cuda", f"cuda-pathfinder is not installed ({exc}): pip install cuda-pathfinder") from None
    try:
        return [load_nvidia_dynamic_lib("nvrtc").abs_path]
    except Exception as exc:  # DynamicLibNotFoundError and friends
        raise BackendUnavailable("cuda", f"NVRTC (libnvrtc) was not found ({_search_summary(exc)})",
                                 fix=_install_hint()) from None


def _search_summary(exc: Exception) -> str:
    """cuda-pathfinder's message on one line: it ends in a newline and a list of attachments, and
    repeats one clause per search step ("No such file: libnvrtc.so.13, No such file: libnvrtc.so.13")."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    head, sep, clauses = first.partition(": ")
    unique = list(dict.fromkeys(c.strip() for c in clauses.split(", ") if c.strip()))
    return f"{head}{sep}{', '.join(unique)}" if sep else first


def _preload_builtins(path: str) -> None:
    # Some wheels (13.0.88) ship libnvrtc without an $ORIGIN RUNPATH, so its later dlopen of
    # libnvrtc-builtins fails; loading the builtins first, globally, satisfies that lookup.
    folder = os.path.dirname(path)
    for candidate in sorted(glob.glob(os.path.join(folder, "libnvrtc-builtins.so*"))):
        try:
            ctypes.CDLL(candidate, mode=ctypes.RTLD_GLOBAL)
            return
        except OSError:
            continue


nvrtc = LazyLibrary("cuda", "NVRTC (libnvrtc)", _FUNCTIONS, env=LIB_ENV, candidates=_locate, hint=_install_hint,
                    prepare=_preload_builtins, too_old="this NVRTC is too old")
"""``nvrtc()`` is the bound NVRTC functions; the first call loads the library (needs no GPU)."""


def check_nvrtc(status: int, call: str) -> None:
    """Raise DriverError naming the nvrtcResult of a failed NVRTC call."""
    if status == 0:
        return
    raw = nvrtc().nvrtcGetErrorString(status)
    name = raw.decode() if raw else f"nvrtcResult {status}"
    raise DriverError("cuda", call, status, name, "NVRTC failed; see the NVRTC documentation for this status")


def nvrtc_version() -> tuple[int, int]:
    """The NVRTC version, e.g. ``(13, 0)``. Raises BackendUnavailable when NVRTC is missing."""
    lib = nvrtc()
    major, minor = c_int(), c_int()
    check_nvrtc(lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
    return major.value, minor.value


def supported_archs() -> tuple[int, ...]:
    """The ``sm_XY`` numbers (``XY``) this NVRTC can emit CUBIN for, ascending."""
    lib = nvrtc()
    n = c_int()
    check_nvrtc(lib.nvrtcGetNumSupportedArchs(ctypes.byref(n)), "nvrtcGetNumSupportedArchs")
    archs = (c_int * n.value)()
    check_nvrtc(lib.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs")
    return tuple(sorted(archs))


_ARCH_RE = re.compile(r"^(sm|compute)_(\d+)([af]?)$")


def parse_arch(arch: str) -> tuple[str, int, str]:
    """``"sm_90a"`` -> ``("sm", 90, "a")``; ValueError for anything else."""
    m = _ARCH_RE.match(arch.strip().lower())
    if not m:
        raise ValueError(f"unknown CUDA architecture {arch!r}: use 'sm_XY' (e.g. 'sm_90') or 'compute_XY'")
    return m.group(1), int(m.group(2)), m.group(3)


def _target(arch: str) -> tuple[str, bool]:
    """The ``--gpu-architecture`` value and whether the result is a CUBIN (else PTX)."""
    kind, number, suffix = parse_arch(arch)
    archs = supported_archs()
    major, minor = nvrtc_version()
    if number < archs[0]:
        raise CompileError(
            f"NVRTC {major}.{minor} cannot compile for {arch}: its oldest target is sm_{archs[0]}. "
            "Install an older NVRTC that still supports this GPU, e.g. pip install nvidia-cuda-nvrtc-cu12"
        )
    if number > archs[-1]:
        # A GPU newer than this compiler: emit PTX for the newest target we have; the driver JITs it.
        return f"compute_{archs[-1]}", False
    if kind == "compute":
        return f"compute_{number}{suffix}", False
    return f"sm_{number}{suffix}", True


def _log(lib: Any, prog: c_void_p) -> str:
    size = c_size_t()
    if lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size)) != 0 or size.value <= 1:
        return ""
    buf = ctypes.create_string_buffer(size.value)
    if lib.nvrtcGetProgramLog(prog, buf) != 0:
        return ""
    return buf.value.decode(errors="replace")


def compile_cuda(source: str, arch: str = "sm_90", options: Sequence[str] = (), *, name: str = "kernel.cu") -> bytes:
    """Compile CUDA C++ ``source`` with NVRTC: a CUBIN for ``arch`` (``sm_XY``), or PTX text
    (NUL-terminated) when ``arch`` is ``compute_XY`` or newer than this NVRTC can target.

    Needs no GPU. Raises CompileError carrying NVRTC's log, BackendUnavailable without NVRTC.
    """
    return compile_with_log(source, arch, options, name=name)[0]


def compile_with_log(
    source: str, arch: str = "sm_90", options: Sequence[str] = (), *, name: str = "kernel.cu"
) -> tuple[bytes, str]:
    """:func:`compile_cuda` that also returns NVRTC's log (warnings) of a successful build."""
    if not isinstance(source, str):
        raise TypeError(f"compile_cuda needs the source as str, got {type(source).__name__}")
    lib = nvrtc()
    target, cubin = _target(arch)
    opts = [f"--gpu-architecture={target}"] + [str(o) for o in options]
    c_opts = (c_char_p * len(opts))(*[o.encode() for o in opts])
    prog = c_void_p()
    check_nvrtc(
        lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None),
        "nvrtcCreateProgram",
    )
    try:
        status = lib.nvrtcCompileProgram(prog, len(opts), c_opts)
        log = _log(lib, prog)
        if status != 0:
            raw = lib.nvrtcGetErrorString(status)
            status_name = raw.decode() if raw else f"nvrtcResult {status}"
            major, minor = nvrtc_version()
            raise CompileError(
                f"NVRTC {major}.{minor} failed to compile {name} for {target} ({status_name}; options: {' '.join(opts)})",
                log=log,
                source=source,
            )
        get_size, get = (lib.nvrtcGetCUBINSize, lib.nvrtcGetCUBIN) if cubin else (lib.nvrtcGetPTXSize, lib.nvrtcGetPTX)
        size = c_size_t()
        check_nvrtc(get_size(prog, ctypes.byref(size)), get_size.__name__)
        out = ctypes.create_string_buffer(size.value)
        check_nvrtc(get(prog, out), get.__name__)
        return out.raw, log
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
