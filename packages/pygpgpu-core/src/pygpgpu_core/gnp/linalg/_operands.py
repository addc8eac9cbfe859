"""What every ``gnp.linalg`` function does with its operands, as numpy.linalg does: at least 2-D
(square where asked) stacks, the type it computes in, and a fresh C-contiguous work copy of
shape (batch, m, n) for the kernels, which overwrite it."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._array import DeviceArray
from .._dispatch import ops
from .._views import device_operand

__all__ = ["LinAlgError", "matrix_operand", "square_operand", "compute_dtype", "work_copy", "raise_if", "ufunc", "real_dtype"]

# numpy's own class, so that ``except np.linalg.LinAlgError`` catches gnp's errors (CuPy does the same)
LinAlgError = np.linalg.LinAlgError


def matrix_operand(a: Any, op: str) -> DeviceArray:
    """``a`` as a device array of at least two dimensions (numpy's LinAlgError otherwise)."""
    a = device_operand(a, f"linalg.{op}")
    if a.ndim < 2:
        raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional "
                          f"(gnp.linalg.{op} works on the last two axes)")
    return a


def square_operand(a: Any, op: str) -> DeviceArray:
    """``a`` as a stack of square matrices (numpy's LinAlgError otherwise)."""
    a = matrix_operand(a, op)
    if a.shape[-1] != a.shape[-2]:
        raise LinAlgError(f"Last 2 dimensions of the array must be square (gnp.linalg.{op} got shape {a.shape})")
    return a


def compute_dtype(*dtypes: np.dtype, op: str) -> np.dtype:
    """numpy.linalg's type: float32, complex64 and complex128 stay, float64 and every integer or
    bool type compute in float64 (mixed operands: numpy's promotion). float16 is refused as numpy
    refuses it."""
    for dt in dtypes:
        if dt == np.float16:
            raise TypeError(f"array type float16 is unsupported in linalg (gnp.linalg.{op}); convert with "
                            ".astype(np.float32)")
        if dt.kind not in "biufc":
            raise TypeError(f"gnp.linalg.{op}: unsupported dtype {dt}")
    result = np.result_type(*(dt if dt.kind in "fc" else np.dtype(np.float64) for dt in dtypes))
    return np.dtype(result)


def work_copy(a: DeviceArray, dtype: np.dtype) -> DeviceArray:
    """A fresh C-contiguous copy of the stack ``a`` in ``dtype``, shaped (batch, m, n)."""
    batch = int(np.prod(a.shape[:-2], dtype=np.int64))      # (explicit: -1 is ambiguous for empty matrices)
    return a.astype(dtype, copy=True).reshape(batch, a.shape[-2], a.shape[-1])


def raise_if(info: DeviceArray, message: str) -> None:
    """numpy's LinAlgError when any matrix's flag is set (reads the flags back: numpy raises, so the
    result must be known before returning)."""
    if info.size and bool(info.get().any()):
        raise LinAlgError(message)


def ufunc(name: str, *operands: Any) -> DeviceArray:
    """gnp's ufunc ``name`` (``exp``, ``sqrt``...: created at import time, so called through the provider)."""
    result: DeviceArray = ops().ufunc_call(name, operands)
    return result


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The real type of the same precision (float32 for complex64)."""
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
