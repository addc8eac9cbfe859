"""Foreign arrays in, device arrays out: DLPack, the CUDA Array Interface, and the hook the kernel
launcher uses to accept torch / CuPy / JAX arrays without a copy.

A foreign array is wrapped as a *non-owning* :class:`DeviceArray`: its ``buffer`` is a backend
buffer made with ``context.buffer_from_pointer(ptr, nbytes, owner)`` and the foreign object (or
the consumed DLPack tensor) is kept alive as long as the wrapper.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import registry
from ..errors import GPGPUError
from ..protocols import ForeignPointers, StreamSynchronizer, StreamWaits, option, supports
from . import _dlpack
from ._array import DeviceArray, _check_dtype
from ._device import backend_name, resolve_device

__all__ = ["as_device_array", "from_dlpack", "export_stream"]

# DLPack device types whose memory another type's devices address the same way
_SAME_MEMORY_AS = {_dlpack.kDLCUDAManaged: _dlpack.kDLCUDA}


def _stream_handle(context: Any) -> int | None:
    """The context queue's raw stream handle as an int, or None for the legacy default stream."""
    h = option(getattr(context, "queue", None), "handle")
    h = getattr(h, "value", h)  # a ctypes c_void_p
    if h is None:
        return None
    try:
        return int(h) or None
    except (TypeError, ValueError):
        return None


def export_stream(context: Any) -> int | None:
    """The ``stream`` entry of our ``__cuda_array_interface__``: our stream's handle, so the
    consumer orders its work after ours. On the legacy default stream (handle 0) there is nothing
    to name: we finish pending work and report None."""
    h = _stream_handle(context)
    if h is None:
        context.synchronize()
    return h


def _consumer_stream(context: Any) -> int:
    """The ``stream`` we pass to a producer's ``__dlpack__``: ours, or 1 (legacy default)."""
    return _stream_handle(context) or 1


def _device_for(memory: str, addresses: Callable[[Any], bool], index: int, device: Any) -> Any:
    """The device that holds foreign ``memory`` (its ``index``-th, or ``device`` when given): of
    the first installed backend (probe order) whose backend object ``addresses`` it."""
    if device is not None:
        dev = resolve_device(device)
        if not addresses(dev.backend):
            raise ValueError(
                f"this array is in {memory} but the requested device is {dev.selector}; "
                f"move it first (e.g. gnp.asarray(x).to({dev.selector!r}))"
            )
        return dev
    for name in registry.backend_names():
        try:
            if addresses(registry.get_backend(name)):
                break
        except GPGPUError:
            continue
    else:
        raise BufferError(f"no installed PyGPGPU backend addresses {memory}")
    devices = registry.backend_devices(name)
    if not 0 <= index < len(devices):
        raise ValueError(f"the array is on {name} device {index}, but only {len(devices)} exist")
    return devices[index]


def _wrap_pointer(dev: Any, ptr: int, shape: tuple, dtype: np.dtype, owner: Any,
                  read_only: bool = False) -> DeviceArray:
    ctx = dev.context()
    if not supports(ctx, ForeignPointers):
        raise TypeError(f"the {backend_name(dev)} backend cannot wrap foreign device pointers "
                        "(its context has no buffer_from_pointer)")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    buf = ctx.buffer_from_pointer(int(ptr), nbytes, owner)
    a = DeviceArray._wrap(tuple(shape), dtype, dev, buf, owner)
    a._readonly = read_only         # the producer's read-only flag (__cuda_array_interface__'s data[1])
    return a


def _addresses_cuda_arrays(backend: Any) -> bool:
    return bool(option(backend, "cuda_array_interface"))


def _from_cuda_array_interface(obj: Any, device: Any) -> DeviceArray:
    cai = obj.__cuda_array_interface__
    shape = tuple(int(n) for n in cai["shape"])
    dtype = _check_dtype(np.dtype(cai["typestr"]))
    if cai.get("mask") is not None:
        raise ValueError("masked CUDA arrays are not supported")
    strides = cai.get("strides")
    if strides is not None:
        expected = dtype.itemsize
        for n, s in zip(reversed(shape), reversed(tuple(strides))):
            if n != 1 and s != expected:
                raise ValueError(f"the CUDA array (shape {shape}, strides {tuple(strides)}) is not C-contiguous; "
                                 "make it contiguous first (torch: .contiguous(), CuPy: cupy.ascontiguousarray)")
            expected *= n
    ptr, read_only = cai["data"]
    dev = _device_for("CUDA device memory", _addresses_cuda_arrays, 0, device)
    stream = cai.get("stream")
    if stream is not None and cai.get("version", 0) >= 3 and stream != _stream_handle(dev.context()):
        _wait_for_foreign_stream(dev, int(stream))
    return _wrap_pointer(dev, ptr or 0, shape, dtype, obj, bool(read_only))


