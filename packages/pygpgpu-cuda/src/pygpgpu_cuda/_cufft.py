"""cuFFT through ctypes, loaded on the first FFT on a CUDA device: ``plan`` returns what runs one
batched 1-D transform (complex both ways, real to Hermitian, Hermitian to real; single and double
precision) along an axis of C-contiguous arrays on the context's stream, or None so that the
caller runs pygpgpu's own Stockham/Bluestein kernels.

The library is found by cuda-pathfinder (NVIDIA's ``nvidia-cufft`` pip wheel for CUDA 13,
``nvidia-cufft-cu12`` for CUDA 12, conda, the CUDA Toolkit); ``PYGPGPU_CUFFT_LIB`` names a file to
use instead, and ``PYGPGPU_CUFFT=0`` keeps pygpgpu from using cuFFT. Nothing is loaded at import.

cuFFT takes every length. The array is seen as ``(outer, n, inner)``: one plan of ``outer``
contiguous signals (the last axis), of ``inner`` signals strided by ``inner`` (the first axis), or,
for a middle axis, that plan run once per outer index at its own address. Transforms are
unnormalised (cuFFT's own convention; the caller scales). A c2r transform overwrites its input:
the caller passes a copy. Plans are made once per (context, kind, length, layout, dtype) and kept
for the life of the process (a forked child forgets them).
"""
from __future__ import annotations

import functools
import threading
from ctypes import POINTER, byref, c_int, c_void_p
from typing import Any, Callable

import numpy as np

from pygpgpu_core.backend.library import Function, LazyLibrary
from pygpgpu_core.errors import DriverError
from pygpgpu_core.forking import on_fork_child

from ._nvidia_libs import Availability, locator

__all__ = ["plan", "cufft", "available", "LIB_ENV", "USE_ENV"]

LIB_ENV = "PYGPGPU_CUFFT_LIB"
USE_ENV = "PYGPGPU_CUFFT"

_FORWARD, _INVERSE = -1, 1                       # CUFFT_FORWARD / CUFFT_INVERSE
# (kind, double) -> (cufftType, exec role)
_TYPES = {
    ("forward", False): (0x29, "exec_c2c"), ("inverse", False): (0x29, "exec_c2c"),
    ("forward", True): (0x69, "exec_z2z"), ("inverse", True): (0x69, "exec_z2z"),
    ("r2c", False): (0x2A, "exec_r2c"), ("r2c", True): (0x6A, "exec_d2z"),
    ("c2r", False): (0x2C, "exec_c2r"), ("c2r", True): (0x6C, "exec_z2d"),
}
_STATUS = {1: "CUFFT_INVALID_PLAN", 2: "CUFFT_ALLOC_FAILED", 3: "CUFFT_INVALID_TYPE", 4: "CUFFT_INVALID_VALUE",
           5: "CUFFT_INTERNAL_ERROR", 6: "CUFFT_EXEC_FAILED", 7: "CUFFT_SETUP_FAILED", 8: "CUFFT_INVALID_SIZE",
           9: "CUFFT_UNALIGNED_DATA", 11: "CUFFT_INVALID_DEVICE", 13: "CUFFT_NO_WORKSPACE",
           14: "CUFFT_NOT_IMPLEMENTED", 16: "CUFFT_NOT_SUPPORTED"}

_P = c_void_p
_FUNCTIONS = {
    # plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch
    "plan_many": Function("cufftPlanMany", (POINTER(c_int), c_int, POINTER(c_int), POINTER(c_int), c_int, c_int,
                                            POINTER(c_int), c_int, c_int, c_int, c_int)),
    "set_stream": Function("cufftSetStream", (c_int, _P)),
    "exec_c2c": Function("cufftExecC2C", (c_int, _P, _P, c_int)),
    "exec_z2z": Function("cufftExecZ2Z", (c_int, _P, _P, c_int)),
    "exec_r2c": Function("cufftExecR2C", (c_int, _P, _P)),
    "exec_d2z": Function("cufftExecD2Z", (c_int, _P, _P)),
    "exec_c2r": Function("cufftExecC2R", (c_int, _P, _P)),
    "exec_z2d": Function("cufftExecZ2D", (c_int, _P, _P)),
}

