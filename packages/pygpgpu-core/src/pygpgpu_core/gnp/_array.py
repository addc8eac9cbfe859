"""``DeviceArray``: an n-dimensional, C-contiguous array whose data lives in one device buffer.

Data stays on the device until the host asks for it (``get()``, ``np.asarray``, indexing,
printing); kernels receive ``arr.buffer`` directly, so consecutive kernel calls copy nothing.
Memory comes from the context's :class:`~pygpgpu_core.mempool.MemoryPool` and goes back to it
when the last array using it dies.
"""
from __future__ import annotations

import sys
from operator import index as operator_index
from typing import Any

import numpy as np

from .. import mempool
from . import _dlpack
from ._device import backend_name, resolve_target
from ._summary import needs_summary, summary_repr, summary_str
from ._transfer import download, record_transfer, upload

_NOT_GIVEN: Any = object()  # tells "argument omitted" from an explicit None in __dlpack__


__all__ = ["DeviceArray"]


class _PoolAllocation:
    """Returns a pooled block when the last array (or view) holding it is collected."""

    __slots__ = ("pool", "block")

    def __init__(self, pool: mempool.MemoryPool, block: mempool.Block):
        self.pool = pool
        self.block = block

    def __del__(self, _is_finalizing=sys.is_finalizing):  # bound early: globals may be gone at exit
        if not _is_finalizing():
            self.pool.release(self.block)


