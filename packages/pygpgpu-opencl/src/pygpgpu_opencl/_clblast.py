"""CLBlast through ctypes, loaded on the first matrix product on an OpenCL device: ``gemm``
multiplies float32/float64/complex64/complex128 matrices held in our own ``cl_mem`` buffers on
the context's queue, or says it cannot (CLBlast not installed, turned off, an operand's layout
it cannot describe) so that the caller runs its own kernel.

The library is Debian's and Ubuntu's ``libclblast1`` (``libclblast.so.1``), or any file named by
``PYGPGPU_CLBLAST_LIB``; ``PYGPGPU_CLBLAST=0`` keeps pygpgpu from using it. Nothing is loaded at
import, nor on a machine that never multiplies matrices on OpenCL.

CLBlast takes the row-major layout directly, and each operand as a buffer, an element offset, a
leading dimension and a transpose flag, so a 2-D view whose rows or columns are contiguous (a
slice, ``a.T``) is passed as it is: no copy, on the device or to the host.
"""
from __future__ import annotations

import ctypes
from ctypes import POINTER, Structure, c_double, c_float, c_int, c_size_t, c_void_p
from typing import Any, NamedTuple

import numpy as np

from pygpgpu_core.backend.library import Function, LazyLibrary
from pygpgpu_core.errors import DriverError

from ._status import status_name
from ._vendor_switch import loaded_if_allowed
from ._wait import enqueue

__all__ = ["gemm", "clblast", "available", "LIB_ENV", "USE_ENV", "Operand", "operand"]

LIB_ENV = "PYGPGPU_CLBLAST_LIB"
USE_ENV = "PYGPGPU_CLBLAST"

_ROW_MAJOR = 101                           # CLBlastLayoutRowMajor
_NO_TRANSPOSE, _TRANSPOSE = 111, 112       # CLBlastTransposeNo / Yes


class _Float2(Structure):                  # cl_float2 by value (two floats: one SSE register)
    _fields_ = [("re", c_float), ("im", c_float)]


class _Double2(Structure):                 # cl_double2 by value (two doubles)
    _fields_ = [("re", c_double), ("im", c_double)]


def _gemm_function(symbol: str, scalar: Any) -> Function:
    # layout, transa, transb, m, n, k, alpha, (A, offset, ld), beta... see clblast_c.h's CLBlastXgemm
    matrix = (c_void_p, c_size_t, c_size_t)
    return Function(symbol, (c_int, c_int, c_int, c_size_t, c_size_t, c_size_t, scalar) + matrix + matrix
                    + (scalar,) + matrix + (POINTER(c_void_p), POINTER(c_void_p)))


# dtype -> (role, the scalar type alpha and beta are passed as)
_GEMMS = {
    np.dtype(np.float32): ("sgemm", c_float),
    np.dtype(np.float64): ("dgemm", c_double),
    np.dtype(np.complex64): ("cgemm", _Float2),
    np.dtype(np.complex128): ("zgemm", _Double2),
}

_FUNCTIONS = {role: _gemm_function("CLBlast" + role[0].upper() + role[1:], scalar)
              for role, scalar in _GEMMS.values()}

# CLBlast's own status codes (the negative OpenCL ones are named by _status.status_name)
_STATUS = {
    -1024: "CLBlastNotImplemented", -1022: "CLBlastInvalidMatrixA", -1021: "CLBlastInvalidMatrixB",
    -1020: "CLBlastInvalidMatrixC", -1017: "CLBlastInvalidDimension", -1016: "CLBlastInvalidLeadDimA",
    -1015: "CLBlastInvalidLeadDimB", -1014: "CLBlastInvalidLeadDimC", -1011: "CLBlastInsufficientMemoryA",
    -1010: "CLBlastInsufficientMemoryB", -1009: "CLBlastInsufficientMemoryC",
    -2050: "CLBlastInsufficientMemoryTemp", -2046: "CLBlastInvalidLocalMemUsage",
    -2045: "CLBlastNoHalfPrecision", -2044: "CLBlastNoDoublePrecision", -2041: "CLBlastDatabaseError",
    -2040: "CLBlastUnknownError", -2039: "CLBlastUnexpectedError",
}