cufft = LazyLibrary("cuda", "cuFFT (libcufft)", _FUNCTIONS, env=LIB_ENV, fork_unsafe=True,
                    candidates=locator("cufft", ["libcufft.so.12", "libcufft.so.11", "cufft64_12.dll",
                                                 "cufft64_11.dll"]),
                    hint=f"pip install nvidia-cufft (CUDA 13) or nvidia-cufft-cu12, or set {LIB_ENV} to a libcufft")
"""``cufft()`` is the bound cuFFT functions; the first call loads the library."""

available = Availability(cufft, USE_ENV)
"""``available()``: whether cuFFT is installed and allowed (loads it on the first call)."""

_lock = threading.Lock()
_plans: dict = {}                # (context, kind, n, layout, dtype) -> cufftHandle
transforms = 0
"""How many transforms cuFFT has queued in this process (tests read it to see the path taken)."""

on_fork_child(_plans.clear)      # a forked child cannot use its parent's plans


def _check(status: int, call: str) -> None:
    if status:
        raise DriverError("cuda", call, status, _STATUS.get(status, f"cufftResult {status}"),
                          f"cuFFT failed; set {USE_ENV}=0 to use pygpgpu's own FFT kernels instead")


def _layout(kind: str, shape: tuple, axis: int, n: int) -> "tuple[int, int, int, int, int, int, int]":
    """(outer, batch, stride, in distance, out distance, in step, out step) in elements: one plan
    call transforms ``batch`` signals; a middle axis repeats it ``outer`` times, each ``step``
    elements further on."""
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    points_in = n // 2 + 1 if kind == "c2r" else n
    points_out = n // 2 + 1 if kind == "r2c" else n
    if inner == 1:
        return 1, outer, 1, points_in, points_out, 0, 0
    return outer, inner, inner, 1, 1, points_in * inner, points_out * inner


def _make(context: Any, kind: str, n: int, batch: int, stride: int, idist: int, odist: int, double: bool) -> int:
    calls = cufft()
    context.make_current()
    handle = c_int()
    length = (c_int * 1)(n)
    embed = (c_int * 1)(n)        # non-NULL: cuFFT then honours the strides and distances
    ctype, _ = _TYPES[(kind, double)]
    _check(calls.plan_many(byref(handle), 1, length, embed, stride, idist, embed, stride, odist, ctype, batch),
           "cufftPlanMany")
    _check(calls.set_stream(handle.value, context.queue.handle), "cufftSetStream")
    return handle.value


def plan(context: Any, kind: str, shape: tuple, dtype: np.dtype, axis: int, n: int) -> "Callable[[Any, Any], None] | None":
    """What queues the unnormalised length-``n`` DFT along ``axis`` of a C-contiguous array of
    ``shape`` and ``dtype`` on ``context``'s stream: ``run(x, out)``; ``kind`` "forward" /
    "inverse" / "r2c" / "c2r" (c2r overwrites ``x``). None where cuFFT is not installed or allowed,
    or the array is too large for cuFFT's 32-bit plan (nothing done)."""
    if dtype.char not in "fdFD" or n < 1 or not available():
        return None
    if 2 * (n + 2) * int(np.prod(shape, dtype=np.int64)) // max(shape[axis], 1) >= 2**31:
        return None               # (cufftPlanMany's sizes and strides are ints; cufftMakePlanMany64 would do)
    outer, batch, stride, idist, odist, istep, ostep = _layout(kind, shape, axis, n)
    double = dtype.char in "dD"
    key = (context, kind, n, batch, stride, idist, odist, double)
    with _lock:
        handle = _plans.get(key)
        if handle is None:
            handle = _plans[key] = _make(context, kind, n, batch, stride, idist, odist, double)
    return functools.partial(_run, context, handle, kind, double, outer, istep, ostep)


def _run(context: Any, handle: int, kind: str, double: bool, outer: int, istep: int, ostep: int, x: Any,
         out: Any) -> None:
    global transforms
    calls = cufft()
    _, role = _TYPES[(kind, double)]
    fn = getattr(calls, role)
    context.make_current()
    src, dst = int(x.buffer.ptr) + x.offset, int(out.buffer.ptr) + out.offset
    isize, osize = x.dtype.itemsize, out.dtype.itemsize
    for i in range(outer):
        args: tuple = (handle, src + i * istep * isize, dst + i * ostep * osize)
        if kind in ("forward", "inverse"):
            args += (_FORWARD if kind == "forward" else _INVERSE,)
        _check(fn(*args), fn.__name__)
    context._last_launch = (fn.__name__, ())   # a later wait polls for it (and Ctrl-C names it), as for a kernel
    transforms += 1