def _normalize_shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        out = tuple(int(operator_index(n)) for n in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(n < 0 for n in out):
        raise ValueError(f"negative dimensions are not allowed (shape {out})")
    return out


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _check_dtype(dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt.hasobject or dt.kind not in "biufc":
        hint = ""
        if dt.names and len({dt.fields[n][0] for n in dt.names}) == 1:   # float4.dtype and the like
            base = dt.fields[dt.names[0]][0]
            hint = (f"; for vectors use a plain array with one more dimension, e.g. "
                    f"host.view({base.name}).reshape(-1, {dt.itemsize // base.itemsize}): kernels read its rows "
                    "as vectors")
        raise TypeError(f"device arrays hold bool, integer, float and complex data; dtype {dt} is not supported{hint}")
    if dt.byteorder == ">":
        raise TypeError(f"dtype {dt} is big-endian; convert with .astype('{dt.newbyteorder('=').str}') first")
    return dt


class DeviceArray:
    """A C-contiguous array in device memory (like ``cupy.ndarray``)."""

    __slots__ = ("shape", "dtype", "device", "buffer", "_owner", "_host", "__weakref__")

    def __init__(self, shape, dtype=np.float64, device=None):
        """Allocate an uninitialised array (same as :func:`gnp.empty`)."""
        self.shape = _normalize_shape(shape)
        self.dtype = _check_dtype(dtype)
        dev, ctx = resolve_target(device)
        pool = mempool.get_pool(ctx)
        block = pool.allocate(self.nbytes)
        self.device = dev
        self.buffer = block.buffer
        self._owner = _PoolAllocation(pool, block)
        # Host-visible memory (PoCL): the host copies in and out directly, with no queued command.
        self._host = block.host if pool.host_access else None

    @classmethod
    def _wrap(cls, shape, dtype, device, buffer, owner, host=None) -> "DeviceArray":
        """An array over an existing ``buffer``; ``owner`` keeps its memory alive (views,
        foreign memory). ``host``: the host-visible bytes of the buffer, if any."""
        a = cls.__new__(cls)
        a.shape = shape
        a.dtype = dtype
        a.device = device
        a.buffer = buffer
        a._owner = owner
        a._host = host
        return a

    # -- attributes ---------------------------------------------------------------------------
    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        return _c_strides(self.shape, self.dtype.itemsize)

    @property
    def context(self):
        return self.buffer.context

    @property
    def owns_memory(self) -> bool:
        """False for arrays wrapping someone else's memory (torch, CuPy, JAX, DLPack)."""
        return isinstance(self._owner, _PoolAllocation)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object (a 0-d device array)")
        return self.shape[0]

    # -- host synchronisation -----------------------------------------------------------------
    def _read_bytes(self, out: np.ndarray, offset: int = 0) -> None:
        """Copy ``out.nbytes`` bytes from byte ``offset`` into C-contiguous ``out`` (counted)."""
        if self._host is None:
            download(self.buffer, out, offset)
            return
        if out.nbytes:
            self.context.synchronize()  # kernels queued on this memory finish first
            out.reshape(-1).view(np.uint8)[...] = self._host[offset:offset + out.nbytes]
            record_transfer("d2h", out.nbytes)

    def _write_bytes(self, host: np.ndarray, offset: int = 0) -> None:
        """Copy C-contiguous ``host`` to byte ``offset`` (counted)."""
        if self._host is None:
            upload(self.buffer, host, offset)
            return
        if host.nbytes:
            self.context.synchronize()  # never overwrite memory a queued kernel still uses
            self._host[offset:offset + host.nbytes] = host.reshape(-1).view(np.uint8)
            record_transfer("h2d", host.nbytes)

    def get(self, stream=None, order: str = "C", out: "np.ndarray | None" = None) -> np.ndarray:
        """Copy to a new numpy array (or into ``out``), waiting for pending kernels first."""
        if order not in ("C", "A", "K"):
            raise ValueError("device arrays are C-contiguous; get() returns a C-ordered array (order='C')")
        if out is None:
            out = np.empty(self.shape, self.dtype)
        else:
            if not isinstance(out, np.ndarray):
                raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
            if out.shape != self.shape or out.dtype != self.dtype:
                raise ValueError(f"out has shape {out.shape} dtype {out.dtype}; needs {self.shape} {self.dtype}")
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError("out must be a writable C-contiguous numpy array")
        self._read_bytes(out)
        return out

    def numpy(self) -> np.ndarray:
        """Same as :meth:`get`."""
        return self.get()

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a device array cannot be viewed as a numpy array without a copy; "
                             "use g.get() (or np.asarray(g), which copies)")
        host = self.get()
        return host if dtype is None else host.astype(dtype, copy=False)

    def tolist(self):
        return self.get().tolist()

    def item(self, *args):
        return self.get().item(*args)

    def __float__(self):
        return float(self._scalar_host("float"))

    def __int__(self):
        return int(self._scalar_host("int"))

    def __complex__(self):
        return complex(self._scalar_host("complex"))

    def __index__(self):
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer device arrays can be used as an index, not {self.dtype}")
        return int(self._scalar_host("index"))

    def __bool__(self):
        return bool(self._scalar_host("bool"))

    def _scalar_host(self, what: str):
        if self.size != 1:
            raise TypeError(f"only size-1 device arrays can be converted to Python {what} (size is {self.size})")
        return self.get().reshape(())[()]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d device array")
        return iter(self.get())

    def __repr__(self) -> str:
        if needs_summary(self.size):     # numpy's summary, reading only the elements it shows
            return summary_repr(self, self.device.selector)
        body = repr(self.get())
        return f"{body[:-1]}, device='{self.device.selector}')"

    def __str__(self) -> str:
        if needs_summary(self.size):
            return summary_str(self)
        return str(self.get())

    def __format__(self, spec: str) -> str:
        if self.size == 1 and spec:
            return format(self._scalar_host("format"), spec)
        return format(str(self), spec)

    # -- host indexing ------------------------------------------------------------------------
    def _contiguous_range(self, key) -> "tuple[int, int, tuple[int, ...], bool] | None":
        """(first element, count, result shape, is_scalar) when ``key`` selects one contiguous run."""
        shape = self.shape
        if not shape:
            return None
        inner = 1
        for d in shape[1:]:
            inner *= d
        if isinstance(key, tuple):
            if len(key) == 1:
                key = key[0]
            elif all(isinstance(k, (int, np.integer)) for k in key) and len(key) == len(shape):
                flat = 0
                for k, n in zip(key, shape):
                    k = int(k)
                    if k < -n or k >= n:
                        return None  # let numpy raise its IndexError
                    flat = flat * n + (k % n)
                return flat, 1, (), True
            else:
                return None
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            k, n = int(key), shape[0]
            if k < -n or k >= n:
                raise IndexError(f"index {k} is out of bounds for axis 0 with size {n}")
            k %= n
            return k * inner, inner, shape[1:], len(shape) == 1
        if isinstance(key, slice):
            start, stop, step = key.indices(shape[0])
            if step != 1:
                return None
            count = max(stop - start, 0)
            return start * inner, count * inner, (count,) + shape[1:], False
        if key is Ellipsis:
            return 0, self.size, shape, False
        return None

    def __getitem__(self, key):
        """Host indexing: returns numpy data (reads back only the bytes a contiguous key selects)."""
        if isinstance(key, DeviceArray):
            key = key.get()
        run = self._contiguous_range(key)
        if run is None:
            return self.get()[key]
        first, count, shape, scalar = run
        out = np.empty(shape, self.dtype)
        if count:
            self._read_bytes(out, first * self.dtype.itemsize)
        return out[()] if scalar else out

    def __setitem__(self, key, value):
        """Assign from the host (numpy data or scalars, broadcast) or from another device array."""
        if isinstance(key, DeviceArray):
            key = key.get()
        run = self._contiguous_range(key)
        if run is None:  # a strided selection: read, modify on the host, write back
            host = self.get()
            host[key] = value.get() if isinstance(value, DeviceArray) else value
            self._write_bytes(host)
            return
        first, count, shape, _ = run
        if count == 0:
            return
        offset = first * self.dtype.itemsize
        if isinstance(value, DeviceArray):
            if (offset == 0 and value.shape == shape and value.dtype == self.dtype
                    and value.context is self.context):
                self.buffer.copy_from(value.buffer, count * self.dtype.itemsize)
                return
            value = value.get()  # broadcasting, casting or another device: through the host
        if offset == 0 and count == self.size and np.ndim(value) == 0:
            self.fill(value)
            return
        host = np.asarray(np.broadcast_to(np.asarray(value, dtype=self.dtype), shape), order="C")
        self._write_bytes(host, offset)

    # -- device-side operations ---------------------------------------------------------------
    def fill(self, value) -> None:
        """Set every element to ``value`` on the device (no host transfer)."""
        pattern = np.asarray(value, dtype=self.dtype)
        if pattern.ndim:
            raise ValueError(f"fill() takes a scalar, got an array of shape {pattern.shape}")
        if not self.size:
            return
        try:
            self.buffer.fill(pattern.tobytes())
        except NotImplementedError:
            self._write_bytes(np.full(self.shape, pattern, self.dtype))

    def copy(self, order: str = "C") -> "DeviceArray":
        """A new array with the same data on the same device (device-side copy)."""
        out = DeviceArray(self.shape, self.dtype, self.context)
        if self.size:
            out.buffer.copy_from(self.buffer, self.nbytes)
        return out

    def astype(self, dtype, copy: bool = True) -> "DeviceArray":
        """Convert the element type. Same dtype: a device-side copy (or ``self`` with copy=False);
        otherwise the conversion runs on the host (one download, one upload)."""
        dt = _check_dtype(dtype)
        if dt == self.dtype:
            return self.copy() if copy else self
        from ._creation import asarray

        return asarray(self.get().astype(dt), device=self.context)

    def reshape(self, *shape) -> "DeviceArray":
        """A view with a new shape sharing this array's memory (one -1 is inferred)."""
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        shape = [int(operator_index(n)) for n in shape]
        if shape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension (-1)")
        if -1 in shape:
            known = 1
            for n in shape:
                if n != -1:
                    known *= n
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape)}")
            shape[shape.index(-1)] = self.size // known
        new = _normalize_shape(shape)
        if int(np.prod(new, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {new}")
        return DeviceArray._wrap(new, self.dtype, self.device, self.buffer, self._owner, self._host)

    def ravel(self) -> "DeviceArray":
        return self.reshape(-1)

    def view(self, dtype) -> "DeviceArray":
        """Reinterpret the bytes as another dtype (the last axis is rescaled, like numpy)."""
        dt = _check_dtype(dtype)
        if dt.itemsize == self.dtype.itemsize:
            shape = self.shape
        else:
            if not self.shape or (self.shape[-1] * self.dtype.itemsize) % dt.itemsize:
                raise ValueError(f"cannot view {self.dtype} data of shape {self.shape} as {dt}")
            shape = self.shape[:-1] + (self.shape[-1] * self.dtype.itemsize // dt.itemsize,)
        return DeviceArray._wrap(shape, dt, self.device, self.buffer, self._owner, self._host)

    def to(self, device, *, copy: bool = False) -> "DeviceArray":
        """This array on ``device`` (a selector such as ``"cuda:0"``, a Device, a Context, or an
        array whose device to use). Already there: ``self`` (or a device-side copy with
        ``copy=True``); another context or backend: one download plus one upload."""
        dev, ctx = resolve_target(device)
        if ctx is self.context:
            return self.copy() if copy else self
        out = DeviceArray(self.shape, self.dtype, ctx)
        if self.size:
            out._write_bytes(self.get())
        return out

    def synchronize(self) -> None:
        """Wait until every queued operation of this array's context has finished."""
        self.context.synchronize()

    def __reduce__(self):
        """Pickles as data + the device's selector (``pygpgpu_core.pickling``): never buffers or pools."""
        from ..pickling import reduce_array

        return reduce_array(self)

    # -- interop ------------------------------------------------------------------------------
    def _dl_device(self) -> tuple[int, int]:
        name = backend_name(self.device)
        if name == "cuda":
            return _dlpack.kDLCUDA, self.device.index
        if name == "hip":
            return _dlpack.kDLROCM, self.device.index
        if self._host is not None:
            return _dlpack.kDLCPU, 0
        return _dlpack.kDLOpenCL, self.device.index

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._dl_device()

    def __dlpack__(self, *, stream=_NOT_GIVEN, max_version=None, dl_device=_NOT_GIVEN, copy=None):
        """Export as a DLPack capsule (zero-copy). CUDA/HIP arrays export device pointers; arrays
        in host memory (OpenCL on the CPU, e.g. PoCL) export ``kDLCPU``. OpenCL device memory has
        no pointer other libraries understand: ask for a host copy (``dl_device=(1, 0)``) or use
        ``g.get()``.

        A consumer that passes ``dl_device`` but no ``stream`` (numpy's ``np.from_dlpack``) knows
        nothing of device streams, so it can only read host memory: CUDA/HIP arrays then raise
        BufferError instead of handing it a device capsule it would reject. GPU consumers
        (PyTorch, CuPy, JAX) pass the stream they will use."""
        stream_given = stream is not _NOT_GIVEN
        if not stream_given:
            stream = None
        host_only_consumer = dl_device is None and not stream_given
        if dl_device is _NOT_GIVEN:
            dl_device = None
        own = self._dl_device()
        if dl_device is not None and tuple(dl_device) != own:
            if tuple(dl_device)[0] == _dlpack.kDLCPU and copy is not False:
                host = self.get()
                return host.__dlpack__(max_version=max_version) if max_version else host.__dlpack__()
            raise BufferError(f"this array lives on {self.device.selector} (DLPack device {own}); it cannot be "
                              f"exported to DLPack device {tuple(dl_device)} without a copy. Use g.get() for host data.")
        if own[0] in (_dlpack.kDLCUDA, _dlpack.kDLROCM) and host_only_consumer:
            raise BufferError(
                f"this array is in GPU memory on {self.device.selector} and the DLPack consumer (such as "
                "np.from_dlpack) reads host memory only; call g.get() for a numpy copy "
                "(or np.from_dlpack(g, device='cpu', copy=True))"
            )
        if copy:
            return self.copy().__dlpack__(stream=stream, max_version=max_version)
        if own[0] == _dlpack.kDLOpenCL:
            raise BufferError(
                f"this array is in OpenCL device memory on {self.device.selector}, which DLPack consumers "
                "cannot address; call g.get() for a numpy copy (or np.from_dlpack(g, device='cpu', copy=True))"
            )
        if stream != -1:
            # Consumers may use the data right away on their own stream: finish our queued work.
            self.context.synchronize()
        if own[0] == _dlpack.kDLCPU:
            ptr = self._host.ctypes.data
        else:
            ptr = int(self.buffer.ptr)
        return _dlpack.export_capsule(ptr, own, self.shape, self.dtype, self,
                                      versioned=_dlpack.wants_versioned(max_version))

    @property
    def __cuda_array_interface__(self) -> dict:
        """CUDA Array Interface v3 (CUDA arrays only; data is synchronized before it is handed out)."""
        if backend_name(self.device) != "cuda":
            raise AttributeError(
                f"__cuda_array_interface__ exists only on CUDA arrays; this one is on {self.device.selector}"
            )
        from ._interop import export_stream

        return {
            "version": 3,
            "shape": self.shape,
            "typestr": self.dtype.str,
            "data": (int(self.buffer.ptr), False),
            "strides": None,
            "descr": [("", self.dtype.str)],
            "stream": export_stream(self.context),
        }
