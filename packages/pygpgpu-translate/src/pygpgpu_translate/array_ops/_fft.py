"""Complex FFTs along one axis of a C-contiguous complex device array: the backend's vendor FFT
where it has one (:mod:`._fft_vendor`), else our own kernels (every backend): ``gnp.fft`` (pygpgpu-core) prepares the operand (dtype, length along the axis) and
calls :func:`fft_axis`; :func:`hermitian_extend` builds the full spectrum an odd-length
``irfft`` transforms (:mod:`._fft_real` has the real transforms).

The array is seen as ``(outer, n, inner)`` with the transformed axis in the middle, so no
transpose is needed for any axis. Complex elements are read and written as their interleaved
float parts (``a.view(float32)``), so the kernels are plain float arithmetic.

Lengths whose prime factors are all at most :data:`MAX_DIRECT_RADIX` run as a mixed-radix
Stockham FFT (radix 8, a 4 or 2, then each odd prime factor): one kernel launch per factor
(:mod:`._fft_kernels`), twiddle factors from a table of ``exp(-2 pi i k / n)``. Other lengths
use Bluestein's chirp-z: the transform of length ``n`` as a convolution, done with FFTs of a
2-3-5-7-smooth length ``m >= 2n - 1``.
Twiddles and chirps are computed on the device (in float64 where it has it; the chirp's angles
reduced exactly in integers, ``k*k mod 2n``) once per (context, length, dtype) and kept; nothing
is copied between host and device.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray

from ._codegen import DEFAULT_CONFIG, launch
from ._fft_kernels import (
    UNROLLED,
    bluestein_kernel,
    butterfly_pass,
    filter_fill_kernel,
    hermitian_kernel,
    looped_pass,
    roots_kernel,
)
from ._fft_vendor import vendor_transform
from ._operands import check_dtype

__all__ = ["fft_axis", "hermitian_extend", "radices", "MAX_DIRECT_RADIX"]

# a prime factor up to this runs as one radix-p pass (p terms per output, as cheap as Bluestein's
# three FFTs of at least 2n points up to here); larger ones go through Bluestein
MAX_DIRECT_RADIX = 61


def radices(n: int) -> "list[int] | None":
    """The Stockham passes of length ``n`` (8s, then a 4 or a 2, then odd primes; ``[1]`` for
    n = 1), or None when a prime factor is above :data:`MAX_DIRECT_RADIX` (Bluestein's case)."""
    if n == 1:
        return [1]
    out = []
    while n % 8 == 0:
        out.append(8)
        n //= 8
    if n % 2 == 0:
        out.append(n & -n)              # what is left of 2s: one 4 or one 2
        n //= n & -n
    p = 3
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 2
    if n > 1:
        out.append(n)
    return out if max(out) <= MAX_DIRECT_RADIX else None


# (context, kind, length, dtype) -> uploaded table; small, so kept for the process (bounded)
_tables: dict = {}
_tables_lock = threading.Lock()


def _table(context: Any, kind: str, n: int, dtype: np.dtype, make: Any) -> DeviceArray:
    key = (id(context), kind, n, dtype.str)
    hit = _tables.get(key)
    if hit is not None and hit[0] is context:
        return hit[1]
    table = make()
    with _tables_lock:
        if len(_tables) > 256:
            _tables.clear()
        _tables[key] = (context, table)
    return table


def _roots(context: Any, device: Any, count: int, d: int, sign: int, square: bool, real: np.dtype) -> DeviceArray:
    """``exp(sign * 2 pi i * r / d)`` for k < count, r = k or (with ``square``) k*k mod d, as
    interleaved ``real`` pairs, computed on the device (angles in float64 where it has them)."""
    table = DeviceArray((2 * count,), real, context)
    calc = np.dtype(np.float64) if getattr(device, "fp64", True) else np.dtype(np.float32)
    launch(roots_kernel(real, calc), device, DEFAULT_CONFIG,
           (table, np.int64(count), np.int64(d), np.int64(sign), np.int64(square)))
    return table


def _twiddles(a: DeviceArray, n: int, real: np.dtype) -> DeviceArray:
    """``exp(-2 pi i k / n)`` for k < n."""
    return _table(a.context, "twiddles", n, real, lambda: _roots(a.context, a.device, n, n, -1, False, real))


def _chirp(a: DeviceArray, n: int, sign: int, real: np.dtype) -> DeviceArray:
    """``exp(sign * pi i k^2 / n)`` for k < n (k^2 reduced mod 2n exactly, in integers)."""
    return _table(a.context, f"chirp{sign}", n, real, lambda: _roots(a.context, a.device, n, 2 * n, sign, True, real))


def _bluestein_length(n: int) -> int:
    """The convolution's length: the smallest 2-3-5-7-smooth number of at least ``2n - 1`` points
    (all of its passes unrolled butterflies; up to about half the work of the next power of two)."""
    m = 2 * n - 1
    while True:
        rest = m
        for p in (2, 3, 5, 7):
            while rest % p == 0:
                rest //= p
        if rest == 1:
            return m
        m += 1


def _filter(a: DeviceArray, n: int, sign: int) -> DeviceArray:
    """The transformed Bluestein filter: FFT_m of conj(chirp) at k and m - k (|k| < n), made on
    the device with the same FFT the convolution uses."""
    m = _bluestein_length(n)
    real = _real_of(a.dtype)

    def make() -> DeviceArray:
        b = DeviceArray((m,), a.dtype, a.context)
        idx, index = _index_type(b, m)
        launch(filter_fill_kernel(real, idx), a.device, DEFAULT_CONFIG,
               (_floats(b), _chirp(a, n, sign, real), index(m), index(n), index(m)))
        return _stockham(b, 1, m, 1, -1, 1.0)
    return _table(a.context, f"filter{sign}", n, real, make)


def _floats(a: DeviceArray) -> DeviceArray:
    """``a``'s elements as a flat run of their interleaved float parts (same memory)."""
    return a.reshape(-1).view(_real_of(a.dtype))


def _real_of(complex_dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if complex_dt == np.complex64 else np.dtype(np.float64)


def _index_type(a: DeviceArray, elements: int) -> "tuple[str, type]":
    """uint32 indices where every float of the operands fits them (the fast case), else int64."""
    return ("uint32", np.uint32) if 2 * max(elements, a.size) < 2 ** 32 else ("int64", np.int64)


def _stockham(a: DeviceArray, outer: int, n: int, inner: int, sign: int, scale: float) -> DeviceArray:
    """The length-``n`` transforms of ``a`` (C-contiguous complex, ``outer * n * inner`` elements)
    by the mixed-radix passes; a new array of ``a``'s shape."""
    passes = radices(n)
    assert passes is not None
    real = _real_of(a.dtype)
    idx, index = _index_type(a, a.size)
    tw = _twiddles(a, n, real)
    out = DeviceArray(a.shape, a.dtype, a.context)
    spare = DeviceArray(a.shape, a.dtype, a.context) if len(passes) > 1 else None
    src, ns = a, 1
    for i, radix in enumerate(passes):
        dst = out if (len(passes) - 1 - i) % 2 == 0 else spare
        assert dst is not None
        factor = real.type(scale if i == len(passes) - 1 else 1.0)
        if radix in UNROLLED:
            launch(butterfly_pass(radix, sign > 0, real, idx), a.device, DEFAULT_CONFIG,
                   (_floats(dst), _floats(src), tw, index(outer * (n // radix) * inner), index(n), index(ns),
                    index(inner), factor))
        else:                            # 1 (a copy times the scale) and primes above UNROLLED
            launch(looped_pass(real, idx), a.device, DEFAULT_CONFIG,
                   (_floats(dst), _floats(src), tw, index(outer * n * inner), index(n), index(radix), index(ns),
                    index(inner), real.type(-sign), factor))
        src, ns = dst, ns * radix
    return out


def _bluestein(a: DeviceArray, outer: int, n: int, inner: int, sign: int, scale: float) -> DeviceArray:
    real = _real_of(a.dtype)
    m = _bluestein_length(n)
    idx, index = _index_type(a, outer * m * inner)
    chirp = _chirp(a, n, sign, real)
    filt = _floats(_filter(a, n, sign))
    work = DeviceArray((outer * m * inner,), a.dtype, a.context)
    total = index(outer * m * inner)
    launch(bluestein_kernel("chirp_in", real, idx), a.device, DEFAULT_CONFIG,
           (_floats(work), _floats(a), chirp, total, index(n), index(m), index(inner)))
    spectrum = _stockham(work, outer, m, inner, -1, 1.0)
    launch(bluestein_kernel("filter", real, idx), a.device, DEFAULT_CONFIG,
           (_floats(work), _floats(spectrum), filt, total, index(m), index(inner)))
    convolved = _stockham(work, outer, m, inner, 1, 1.0)
    out = DeviceArray(a.shape, a.dtype, a.context)
    launch(bluestein_kernel("chirp_out", real, idx), a.device, DEFAULT_CONFIG,
           (_floats(out), _floats(convolved), chirp, index(outer * n * inner), index(n), index(m), index(inner),
            real.type(scale / m)))
    return out


def _layout(a: DeviceArray, axis: int, what: str) -> tuple[int, int, int]:
    if type(a) is not DeviceArray or a.dtype not in (np.complex64, np.complex128):
        raise TypeError(f"{what} takes a C-contiguous complex64/complex128 device array (not a view), got "
                        f"{type(a).__name__} of {a.dtype}")
    check_dtype(a.dtype, what, "operand", a.device)
    outer = int(np.prod(a.shape[:axis], dtype=np.int64))
    inner = int(np.prod(a.shape[axis + 1:], dtype=np.int64))
    return outer, a.shape[axis], inner


def fft_axis(a: DeviceArray, axis: int, inverse: bool, scale: float) -> DeviceArray:
    """The unnormalised DFT of ``a`` along ``axis`` (``exp(-2 pi i jk/n)``, or ``+`` with
    ``inverse``) times ``scale``: a new array of ``a``'s shape and dtype."""
    outer, n, inner = _layout(a, axis, "fft_axis")
    if a.size == 0:
        return DeviceArray(a.shape, a.dtype, a.context)
    vendor = vendor_transform("inverse" if inverse else "forward", a, axis, n, a.shape, a.dtype, scale)
    if vendor is not None:
        return vendor
    sign = 1 if inverse else -1
    if radices(n) is not None:
        return _stockham(a, outer, n, inner, sign, scale)
    return _bluestein(a, outer, n, inner, sign, scale)


def hermitian_extend(a: DeviceArray, axis: int, n: int) -> DeviceArray:
    """The length-``n`` spectrum along ``axis`` whose first ``n // 2 + 1`` points are ``a``'s
    (``a.shape[axis]`` must be that) and the rest their mirrored conjugates."""
    outer, m, inner = _layout(a, axis, "hermitian_extend")
    if m != n // 2 + 1:
        raise ValueError(f"hermitian_extend: the axis has {m} points, {n // 2 + 1} expected for n={n}")
    shape = a.shape[:axis] + (n,) + a.shape[axis + 1:]
    out = DeviceArray(shape, a.dtype, a.context)
    if out.size:
        real = _real_of(a.dtype)
        idx, index = _index_type(out, out.size)
        launch(hermitian_kernel(real, idx), a.device, DEFAULT_CONFIG,
               (_floats(out), _floats(a), index(outer * n * inner), index(n), index(m), index(inner)))
    return out
