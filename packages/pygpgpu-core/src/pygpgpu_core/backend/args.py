"""Kernel arguments for the pointer-array launch ABI of CUDA and HIP (``void** kernelParams``).

``cuLaunchKernel`` and ``hipModuleLaunchKernel`` take one pointer per kernel parameter and copy
each value from where its pointer points, at the offset the kernel itself declares. So the
values may live anywhere: here they all live in one preallocated byte buffer (laid out like a C
struct of the parameters), filled by one ``struct.pack_into`` per launch, and the pointer array
is built once (see :mod:`.launcher`).

An argument *kind* says how one argument is packed: ``"buffer"`` (an 8-byte device pointer,
the value's ``.ptr``), ``"local"`` / :class:`LocalMemory` (dynamic shared memory: not a
parameter, its bytes add up to the launch's shared memory), a numpy dtype or ctypes type (a
scalar or struct by value), or a PyGPGPU vector type (``float4``: CUDA's and HIP's packed
layout, ``float3`` = 12 bytes where OpenCL has 16).
"""
from __future__ import annotations

import ctypes
import struct
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ClosedError
from ..protocols import LocalMemory

__all__ = ["ArgKind", "ArgumentLayout", "normalize_kind", "kind_of_value", "check_param_kinds", "explain"]

_INT_FMT = {1: "b", 2: "h", 4: "i", 8: "q"}
_NUMPY_FMT = {
    "i": _INT_FMT,
    "u": {k: v.upper() for k, v in _INT_FMT.items()},
    "f": {2: "e", 4: "f", 8: "d"},
    "b": {1: "?"},
}


class ArgKind:
    """How one kernel argument is packed: ``buffer`` (8-byte device pointer), ``local``
    (dynamic shared memory, not a parameter), ``scalar`` (struct format) or ``bytes``.
    ``align``: its C alignment in the argument storage.

    The one reading of an argument kind, shared by every backend (:func:`normalize_kind`):
    ``size``, ``fmt``, ``convert`` and ``align`` are the pointer-array ABI's packing (CUDA,
    HIP: a vector in its packed layout, float3 = 12 bytes); ``dtype`` is the by-value numpy
    type as declared (OpenCL's layout for a vector, float3 = 16 bytes; None for buffers, local
    memory and ctypes aggregates) and ``ctype`` the ctypes class the kind was given as, if any,
    for a backend that sets arguments one by one (OpenCL's ``clSetKernelArg``)."""

    __slots__ = ("tag", "size", "fmt", "convert", "label", "align", "dtype", "ctype")

    def __init__(self, tag: str, size: int = 0, fmt: str = "", convert: "Callable[[Any], Any] | None" = None,
                 label: str = "", align: int = 0, dtype: "np.dtype | None" = None, ctype: "type[Any] | None" = None):
        self.tag, self.size, self.fmt, self.convert, self.label = tag, size, fmt, convert, label or tag
        self.align = align or max(1, min(size, 8))
        self.dtype, self.ctype = dtype, ctype

    def __repr__(self) -> str:
        return self.label


BUFFER = ArgKind("buffer", 8, "Q", label="buffer")
LOCAL = ArgKind("local", label="local")


def _float16_cast(v: Any) -> float:
    return float(np.float16(v))


# C's conversion to float32 / float16, for values struct refuses because they are past the type's
# range: they become +-inf. OpenCL's argument path converts this way (a ctypes c_float; numpy for
# half), and so does numpy for float32 + a huge Python float (NEP 50), so every backend agrees.
_C_FLOAT_CASTS: "dict[str, Callable[[Any], float]]" = {"f": lambda v: ctypes.c_float(v).value, "e": _float16_cast}


def _ctypes_value(v: Any) -> Any:
    return getattr(v, "value", v)


