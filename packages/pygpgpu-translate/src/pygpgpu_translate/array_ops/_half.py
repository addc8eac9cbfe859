"""float16 on devices that store half but do not compute with it: OpenCL without cl_khr_fp16
(such as PoCL on CPUs), and CUDA and HIP, whose kernels gnp generates without half arithmetic.
Operands are widened to float32, the float32 kernel runs, and float16 results are rounded to the
nearest half (ties to even) — what numpy's own float16 loops do
(``npy_float_to_half(f(npy_half_to_float(x)))``), so + - * / and sqrt are numpy's bit for bit.
The conversions are handwritten kernel files, one per language: ``vload_half`` /
``vstore_half_rte`` in OpenCL (no cl_khr_fp16 needed), PTX ``cvt`` on CUDA, clang's
``_Float16`` on HIP (``_half_kernels.cl/.cu/.hip``)."""
from __future__ import annotations

import os
from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._operands import contiguous

__all__ = ["stores_half_only", "widen", "narrow", "bits", "half_bits"]

HALF, SINGLE = np.dtype(np.float16), np.dtype(np.float32)
_SUFFIX = {"opencl": ".cl", "cuda": ".cu", "hip": ".hip"}
_modules: dict = {}


def _dialect(device: Any) -> str:
    return getattr(getattr(device, "backend", None), "dialect", "")


def stores_half_only(device: Any) -> bool:
    """Whether ``device`` keeps float16 in memory but computes it through float32 here."""
    from ._operands import _dialect_has_float16
    if getattr(device, "fp16", False) and _dialect_has_float16(device):
        return False
    return _dialect(device) in _SUFFIX


def _kernels(device: Any) -> Any:
    """The conversion kernels' module for the device's language (loaded once per language)."""
    dialect = _dialect(device)
    m = _modules.get(dialect)
    if m is None:
        from pygpgpu_core import kernel_files
        path = os.path.join(os.path.dirname(__file__), "_half_kernels" + _SUFFIX[dialect])
        m = _modules[dialect] = kernel_files.load(path)
    return m


def _half_arg(a: DeviceArray) -> DeviceArray:
    """OpenCL's kernels take ``half*``; CUDA's and HIP's the bit patterns as ``unsigned short*``."""
    return a if _dialect(a.device) == "opencl" else bits(a)


def widen(a: DeviceArray) -> DeviceArray:
    """A C-contiguous float32 copy of float16 ``a`` (exact)."""
    src = contiguous(a)
    out = DeviceArray(a.shape, SINGLE, a.context)
    if a.size:
        _kernels(a.device).gnp_half_to_float[a.device](_half_arg(src.reshape(-1)), out.reshape(-1), np.int64(a.size))
    return out


def narrow(a: DeviceArray) -> DeviceArray:
    """``a`` (float32, float64; integers through float64) rounded to float16 in one step (nearest, ties to even; overflow to
    inf), as numpy's ``npy_float_to_half`` / ``npy_double_to_half``."""
    if a.dtype not in (SINGLE, np.float64):     # integers and bools: exact in float64 first, then one rounding
        a = a.astype(np.float64)
    src = contiguous(a)
    out = DeviceArray(a.shape, HALF, a.context)
    if a.size:
        k = _kernels(a.device)
        fn = k.gnp_double_to_half if a.dtype == np.float64 else k.gnp_float_to_half
        fn[a.device](src.reshape(-1), _half_arg(out.reshape(-1)), np.int64(a.size))
    return out


def bits(a: DeviceArray) -> DeviceArray:
    """float16 ``a`` as the uint16 bit patterns of the same memory: gathers, scatters and
    selections move halves without computing with them."""
    return a.view(np.uint16)


def half_bits(value: Any) -> np.uint16:
    """A number rounded to float16 (numpy's conversion) as its uint16 bit pattern."""
    with np.errstate(all="ignore"):
        return np.uint16(np.asarray(value, dtype=HALF).view(np.uint16)[()])
