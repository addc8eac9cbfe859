"""The DLPack capsule protocol through ctypes: export a device array, import a foreign one.

Ownership rules (the part that must not double-free):

* Export: we build a ``DLManagedTensor`` in ctypes memory and keep it, its shape/strides arrays and
  the exporting array alive in ``_exports`` under the struct's address. The tensor's ``deleter``
  only drops that entry, so calling it twice is harmless. The capsule's destructor calls the
  deleter only while the capsule is still named ``"dltensor"`` -- a consumer renames it to
  ``"used_dltensor"`` when it takes ownership and calls the deleter itself later.
* Import: we read the tensor, rename the capsule to ``"used_dltensor"`` (so its destructor no
  longer frees it) and hand the deleter to an :class:`ImportedTensor` that calls it exactly once,
  when the last array using the memory dies.

Capsule names live in static buffers: a capsule stores the name pointer, not a copy.
"""
from __future__ import annotations

import ctypes
import sys
import threading
from ctypes import POINTER, c_char_p, c_int, c_int32, c_int64, c_uint8, c_uint16, c_uint32, c_uint64, c_void_p
from typing import Any

import numpy as np


__all__ = [
    "kDLCPU", "kDLCUDA", "kDLCUDAHost", "kDLOpenCL", "kDLROCM", "kDLCUDAManaged",
    "export_capsule", "import_capsule", "ImportedTensor", "DLPackInfo",
]

kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLOpenCL = 4
kDLROCM = 10
kDLCUDAManaged = 13

_kDLInt, _kDLUInt, _kDLFloat, _kDLBfloat, _kDLComplex, _kDLBool = 0, 1, 2, 4, 5, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", c_void_p),
        ("deleter", c_void_p),
        ("flags", c_uint64),
        ("dl_tensor", DLTensor),
    ]


_DELETER = ctypes.CFUNCTYPE(None, c_void_p)
_DESTRUCTOR = ctypes.CFUNCTYPE(None, c_void_p)

# Private prototypes: never change argtypes on the shared ctypes.pythonapi function objects.
_api = ctypes.pythonapi
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, c_void_p, c_void_p)(("PyCapsule_New", _api))
_PyCapsule_IsValid_ptr = ctypes.PYFUNCTYPE(c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", _api))
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_char_p)(("PyCapsule_IsValid", _api))
_PyCapsule_GetPointer_ptr = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", _api))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, c_char_p)(("PyCapsule_GetPointer", _api))
_PyCapsule_SetName = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_void_p)(("PyCapsule_SetName", _api))

_NAME = ctypes.create_string_buffer(b"dltensor")
_USED_NAME = ctypes.create_string_buffer(b"used_dltensor")
_NAME_VERSIONED = ctypes.create_string_buffer(b"dltensor_versioned")
_USED_NAME_VERSIONED = ctypes.create_string_buffer(b"used_dltensor_versioned")

_lock = threading.Lock()
_exports: dict[int, tuple] = {}


def _forget_export(addr: int | None) -> None:
    if addr:
        with _lock:
            _exports.pop(addr, None)


@_DELETER
def _deleter(addr):  # called by the consumer, once, when it is done with the memory
    try:
        _forget_export(addr)
    except Exception:  # never let an exception escape into C
        pass


def _free_if_unconsumed(capsule) -> None:
    for name in (_NAME.value, _NAME_VERSIONED.value):
        if _PyCapsule_IsValid_ptr(capsule, name):
            _forget_export(_PyCapsule_GetPointer_ptr(capsule, name))


@_DESTRUCTOR
def _capsule_destructor(capsule):  # the capsule died; free only if nobody consumed it
    # A consumer that rejects a capsule (numpy, for a device it cannot read) drops it with its
    # own error still set; the first Python-API call below then raises that error here (and
    # any other call before it would turn it into a SystemError). Catching it clears it, so
    # try once more: the export is freed either way.
    try:
        _free_if_unconsumed(capsule)
    except BaseException:
        try:
            _free_if_unconsumed(capsule)
        except BaseException:
            pass


_DELETER_ADDR = ctypes.cast(_deleter, c_void_p).value
_DESTRUCTOR_ADDR = ctypes.cast(_capsule_destructor, c_void_p).value

_CODE_OF_KIND = {"i": _kDLInt, "u": _kDLUInt, "f": _kDLFloat, "c": _kDLComplex, "b": _kDLBool}


def _dl_dtype(dtype: np.dtype) -> DLDataType:
    code = _CODE_OF_KIND.get(dtype.kind)
    if code is None or dtype.byteorder == ">":
        raise BufferError(f"dtype {dtype} has no DLPack equivalent; only bool, int, uint, float and complex do")
    return DLDataType(code, dtype.itemsize * 8, 1)


def _np_dtype(dt: DLDataType) -> np.dtype:
    if dt.lanes != 1:
        raise BufferError(f"DLPack tensors with {dt.lanes} vector lanes are not supported")
    kind = {_kDLInt: "i", _kDLUInt: "u", _kDLFloat: "f", _kDLComplex: "c"}.get(dt.code)
    if dt.code == _kDLBool and dt.bits == 8:
        return np.dtype(np.bool_)
    if kind is None:
        name = "bfloat16" if dt.code == _kDLBfloat else f"type code {dt.code}"
        raise BufferError(f"DLPack {name} ({dt.bits} bits) has no numpy dtype; convert it (e.g. to float32) first")
    return np.dtype(f"{kind}{dt.bits // 8}")


DLPACK_VERSION = (1, 0)
_FLAG_READ_ONLY = 1