def _as_bytes_factory(size: int, dtype: "np.dtype | None", label: str, vector: "type[Any] | None" = None
                      ) -> Callable[[Any], bytes]:
    def convert(v: Any) -> bytes:
        if type(v) is vector:
            return v._v.tobytes()  # the components, packed: the fast path
        if isinstance(v, (bytes, bytearray, ctypes.Structure, ctypes.Union, ctypes.Array)):
            data = bytes(v)
        elif dtype is not None and dtype.names is not None:
            record = np.zeros((), dtype)
            if isinstance(v, (tuple, np.void)):
                record[()] = v
            else:  # a vector object, list or array: its components in field order
                flat = np.asarray(v).ravel()
                if flat.dtype.names is not None and flat.size == 1:
                    record[()] = flat[0]
                elif flat.dtype.names is None and flat.size == len(dtype.names):
                    record[()] = tuple(flat.tolist())
                else:
                    raise TypeError(f"{type(v).__name__} with {flat.size} values does not fill a {label}")
            data = record.tobytes()
        else:
            data = np.asarray(v, dtype=dtype).tobytes()
        if len(data) != size:
            raise TypeError(f"expected {size} bytes for a {label} argument, got {len(data)}")
        return data

    return convert


def _packed_layout(dtype: np.dtype) -> "tuple[np.dtype, type | None]":
    """CUDA's and HIP's layout of a PyGPGPU vector dtype (float3 is 12 bytes there, 16 in
    OpenCL), and the vector class; other dtypes as they are."""
    if dtype.names is None:
        return dtype, None
    try:
        from ..vec_types import vector_type_of_dtype
    except ImportError:
        return dtype, None
    found = vector_type_of_dtype(dtype)
    return (found[0].dtype_packed, found[0]) if found else (dtype, None)


def _dtype_alignment(dtype: np.dtype) -> int:
    names, fields = dtype.names, dtype.fields      # both None for a non-structured dtype
    if names is None or fields is None or dtype.isalignedstruct:
        return dtype.alignment
    return max((_dtype_alignment(fields[n][0]) for n in names), default=1)


def normalize_kind(t: Any) -> ArgKind:
    """``"buffer"``, ``"local"``, a numpy dtype, a ctypes type, a vector type or an ArgKind -> ArgKind."""
    if isinstance(t, ArgKind):
        return t
    if isinstance(t, str) and t in ("buffer", "local"):
        return BUFFER if t == "buffer" else LOCAL
    if t is LocalMemory:
        return LOCAL
    if isinstance(t, type) and issubclass(t, ctypes._SimpleCData):
        # typeshed's _SimpleCData does not declare the class attribute _type_ (its struct code)
        code, size = t._type_, ctypes.sizeof(t)  # type: ignore[attr-defined]
        if code in "fd":
            fmt = code
        elif code == "?":
            fmt = "?"
        elif code in "bhilqBHILQ":
            fmt = _INT_FMT[size] if code.islower() else _INT_FMT[size].upper()
        else:
            raise TypeError(f"ctypes type {t.__name__} cannot be a kernel argument")
        return ArgKind("scalar", size, fmt, _ctypes_value, t.__name__, ctypes.alignment(t), np.dtype(t), t)
    if isinstance(t, type) and issubclass(t, (ctypes.Structure, ctypes.Union, ctypes.Array)):
        size = ctypes.sizeof(t)
        return ArgKind("bytes", size, f"{size}s", _as_bytes_factory(size, None, t.__name__), t.__name__,
                       ctypes.alignment(t), None, t)
    packed = getattr(t, "dtype_packed", None)
    dtype_attr = getattr(t, "dtype", None)
    declared: "np.dtype | None" = None
    if isinstance(t, type) and isinstance(packed, np.dtype):
        declared = dtype_attr if isinstance(dtype_attr, np.dtype) else None     # OpenCL's layout
        t = packed  # a pygpgpu vector class: the packed layout (float3 = 12 bytes)
    elif not isinstance(t, (np.dtype, str)) and isinstance(dtype_attr, np.dtype) and not (
        isinstance(t, type) and issubclass(t, np.generic)
    ):
        t = dtype_attr
    try:
        dtype = np.dtype(t)
    except TypeError:
        raise TypeError(
            f"{t!r} is not a kernel argument kind: use 'buffer', 'local', a numpy dtype or a ctypes type"
        ) from None
    if dtype.fields is None and dtype.subdtype is None and dtype.kind in _NUMPY_FMT:
        return ArgKind("scalar", dtype.itemsize, _NUMPY_FMT[dtype.kind][dtype.itemsize], None, dtype.name,
                       dtype=dtype)
    declared = dtype if declared is None else declared
    dtype, vector = _packed_layout(dtype)
    size = dtype.itemsize
    return ArgKind("bytes", size, f"{size}s", _as_bytes_factory(size, dtype, str(dtype), vector), str(dtype),
                   _dtype_alignment(dtype), declared)


