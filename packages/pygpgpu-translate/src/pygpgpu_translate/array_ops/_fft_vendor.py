"""The vendor FFT in front of our own kernels: ``context.fft_plan`` of the array's backend (clFFT
on OpenCL, cuFFT on CUDA, each where installed and not turned off) says whether it runs a 1-D
transform along an axis of a C-contiguous array, and returns what runs it; None (no library, a
length or layout it lacks) and our Stockham/Bluestein kernels run it. Vendor transforms are
unnormalised; numpy's norm is one multiplication on the device afterwards."""
from __future__ import annotations

from typing import Any

from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._complex_parts import complex_part

__all__ = ["vendor_transform"]


def _hermitian_input(spectrum: DeviceArray, axis: int, n: int) -> DeviceArray:
    """A copy of ``spectrum`` (which the library may overwrite) with the imaginary parts numpy's
    irfft ignores set to zero: those of the zero and, for even ``n``, the Nyquist term (clFFT's
    batched c2r would use them)."""
    work = spectrum.copy()
    imag = complex_part(work, "imag")
    before = (slice(None),) * axis
    imag[before + (0,)] = 0
    if n % 2 == 0:
        imag[before + (n // 2,)] = 0
    return work


def vendor_transform(kind: str, x: DeviceArray, axis: int, n: int, shape: tuple, dtype: Any,
                     scale: float) -> "DeviceArray | None":
    """``kind`` ("forward", "inverse", "r2c", "c2r") of length ``n`` along ``axis`` of ``x`` times
    ``scale``, as a new array of ``shape`` and ``dtype``; None where the backend has no vendor FFT
    for it (nothing done)."""
    planner = getattr(x.context, "fft_plan", None)
    run = planner(kind, x.shape, x.dtype, axis, n) if planner is not None else None
    if run is None:
        return None
    if kind == "c2r":
        x = _hermitian_input(x, axis, n)
    out = DeviceArray(shape, dtype, x.context)
    run(x, out)
    if scale != 1.0:
        from ._elementwise import ufunc_call

        ufunc_call("multiply", (out, scale), out=out)
    return out
