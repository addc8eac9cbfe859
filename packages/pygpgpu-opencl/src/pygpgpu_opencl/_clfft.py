"""clFFT through ctypes, loaded on the first FFT on an OpenCL device: ``transform`` runs one
batched 1-D transform (complex both ways, real to Hermitian, Hermitian to real) along an axis of
C-contiguous arrays held in our own ``cl_mem`` buffers, on the context's queue, or says it cannot
so that the caller runs pygpgpu's own Stockham/Bluestein kernels.

The library is Debian's and Ubuntu's ``libclfft2`` (``libclFFT.so.2``), or any file named by
``PYGPGPU_CLFFT_LIB``; ``PYGPGPU_CLFFT=0`` keeps pygpgpu from using it. Nothing is loaded at import.

What clFFT takes here: lengths whose prime factors are 2, 3, 5 and 7; the transformed axis either
the last one (batches of contiguous signals) or the first one (signals strided by the rest, a
batch distance of one element), since clFFT has one batch dimension; single and double precision.
The rest (other lengths, a middle axis) says False. clFFT takes no buffer offsets: an input at an
offset in its buffer is copied to a buffer of its own on the device first. Transforms are unnormalised: clFFT's scale is a float, too coarse for double
precision, so the caller scales.

Plans are made and baked (clFFT compiles its kernels then) once per (context, kind, length,
batch layout, dtype) and kept for the life of the context. A plan clFFT cannot make (it lacks
that transform) is remembered with clFFT's status and declined from then on; a failed transform
raises DriverError.
"""
from __future__ import annotations

import atexit
import ctypes
import functools
import threading
import weakref
from ctypes import POINTER, Structure, c_float, c_int, c_size_t, c_uint32, c_uint64, c_void_p
from typing import Any, Callable

import numpy as np

from pygpgpu_core.backend.library import Function, LazyLibrary
from pygpgpu_core.errors import DriverError
from pygpgpu_core.forking import on_fork_child

from ._status import status_name
from ._vendor_switch import loaded_if_allowed
from ._wait import track

_forked: "list[bool]" = []     # a forked child must not tear down its parent's clFFT state


def _after_fork() -> None:
    _forked.append(True)
    _plans.clear()


on_fork_child(_after_fork)

__all__ = ["plan", "clfft", "available", "LIB_ENV", "USE_ENV", "smooth"]

LIB_ENV = "PYGPGPU_CLFFT_LIB"
USE_ENV = "PYGPGPU_CLFFT"

_FORWARD, _BACKWARD = -1, 1                     # clfftDirection
_INTERLEAVED, _HERMITIAN, _REAL = 1, 3, 5       # clfftLayout: COMPLEX_INTERLEAVED, HERMITIAN_INTERLEAVED, REAL
_SINGLE, _DOUBLE = 1, 2                         # clfftPrecision
_OUT_OF_PLACE = 2                               # clfftResultLocation
_1D = 1                                         # clfftDim

_STATUS = {4096: "CLFFT_BUGCHECK", 4097: "CLFFT_NOTIMPLEMENTED", 4098: "CLFFT_TRANSPOSED_NOTIMPLEMENTED",
           4099: "CLFFT_FILE_NOT_FOUND", 4100: "CLFFT_FILE_CREATE_FAILURE", 4101: "CLFFT_VERSION_MISMATCH",
           4102: "CLFFT_INVALID_PLAN", 4103: "CLFFT_DEVICE_NO_DOUBLE", 4104: "CLFFT_DEVICE_MISMATCH"}


class _SetupData(Structure):                    # clfftSetupData
    _fields_ = [("major", c_uint32), ("minor", c_uint32), ("patch", c_uint32), ("debugFlags", c_uint64)]


