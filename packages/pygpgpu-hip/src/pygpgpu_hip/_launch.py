"""Kernel argument kinds and packing: one preallocated buffer per launch plan (DESIGN §5).

``hipModuleLaunchKernel`` takes ``kernelParams``, an array of pointers to each argument's
value; here they all point into one ``ctypes`` buffer that a precompiled ``struct.Struct``
fills with a single ``pack_into`` per launch.
"""
from __future__ import annotations

import ctypes
import struct
from ctypes import c_void_p
from typing import Any, Callable, Sequence

import numpy as np

from pygpgpu_core.errors import ClosedError
from pygpgpu_core.protocols import LocalMemory

__all__ = ["ArgumentLayout", "kind_of_value", "check_param_sizes"]

_STRUCT_CODES = {
    ("b", 1): "?", ("i", 1): "b", ("u", 1): "B", ("i", 2): "h", ("u", 2): "H", ("i", 4): "i", ("u", 4): "I",
    ("i", 8): "q", ("u", 8): "Q", ("f", 4): "f", ("f", 8): "d",
}


class _Packer:
    """How one argument is packed: struct format, size, alignment, value conversion."""

    __slots__ = ("fmt", "size", "align", "convert", "label")

    def __init__(self, fmt: str, size: int, align: int, convert: Callable[[Any], Any], label: str):
        self.fmt, self.size, self.align, self.convert, self.label = fmt, size, align, convert, label


def _pointer(arg: Any) -> int:
    if arg is None:
        return 0
    ptr = getattr(arg, "ptr", None)
    if isinstance(ptr, int):
        return ptr
    if hasattr(arg, "ptr") or getattr(arg, "closed", False):
        raise ClosedError("the buffer passed to the kernel")
    raise TypeError(f"expected a device Buffer for a pointer argument, got {type(arg).__name__}")


def _packer(kind: Any, position: int) -> "_Packer | None":
    if isinstance(kind, str) and kind == "buffer":
        return _Packer("Q", 8, 8, _pointer, "buffer")
    if (isinstance(kind, str) and kind == "local") or kind is LocalMemory:
        return None
    if isinstance(kind, type) and issubclass(kind, ctypes._SimpleCData):
        code = kind._type_
        if code == "?" or code in "bhilqBHILQfd":
            dtype = np.dtype(kind)
            return _Packer(_STRUCT_CODES[(dtype.kind, dtype.itemsize)], dtype.itemsize, dtype.itemsize,
                           lambda v: getattr(v, "value", v), kind.__name__)
        raise TypeError(f"argument {position}: ctypes type {kind.__name__} cannot be a kernel argument")
    if isinstance(kind, type) and issubclass(kind, (ctypes.Structure, ctypes.Union, ctypes.Array)):
        size = ctypes.sizeof(kind)

        def as_bytes(v: Any, t: type = kind) -> bytes:
            return bytes(v if isinstance(v, t) else t(*v) if isinstance(v, tuple) else v)

        return _Packer(f"{size}s", size, ctypes.alignment(kind), as_bytes, kind.__name__)
    dtype_attr = getattr(kind, "dtype", None)
    if isinstance(dtype_attr, np.dtype) and not isinstance(kind, np.dtype) and not (
            isinstance(kind, type) and issubclass(kind, np.generic)):
        kind = dtype_attr  # e.g. a vector type class carrying its numpy dtype
    try:
        dtype = np.dtype(kind)
    except TypeError:
        raise TypeError(f"argument {position}: {kind!r} is not an argument kind; use 'buffer', 'local', "
                        "a numpy dtype or a ctypes type") from None
    if dtype == np.float16:
        raise TypeError(f"argument {position}: float16 arguments are not supported on HIP; use float32")
    code = _STRUCT_CODES.get((dtype.kind, dtype.itemsize)) if dtype.fields is None else None
    if code is not None:
        return _Packer(code, dtype.itemsize, dtype.itemsize,
                       float if dtype.kind == "f" else (bool if dtype.kind == "b" else int), dtype.name)
    size = dtype.itemsize  # structured / vector dtypes travel as their bytes

    def dtype_bytes(v: Any, d: np.dtype = dtype) -> bytes:
        data = bytes(v) if isinstance(v, (bytes, bytearray)) else np.asarray(v, dtype=d).tobytes()
        if len(data) != d.itemsize:
            raise TypeError(f"expected {d.itemsize} bytes for a {d} argument, got {len(data)}")
        return data

    return _Packer(f"{size}s", size, dtype.alignment, dtype_bytes, str(dtype))


