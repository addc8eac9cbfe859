"""Complex FFTs along one axis of a C-contiguous complex device array, in our own kernels (every
backend): ``gnp.fft`` (pygpgpu-core) prepares the operand (dtype, length along the axis) and
calls :func:`fft_axis`; :func:`hermitian_extend` builds the full spectrum ``irfft`` transforms.

The array is seen as ``(outer, n, inner)`` with the transformed axis in the middle, so no
transpose is needed for any axis. Complex elements are read and written as their interleaved
float parts (``a.view(float32)``), so the kernels are plain float arithmetic.

Lengths whose prime factors are all at most :data:`MAX_DIRECT_RADIX` run as a mixed-radix
Stockham FFT (radix 4, 2, then each odd prime factor): one kernel launch per factor, each work
item computing one output of that pass as a sum of ``radix`` inputs, each times one twiddle
factor from a table of ``exp(-2 pi i k / n)``. Other lengths use Bluestein's chirp-z: the
transform of length ``n`` as a convolution, done with power-of-two FFTs of length ``m >= 2n - 1``.
Twiddles and chirps are computed on the host in float64 (exact integer angles, ``k*k mod 2n``)
and uploaded once per (context, length, dtype); the data itself never leaves the device.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray, asarray

from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch, np_type
from ._operands import check_dtype

__all__ = ["fft_axis", "hermitian_extend", "radices", "MAX_DIRECT_RADIX"]

# a prime factor up to this runs as one radix-p pass (p terms per output, as cheap as Bluestein's
# three power-of-two FFTs of about 4n points up to here); larger ones go through Bluestein
MAX_DIRECT_RADIX = 61

# one output of a Stockham pass: ``src`` holds the transforms of length ``ns`` done so far;
# output o = (jhi, q, k) with k < ns, q < radix combines the radix inputs j + r*(n/radix), each
# times w^(r * (n/(ns*radix)) * (k + q*ns)), w = exp(-2 pi i / n) from the table (flip = -1: its conjugate,
# the inverse transform)
_PASS = '''def {kname}(dst, src, tw, total, n, radix, ns, inner, flip, scale):
    for t in range(total):
        b_in = t % inner
        rest = t // inner
        o = rest % n
        base = rest - o
        k = o % ns
        q = (o // ns) % radix
        j = (o // (ns * radix)) * ns + k
        m = n // radix
        step = (n // (ns * radix)) * (k + q * ns)
        re = {real}(0)
        im = {real}(0)
        e = np.int64(0)
        for r in range(radix):
            s = ((base + j + r * m) * inner + b_in) * 2
            xr = src[s]
            xi = src[s + 1]
            wr = tw[2 * e]
            wi = flip * tw[2 * e + 1]
            re += xr * wr - xi * wi
            im += xr * wi + xi * wr
            e += step
            if e >= n:
                e -= n
        dst[2 * t] = re * scale
        dst[2 * t + 1] = im * scale
'''

# Bluestein, step 1: x[k] * chirp[k] for k < n, zeros up to m (the convolution's length)
_CHIRP_IN = '''def {kname}(dst, src, chirp, total, n, m, inner):
    for t in range(total):
        b_in = t % inner
        rest = t // inner
        o = rest % m
        b_out = rest // m
        if o < n:
            s = ((b_out * n + o) * inner + b_in) * 2
            xr = src[s]
            xi = src[s + 1]
            cr = chirp[2 * o]
            ci = chirp[2 * o + 1]
            dst[2 * t] = xr * cr - xi * ci
            dst[2 * t + 1] = xr * ci + xi * cr
        else:
            dst[2 * t] = {real}(0)
            dst[2 * t + 1] = {real}(0)
'''

# Bluestein, step 2: the transformed sequence times the transformed filter (one per position)
_FILTER = '''def {kname}(dst, src, filt, total, m, inner):
    for t in range(total):
        o = (t // inner) % m
        xr = src[2 * t]
        xi = src[2 * t + 1]
        fr = filt[2 * o]
        fi = filt[2 * o + 1]
        dst[2 * t] = xr * fr - xi * fi
        dst[2 * t + 1] = xr * fi + xi * fr
'''

# Bluestein, step 3: the first n points of the convolution times the chirp (and the scale)
_CHIRP_OUT = '''def {kname}(dst, src, chirp, total, n, m, inner, scale):
    for t in range(total):
        b_in = t % inner
        rest = t // inner
        o = rest % n
        b_out = rest // n
        s = ((b_out * m + o) * inner + b_in) * 2
        xr = src[s]
        xi = src[s + 1]
        cr = chirp[2 * o]
        ci = chirp[2 * o + 1]
        dst[2 * t] = (xr * cr - xi * ci) * scale
        dst[2 * t + 1] = (xr * ci + xi * cr) * scale
'''

# irfft's full spectrum of length n from its first m = n // 2 + 1 points: X[n - k] = conj(X[k])
_HERMITIAN = '''def {kname}(dst, src, total, n, m, inner):
    for t in range(total):
        b_in = t % inner
        rest = t // inner
        o = rest % n
        b_out = rest // n
        if o < m:
            s = ((b_out * m + o) * inner + b_in) * 2
            dst[2 * t] = src[s]
            dst[2 * t + 1] = src[s + 1]
        else:
            s = ((b_out * m + n - o) * inner + b_in) * 2
            dst[2 * t] = src[s]
            dst[2 * t + 1] = -src[s + 1]
'''

_SOURCES = {"pass": _PASS, "chirp_in": _CHIRP_IN, "filter": _FILTER, "chirp_out": _CHIRP_OUT,
            "hermitian": _HERMITIAN}


def _kernel(which: str, real: np.dtype):
    kname = f"gnp_fft_{which}_{real.name}"
    return kernel_from_source(kname, _SOURCES[which].format(kname=kname, real=np_type(real)))


def radices(n: int) -> "list[int] | None":
    """The Stockham passes of length ``n`` (4s, a 2, then odd primes; ``[1]`` for n = 1), or None
    when a prime factor is above :data:`MAX_DIRECT_RADIX` (Bluestein's case)."""
    if n == 1:
        return [1]
    out = []
    while n % 4 == 0:
        out.append(4)
        n //= 4
    if n % 2 == 0:
        out.append(2)
        n //= 2
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


def _twiddles(context: Any, n: int, real: np.dtype) -> DeviceArray:
    """``exp(-2 pi i k / n)`` for k < n, interleaved (re, im) in ``real``."""
    def make() -> DeviceArray:
        angle = (-2.0 * np.pi / n) * np.arange(n, dtype=np.float64)
        host = np.empty((n, 2), np.float64)
        host[:, 0], host[:, 1] = np.cos(angle), np.sin(angle)
        return asarray(host.astype(real).reshape(-1), device=context)
    return _table(context, "twiddles", n, real, make)


def _chirp(context: Any, n: int, sign: int, real: np.dtype) -> DeviceArray:
    """``exp(sign * pi i k^2 / n)`` for k < n (k^2 reduced mod 2n exactly, in integers)."""
    def make() -> DeviceArray:
        k = np.arange(n, dtype=np.int64)
        angle = (sign * np.pi / n) * ((k * k) % (2 * n)).astype(np.float64)
        host = np.empty((n, 2), np.float64)
        host[:, 0], host[:, 1] = np.cos(angle), np.sin(angle)
        return asarray(host.astype(real).reshape(-1), device=context)
    return _table(context, f"chirp{sign}", n, real, make)


def _bluestein_length(n: int) -> int:
    m = 1
    while m < 2 * n - 1:
        m *= 2
    return m


def _filter(context: Any, n: int, sign: int, complex_dt: np.dtype) -> DeviceArray:
    """The transformed Bluestein filter: FFT_m of conj(chirp) at k and m - k (|k| < n), made on
    the device with the same power-of-two FFT the convolution uses."""
    real = _real_of(complex_dt)
    m = _bluestein_length(n)

    def make() -> DeviceArray:
        k = np.arange(n, dtype=np.int64)
        angle = (-sign * np.pi / n) * ((k * k) % (2 * n)).astype(np.float64)
        b = np.zeros(m, np.complex128)
        b[:n] = np.cos(angle) + 1j * np.sin(angle)
        b[m - n + 1:] = b[1:n][::-1]
        return _stockham(asarray(b.astype(complex_dt), device=context), 1, m, 1, -1, 1.0)
    return _table(context, f"filter{sign}", n, real, make)


def _floats(a: DeviceArray) -> DeviceArray:
    """``a``'s elements as a flat run of their interleaved float parts (same memory)."""
    return a.reshape(-1).view(_real_of(a.dtype))


def _real_of(complex_dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if complex_dt == np.complex64 else np.dtype(np.float64)


def _stockham(a: DeviceArray, outer: int, n: int, inner: int, sign: int, scale: float) -> DeviceArray:
    """The length-``n`` transforms of ``a`` (C-contiguous complex, ``outer * n * inner`` elements)
    by the mixed-radix passes; a new array of ``a``'s shape."""
    passes = radices(n)
    assert passes is not None
    real = _real_of(a.dtype)
    kern = _kernel("pass", real)
    tw = _twiddles(a.context, n, real)
    out = DeviceArray(a.shape, a.dtype, a.context)
    spare = DeviceArray(a.shape, a.dtype, a.context) if len(passes) > 1 else None
    total = np.int64(outer * n * inner)
    src, ns = a, 1
    for i, radix in enumerate(passes):
        last = i == len(passes) - 1
        dst = out if (len(passes) - 1 - i) % 2 == 0 else spare
        assert dst is not None
        launch(kern, a.device, DEFAULT_CONFIG,
               (_floats(dst), _floats(src), tw, total, np.int64(n), np.int64(radix), np.int64(ns),
                np.int64(inner), real.type(-sign), real.type(scale if last else 1.0)))
        src, ns = dst, ns * radix
    return out


def _bluestein(a: DeviceArray, outer: int, n: int, inner: int, sign: int, scale: float) -> DeviceArray:
    real = _real_of(a.dtype)
    m = _bluestein_length(n)
    chirp = _chirp(a.context, n, sign, real)
    filt = _floats(_filter(a.context, n, sign, a.dtype))
    work = DeviceArray((outer * m * inner,), a.dtype, a.context)
    total = np.int64(outer * m * inner)
    launch(_kernel("chirp_in", real), a.device, DEFAULT_CONFIG,
           (_floats(work), _floats(a), chirp, total, np.int64(n), np.int64(m), np.int64(inner)))
    spectrum = _stockham(work, outer, m, inner, -1, 1.0)
    launch(_kernel("filter", real), a.device, DEFAULT_CONFIG,
           (_floats(spectrum), _floats(spectrum), filt, total, np.int64(m), np.int64(inner)))
    convolved = _stockham(spectrum, outer, m, inner, 1, 1.0)
    out = DeviceArray(a.shape, a.dtype, a.context)
    launch(_kernel("chirp_out", real), a.device, DEFAULT_CONFIG,
           (_floats(out), _floats(convolved), chirp, np.int64(outer * n * inner), np.int64(n), np.int64(m),
            np.int64(inner), real.type(scale / m)))
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
        launch(_kernel("hermitian", real), a.device, DEFAULT_CONFIG,
               (_floats(out), _floats(a), np.int64(outer * n * inner), np.int64(n), np.int64(m), np.int64(inner)))
    return out