_PLAN = c_size_t                                # clfftPlanHandle
_FUNCTIONS = {
    "setup": Function("clfftSetup", (POINTER(_SetupData),)),
    "teardown": Function("clfftTeardown", ()),
    "version": Function("clfftGetVersion", (POINTER(c_uint32),) * 3),
    "create": Function("clfftCreateDefaultPlan", (POINTER(_PLAN), c_void_p, c_int, POINTER(c_size_t))),
    "precision": Function("clfftSetPlanPrecision", (_PLAN, c_int)),
    "layout": Function("clfftSetLayout", (_PLAN, c_int, c_int)),
    "placeness": Function("clfftSetResultLocation", (_PLAN, c_int)),
    "batch": Function("clfftSetPlanBatchSize", (_PLAN, c_size_t)),
    "in_stride": Function("clfftSetPlanInStride", (_PLAN, c_int, POINTER(c_size_t))),
    "out_stride": Function("clfftSetPlanOutStride", (_PLAN, c_int, POINTER(c_size_t))),
    "distance": Function("clfftSetPlanDistance", (_PLAN, c_size_t, c_size_t)),
    "scale": Function("clfftSetPlanScale", (_PLAN, c_int, c_float)),
    "bake": Function("clfftBakePlan", (_PLAN, c_uint32, POINTER(c_void_p), c_void_p, c_void_p)),
    "enqueue": Function("clfftEnqueueTransform", (_PLAN, c_int, c_uint32, POINTER(c_void_p), c_uint32, c_void_p,
                                                  POINTER(c_void_p), POINTER(c_void_p), POINTER(c_void_p),
                                                  c_void_p)),
}

clfft = LazyLibrary("opencl", "clFFT (libclFFT)", _FUNCTIONS, env=LIB_ENV, fork_unsafe=True,
                    candidates=lambda: ["libclFFT.so.2", "libclFFT.so", "libclFFT.dylib", "clFFT.dll"],
                    hint=f"apt-get install libclfft2 (Debian, Ubuntu), or set {LIB_ENV} to a libclFFT")
"""``clfft()`` is the bound clFFT functions; the first call loads the library (``clfftSetup`` runs
on the first transform)."""

_lock = threading.Lock()
_set_up: "list[bool]" = []
_unavailable: "list[str]" = []      # why clFFT cannot be used (checked once)
_plans: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()   # context -> key -> plan or None
declined: "dict[tuple, str]" = {}
"""(kind, length, dtype) -> clFFT's status, for each transform clFFT could not plan (pygpgpu's own
kernels ran it)."""
transforms = 0
"""How many transforms clFFT has queued in this process (tests read it to see the path taken)."""


def _status_text(status: int) -> str:
    return _STATUS.get(status) or status_name(status)


def available(device: Any = None) -> bool:
    """Whether clFFT is installed, allowed and set up (loads it on the first call)."""
    calls = loaded_if_allowed(device, USE_ENV, clfft, _unavailable)
    if calls is None:
        return False
    if not _set_up:
        with _lock:
            if not _set_up:
                major, minor, patch = c_uint32(), c_uint32(), c_uint32()
                calls.version(ctypes.byref(major), ctypes.byref(minor), ctypes.byref(patch))
                data = _SetupData(major.value, minor.value, patch.value, 0)   # clfftInitSetupData's values
                status = calls.setup(ctypes.byref(data))
                if status:
                    _unavailable.append(f"clfftSetup failed with {_status_text(status)} ({status})")
                    return False
                _set_up.append(True)
                atexit.register(_teardown)
    return True


def smooth(n: int) -> bool:
    """Whether ``n``'s prime factors are all 2, 3, 5 or 7 (the lengths clFFT transforms)."""
    if n < 1:
        return False
    for p in (2, 3, 5, 7):
        while n % p == 0:
            n //= p
    return n == 1


# kind -> (input layout, output layout, direction)
_KINDS = {
    "forward": (_INTERLEAVED, _INTERLEAVED, _FORWARD),
    "inverse": (_INTERLEAVED, _INTERLEAVED, _BACKWARD),
    "r2c": (_REAL, _HERMITIAN, _FORWARD),
    "c2r": (_HERMITIAN, _REAL, _BACKWARD),
}


def _make_plan(context: Any, kind: str, n: int, batch: int, strides: tuple, distances: tuple, double: bool) -> int:
    """A baked plan, or raises _Declined with clFFT's status."""
    calls = clfft()
    plan = _PLAN()
    length = (c_size_t * 1)(n)
    status = calls.create(ctypes.byref(plan), c_void_p(context._require()), _1D, length)
    if status:
        raise _Declined(status)
    in_layout, out_layout, _ = _KINDS[kind]
    for call, args in (
            (calls.precision, (_DOUBLE if double else _SINGLE,)),
            (calls.layout, (in_layout, out_layout)),
            (calls.placeness, (_OUT_OF_PLACE,)),
            (calls.batch, (batch,)),
            (calls.in_stride, (_1D, (c_size_t * 1)(strides[0]))),
            (calls.out_stride, (_1D, (c_size_t * 1)(strides[1]))),
            (calls.distance, distances),
            (calls.scale, (_FORWARD, 1.0)),
            (calls.scale, (_BACKWARD, 1.0)),    # (clFFT's default backward scale is 1/n; numpy's norms are ours)
            (calls.bake, (1, ctypes.byref(c_void_p(context.queue_handle())), None, None))):
        status = call(plan, *args)
        if status:
            raise _Declined(status)
    return plan.value