def kind_of_value(value: Any, param_size: "int | None") -> Any:
    """The argument kind for a value given to ``Kernel.launch`` (the convenient path)."""
    if isinstance(value, LocalMemory):
        return "local"
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)):
        return type(value)
    if isinstance(value, (bool, int, float)):
        if param_size is None:
            raise TypeError(f"a plain Python {type(value).__name__} ({value!r}) has no fixed C type: pass a numpy "
                            "scalar such as np.int32(...) or np.float32(...)")
        # A plain Python number adopts the width of the kernel's parameter.
        if isinstance(value, bool):
            return np.dtype(np.bool_)
        if isinstance(value, int):
            return np.dtype({1: np.int8, 2: np.int16, 4: np.int32}.get(param_size, np.int64))
        return np.dtype(np.float32 if param_size == 4 else np.float64)
    if value is None or hasattr(value, "ptr"):
        return "buffer"
    raise TypeError(f"{type(value).__name__} cannot be a kernel argument: pass a Buffer, a numpy array, a numpy or "
                    "ctypes scalar, a ctypes Structure or LocalMemory")


class ArgumentLayout:
    """Where each argument of one kernel signature lives in the packed argument buffer."""

    def __init__(self, arg_types: Sequence[Any], kernel_name: str = "kernel"):
        self.kernel_name = kernel_name
        packers: list[_Packer] = []
        slots: list[int] = []  # per argument: index into packers, or -1 for local memory
        offsets: list[int] = []
        fmt = "<"
        offset = 0
        for i, kind in enumerate(arg_types):
            p = _packer(kind, i)
            if p is None:
                slots.append(-1)
                continue
            pad = -offset % p.align
            if pad:
                fmt += f"{pad}x"
            offset += pad
            offsets.append(offset)
            fmt += p.fmt
            offset += p.size
            slots.append(len(packers))
            packers.append(p)
        self.offsets = offsets
        self.sizes = [p.size for p in packers]
        self.labels = [p.label for p in packers]
        self.struct = struct.Struct(fmt)
        self.storage = ctypes.create_string_buffer(max(self.struct.size, 8))
        base = ctypes.addressof(self.storage)
        self.params = (c_void_p * max(len(packers), 1))(*[base + o for o in offsets])
        self._slots = slots
        self._converters = [p.convert for p in packers]

    def pack(self, args: Sequence[Any]) -> int:
        """Write ``args`` into the storage; returns the dynamic shared memory bytes they ask for."""
        slots = self._slots
        if len(args) != len(slots):
            raise TypeError(f"kernel {self.kernel_name!r} was planned for {len(slots)} arguments, got {len(args)}")
        converters = self._converters
        shared = 0
        values = []
        for i, (slot, arg) in enumerate(zip(slots, args)):
            if slot < 0:
                if not isinstance(arg, LocalMemory):
                    raise TypeError(f"argument {i} of kernel {self.kernel_name!r} must be LocalMemory(nbytes), "
                                    f"got {type(arg).__name__}")
                shared += arg.nbytes
            else:
                try:
                    values.append(converters[slot](arg))
                except ClosedError:
                    raise
                except (TypeError, ValueError) as exc:
                    raise TypeError(f"argument {i} of kernel {self.kernel_name!r} must be "
                                    f"{self.labels[slot]}: {exc}") from None
        try:
            self.struct.pack_into(self.storage, 0, *values)
        except struct.error as exc:
            raise OverflowError(f"kernel {self.kernel_name!r}: an argument does not fit its C type ({exc})") from None
        return shared


def check_param_sizes(kernel_name: str, wanted: "Sequence[int] | None", given: Sequence[int]) -> None:
    """TypeError unless the packed argument sizes ``given`` match the parameters ``wanted``.

    hipModuleLaunchKernel reads every parameter the kernel declares, whatever the caller
    passed: too few arguments would make it read past the pointer array, so this is checked
    before anything reaches the runtime. ``wanted`` None (no metadata) checks nothing.
    """
    if wanted is None:
        return
    if len(given) != len(wanted):
        raise TypeError(f"kernel {kernel_name!r} has {len(wanted)} parameters, but {len(given)} arguments were given "
                        "(LocalMemory arguments are not parameters on HIP)")
    for i, (g, w) in enumerate(zip(given, wanted)):
        if g != w:
            raise TypeError(f"argument {i} of kernel {kernel_name!r}: the parameter is {w} bytes but the argument is "
                            f"{g} bytes (pass np.int32 for int, np.float32 for float, a Buffer for a pointer)")