def kind_of_value(value: Any, param_size: "int | None") -> Any:
    """The argument kind for a value passed to ``Kernel.launch`` (the slow, convenient path)."""
    if isinstance(value, LocalMemory):
        return "local"
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)):
        return type(value)
    if isinstance(getattr(type(value), "dtype_packed", None), np.dtype):
        return type(value)  # a pygpgpu vector (float4, int3, ...) passed by value
    if isinstance(value, (bool, int, float)) and param_size is not None:
        # A plain Python number adopts the kernel parameter's width.
        if isinstance(value, bool):
            return np.dtype(np.bool_)
        if isinstance(value, int):
            return np.dtype({4: np.int32, 8: np.int64, 2: np.int16, 1: np.int8}.get(param_size, np.int64))
        return np.dtype({4: np.float32, 8: np.float64}.get(param_size, np.float64))
    if isinstance(value, (bool, int, float)):
        raise TypeError(
            f"a plain Python {type(value).__name__} ({value!r}) has no fixed C type: pass a numpy scalar "
            "such as np.int32(...) or np.float32(...)"
        )
    if hasattr(value, "ptr"):
        return "buffer"
    raise TypeError(
        f"{type(value).__name__} cannot be a kernel argument: pass a Buffer, a numpy array, a numpy or "
        "ctypes scalar, a ctypes Structure or LocalMemory"
    )


def check_param_kinds(kernel_name: str, param_sizes: "Sequence[int] | None", kinds: Sequence[ArgKind]) -> None:
    """TypeError unless the packed kinds match the kernel's parameter count and sizes.

    The driver reads every parameter the kernel declares, whatever the caller passed: too few
    arguments would make it read past the pointer array. ``param_sizes`` None (a driver or
    binary without that information) checks nothing."""
    if param_sizes is None:
        return
    if len(kinds) != len(param_sizes):
        raise TypeError(
            f"kernel {kernel_name!r} has {len(param_sizes)} parameters, but {len(kinds)} "
            f"arguments were given ({list(kinds)}; LocalMemory arguments are not parameters)"
        )
    for i, (kind, size) in enumerate(zip(kinds, param_sizes)):
        if kind.size != size:
            raise TypeError(
                f"argument {i} of kernel {kernel_name!r}: the parameter is {size} bytes, but a {kind.label} "
                f"argument is {kind.size} bytes (e.g. pass np.int32 for int, np.float32 for float, a "
                "Buffer for a pointer)"
            )


def explain(kernel_name: str, kinds: Sequence[ArgKind], args: Any, exc: BaseException) -> BaseException:
    """Turn a packing failure into an error naming the bad argument."""
    try:
        n = len(args)
    except TypeError:
        return TypeError(f"kernel {kernel_name!r}: args must be a sequence, got {type(args).__name__}")
    if n != len(kinds):
        return TypeError(f"kernel {kernel_name!r} takes {len(kinds)} arguments ({list(kinds)}), got {n}")
    for i, (kind, value) in enumerate(zip(kinds, args)):
        where = f"argument {i} of kernel {kernel_name!r}"
        if kind.tag == "buffer":
            ptr = getattr(value, "ptr", None)
            if ptr is None and hasattr(value, "ptr"):
                return ClosedError(f"the buffer passed as {where}")
            if not isinstance(ptr, int):
                return TypeError(f"{where} must be a device Buffer, got {type(value).__name__}")
        elif kind.tag == "local":
            if not isinstance(value, LocalMemory):
                return TypeError(f"{where} must be LocalMemory(nbytes), got {type(value).__name__}")
        else:
            try:
                packed = kind.convert(value) if kind.convert else value
                if kind.tag == "scalar" and kind.fmt in _C_FLOAT_CASTS:
                    packed = _C_FLOAT_CASTS[kind.fmt](packed)   # as the launcher packs it after an overflow
                struct.pack("<" + kind.fmt, packed)
            except (struct.error, OverflowError) as inner:
                if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
                    return OverflowError(f"{where}: {value!r} does not fit in {kind.label} ({inner})")
                return TypeError(f"{where} must be {kind.label}, got {type(value).__name__} {value!r}: {inner}")
            except Exception as inner:
                return TypeError(f"{where} must be {kind.label}, got {type(value).__name__} {value!r}: {inner}")
    return exc


