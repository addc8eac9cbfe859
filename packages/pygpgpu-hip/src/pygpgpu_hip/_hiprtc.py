"""hiprtc through ctypes: one ``check()`` for hiprtcResult, and compiling to a code object."""
from __future__ import annotations

import base64
import ctypes
import json
import os
import re
import subprocess
import sys
import threading
from ctypes import POINTER, c_char_p, c_int

from pygpgpu_core.backend.library import Function, LazyLibrary
from pygpgpu_core.errors import BackendUnavailable, CompileError, DriverError
from pygpgpu_core.libinfo import library_path

from . import _hiprtc_worker as _worker
from ._library import hiprtc_candidates

__all__ = ["hiprtc", "check", "version", "compile_program", "library_dir"]

HIPRTC_SUCCESS = 0
HIPRTC_ERROR_COMPILATION = 6
_NAMES = {
    1: "HIPRTC_ERROR_OUT_OF_MEMORY",
    2: "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
    3: "HIPRTC_ERROR_INVALID_INPUT",
    4: "HIPRTC_ERROR_INVALID_PROGRAM",
    5: "HIPRTC_ERROR_INVALID_OPTION",
    6: "HIPRTC_ERROR_COMPILATION",
    7: "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
    8: "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
    9: "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
    10: "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
    11: "HIPRTC_ERROR_INTERNAL_ERROR",
    100: "HIPRTC_ERROR_LINKING",
}
_HINTS = {
    5: "an option was not accepted; check the options passed to compile_hip / program()",
    6: "the source did not compile; see the build log",
    11: "hiprtc failed internally; try the offline compiler with PYGPGPU_HIP_COMPILER=clang",
}

# comgr is not documented as thread-safe for concurrent in-process compiles on every release.
_compile_lock = threading.Lock()


def _runtime_fallback(tried: "list[str]") -> ctypes.CDLL:
    """ROCm 5: hiprtc lives inside libamdhip64."""
    from ._driver import driver

    searched = ", ".join(tried) or "nothing"
    try:
        runtime = driver().lib
    except BackendUnavailable as exc:
        raise BackendUnavailable("hip", f"hiprtc was not found (tried {searched}) and {exc.reason}") from None
    if hasattr(runtime, "hiprtcCreateProgram"):
        return runtime
    raise BackendUnavailable(
        "hip", f"hiprtc was not found (tried {searched}) and the HIP runtime does not export it; install ROCm's "
               "hiprtc (package hiprtc or rocm-hip-runtime-dev), point PYGPGPU_HIPRTC_LIB at libhiprtc.so, or use "
               "the offline compiler with PYGPGPU_HIP_COMPILER=clang")


hiprtc = LazyLibrary(
    "hip", "hiprtc", {
        "hiprtcVersion": Function("hiprtcVersion", (POINTER(c_int), POINTER(c_int))),
        "hiprtcGetErrorString": Function("hiprtcGetErrorString", (c_int,), restype=c_char_p),
    }, env="PYGPGPU_HIPRTC_LIB", candidates=hiprtc_candidates, fallback=_runtime_fallback,
    hint="Install ROCm's hiprtc (package hiprtc or rocm-hip-runtime-dev) or point PYGPGPU_HIPRTC_LIB at libhiprtc.so",
)
"""``hiprtc()``: the bound hiprtc functions (``.lib`` the library, for the compile worker)."""


def _name(status: int) -> str:
    try:
        text = hiprtc().hiprtcGetErrorString(int(status))
        if text:
            return text.decode()
    except Exception:
        pass
    return _NAMES.get(status, f"hiprtcResult({status})")


def check(status: int, call: str) -> None:
    """Raise DriverError with hiprtc's status name unless ``status`` is HIPRTC_SUCCESS."""
    if status != HIPRTC_SUCCESS:
        raise DriverError("hip", call, status, _name(status), _HINTS.get(status, ""))


def version() -> tuple[int, int]:
    """hiprtcVersion (ROCm 5.2.3 reports (9, 0); ROCm 6+ report the HIP major/minor)."""
    lib = hiprtc()
    major, minor = c_int(), c_int()
    check(lib.hiprtcVersion(ctypes.byref(major), ctypes.byref(minor)), "hiprtcVersion")
    return major.value, minor.value


def library_dir() -> "str | None":
    """The folder holding the hiprtc library (where comgr is looked for)."""
    path = library_path(hiprtc().lib)
    return os.path.dirname(path) if os.sep in path else None


# comgr names the source after its scratch folder; show the caller's name instead.
_SCRATCH_NAME = re.compile(r"\S*comgr-[^/\\\s]+[/\\]input[/\\]CompileSource")


def isolated() -> bool:
    """Whether hiprtc runs in a child process (the default; ``PYGPGPU_HIPRTC_INPROCESS=1`` turns it off)."""
    return os.environ.get("PYGPGPU_HIPRTC_INPROCESS", "") in ("", "0")


def _run_child(library: str, source: str, name: str, options: "list[str]") -> dict:
    request = json.dumps({"library": library, "source": source, "name": name, "options": options})
    try:
        proc = subprocess.run([sys.executable, _worker.__file__], input=request, capture_output=True, text=True,
                              timeout=600)
    except (OSError, subprocess.SubprocessError) as exc:
        raise CompileError(f"could not run the hiprtc compiler process for {name}: {exc}", source=source) from exc
    if proc.returncode != 0:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        raise CompileError(
            f"hiprtc crashed while compiling {name} ({how}); the compile ran in a child process, so this one is "
            "unharmed. Try the offline compiler (PYGPGPU_HIP_COMPILER=clang) or another target",
            log=proc.stderr, source=source,
        )
    result = json.loads(proc.stdout)
    result["code"] = base64.b64decode(result["code"])
    return result


def compile_program(source: str, name: str, options: "list[str]") -> tuple[bytes, str]:
    """Compile ``source``; returns (code object, build log). The target must already be validated."""
    lib = hiprtc().lib
    if isolated():
        result = _run_child(library_path(lib), source, name, options)
    else:
        with _compile_lock:
            result = _worker.compile_with(lib, source, name, options)
    status, log = result["status"], _SCRATCH_NAME.sub(name, result["log"])
    if status == HIPRTC_ERROR_COMPILATION:
        raise CompileError(f"hiprtc could not compile {name} ({_name(status)})", log=log, source=source)
    check(status, result["stage"])
    if not result["code"]:
        raise CompileError(f"hiprtc produced no code for {name}", log=log, source=source)
    return result["code"], log