def export_capsule(data_ptr: int, device: tuple[int, int], shape: tuple, dtype: np.dtype, keepalive: Any,
                   *, versioned: bool = False, read_only: bool = False):
    """A capsule viewing ``data_ptr`` as a C-contiguous array: ``"dltensor_versioned"``
    (DLPack 1.0, for consumers that ask with ``max_version``; ``read_only`` sets its flag) or
    legacy ``"dltensor"``, which has no read-only flag: a read-only array raises BufferError
    there, as numpy's does.
    ``keepalive`` stays referenced until the consumer calls the deleter (or the capsule dies
    unconsumed)."""
    if read_only and not versioned:
        raise BufferError("Cannot export readonly array since signalling readonly is unsupported by DLPack "
                          "(supported by newer DLPack version).")
    ndim = len(shape)
    shape_arr = (c_int64 * max(ndim, 1))(*shape)
    strides = []
    step = 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    strides_arr = (c_int64 * max(ndim, 1))(*reversed(strides))
    managed: DLManagedTensor | DLManagedTensorVersioned
    if versioned:
        managed = DLManagedTensorVersioned()
        managed.version = DLPackVersion(*DLPACK_VERSION)
        managed.flags = _FLAG_READ_ONLY if read_only else 0
        name = _NAME_VERSIONED
    else:
        managed = DLManagedTensor()
        name = _NAME
    t = managed.dl_tensor
    t.data = data_ptr or None
    t.device = DLDevice(*device)
    t.ndim = ndim
    t.dtype = _dl_dtype(dtype)
    t.shape = ctypes.cast(shape_arr, POINTER(c_int64))
    t.strides = ctypes.cast(strides_arr, POINTER(c_int64))
    t.byte_offset = 0
    managed.deleter = _DELETER_ADDR
    addr = ctypes.addressof(managed)
    managed.manager_ctx = addr
    with _lock:
        _exports[addr] = (managed, shape_arr, strides_arr, keepalive)
    try:
        return _PyCapsule_New(addr, ctypes.addressof(name), _DESTRUCTOR_ADDR)
    except BaseException:
        _forget_export(addr)
        raise


def wants_versioned(max_version: Any) -> bool:
    """Whether a consumer's ``max_version`` lets us return a DLPack 1.x capsule."""
    try:
        return max_version is not None and int(max_version[0]) >= 1
    except (TypeError, ValueError, IndexError):
        return False


def live_exports() -> int:
    """How many exported tensors are still held for a consumer (tests: must drop to zero)."""
    with _lock:
        return len(_exports)


class DLPackInfo:
    """What an imported tensor describes."""

    __slots__ = ("ptr", "device_type", "device_id", "shape", "dtype", "nbytes")

    def __init__(self, ptr, device_type, device_id, shape, dtype):
        self.ptr = ptr
        self.device_type = device_type
        self.device_id = device_id
        self.shape = shape
        self.dtype = dtype
        self.nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize


class ImportedTensor:
    """Owns a consumed DLPack tensor: calls the producer's deleter exactly once, when collected."""

    __slots__ = ("_addr", "_deleter", "source")

    def __init__(self, addr: int, deleter_addr: int | None, source: Any):
        self._addr = addr
        self._deleter = _DELETER(deleter_addr) if deleter_addr else None
        self.source = source  # the producer object, for repr/debugging only

    def release(self) -> None:
        deleter, self._deleter = self._deleter, None
        if deleter is not None:
            deleter(self._addr)

    def __del__(self, _is_finalizing=sys.is_finalizing):  # bound early: globals may be gone at exit
        if not _is_finalizing():
            self.release()


def import_capsule(capsule: Any, source: Any = None) -> tuple[DLPackInfo, ImportedTensor]:
    """Consume a ``"dltensor"`` (or ``"dltensor_versioned"``) capsule. Only C-contiguous tensors
    are accepted (a strided one raises ``BufferError`` saying to make it contiguous)."""
    managed: DLManagedTensor | DLManagedTensorVersioned
    if _PyCapsule_IsValid(capsule, _NAME.value):
        addr = _PyCapsule_GetPointer(capsule, _NAME.value)
        managed = DLManagedTensor.from_address(addr)
        used = _USED_NAME
    elif _PyCapsule_IsValid(capsule, _NAME_VERSIONED.value):
        addr = _PyCapsule_GetPointer(capsule, _NAME_VERSIONED.value)
        managed = DLManagedTensorVersioned.from_address(addr)
        if managed.version.major > 1:
            raise BufferError(f"DLPack major version {managed.version.major} is newer than this reader (1)")
        used = _USED_NAME_VERSIONED
    else:
        raise BufferError("not a DLPack capsule, or one that was already consumed (each capsule can be used once)")
    t = managed.dl_tensor
    ndim = t.ndim
    shape = tuple(int(t.shape[i]) for i in range(ndim))
    dtype = _np_dtype(t.dtype)
    if t.strides and ndim:
        expected = 1
        for i in reversed(range(ndim)):
            if shape[i] != 1 and int(t.strides[i]) != expected:
                raise BufferError(
                    f"the DLPack tensor (shape {shape}) is not C-contiguous; make it contiguous first "
                    "(torch: .contiguous(), CuPy/JAX: ascontiguousarray)"
                )
            expected *= shape[i]
    ptr = (t.data or 0) + int(t.byte_offset)
    info = DLPackInfo(ptr, int(t.device.device_type), int(t.device.device_id), shape, dtype)
    owner = ImportedTensor(addr, managed.deleter, source)
    _PyCapsule_SetName(capsule, ctypes.addressof(used))  # we own it now; the destructor must not free
    return info, owner