class ArgumentLayout:
    """Where each argument of one signature lives in the argument storage, and the pointer array.

    ``kinds``: every argument's ArgKind; ``params``: ``(index, kind)`` of those that are kernel
    parameters (LocalMemory is not); ``offsets``, ``sizes``: theirs, C-struct style; ``fmt``: the
    ``struct`` format filling them all; ``storage`` and ``pointers``: the preallocated bytes and
    ``void*[]``. ``exact`` is False when the kernel's parameter sizes are unknown (a driver before
    CUDA 12.4): the driver may then read past what was packed, so the storage has slack of zeros
    and the pointer array 64 spare entries pointing into it.
    """

    def __init__(self, arg_types: Sequence[Any], kernel_name: str = "kernel", *, exact: bool = True,
                 float16: bool = True):
        self.kernel_name = kernel_name
        self.kinds = [normalize_kind(t) for t in arg_types]
        if not float16 and any(k.tag == "scalar" and k.fmt == "e" for k in self.kinds):
            raise TypeError(f"kernel {kernel_name!r}: float16 arguments are not supported on this backend; "
                            "use float32")
        self.params = [(i, k) for i, k in enumerate(self.kinds) if k.tag != "local"]
        self.locals = [i for i, k in enumerate(self.kinds) if k.tag == "local"]
        self.float_casts = {i: _C_FLOAT_CASTS[k.fmt] for i, k in self.params
                            if k.tag == "scalar" and k.fmt in _C_FLOAT_CASTS}
        """Arguments converted the C way when packing overflows (see :meth:`pack`)."""
        fmt, offsets, offset = "<", [], 0
        for _, kind in self.params:
            pad = -offset % kind.align
            fmt += "x" * pad
            offset += pad
            offsets.append(offset)
            fmt += kind.fmt
            offset += kind.size
        self.fmt = fmt
        self.offsets = offsets
        self.sizes = [k.size for _, k in self.params]
        self.struct = struct.Struct(fmt)
        slack = 0 if exact else 4096
        self.storage = (ctypes.c_char * max(offset + slack, 8))()
        base = ctypes.addressof(self.storage)
        n_pointers = len(self.params) if exact else len(self.params) + 64
        self.pointers = (ctypes.c_void_p * max(n_pointers, 1))(
            *([base + o for o in offsets] + [base + offset] * (n_pointers - len(self.params)))
        )

    def pack(self, args: Sequence[Any], *, c_float_casts: bool = False) -> int:
        """Write ``args`` into the storage (the launcher does this inline); returns the dynamic
        shared memory bytes their LocalMemory arguments ask for. A float32/float16 value past
        the type's range (which struct refuses) is packed as C converts it, +-inf; the launcher
        calls this with ``c_float_casts=True`` when its own packing overflowed."""
        casts = self.float_casts if c_float_casts else {}
        try:
            if len(args) != len(self.kinds):
                raise TypeError
            values = []
            for i, kind in self.params:
                v = args[i]
                v = v.ptr if kind.tag == "buffer" else kind.convert(v) if kind.convert else v
                values.append(casts[i](v) if i in casts else v)
            shared = sum(args[i].nbytes for i in self.locals)
            self.struct.pack_into(self.storage, 0, *values)
        except OverflowError as exc:
            if self.float_casts and not c_float_casts:
                return self.pack(args, c_float_casts=True)
            raise explain(self.kernel_name, self.kinds, args, exc) from None
        except Exception as exc:
            raise explain(self.kernel_name, self.kinds, args, exc) from None
        return shared