def _wait_for_foreign_stream(dev: Any, stream: int) -> None:
    """Order our queue after the producer's stream (CAI v3 ``stream``)."""
    queue = dev.context().queue
    if supports(queue, StreamWaits):
        queue.wait_for_stream(stream)
        return
    if supports(dev.backend, StreamSynchronizer):
        dev.backend.synchronize_stream(stream)
        return
    # Without either hook the producer must have finished (legacy-default-stream producers
    # synchronize implicitly with blocking streams, which is what our backends use).


def _from_dlpack_device(obj: Any, device: Any) -> DeviceArray:
    dev_type, dev_id = (int(v) for v in obj.__dlpack_device__())
    memory_type = _SAME_MEMORY_AS.get(dev_type, dev_type)

    def addresses(backend: Any) -> bool:
        return option(backend, "dlpack_device_type") == memory_type

    try:
        dev = _device_for(f"DLPack device type {dev_type} memory", addresses, dev_id, device)
    except BufferError:
        raise BufferError(f"DLPack device type {dev_type} is not one gnp can wrap: no installed backend declares it "
                          "(CUDA=2 with pygpgpu-cuda, ROCm=10 with pygpgpu-hip; CPU=1 is copied)") from None
    try:
        capsule = obj.__dlpack__(stream=_consumer_stream(dev.context()))
    except TypeError:
        capsule = obj.__dlpack__()
    info, owner = _dlpack.import_capsule(capsule, source=obj)
    return _wrap_pointer(dev, info.ptr, info.shape, info.dtype, owner)


def as_device_array(obj: Any, device: Any = None) -> DeviceArray:
    """Wrap ``obj`` as a device array **without copying**, for kernel launches.

    Accepts a :class:`DeviceArray` (returned as is), or anything exposing
    ``__cuda_array_interface__`` or ``__dlpack__`` over CUDA/ROCm device memory (torch tensors,
    CuPy, JAX, Numba device arrays). The result keeps ``obj`` alive and shares its memory.
    ``device`` (selector, Device or None) is the device the caller will use; memory on another
    backend raises ``ValueError``. Host arrays raise ``TypeError``: upload them with ``asarray``.
    """
    if isinstance(obj, DeviceArray):
        if device is not None:
            dev = resolve_device(device)
            if dev is not obj.device and dev.selector != obj.device.selector:
                raise ValueError(f"the array is on {obj.device.selector} but the kernel runs on {dev.selector}; "
                                 f"move it with arr.to({dev.selector!r})")
        return obj
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_cuda_array_interface(obj, device)
    if hasattr(obj, "__dlpack_device__") and hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        dev_type = int(obj.__dlpack_device__()[0])
        if dev_type not in (_dlpack.kDLCPU, _dlpack.kDLCUDAHost):
            return _from_dlpack_device(obj, device)
    raise TypeError(
        f"{type(obj).__name__} is not device memory gnp can wrap without a copy; pass a gnp array, "
        "a CUDA torch/CuPy/JAX array, or upload host data with gnp.asarray()"
    )


def from_dlpack(obj: Any, *, device: Any = None, copy: bool | None = None) -> DeviceArray:
    """A device array from any DLPack producer. CUDA/ROCm memory is shared (zero-copy); host
    memory (numpy, CPU torch) is uploaded to ``device`` (default: the default device).
    ``copy=True`` always copies; ``copy=False`` raises ``BufferError`` where a copy is needed."""
    if isinstance(obj, DeviceArray):
        out = obj if device is None else obj.to(device)
        return out.copy() if copy and out is obj else out
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"{type(obj).__name__} does not support DLPack (no __dlpack__ method)")
    dev_type = int(obj.__dlpack_device__()[0]) if hasattr(obj, "__dlpack_device__") else _dlpack.kDLCPU
    if dev_type in (_dlpack.kDLCPU, _dlpack.kDLCUDAHost):
        from ._creation import _upload_host

        if copy is False:
            raise BufferError("the DLPack data is in host memory: importing it to a device needs a copy "
                              "(pass copy=None or copy=True)")
        return _upload_host(np.from_dlpack(obj), device)
    out = _from_dlpack_device(obj, None)
    if device is not None:
        moved = out.to(device, copy=bool(copy))
        if copy is False and moved is not out:
            raise BufferError(f"the DLPack data is on {out.device.selector}; moving it to "
                              f"{moved.device.selector} needs a copy (pass copy=None or copy=True)")
        out = moved
    elif copy:
        out = out.copy()
    return out
