"""Counter-based random numbers, the same on the host and in every kernel: ``gpu.uniform``,
``gpu.normal``, ``gpu.randint``.

Each draw is a pure function of ``(seed, counter)``: Philox-4x32-10 (Salmon et al., "Parallel
Random Numbers: As Easy as 1, 2, 3", SC11) with the 64-bit ``seed`` as its key and the 64-bit
``counter`` as its counter. Nothing is stored between calls, so any work item can draw any
number, and a kernel's draws can be recomputed on the host from plain Python or numpy arrays
of counters. The kernel side is the ``random_*`` prelude pieces of pygpgpu-translate, which
implement exactly the arithmetic below (README, Writing kernels, states the contract).

The mapping, fixed so host and device agree:

* Philox input: counter words ``(counter & 0xFFFFFFFF, counter >> 32, 0, 0)``, key words
  ``(seed & 0xFFFFFFFF, seed >> 32)``; seeds and counters are taken modulo 2**64 (a negative
  one is its two's complement). Output: four 32-bit words ``x0 x1 x2 x3``.
* ``uniform`` float32: ``(x0 >> 8) * 2**-24``; float64: ``(((x0 << 32) | x1) >> 11) * 2**-53``.
  Both exact, in [0, 1), bit-identical everywhere.
* ``normal`` (Box-Muller, one output per counter): float32 ``u1 = ((x0 >> 8) | 1) * 2**-24``
  (odd multiples of 2**-24: never 0, so the log is finite; at most 5.8 sigma),
  ``u2 = (x1 >> 8) * 2**-24``, ``z = sqrt(-2 * log(u1)) * cos(6.2831855 * u2)`` computed in
  float32; float64 the same with ``u1 = ((((x0 << 32) | x1) >> 11) | 1) * 2**-53`` and
  ``u2 = (((x2 << 32) | x3) >> 11) * 2**-53``. ``log`` and ``cos`` come from each platform's
  math library, so host and device agree to a few ulp (not bit for bit).
* ``randint(seed, counter, low, high)``: ``low + mulhi64(r, high - low)`` where
  ``r = (x0 << 32) | x1`` and ``mulhi64`` is the high 64 bits of the 128-bit product (Lemire's
  multiply-shift without rejection: each value's probability is off by at most
  ``(high - low) / 2**64``). Bit-identical everywhere. ``high <= low`` is a ValueError here;
  a kernel returns ``low``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["philox4x32_10", "uniform", "normal", "randint", "PHILOX_M", "PHILOX_W"]

PHILOX_M = (0xD2511F53, 0xCD9E8D57)     # round multipliers
PHILOX_W = (0x9E3779B9, 0xBB67AE85)     # Weyl key increments (golden ratio, sqrt(3) - 1)
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def philox4x32_10(counter: Any, key: Any) -> tuple:
    """Philox-4x32-10 of four 32-bit counter words and two 32-bit key words, element-wise over
    numpy arrays: returns the four output words as uint32 arrays (or scalars).

    >>> [hex(int(w)) for w in philox4x32_10((0, 0, 0, 0), (0, 0))]
    ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
    """
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) & _M32 for c in counter)
    k0, k1 = (np.asarray(k, dtype=np.uint64) & _M32 for k in key)
    m0, m1 = np.uint64(PHILOX_M[0]), np.uint64(PHILOX_M[1])
    w0, w1 = np.uint64(PHILOX_W[0]), np.uint64(PHILOX_W[1])
    for r in range(10):
        if r:
            k0 = (k0 + w0) & _M32
            k1 = (k1 + w1) & _M32
        p0 = c0 * m0                       # 32 x 32 -> 64 bits: exact in uint64
        p1 = c2 * m1
        c0, c1, c2, c3 = ((p1 >> _S32) ^ c1 ^ k0, p1 & _M32, (p0 >> _S32) ^ c3 ^ k1, p0 & _M32)
    out = tuple(np.asarray(c, dtype=np.uint64).astype(np.uint32) for c in (c0, c1, c2, c3))
    return tuple(o[()] if o.ndim == 0 else o for o in out)


def _u64(x: Any, what: str) -> np.ndarray:
    """``x`` (Python ints, numpy integers or integer arrays) modulo 2**64 as uint64."""
    if isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype.kind == "b"):
        raise TypeError(f"gpu random numbers: {what} must be an integer, got a bool")
    if isinstance(x, (int, np.integer)):
        return np.asarray(int(x) & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64)
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        raise TypeError(f"gpu random numbers: {what} must be an integer or an array of integers, got {a.dtype}"
                        if a.dtype != object else f"gpu random numbers: {what} must be an integer, got {type(x).__name__}")
    return a.astype(np.int64).view(np.uint64) if a.dtype.kind == "i" else a.astype(np.uint64)


def _words(seed: Any, counter: Any) -> tuple:
    s, c = _u64(seed, "seed"), _u64(counter, "counter")
    return philox4x32_10((c & _M32, c >> _S32, 0, 0), (s & _M32, s >> _S32))


def _float_dtype(dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"gpu random numbers: dtype must be np.float32 or np.float64, got {dt}")
    return dt


def _scalar(a: np.ndarray) -> Any:
    return a[()] if a.ndim == 0 else a


def _u53(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """The top 53 bits of the 64-bit word ``hi:lo``."""
    return ((hi.astype(np.uint64) << _S32) | lo.astype(np.uint64)) >> np.uint64(11)


def uniform(seed: Any, counter: Any, dtype: Any = np.float32) -> Any:
    """A uniform float in [0, 1) determined by ``(seed, counter)``: float32 (``dtype=np.float64``
    for doubles; in a kernel, the kernel's default float). ``counter`` may be an integer array:
    one draw per element. Bit-identical to the same call in a kernel on every backend."""
    dt = _float_dtype(dtype)
    x0, x1, _x2, _x3 = (np.asarray(w) for w in _words(seed, counter))
    if dt == np.float32:
        return _scalar((x0 >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24))
    return _scalar(_u53(x0, x1).astype(np.float64) * 2.0 ** -53)


def normal(seed: Any, counter: Any, dtype: Any = np.float32) -> Any:
    """A standard normal float (mean 0, variance 1) determined by ``(seed, counter)``
    (Box-Muller). Agrees with the same call in a kernel to a few ulp: the logarithm and cosine
    come from each platform's math library."""
    dt = _float_dtype(dtype)
    x0, x1, x2, x3 = (np.asarray(w) for w in _words(seed, counter))
    with np.errstate(all="ignore"):
        if dt == np.float32:
            u1 = ((x0 >> np.uint32(8)) | np.uint32(1)).astype(np.float32) * np.float32(2.0 ** -24)
            u2 = (x1 >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)
            r = np.sqrt(np.float32(-2.0) * np.log(u1))
            return _scalar(r * np.cos(np.float32(6.2831855) * u2))
        u1 = (_u53(x0, x1) | np.uint64(1)).astype(np.float64) * 2.0 ** -53
        u2 = _u53(x2, x3).astype(np.float64) * 2.0 ** -53
        return _scalar(np.sqrt(-2.0 * np.log(u1)) * np.cos(6.283185307179586 * u2))


def _mulhi64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """High 64 bits of the 128-bit product of uint64 arrays, from 32-bit limbs (no overflow)."""
    a_lo, a_hi, b_lo, b_hi = a & _M32, a >> _S32, b & _M32, b >> _S32
    t = a_hi * b_lo + ((a_lo * b_lo) >> _S32)
    w1 = (t & _M32) + a_lo * b_hi
    return a_hi * b_hi + (t >> _S32) + (w1 >> _S32)


def randint(seed: Any, counter: Any, low: Any, high: Any) -> Any:
    """An integer in [low, high) determined by ``(seed, counter)``, as int64 (in a kernel: int32,
    or int64 when ``low`` or ``high`` is 64-bit). Bit-identical to the kernel's draw. ``low`` and
    ``high`` may be arrays (broadcast with ``counter``)."""
    lo = np.asarray(low)
    hi = np.asarray(high)
    for v, what in ((lo, "low"), (hi, "high")):
        if v.dtype.kind not in "iu" or v.dtype == object:
            raise TypeError(f"gpu.randint: {what} must be an integer, got {v.dtype}")
    lo64, hi64 = lo.astype(np.int64), hi.astype(np.int64)
    if np.any(hi64 <= lo64):
        raise ValueError(f"gpu.randint: empty range [{low}, {high}): high must be greater than low")
    x0, x1, _x2, _x3 = (np.asarray(w) for w in _words(seed, counter))
    r = (x0.astype(np.uint64) << _S32) | x1.astype(np.uint64)
    n = hi64.view(np.uint64) - lo64.view(np.uint64)      # wraps: exact for every range inside int64
    out = (lo64.view(np.uint64) + _mulhi64(r, n)).view(np.int64)
    return _scalar(np.asarray(out))
