"""One hiprtc compile, in this process or in a child process (``python _hiprtc_worker.py``).

Why a child process: comgr, which hiprtc compiles through, carries its own copy of clang.
Once it is loaded, loading another clang into the same process (PoCL's libclang-cpp, i.e.
OpenCL on the CPU) makes LLVM abort the process with "CommandLine Error: Option ...
registered more than once", and the same happens in the other order. hiprtc also aborts on
some inputs. Running it in a short-lived child keeps the caller alive whatever happens.

This file uses the standard library only, so the child starts fast (no numpy, no package).
Protocol: the request is JSON on stdin ({"library", "source", "name", "options"}); the reply
is JSON on stdout ({"status", "stage", "log", "code"}; code in base64).
"""
from __future__ import annotations

import base64
import ctypes
import json
import sys
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_void_p

_PROTOTYPES = {
    "hiprtcCreateProgram": [POINTER(c_void_p), c_char_p, c_char_p, c_int, c_void_p, c_void_p],
    "hiprtcCompileProgram": [c_void_p, c_int, POINTER(c_char_p)],
    "hiprtcDestroyProgram": [POINTER(c_void_p)],
    "hiprtcGetProgramLogSize": [c_void_p, POINTER(c_size_t)],
    "hiprtcGetProgramLog": [c_void_p, c_char_p],
    "hiprtcGetCodeSize": [c_void_p, POINTER(c_size_t)],
    "hiprtcGetCode": [c_void_p, c_char_p],
}


def prototype(lib: ctypes.CDLL) -> None:
    for name, argtypes in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = c_int


def _log(lib: ctypes.CDLL, prog: c_void_p) -> str:
    size = c_size_t()
    if lib.hiprtcGetProgramLogSize(prog, ctypes.byref(size)) != 0 or size.value <= 1:
        return ""
    buf = ctypes.create_string_buffer(size.value + 1)
    if lib.hiprtcGetProgramLog(prog, buf) != 0:
        return ""
    return buf.value.decode(errors="replace")


def compile_with(lib: ctypes.CDLL, source: str, name: str, options: "list[str]") -> dict:
    """Run hiprtc; returns {"status", "stage", "log", "code": bytes} (status 0 = success)."""
    prototype(lib)
    prog = c_void_p()
    encoded = [o.encode() for o in options]
    opts = (c_char_p * max(len(encoded), 1))(*encoded)
    status = lib.hiprtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(), 0, None, None)
    if status != 0:
        return {"status": status, "stage": "hiprtcCreateProgram", "log": "", "code": b""}
    try:
        status = lib.hiprtcCompileProgram(prog, len(encoded), opts)
        log = _log(lib, prog)
        if status != 0:
            return {"status": status, "stage": "hiprtcCompileProgram", "log": log, "code": b""}
        size = c_size_t()
        status = lib.hiprtcGetCodeSize(prog, ctypes.byref(size))
        if status != 0:
            return {"status": status, "stage": "hiprtcGetCodeSize", "log": log, "code": b""}
        code = ctypes.create_string_buffer(max(size.value, 1))
        status = lib.hiprtcGetCode(prog, code)
        return {"status": status, "stage": "hiprtcGetCode", "log": log, "code": code.raw[: size.value]}
    finally:
        lib.hiprtcDestroyProgram(ctypes.byref(prog))


def main() -> int:
    request = json.loads(sys.stdin.read())
    lib = ctypes.CDLL(request["library"])
    result = compile_with(lib, request["source"], request["name"], request["options"])
    result["code"] = base64.b64encode(result["code"]).decode()
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
