"""Kernel parameter descriptions (from clGetKernelArgInfo) and argument conversion.

Every check here runs before any driver call, so a wrong argument is a TypeError naming
the parameter, never a driver error or a crash.
"""
from __future__ import annotations

import ctypes
import re
from typing import Any

import numpy as np

from pygpgpu_core.protocols import LocalMemory

from ._buffer import Buffer

__all__ = ["ArgSpec", "parse_type_name", "SCALAR_DTYPES", "scalar_bytes", "describe"]

SCALAR_DTYPES: dict[str, np.dtype] = {
    "char": np.dtype(np.int8),
    "signed char": np.dtype(np.int8),
    "uchar": np.dtype(np.uint8),
    "unsigned char": np.dtype(np.uint8),
    "short": np.dtype(np.int16),
    "ushort": np.dtype(np.uint16),
    "unsigned short": np.dtype(np.uint16),
    "int": np.dtype(np.int32),
    "uint": np.dtype(np.uint32),
    "unsigned int": np.dtype(np.uint32),
    "unsigned": np.dtype(np.uint32),
    "long": np.dtype(np.int64),
    "ulong": np.dtype(np.uint64),
    "unsigned long": np.dtype(np.uint64),
    "float": np.dtype(np.float32),
    "double": np.dtype(np.float64),
    "half": np.dtype(np.float16),
}
_VECTOR = re.compile(r"^(char|uchar|short|ushort|int|uint|long|ulong|float|double|half)(2|3|4|8|16)$")
_QUALIFIERS = re.compile(r"\b(const|volatile|restrict|__restrict|__global|global|__constant|constant|__local|local|__private|private)\b")

# CL address-qualifier values -> names (CL_KERNEL_ARG_ADDRESS_*).
ADDRESS_NAMES = {0x119B: "global", 0x119C: "local", 0x119D: "constant", 0x119E: "private"}


def parse_type_name(type_name: str) -> "tuple[bool, np.dtype | None, int]":
    """``(is_pointer, element dtype or None, vector width)`` for an OpenCL C type name."""
    t = _QUALIFIERS.sub("", type_name).strip()
    pointer = t.endswith("*")
    if pointer:
        t = t.rstrip("*").strip()
    t = " ".join(t.split())
    if t in SCALAR_DTYPES:
        return pointer, SCALAR_DTYPES[t], 1
    m = _VECTOR.match(t)
    if m:
        return pointer, SCALAR_DTYPES[m.group(1)], int(m.group(2))
    return pointer, None, 1


class ArgSpec:
    """One kernel parameter. Fields are None when the driver gives no argument info."""

    __slots__ = ("index", "name", "address", "type_name", "const", "pointer", "dtype", "width", "size")

    def __init__(self, index: int, name: str = "", address: "str | None" = None, type_name: str = "", const: bool = False):
        self.index = index
        self.name = name
        self.address = address
        self.type_name = type_name
        self.const = const
        if type_name:
            self.pointer, self.dtype, self.width = parse_type_name(type_name)
        else:
            self.pointer, self.dtype, self.width = (address in ("global", "constant", "local")) if address else False, None, 1
        if address in ("global", "constant", "local"):
            self.pointer = True
        # By-value size when known: 3-component vectors occupy 4 elements.
        self.size: int | None
        if self.dtype is not None and not self.pointer:
            self.size = self.dtype.itemsize * (4 if self.width == 3 else self.width)
        else:
            self.size = None

    @property
    def known(self) -> bool:
        return self.address is not None

    @property
    def is_scalar(self) -> bool:
        return self.address == "private" and self.dtype is not None and self.width == 1

    def label(self) -> str:
        name = f" {self.name!r}" if self.name else ""
        return f"argument {self.index}{name}"

    def declaration(self) -> str:
        if not self.known:
            return "(type unknown: the driver gives no argument info)"
        space = "" if self.address == "private" else f"__{self.address} "
        const = "const " if self.const and self.pointer and "const" not in self.type_name else ""
        return f"{space}{const}{self.type_name} {self.name}".strip()

    def __repr__(self) -> str:
        return f"<ArgSpec {self.index}: {self.declaration()}>"


def describe(value: Any) -> str:
    """A short description of a Python value's type for error messages."""
    if isinstance(value, np.ndarray):
        return f"numpy array of {value.dtype} with shape {value.shape}"
    if isinstance(value, np.generic):
        return f"numpy.{type(value).__name__}"
    return type(value).__name__


def scalar_bytes(spec: ArgSpec, value: Any, kernel: str) -> bytes:
    """The by-value bytes of ``value`` for the private (non-pointer) parameter ``spec``."""
    dtype = spec.dtype
    if dtype is not None and type(value) is dtype.type and spec.width == 1:
        return value.tobytes()  # the common case: the exact numpy scalar type

    def where() -> str:
        return f"{spec.label()} of kernel {kernel!r} ({spec.declaration()})"

    if isinstance(value, (Buffer, LocalMemory)) or value is None:
        raise TypeError(f"{where()} is passed by value; got {describe(value)}")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.generic):
        if spec.dtype is not None and spec.width == 1 and value.dtype != spec.dtype:
            raise TypeError(
                f"{where()} expects {spec.dtype.name}, got {describe(value)}; "
                f"pass np.{spec.dtype.name}(value)"
            )
        data = value.tobytes()
    elif isinstance(value, (bool, int, float)):
        if not spec.is_scalar:
            raise TypeError(
                f"{where()}: a Python {type(value).__name__} needs a known scalar parameter type; "
                "pass a numpy scalar such as np.int32(5) or np.float32(1.5)"
            )
        dt = spec.dtype
        assert dt is not None, "is_scalar: the dtype is known"
        if isinstance(value, float) and dt.kind in "iu":
            raise TypeError(f"{where()} is {dt.name}; got a float ({value!r}); pass an int")
        if dt.kind in "iu":
            info = np.iinfo(dt)
            if not info.min <= int(value) <= info.max:
                raise ValueError(f"{where()} is {dt.name}; {value} does not fit (range {info.min}..{info.max})")
        elif dt.kind == "f":
            try:
                value = float(value)
            except OverflowError:   # an int past every float; float()'s message names no argument
                raise OverflowError(f"{where()}: {value} does not fit in {dt.name}") from None
        with np.errstate(over="ignore"):
            # Past a float type's range the value is +-inf, as C converts it and the CUDA and HIP
            # launchers pack it; numpy would warn from this line about the user's number.
            data = np.array(value, dtype=dt).tobytes()
    elif isinstance(value, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)):
        data = bytes(memoryview(value).cast("B"))
    elif isinstance(value, np.ndarray) and spec.dtype is not None and spec.width > 1:
        if value.dtype != spec.dtype or value.size != spec.width:
            raise TypeError(f"{where()} expects {spec.width} x {spec.dtype.name}, got {describe(value)}")
        data = np.ascontiguousarray(value).tobytes()
        if spec.width == 3:
            data += b"\0" * spec.dtype.itemsize
    elif isinstance(value, (bytes, bytearray)):
        data = bytes(value)
    elif _has_buffer(value):
        data = bytes(memoryview(value).cast("B"))
    else:
        raise TypeError(
            f"{where()}: cannot pass {describe(value)} by value; use a numpy scalar, a ctypes value or "
            "ctypes.Structure, or bytes"
        )
    if spec.size is not None and len(data) != spec.size:
        raise TypeError(f"{where()} takes {spec.size} bytes, got {len(data)} from {describe(value)}")
    return data


def _has_buffer(value: Any) -> bool:
    try:
        memoryview(value)
    except TypeError:
        return False
    return True

