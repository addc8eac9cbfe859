"""Python values -> kernel arguments, checked against the C declaration of each parameter.

- numpy array for a pointer: uploaded into a temporary buffer; read back afterwards unless
  the pointee is ``const`` (or in ``__constant`` memory). Its dtype must match the pointee.
  One array passed for several pointers is one buffer, as one pointer would be in C; different
  arrays sharing memory are refused when the kernel may write one of them.
- an object with a ``.buffer`` (``pygpgpu.numpy`` arrays) or a backend Buffer: passed as is,
  data stays on the device; a read-only ``pygpgpu.numpy`` array for a non-const pointer is refused. A ``pygpgpu.numpy`` view (an offset, strides) runs on a contiguous
  device copy, written back into the view after the launch unless the pointee is ``const``.
- numpy scalar: passed as is; its dtype must equal the declared type.
- Python int/float: converted to the declared type, refusing values out of its range.
- ctypes struct (generated class, or any with the same layout) or numpy record: by value.
- vector by value: the generated vector class, or any sequence of n numbers.
- ``LocalMemory(nbytes)`` for a ``__local`` pointer.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from ..host_aliases import earlier_same
from ..cdecl import Param, Pointer, Scalar, Struct, Vector, c_name
from ..protocols import LocalMemory
from ._structs import CStruct, CUnion, struct_ctype, vector_ctype

__all__ = ["ArgumentRangeError", "CallState", "record_transfer", "Converter", "converter_for", "arg_type"]


class ArgumentRangeError(ValueError, OverflowError):
    """A Python number does not fit the C type of the parameter it was passed for."""


def record_transfer(direction: str, nbytes: int) -> None:  # noqa: F811  (rebinds itself on first use)
    """Count a host<->device copy in ``gnp.transfer_stats()`` (shared with device arrays)."""
    global record_transfer
    try:
        from ..gnp._transfer import record_transfer as counter
    except ImportError:  # device arrays not installed: nothing to count into
        def counter(direction: str, nbytes: int) -> None:
            return None
    record_transfer = counter
    counter(direction, nbytes)


class CallState:
    """What one call accumulates while converting arguments."""

    __slots__ = ("device", "context", "temps", "readback", "views", "staged", "count")

    def __init__(self, device: Any, context: Any):
        self.device = device
        self.context = context
        self.temps: list = []
        self.readback: list = []
        self.views: list = []       # (device array view, its contiguous copy, whether to write it back)
        self.staged: list = []      # _Staged numpy arrays, to find one passed for several pointers
        self.count: "int | None" = None


class _Staged:
    """A numpy array uploaded for one call: its buffer, the contiguous host copy that was
    uploaded, the first parameter it was passed for, and whether it is read back."""

    __slots__ = ("array", "buffer", "host", "param", "read_back")

    def __init__(self, array: np.ndarray, buffer: Any, host: np.ndarray, param: str, read_back: bool):
        self.array, self.buffer, self.host, self.param, self.read_back = array, buffer, host, param, read_back


def arg_type(param: Param) -> Any:
    """The ``arg_types`` entry of ``Kernel.launcher`` for ``param``."""
    t = param.type
    if isinstance(t, Pointer):
        return "local" if t.address_space == "local" else "buffer"
    if isinstance(t, Scalar):
        return np.dtype(t.dtype)
    if isinstance(t, Vector):
        return vector_ctype(t)
    return struct_ctype(t)


def _is_buffer(value: Any) -> bool:
    return all(hasattr(value, a) for a in ("context", "nbytes", "read", "write")) and not isinstance(value, np.ndarray)


class Converter(ABC):
    """Turns one call argument into what the backend's launch takes, for one C parameter."""

    def __init__(self, kernel: str, prototype: str, param: Param):
        self.kernel = kernel
        self.prototype = prototype
        self.param = param
        self.where = f"kernel {kernel!r}, parameter {param.name!r} ({param.text})"

    @abstractmethod
    def __call__(self, value: Any, st: CallState) -> Any:
        """The launch argument for ``value`` (staging arrays through ``st``)."""


