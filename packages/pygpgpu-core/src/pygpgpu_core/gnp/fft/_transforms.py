"""numpy's transforms (``numpy.fft``'s names and parameters) on device arrays: each 1-D transform
prepares its operand (:mod:`._arguments`) and runs the complex FFT kernels of
``pygpgpu_translate.array_ops`` along the axis; the N-D ones apply those along each axis in
numpy's order. Real transforms run ``rfft_axis``/``irfft_axis`` (for even lengths a complex FFT
of half the length)."""
from __future__ import annotations

from typing import Any

from .._array import DeviceArray
from .._dispatch import ops
from ._arguments import (
    along,
    complex_type,
    cook_nd,
    into,
    length,
    operand,
    operand_on_axis,
    real_type,
    scale,
    swap_direction,
)

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "fft2", "ifft2", "rfftn", "irfftn",
           "rfft2", "irfft2"]


def _complex_fft(a: Any, n: Any, axis: Any, norm: Any, inverse: bool, what: str) -> DeviceArray:
    a = operand(a, what)
    ax = along(a, axis)
    n = length(n, a.shape[ax])
    work = operand_on_axis(a, ax, n, complex_type(a.dtype, what))
    return ops().fft_axis(work, ax, inverse, scale(n, norm, not inverse))


def fft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``fft``: the 1-D discrete Fourier transform along ``axis``, ``a`` cut or zero-padded
    to ``n`` points; complex64 for float16/float32/complex64 input, complex128 otherwise."""
    return into(_complex_fft(a, n, axis, norm, False, "fft"), out)


def ifft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``ifft``: the inverse of :func:`fft` (scaled by ``1/n`` with the default norm)."""
    return into(_complex_fft(a, n, axis, norm, True, "ifft"), out)


def _rfft(a: Any, n: Any, axis: Any, norm: Any, what: str) -> DeviceArray:
    a = operand(a, what)
    if a.dtype.kind == "c":
        raise TypeError(f"gnp.fft.{what} takes real input, got {a.dtype} (as numpy's; use gnp.fft.fft for complex "
                        "data, or gnp.real(a))")
    ax = along(a, axis)
    n = length(n, a.shape[ax])
    work = operand_on_axis(a, ax, n, real_type(a.dtype, what))
    return ops().rfft_axis(work, ax, scale(n, norm, True))


def rfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``rfft``: the ``n // 2 + 1`` non-negative frequency terms of the FFT of real ``a``."""
    return into(_rfft(a, n, axis, norm, "rfft"), out)


def _irfft(a: Any, n: Any, axis: Any, norm: Any, what: str) -> DeviceArray:
    a = operand(a, what)
    ax = along(a, axis)
    n = length(n, 2 * (a.shape[ax] - 1))
    half = operand_on_axis(a, ax, n // 2 + 1, complex_type(a.dtype, what))
    return ops().irfft_axis(half, ax, n, scale(n, norm, False))


def irfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``irfft``: the real length-``n`` signal (default ``2 * (m - 1)``) whose
    :func:`rfft` is ``a`` (cut or zero-padded to ``n // 2 + 1`` points; the imaginary parts of
    the zero and, for even ``n``, the Nyquist term are ignored, as numpy's)."""
    return into(_irfft(a, n, axis, norm, "irfft"), out)


def hfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``hfft``: the real FFT of a signal with Hermitian symmetry given by its first half
    (``irfft`` of the conjugate, with the norm's direction swapped)."""
    a = operand(a, "hfft")
    conjugated = ops().ufunc_call("conjugate", (a,))
    return into(_irfft(conjugated, n, axis, swap_direction(norm), "hfft"), out)


def ihfft(a: Any, n: Any = None, axis: int = -1, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``ihfft``: the inverse of :func:`hfft` for real ``a`` (the conjugate of ``rfft``
    with the norm's direction swapped)."""
    half = _rfft(a, n, axis, swap_direction(norm), "ihfft")
    return into(ops().ufunc_call("conjugate", (half,)), out)


def _nd(a: Any, s: Any, axes: Any, norm: Any, inverse: bool, what: str) -> DeviceArray:
    a = operand(a, what)
    s, axes = cook_nd(a, s, axes)
    for n, ax in reversed(list(zip(s, axes))):          # the last axis first, as numpy's
        a = _complex_fft(a, n, ax, norm, inverse, what)
    return a                                             # (no axes: ``a`` itself, as numpy's)


def fftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``fftn``: the FFT over ``axes`` (all by default), each cut or padded to ``s``."""
    return into(_nd(a, s, axes, norm, False, "fftn"), out)


def ifftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``ifftn``: the inverse of :func:`fftn`."""
    return into(_nd(a, s, axes, norm, True, "ifftn"), out)


def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``fft2``: :func:`fftn` over the last two axes."""
    return into(_nd(a, s, axes, norm, False, "fft2"), out)


def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``ifft2``: :func:`ifftn` over the last two axes."""
    return into(_nd(a, s, axes, norm, True, "ifft2"), out)


def _rfftn(a: Any, s: Any, axes: Any, norm: Any, what: str) -> DeviceArray:
    a = operand(a, what)
    s, axes = cook_nd(a, s, axes)
    if not axes:                                         # (numpy's and CuPy's IndexError)
        raise IndexError(f"gnp.fft.{what} needs at least one axis to transform (axes is empty)")
    a = _rfft(a, s[-1], axes[-1], norm, what)
    for n, ax in reversed(list(zip(s[:-1], axes[:-1]))):
        a = _complex_fft(a, n, ax, norm, False, what)
    return a


def _irfftn(a: Any, s: Any, axes: Any, norm: Any, what: str) -> DeviceArray:
    a = operand(a, what)
    s, axes = cook_nd(a, s, axes, inverse_real=True)
    if not axes:                                         # (numpy's and CuPy's IndexError)
        raise IndexError(f"gnp.fft.{what} needs at least one axis to transform (axes is empty)")
    for n, ax in zip(s[:-1], axes[:-1]):
        a = _complex_fft(a, n, ax, norm, True, what)
    return _irfft(a, s[-1], axes[-1], norm, what)


def rfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``rfftn``: :func:`rfft` over the last of ``axes``, then :func:`fft` over the others."""
    return into(_rfftn(a, s, axes, norm, "rfftn"), out)


def irfftn(a: Any, s: Any = None, axes: Any = None, norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``irfftn``: :func:`ifft` over all but the last of ``axes``, then :func:`irfft`."""
    return into(_irfftn(a, s, axes, norm, "irfftn"), out)


def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``rfft2``: :func:`rfftn` over the last two axes."""
    return into(_rfftn(a, s, axes, norm, "rfft2"), out)


def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: Any = None, out: Any = None) -> DeviceArray:
    """numpy's ``irfft2``: :func:`irfftn` over the last two axes."""
    return into(_irfftn(a, s, axes, norm, "irfft2"), out)