class _Declined(Exception):
    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


def _plan(context: Any, kind: str, n: int, batch: int, strides: tuple, distances: tuple, dtype: np.dtype) -> "int | None":
    key = (kind, n, batch, strides, distances, dtype.char)
    with _lock:
        plans = _plans.setdefault(context, {})
        if key in plans:
            return plans[key]
        try:
            plan: "int | None" = _make_plan(context, kind, n, batch, strides, distances, dtype.char in "dD")
        except _Declined as exc:
            plan = None
            declined[(kind, n, dtype.name)] = f"{_status_text(exc.status)} ({exc.status})"
        plans[key] = plan
        return plan


def _geometry(kind: str, shape: tuple, axis: int, n: int) -> "tuple[int, tuple, tuple] | None":
    """(batch, (in stride, out stride), (in distance, out distance)) in elements of each side for
    a transform of length ``n`` along ``axis`` of a C-contiguous array of ``shape`` (the input's;
    the output's axis holds ``n // 2 + 1`` points for r2c, ``n`` for c2r), or None."""
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    points_in = n // 2 + 1 if kind == "c2r" else n
    points_out = n // 2 + 1 if kind == "r2c" else n
    if inner == 1:
        return outer, (1, 1), (points_in, points_out)
    if outer == 1:
        return inner, (inner, inner), (1, 1)
    return None


def plan(context: Any, kind: str, shape: tuple, dtype: np.dtype, axis: int, n: int) -> "Callable[[Any, Any], None] | None":
    """What queues the unnormalised 1-D DFT of length ``n`` along ``axis`` of a C-contiguous
    array of ``shape`` and ``dtype`` in ``context``: ``run(x, out)`` with ``kind`` "forward" /
    "inverse" (complex to complex), "r2c" (real to its first ``n // 2 + 1`` terms) or "c2r"
    (those terms to the real signal; clFFT may overwrite ``x``: the caller passes a copy). None
    where clFFT is not installed or allowed, or lacks this transform (nothing done)."""
    if dtype.char not in "fdFD" or not smooth(n) or not available(context.device):
        return None
    geometry = _geometry(kind, shape, axis, n)
    if geometry is None:
        return None
    handle = _plan(context, kind, n, *geometry, dtype)
    if handle is None:
        return None
    return functools.partial(_run, context, handle, _KINDS[kind][2])


def _run(context: Any, handle: int, direction: int, x: Any, out: Any) -> None:
    global transforms
    if out.offset:
        raise ValueError("clFFT writes at the start of a buffer: pass a fresh output array")
    calls = clfft()
    source = x.buffer
    if x.offset:                                       # clFFT takes no offsets: a copy on the device
        source = context.buffer(x.nbytes)
        source.copy_from(x.buffer, x.nbytes, src_offset=x.offset)
    queue = c_void_p(context.queue_handle())
    event = c_void_p()
    inputs, outputs = (c_void_p * 1)(source._require()), (c_void_p * 1)(out.buffer._require())
    with context._enqueue_lock:
        status = calls.enqueue(handle, direction, 1, ctypes.byref(queue), 0, None, ctypes.byref(event), inputs,
                               outputs, None)
        if status == 0:
            track(context, event.value)
    if status:
        raise DriverError("opencl", "clfftEnqueueTransform", status, _status_text(status),
                          f"clFFT failed; set {USE_ENV}=0 to use pygpgpu's own FFT kernels instead")
    context._last_launch = ("clfftEnqueueTransform", (source, out.buffer))   # kept alive if Ctrl-C cuts a wait
    transforms += 1


def _teardown() -> None:
    """clFFT's own end (it frees its kernels and plans, and warns on stderr when not called)."""
    if _set_up and clfft.loaded and not _forked:
        _plans.clear()
        clfft().teardown()