class _PointerConverter(Converter):
    def __init__(self, kernel, prototype, param):
        super().__init__(kernel, prototype, param)
        t: Pointer = param.type
        self.pointee = t.pointee
        self.read_only = t.const
        self.elem_size = t.pointee.size if t.pointee is not None else 0

    def _check_dtype(self, dtype: np.dtype, what: str) -> None:
        p = self.pointee
        ok = True
        if p is None:
            return
        if isinstance(p, Scalar):
            ok = dtype == np.dtype(p.dtype)
        elif isinstance(p, Vector):
            base = np.dtype(p.base.dtype)
            if dtype.fields:
                ok = dtype.itemsize == p.size and all(f[0] == base for f in dtype.fields.values())
            else:
                ok = dtype == base
        elif isinstance(p, Struct):
            ok = dtype.itemsize == p.size and (dtype.fields is not None or dtype.kind == "V")
        if not ok:
            want = self._want()
            raise TypeError(f"{self.where} expects {want}; got {what} of dtype {dtype}")

    def _want(self) -> str:
        p = self.pointee
        if isinstance(p, Scalar):
            return f"an array of {np.dtype(p.dtype)}"
        if isinstance(p, Vector):
            return (f"an array of {p.name} ({np.dtype(p.base.dtype)} with {p.stride} slots per element, "
                    f"or dtype {p.name}.dtype)")
        if isinstance(p, Struct):
            return f"an array of dtype {p.name}.dtype ({p.size}-byte records)"
        return "an array"

    def _count(self, nbytes: int, size: int) -> int:
        return nbytes // self.elem_size if self.elem_size else size

    def __call__(self, value: Any, st: CallState) -> Any:
        if isinstance(value, np.ndarray):
            return self._array(value, st)
        buffer = getattr(value, "buffer", None)
        if buffer is not None:
            dtype = getattr(value, "dtype", None)
            if dtype is not None:
                self._check_dtype(np.dtype(dtype), type(value).__name__)
            if not self.read_only and getattr(value, "_readonly", False):
                raise ValueError(f"{self.where}: the device array is read-only (flags.writeable is False) but the "
                                 "kernel may write it; pass a writable array, or declare the parameter const in "
                                 "the kernel source")
            dev = getattr(value, "device", None)
            if dev is not None and dev is not st.device and getattr(dev, "selector", None) != st.device.selector:
                raise ValueError(f"{self.where}: the array lives on {dev.selector} but the kernel runs on "
                                 f"{st.device.selector}; move it there first or launch on its device")
            if st.count is None:
                nbytes = getattr(value, "nbytes", getattr(buffer, "nbytes", 0))
                st.count = self._count(nbytes, getattr(value, "size", nbytes))
            if getattr(value, "offset", 0) or not getattr(value, "is_contiguous", True):
                # The kernel indexes from the buffer's start in C order, so a view (g[3:], g[::2],
                # g.T) runs on a contiguous copy, as with @kernel; kept in st until the call ends.
                copy = value.copy()
                st.views.append((value, copy, not self.read_only))
                return copy.buffer
            return buffer
        if _is_buffer(value):
            owner = getattr(value.context, "device", None)
            if owner is not None and owner is not st.device and getattr(owner, "selector", None) != st.device.selector:
                raise ValueError(f"{self.where}: the buffer belongs to {owner.selector} but the kernel runs on "
                                 f"{st.device.selector}")
            if st.count is None and self.elem_size:
                st.count = value.nbytes // self.elem_size
            return value
        raise TypeError(f"{self.where} expects {self._want()} (numpy or pygpgpu.numpy), got {type(value).__name__}")

    def _array(self, arr: np.ndarray, st: CallState) -> Any:
        self._check_dtype(arr.dtype, "a numpy array")
        p = self.pointee
        if isinstance(p, Vector) and not arr.dtype.fields and (arr.size % p.stride or
                                                               (arr.ndim > 1 and arr.shape[-1] != p.stride)):
            raise ValueError(f"{self.where}: an array of {p.name} needs a last dimension of {p.stride} "
                             f"(got shape {arr.shape})")
        if st.count is None:
            st.count = self._count(arr.nbytes, arr.size)
        ctx = st.context
        if arr.nbytes == 0:
            buf = ctx.buffer(max(self.elem_size, 16))
            st.temps.append(buf)
            return buf
        if not self.read_only and not arr.flags.writeable:
            raise ValueError(f"{self.where}: the array is read-only but the kernel may write it; pass a "
                             "writable array, or declare the parameter const in the kernel source")
        earlier = self._staged_as(arr, st)
        if earlier is not None:
            if not self.read_only and not earlier.read_back:
                earlier.read_back = True
                st.readback.append((earlier.buffer, earlier.host, arr))
            return earlier.buffer
        if self.read_only:
            src = np.ascontiguousarray(arr)
        else:
            src = arr if arr.flags.c_contiguous else np.ascontiguousarray(arr)
        buf = ctx.buffer_from_host(src)
        if not self.read_only:
            st.readback.append((buf, src, arr))
        st.staged.append(_Staged(arr, buf, src, self.param.name, not self.read_only))
        record_transfer("h2d", src.nbytes)
        st.temps.append(buf)
        return buf

    def _staged_as(self, arr: np.ndarray, st: CallState) -> "_Staged | None":
        """The array already uploaded for an earlier parameter of this call that ``arr`` is, or
        None (see ``host_aliases``)."""
        try:
            k = earlier_same(arr, not self.read_only,
                             [(e.array, e.read_back, f"parameter {e.param!r}") for e in st.staged])
        except ValueError as exc:
            raise ValueError(f"{self.where}: {exc}") from None
        return None if k is None else st.staged[k]


