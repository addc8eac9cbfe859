"""The kernels of :mod:`._fft`, as generated ``@kernel`` source: complex numbers are read and
written as their interleaved float parts, the transformed axis sits between an ``outer`` and an
``inner`` batch (element ``(b, i, c)`` of an ``(outer, n, inner)`` array is float pair
``(b * n + i) * inner + c``), and indices are ``idx`` (uint32 where the array's floats fit it:
unsigned division, no Python floor corrections; int64 beyond).

A Stockham pass of radix ``R`` with ``ns`` the length of the transforms done so far: the work item
of input column ``j`` (``k = j % ns``) reads the ``R`` inputs ``j + r * n/R``, multiplies input
``r`` by the twiddle ``w^(r * k * n/(ns*R))`` (``w = exp(-2 pi i / n)``, from the table), takes
their length-``R`` DFT and writes output ``q`` at ``(j - k) * R + q * ns + k``. Radices up to
:data:`UNROLLED` are straight-line code whose DFT constants are literals (0, +-1, +-i add and
swap, nothing multiplied); larger prime radices loop over a runtime radix with one table
twiddle per term.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ._codegen import kernel_from_source, np_type

__all__ = ["UNROLLED", "butterfly_pass", "looped_pass", "bluestein_kernel", "hermitian_kernel", "real_kernel",
           "roots_kernel", "filter_fill_kernel"]

UNROLLED = (2, 3, 4, 5, 7, 8)

_HEAD = '''def {kname}(dst, src, tw, total, n, ns, inner, scale):
    for t in range(total):
        u = {idx}(t)
        b_in = u % inner
        rest = u // inner
        m = n // {radix}
        j = rest % m
        b_out = rest // m
        k = j % ns
        stride = m // ns
        at = (b_out * n + j) * inner + b_in
        to = (b_out * n + (j - k) * {radix} + k) * inner + b_in
        hop = m * inner
        out_hop = ns * inner
'''


def _rotation(r: int, q: int, radix: int, inverse: bool, real: str) -> "tuple[str, str]":
    """The parts of ``x{r} * exp(-+2 pi i r q / radix)`` as source (exact for 1, -1, i, -i)."""
    p = (r * q) % radix
    xr, xi = f"x{r}r", f"x{r}i"
    if p == 0:
        return xr, xi
    if 2 * p == radix:
        return f"-{xr}", f"-{xi}"
    quarter = 4 * p == radix
    three_quarters = 4 * p == 3 * radix
    if quarter or three_quarters:          # times -i (forward quarter turn) or +i
        times_minus_i = quarter != inverse
        return (xi, f"-{xr}") if times_minus_i else (f"-{xi}", xr)
    angle = (2.0 if inverse else -2.0) * math.pi * p / radix
    c, s = f"{real}({math.cos(angle)!r})", f"{real}({math.sin(angle)!r})"
    return f"({xr} * {c} - {xi} * {s})", f"({xr} * {s} + {xi} * {c})"


@functools.lru_cache(maxsize=None)          # (a few radices x directions x dtypes: the source is made once)
def butterfly_pass(radix: int, inverse: bool, real: np.dtype, idx: str):
    """The pass of a radix in :data:`UNROLLED`: one work item per column, ``radix`` outputs each."""
    rt = np_type(real)
    kname = f"gnp_fft_r{radix}_{'inv' if inverse else 'fwd'}_{real.name}_{idx}"
    lines = [_HEAD.format(kname=kname, idx=f"np.{idx}", radix=radix)]
    flip = "-" if inverse else ""
    for r in range(radix):
        lines.append(f"        a = 2 * (at + {r} * hop)\n" if r else "        a = 2 * at\n")
        if r == 0:
            lines.append("        x0r = src[a]\n        x0i = src[a + 1]\n")
            continue
        lines.append(f"        e = 2 * ({r} * k * stride)\n"
                     f"        wr = tw[e]\n        wi = {flip}tw[e + 1]\n"
                     f"        x{r}r = src[a] * wr - src[a + 1] * wi\n"
                     f"        x{r}i = src[a] * wi + src[a + 1] * wr\n")
    for q in range(radix):
        parts = [_rotation(r, q, radix, inverse, rt) for r in range(radix)]
        yr = " + ".join(p[0] for p in parts).replace("+ -", "- ")
        yi = " + ".join(p[1] for p in parts).replace("+ -", "- ")
        lines.append(f"        b = 2 * (to + {q} * out_hop)\n" if q else "        b = 2 * to\n")
        lines.append(f"        dst[b] = ({yr}) * scale\n        dst[b + 1] = ({yi}) * scale\n")
    return kernel_from_source(kname, "".join(lines))


# any radix (the primes above UNROLLED): output o = (jhi, q, k) sums its radix inputs, each times
# w^(r * (n/(ns*radix)) * (k + q*ns)) from the table (flip = -1: the conjugate, for the inverse)
_LOOPED = '''def {kname}(dst, src, tw, total, n, radix, ns, inner, flip, scale):
    for t in range(total):
        u = {idx}(t)
        b_in = u % inner
        rest = u // inner
        o = rest % n
        base = rest - o
        k = o % ns
        oq = o // ns
        q = oq % radix
        j = (oq // radix) * ns + k
        m = n // radix
        step = (m // ns) * (k + q * ns)
        re = {real}(0)
        im = {real}(0)
        e = {idx}(0)
        s = (base + j) * inner + b_in
        hop = m * inner
        for r in range(radix):
            xr = src[2 * s]
            xi = src[2 * s + 1]
            wr = tw[2 * e]
            wi = flip * tw[2 * e + 1]
            re += xr * wr - xi * wi
            im += xr * wi + xi * wr
            s += hop
            e += step
            if e >= n:
                e -= n
        dst[2 * u] = re * scale
        dst[2 * u + 1] = im * scale
'''

# Bluestein, step 1: x[k] * chirp[k] for k < n, zeros up to m (the convolution's length)
_CHIRP_IN = '''def {kname}(dst, src, chirp, total, n, m, inner):
    for t in range(total):
        u = {idx}(t)
        b_in = u % inner
        rest = u // inner
        o = rest % m
        b_out = rest // m
        if o < n:
            s = 2 * ((b_out * n + o) * inner + b_in)
            xr = src[s]
            xi = src[s + 1]
            cr = chirp[2 * o]
            ci = chirp[2 * o + 1]
            dst[2 * u] = xr * cr - xi * ci
            dst[2 * u + 1] = xr * ci + xi * cr
        else:
            dst[2 * u] = {real}(0)
            dst[2 * u + 1] = {real}(0)
'''

# Bluestein, step 2: the transformed sequence times the transformed filter (one per position)
_FILTER = '''def {kname}(dst, src, filt, total, m, inner):
    for t in range(total):
        u = {idx}(t)
        o = (u // inner) % m
        xr = src[2 * u]
        xi = src[2 * u + 1]
        fr = filt[2 * o]
        fi = filt[2 * o + 1]
        dst[2 * u] = xr * fr - xi * fi
        dst[2 * u + 1] = xr * fi + xi * fr
'''

# Bluestein, step 3: the first n points of the convolution times the chirp (and the scale)
_CHIRP_OUT = '''def {kname}(dst, src, chirp, total, n, m, inner, scale):
    for t in range(total):
        u = {idx}(t)
        b_in = u % inner
        rest = u // inner
        o = rest % n
        b_out = rest // n
        s = 2 * ((b_out * m + o) * inner + b_in)
        xr = src[s]
        xi = src[s + 1]
        cr = chirp[2 * o]
        ci = chirp[2 * o + 1]
        dst[2 * u] = (xr * cr - xi * ci) * scale
        dst[2 * u + 1] = (xr * ci + xi * cr) * scale
'''

# irfft's full spectrum of length n from its first m = n // 2 + 1 points: X[n - k] = conj(X[k])
_HERMITIAN = '''def {kname}(dst, src, total, n, m, inner):
    for t in range(total):
        u = {idx}(t)
        b_in = u % inner
        rest = u // inner
        o = rest % n
        b_out = rest // n
        if o < m:
            s = 2 * ((b_out * m + o) * inner + b_in)
            dst[2 * u] = src[s]
            dst[2 * u + 1] = src[s + 1]
        else:
            s = 2 * ((b_out * m + n - o) * inner + b_in)
            dst[2 * u] = src[s]
            dst[2 * u + 1] = -src[s + 1]
'''


# rfft of even n = 2h: the real signal's pairs (x[2j], x[2j+1]) as the complex z[j] (inner > 1)
_PACK = '''def {kname}(dst, src, total, h, inner):
    for t in range(total):
        u = {idx}(t)
        b_in = u % inner
        rest = u // inner
        j = rest % h
        b_out = rest // h
        s = (b_out * 2 * h + 2 * j) * inner + b_in
        dst[2 * u] = src[s]
        dst[2 * u + 1] = src[s + inner]
'''

# rfft of even n = 2h from Z = FFT_h(z): with Zc = conj(Z[(h - k) % h]), the even samples'
# transform E = (Z[k] + Zc) / 2 and the odd ones' O = (Z[k] - Zc) / 2i give X[k] = E + w^k O
_RFFT_POST = '''def {kname}(dst, src, tw, total, h, inner, scale):
    for t in range(total):
        u = {idx}(t)
        b_in = u % inner
        rest = u // inner
        k = rest % (h + 1)
        b_out = rest // (h + 1)
        k1 = k
        if k == h:
            k1 = k - h
        k2 = h - k
        if k == 0:
            k2 = k
        a = 2 * ((b_out * h + k1) * inner + b_in)
        c = 2 * ((b_out * h + k2) * inner + b_in)
        zr = src[a]
        zi = src[a + 1]
        cr = src[c]
        ci = -src[c + 1]
        er = (zr + cr) * {real}(0.5)
        ei = (zi + ci) * {real}(0.5)
        odd_r = (zi - ci) * {real}(0.5)
        odd_i = (cr - zr) * {real}(0.5)
        wr = tw[2 * k]
        wi = tw[2 * k + 1]
        dst[2 * u] = (er + wr * odd_r - wi * odd_i) * scale
        dst[2 * u + 1] = (ei + wr * odd_i + wi * odd_r) * scale
'''

# irfft of even n = 2h: Z[k] = E + i O with E = X[k] + conj(X[h - k]), O = (X[k] - conj(X[h - k])) * conj(w^k)
# (twice rfft's E and O, so the inverse FFT_h of Z is n times the signal's pairs); the imaginary parts of
# X[0] and X[h] are ignored, as numpy's
_IRFFT_PRE = '''def {kname}(dst, src, tw, total, h, inner):
    for t in range(total):
        u = {idx}(t)
        b_in = u % inner
        rest = u // inner
        k = rest % h
        b_out = rest // h
        a = 2 * ((b_out * (h + 1) + k) * inner + b_in)
        c = 2 * ((b_out * (h + 1) + h - k) * inner + b_in)
        xr = src[a]
        xi = src[a + 1]
        yr = src[c]
        yi = -src[c + 1]
        if k == 0:
            xi = {real}(0)
            yi = {real}(0)
        er = xr + yr
        ei = xi + yi
        dr = xr - yr
        di = xi - yi
        wr = tw[2 * k]
        wi = -tw[2 * k + 1]
        odd_r = dr * wr - di * wi
        odd_i = dr * wi + di * wr
        dst[2 * u] = er - odd_i
        dst[2 * u + 1] = ei + odd_r
'''

# irfft of even n: the complex z[j]'s parts as the real samples x[2j], x[2j+1] (inner > 1)
_UNPACK = '''def {kname}(dst, src, total, h, inner):
    for t in range(total):
        u = {idx}(t)
        b_in = u % inner
        rest = u // inner
        i = rest % (2 * h)
        b_out = rest // (2 * h)
        dst[u] = src[2 * ((b_out * h + i // 2) * inner + b_in) + i % 2]
'''


# the tables: exp(sign * 2 pi i * r / d) with r = k (twiddles, d = n) or k*k mod d (Bluestein's
# chirp, d = 2n: the angle pi k^2 / n reduced exactly in integers), computed in {calc}
_ROOTS = '''def {kname}(dst, total, d, sign, square):
    for t in range(total):
        k = np.int64(t)
        r = k
        if square != 0:
            r = (k * k) % d
        a = {calc}(sign) * ({calc}(6.283185307179586) * {calc}(r) / {calc}(d))
        dst[2 * t] = {real}(math.cos(a))
        dst[2 * t + 1] = {real}(math.sin(a))
'''

# Bluestein's filter before its transform: conj(chirp[|j|]) at j and m - j for |j| < n, zeros between
_FILTER_FILL = '''def {kname}(dst, chirp, total, n, m):
    for t in range(total):
        j = {idx}(t)
        if j < n or j > m - n:
            k = j
            if j >= n:
                k = m - j
            dst[2 * j] = chirp[2 * k]
            dst[2 * j + 1] = -chirp[2 * k + 1]
        else:
            dst[2 * j] = {real}(0)
            dst[2 * j + 1] = {real}(0)
'''

_SOURCES = {"looped": _LOOPED, "chirp_in": _CHIRP_IN, "filter": _FILTER, "chirp_out": _CHIRP_OUT,
            "hermitian": _HERMITIAN, "pack": _PACK, "rfft_post": _RFFT_POST, "irfft_pre": _IRFFT_PRE,
            "unpack": _UNPACK, "filter_fill": _FILTER_FILL}


def _from_table(which: str, real: np.dtype, idx: str):
    kname = f"gnp_fft_{which}_{real.name}_{idx}"
    return kernel_from_source(kname, _SOURCES[which].format(kname=kname, real=np_type(real), idx=f"np.{idx}"))


def roots_kernel(real: np.dtype, calc: np.dtype):
    """The twiddle and chirp tables' kernel: angles in ``calc`` (float64 where the device has it)."""
    kname = f"gnp_fft_roots_{real.name}_{calc.name}"
    return kernel_from_source(kname, _ROOTS.format(kname=kname, real=np_type(real), calc=np_type(calc)))


def filter_fill_kernel(real: np.dtype, idx: str):
    """Bluestein's filter from the chirp (before its transform)."""
    return _from_table("filter_fill", real, idx)


def looped_pass(real: np.dtype, idx: str):
    """The pass of any radix (a runtime argument), one work item per output."""
    return _from_table("looped", real, idx)


def bluestein_kernel(step: str, real: np.dtype, idx: str):
    """Bluestein's ``"chirp_in"``, ``"filter"`` or ``"chirp_out"`` step."""
    return _from_table(step, real, idx)


def hermitian_kernel(real: np.dtype, idx: str):
    """The full Hermitian spectrum from its first half (irfft of odd lengths)."""
    return _from_table("hermitian", real, idx)


def real_kernel(step: str, real: np.dtype, idx: str):
    """A step of the real transforms of even length: ``"pack"``, ``"rfft_post"``, ``"irfft_pre"``,
    ``"unpack"``."""
    return _from_table(step, real, idx)