clblast = LazyLibrary("opencl", "CLBlast (libclblast)", _FUNCTIONS, env=LIB_ENV, fork_unsafe=True,
                      candidates=lambda: ["libclblast.so.1", "libclblast.so", "libclblast.dylib", "clblast.dll"],
                      hint=f"apt-get install libclblast1 (Debian, Ubuntu), or set {LIB_ENV} to a libclblast")
"""``clblast()`` is the bound CLBlast functions; the first call loads the library."""

_unavailable: "list[str]" = []    # why CLBlast cannot be used (checked once)
products = 0
"""How many products CLBlast has queued in this process (tests read it to see the path taken)."""


def available(device: Any = None) -> bool:
    """Whether CLBlast is installed and allowed on ``device`` (loads it on the first call)."""
    return loaded_if_allowed(device, USE_ENV, clblast, _unavailable) is not None


class Operand(NamedTuple):
    """A matrix as CLBlast takes it: the ``cl_mem``, the element offset of its first element, the
    leading dimension, and whether the memory holds its transpose (a column-major view)."""

    handle: int
    offset: int
    ld: int
    transposed: bool


def operand(x: Any) -> "Operand | None":
    """``x`` (a 2-D device array or view of OpenCL memory) as CLBlast reads it in row-major
    layout, or None where its strides are neither row- nor column-contiguous (the caller then
    makes a contiguous copy on the device)."""
    rows, cols = x.shape
    size = x.dtype.itemsize
    s0, s1 = x.strides
    if x.offset % size or s0 % size or s1 % size or s0 < 0 or s1 < 0:
        return None
    handle, start = x.buffer._require(), x.offset // size
    if cols == 1 or s1 == size:                          # rows of contiguous elements
        ld = s0 // size if rows > 1 else cols
        if ld >= cols:
            return Operand(handle, start, max(ld, 1), False)
    if rows == 1 or s0 == size:                          # columns of contiguous elements: the transpose
        ld = s1 // size if cols > 1 else rows
        if ld >= rows:
            return Operand(handle, start, max(ld, 1), True)
    return None


def _check(status: int, call: str) -> None:
    if status:
        name = _STATUS.get(status) or status_name(status)
        raise DriverError("opencl", call, status, name,
                          f"CLBlast failed; set {USE_ENV}=0 to use pygpgpu's own matmul kernel instead")


def gemm(context: Any, dtype: np.dtype, m: int, n: int, k: int, a: Operand, b: Operand, c: Operand) -> bool:
    """``C = A @ B`` for ``A`` (m, k), ``B`` (k, n), ``C`` (m, n) of ``dtype``, each described by
    :func:`operand`, queued on the context's queue. False (nothing done) where CLBlast is not
    installed or not allowed, or the type is not one it has; a failed call raises DriverError."""
    if dtype not in _GEMMS or c.transposed or min(m, n, k) < 1 or not available(context.device):
        return False
    global products
    role, scalar = _GEMMS[dtype]
    one, zero = (scalar(1.0, 0.0), scalar(0.0, 0.0)) if dtype.kind == "c" else (scalar(1.0), scalar(0.0))
    queue = c_void_p(context.queue_handle())
    fn = getattr(clblast(), role)
    status = enqueue(context, fn, _ROW_MAJOR, _TRANSPOSE if a.transposed else _NO_TRANSPOSE,
                     _TRANSPOSE if b.transposed else _NO_TRANSPOSE, m, n, k, one, a.handle, a.offset, a.ld,
                     b.handle, b.offset, b.ld, zero, c.handle, c.offset, c.ld, ctypes.byref(queue))
    _check(status, fn.__name__)
    context._last_launch = (fn.__name__, ())   # a Ctrl-C during a later wait names it, as for a kernel
    products += 1
    return True