class _LocalConverter(Converter):
    def __call__(self, value: Any, st: CallState) -> Any:
        if isinstance(value, LocalMemory):
            return value
        raise TypeError(f"{self.where} is __local memory: pass pygpgpu.LocalMemory(nbytes), "
                        f"got {type(value).__name__}")


def _convert_number(value: Any, dt: np.dtype, where: str, c: str) -> Any:
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        v = int(value)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= v <= info.max:
                raise ArgumentRangeError(f"{where}: {v} does not fit {c} (range {info.min}..{info.max})")
            return dt.type(v)
        if dt.kind == "b":
            if v not in (0, 1):
                raise ArgumentRangeError(f"{where}: {v} is not a bool (0 or 1)")
            return np.bool_(v)
        try:
            value = float(v)
        except OverflowError:       # past every float type; float()'s own message names no parameter
            raise ArgumentRangeError(f"{where}: {v} overflows {c}") from None
    if isinstance(value, (float, np.floating)):
        if dt.kind != "f":
            raise TypeError(f"{where} is {c}, an integer type; got float {value!r} (convert it with int())")
        x = float(value)
        finfo = np.finfo(dt)
        if x == x and abs(x) != float("inf") and abs(x) > float(finfo.max):
            raise ArgumentRangeError(f"{where}: {x} overflows {c} (largest {float(finfo.max)})")
        return dt.type(x)
    raise TypeError(f"{where} is {c}; expected a number, got {type(value).__name__}")


class _ScalarConverter(Converter):
    def __init__(self, kernel, prototype, param):
        super().__init__(kernel, prototype, param)
        self.dtype = np.dtype(param.type.dtype)
        self.c = param.type.name

    def __call__(self, value: Any, st: CallState) -> Any:
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        if isinstance(value, np.generic):
            if value.dtype != self.dtype:
                raise TypeError(f"{self.where} is {self.c} ({self.dtype}); got a numpy {value.dtype} scalar. Pass "
                                f"np.{self.dtype}(...) or a plain Python number")
            return value
        return _convert_number(value, self.dtype, self.where, self.c)


class _VectorConverter(Converter):
    def __init__(self, kernel, prototype, param):
        super().__init__(kernel, prototype, param)
        self.vec: Vector = param.type
        self.cls = vector_ctype(self.vec)
        self.dtype = np.dtype(self.vec.base.dtype)

    def __call__(self, value: Any, st: CallState) -> Any:
        if isinstance(value, self.cls):
            return value
        if isinstance(value, np.void) and value.dtype.itemsize == self.vec.size:
            return self.cls.from_buffer_copy(value.tobytes())
        try:
            comps = list(value)
        except TypeError:
            raise TypeError(f"{self.where} is {self.vec.name}: pass {self.vec.n} numbers (tuple, list, "
                            f"pygpgpu vector), got {type(value).__name__}") from None
        if len(comps) != self.vec.n:
            raise ValueError(f"{self.where} is {self.vec.name}: expected {self.vec.n} components, got {len(comps)}")
        values = [_convert_number(c.item() if isinstance(c, np.generic) else c, self.dtype, self.where,
                                  self.vec.base.name) for c in comps]
        if self.dtype.kind == "f" and self.dtype.itemsize == 2:  # ctypes holds half as its raw bits
            values = [int(np.float16(v).view(np.uint16)) for v in values]
        return self.cls(*values)


class _StructConverter(Converter):
    def __init__(self, kernel, prototype, param):
        super().__init__(kernel, prototype, param)
        self.struct: Struct = param.type
        self.cls = struct_ctype(self.struct)

    def __call__(self, value: Any, st: CallState) -> Any:
        if isinstance(value, self.cls):
            return value
        if isinstance(value, (CStruct, CUnion)) and value.__layout__ == self.cls.__layout__:
            return self.cls.from_buffer_copy(value)
        if isinstance(value, np.void) and value.dtype.itemsize == self.struct.size:
            return self.cls.from_buffer_copy(value.tobytes())
        raise TypeError(f"{self.where} is {c_name(self.struct)} by value: pass a {self.cls.__name__} instance "
                        f"(module.{self.cls.__name__}(...)), got {type(value).__name__}")


def converter_for(kernel: str, prototype: str, param: Param) -> Converter:
    t = param.type
    cls: type[Converter]
    if isinstance(t, Pointer):
        cls = _LocalConverter if t.address_space == "local" else _PointerConverter
    elif isinstance(t, Scalar):
        cls = _ScalarConverter
    elif isinstance(t, Vector):
        cls = _VectorConverter
    else:
        cls = _StructConverter
    return cls(kernel, prototype, param)

