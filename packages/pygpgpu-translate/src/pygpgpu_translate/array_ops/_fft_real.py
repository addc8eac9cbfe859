"""The real transforms along one axis (``gnp.fft.rfft`` / ``irfft`` and the N-D and Hermitian
ones built on them): the backend's vendor FFT where it has one (:mod:`._fft_vendor`); else, in
our own kernels, for an even length ``n = 2h`` the real signal's sample pairs are one complex
signal of length ``h``, so the work is a complex FFT of half the length plus one pass that
separates (rfft) or combines (irfft) the even and odd samples' spectra. Where the axis is the
last one (``inner == 1``) the pairing is a reinterpretation of the same memory (``view``);
otherwise one kernel gathers or scatters the pairs. Odd lengths transform the signal as complex
data (rfft) or extend the half spectrum to the full Hermitian one first (irfft)."""
from __future__ import annotations

import numpy as np
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._complex_parts import complex_part

from ._codegen import DEFAULT_CONFIG, launch
from ._fft import _floats, _index_type, _twiddles, fft_axis, hermitian_extend
from ._fft_kernels import real_kernel
from ._fft_vendor import vendor_transform
from ._operands import check_dtype

__all__ = ["rfft_axis", "irfft_axis"]

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}


def _outer_inner(a: DeviceArray, axis: int) -> tuple[int, int]:
    return (int(np.prod(a.shape[:axis], dtype=np.int64)), int(np.prod(a.shape[axis + 1:], dtype=np.int64)))


def _with_axis(a: DeviceArray, axis: int, n: int) -> tuple:
    return a.shape[:axis] + (n,) + a.shape[axis + 1:]


def rfft_axis(x: DeviceArray, axis: int, scale: float) -> DeviceArray:
    """The first ``n // 2 + 1`` terms of the DFT of real ``x`` (a C-contiguous float32/float64
    array, not a view) along ``axis``, times ``scale``, in the matching complex dtype."""
    if type(x) is not DeviceArray or x.dtype not in _COMPLEX_OF:
        raise TypeError(f"rfft_axis takes a C-contiguous float32/float64 device array (not a view), got "
                        f"{type(x).__name__} of {x.dtype}")
    check_dtype(x.dtype, "rfft", "operand", x.device)
    ct = _COMPLEX_OF[x.dtype]
    n = x.shape[axis]
    if x.size:
        vendor = vendor_transform("r2c", x, axis, n, _with_axis(x, axis, n // 2 + 1), ct, scale)
        if vendor is not None:
            return vendor
    if x.size == 0 or n % 2:
        full = fft_axis(x.astype(ct), axis, False, scale)
        return full[(slice(None),) * axis + (slice(0, n // 2 + 1),)].copy()
    h = n // 2
    outer, inner = _outer_inner(x, axis)
    idx, index = _index_type(x, outer * (h + 1) * inner)
    if inner == 1:
        pairs = x.view(ct)                            # (..., h): the same memory
    else:
        pairs = DeviceArray(_with_axis(x, axis, h), ct, x.context)
        launch(real_kernel("pack", x.dtype, idx), x.device, DEFAULT_CONFIG,
               (_floats(pairs), x.reshape(-1), index(outer * h * inner), index(h), index(inner)))
    z = fft_axis(pairs, axis, False, 1.0)
    out = DeviceArray(_with_axis(x, axis, h + 1), ct, x.context)
    launch(real_kernel("rfft_post", x.dtype, idx), x.device, DEFAULT_CONFIG,
           (_floats(out), _floats(z), _twiddles(x, n, x.dtype), index(outer * (h + 1) * inner), index(h),
            index(inner), x.dtype.type(scale)))
    return out


def irfft_axis(spectrum: DeviceArray, axis: int, n: int, scale: float) -> DeviceArray:
    """The real length-``n`` signal whose rfft along ``axis`` is ``spectrum`` (C-contiguous
    complex, ``n // 2 + 1`` points along the axis), times ``scale``: numpy's unnormalised
    inverse, ignoring the imaginary parts of the zero and (even ``n``) Nyquist terms."""
    if type(spectrum) is not DeviceArray or spectrum.dtype not in (np.complex64, np.complex128):
        raise TypeError(f"irfft_axis takes a C-contiguous complex64/complex128 device array (not a view), got "
                        f"{type(spectrum).__name__} of {spectrum.dtype}")
    if spectrum.shape[axis] != n // 2 + 1:
        raise ValueError(f"irfft_axis: the axis has {spectrum.shape[axis]} points, {n // 2 + 1} expected for n={n}")
    check_dtype(spectrum.dtype, "irfft", "operand", spectrum.device)
    real = np.dtype(np.float32) if spectrum.dtype == np.complex64 else np.dtype(np.float64)
    if spectrum.size:
        vendor = vendor_transform("c2r", spectrum, axis, n, _with_axis(spectrum, axis, n), real, scale)
        if vendor is not None:
            return vendor
    if spectrum.size == 0 or n % 2:
        full = fft_axis(hermitian_extend(spectrum, axis, n), axis, True, scale)
        return complex_part(full, "real").copy()
    h = n // 2
    outer, inner = _outer_inner(spectrum, axis)
    idx, index = _index_type(spectrum, outer * n * inner)
    combined = DeviceArray(_with_axis(spectrum, axis, h), spectrum.dtype, spectrum.context)
    launch(real_kernel("irfft_pre", real, idx), spectrum.device, DEFAULT_CONFIG,
           (_floats(combined), _floats(spectrum), _twiddles(spectrum, n, real), index(outer * h * inner),
            index(h), index(inner)))
    pairs = fft_axis(combined, axis, True, scale)
    if inner == 1:
        return pairs.view(real)                        # (..., n): the same memory
    out = DeviceArray(_with_axis(spectrum, axis, n), real, spectrum.context)
    launch(real_kernel("unpack", real, idx), spectrum.device, DEFAULT_CONFIG,
           (out.reshape(-1), _floats(pairs), index(outer * n * inner), index(h), index(inner)))
    return out
