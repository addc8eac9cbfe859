"""DLPack tensors whose data starts ``byte_offset`` bytes past their ``data`` pointer (torch
exports a view ``t[2:]`` of device memory this way): the import reads from ``data +
byte_offset``. Host producers go through numpy, which applies the offset itself; a device
producer's capsule is read by gnp's own importer (_dlpack.import_capsule), tested here with
capsules whose offset is set by hand."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from conftest import skip_no_device

from pygpgpu_core import gnp, registry
from pygpgpu_core.errors import GPGPUError
from pygpgpu_core.gnp import _dlpack

_GET_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_GET_POINTER.restype = ctypes.c_void_p
_GET_POINTER.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _capsule_with_offset(ptr: int, device: tuple, shape: tuple, dtype, keepalive, byte_offset: int,
                         versioned: bool):
    cap = _dlpack.export_capsule(ptr, device, shape, np.dtype(dtype), keepalive, versioned=versioned)
    name = b"dltensor_versioned" if versioned else b"dltensor"
    kind = _dlpack.DLManagedTensorVersioned if versioned else _dlpack.DLManagedTensor
    kind.from_address(_GET_POINTER(cap, name)).dl_tensor.byte_offset = byte_offset
    return cap


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("device", [(_dlpack.kDLCUDA, 0), (_dlpack.kDLROCM, 1)])
def test_import_reads_from_data_plus_byte_offset(versioned, device):
    host = np.arange(10, dtype=np.float32)
    base = host.ctypes.data
    for offset in (0, 8, 12):
        cap = _capsule_with_offset(base, device, (3,), np.float32, host, offset, versioned)
        info, owner = _dlpack.import_capsule(cap)
        owner.release()                                  # first, so that a failed check frees it too
        del cap
        assert info.ptr == base + offset, (offset, versioned)
        assert (info.device_type, info.device_id) == device
        assert info.shape == (3,) and info.dtype == np.float32 and info.nbytes == 12
    np.testing.assert_array_equal(np.ctypeslib.as_array((ctypes.c_float * 3).from_address(base + 12)), host[3:6])


def _cuda_device():
    try:
        devices = registry.backend_devices("cuda")
    except (GPGPUError, KeyError):
        devices = []
    if not devices:
        skip_no_device("cuda", "no CUDA device")
    return devices[0]


class _OffsetProducer:
    """A device producer handing out ``base`` starting ``byte_offset`` bytes in (as torch does for a view)."""

    def __init__(self, base, byte_offset: int, count: int):
        self.base, self.byte_offset, self.count = base, byte_offset, count

    def __dlpack_device__(self):
        return (_dlpack.kDLCUDA, 0)

    def __dlpack__(self, stream=None, max_version=None):
        return _capsule_with_offset(int(self.base.buffer.ptr) + self.base.offset, (_dlpack.kDLCUDA, 0),
                                    (self.count,), self.base.dtype, self.base, self.byte_offset, False)


def test_a_device_tensor_with_a_byte_offset_wraps_the_right_memory():
    dev = _cuda_device()
    base = gnp.asarray(np.arange(16, dtype=np.int32), device=dev)
    got = gnp.from_dlpack(_OffsetProducer(base, 4 * 5, 6))
    np.testing.assert_array_equal(got.get(), np.arange(5, 11, dtype=np.int32))
    got[0] = -1                                   # zero-copy: the write lands in the producer's memory
    assert base.get()[5] == -1
