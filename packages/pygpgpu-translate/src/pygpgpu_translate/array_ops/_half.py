"""float16 on devices that store half but do not compute with it (OpenCL without cl_khr_fp16,
such as PoCL on CPUs): operands are widened to float32 by ``vload_half``, the float32 kernel
runs, and float16 results are rounded to the nearest half by ``vstore_half_rte`` — what numpy's
own float16 loops do (``npy_float_to_half(f(npy_half_to_float(x)))``), so + - * / and sqrt are
numpy's bit for bit. The two conversions are a handwritten OpenCL file (``_half_kernels.cl``)."""
from __future__ import annotations

import os
from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._operands import contiguous

__all__ = ["stores_half_only", "widen", "narrow", "bits", "half_bits"]

HALF, SINGLE = np.dtype(np.float16), np.dtype(np.float32)
_module: Any = None


def stores_half_only(device: Any) -> bool:
    """Whether ``device`` keeps float16 in memory but computes it through float32 here."""
    from ._operands import _dialect_has_float16
    if getattr(device, "fp16", False) and _dialect_has_float16(device):
        return False
    return getattr(getattr(device, "backend", None), "dialect", "") == "opencl"


def _kernels() -> Any:
    global _module
    if _module is None:
        from pygpgpu_core import kernel_files
        _module = kernel_files.load(os.path.join(os.path.dirname(__file__), "_half_kernels.cl"))
    return _module


def widen(a: DeviceArray) -> DeviceArray:
    """A C-contiguous float32 copy of float16 ``a`` (exact)."""
    src = contiguous(a)
    out = DeviceArray(a.shape, SINGLE, a.context)
    if a.size:
        _kernels().gnp_half_to_float[a.device](src.reshape(-1), out.reshape(-1), np.int64(a.size))
    return out


def narrow(a: DeviceArray) -> DeviceArray:
    """float32 ``a`` rounded to float16 (nearest, ties to even; overflow to inf, as numpy)."""
    src = contiguous(a)
    out = DeviceArray(a.shape, HALF, a.context)
    if a.size:
        _kernels().gnp_float_to_half[a.device](src.reshape(-1), out.reshape(-1), np.int64(a.size))
    return out


def bits(a: DeviceArray) -> DeviceArray:
    """float16 ``a`` as the uint16 bit patterns of the same memory: gathers, scatters and
    selections move halves without computing with them."""
    return a.view(np.uint16)


def half_bits(value: Any) -> np.uint16:
    """A number rounded to float16 (numpy's conversion) as its uint16 bit pattern."""
    with np.errstate(all="ignore"):
        return np.uint16(np.asarray(value, dtype=HALF).view(np.uint16)[()])
