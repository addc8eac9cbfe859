"""``gnp.fft`` (``pygpgpu.numpy.fft``): numpy's discrete Fourier transforms on device arrays.

Every transform runs in pygpgpu's own kernels on every backend (OpenCL, CUDA, HIP): a
mixed-radix Stockham FFT for lengths whose prime factors are small, Bluestein's chirp-z (through
a 2-3-5-7-smooth FFT) for every other length, along any axis without transposes. Results follow
numpy's values, norms ("backward", "ortho", "forward"), ``n``/``s``/``axis``/``axes`` and shapes;
their dtypes follow CuPy's: complex64 for float16/float32/complex64 input, complex128 otherwise
(irfft/hfft: the matching float). Nothing is copied to the host.
"""
from __future__ import annotations

from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq
from ._transforms import (
    fft,
    fft2,
    fftn,
    hfft,
    ifft,
    ifft2,
    ifftn,
    ihfft,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftn,
)

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn", "ifftn", "fft2", "ifft2", "rfftn", "irfftn",
           "rfft2", "irfft2", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
