"""``gnp.random``'s Generator: numpy's ``Generator`` API over the Philox streams that kernels draw with
``gpu.uniform`` / ``gpu.normal`` / ``gpu.randint``.

A :class:`Generator` is a 64-bit ``seed`` and a 64-bit ``counter`` (the next unused counter,
0 for a new generator). A call that returns ``n`` elements gives flat (C-order) element ``i``
the draw at counter ``counter + i`` (modulo 2**64) and then advances ``counter`` by ``n``, so
that::

    rng = gnp.random.default_rng(seed)
    rng.random(n, dtype)        == gpu_random.uniform(seed, c + arange(n), dtype)
    rng.standard_normal(n, dt)  == gpu_random.normal(seed, c + arange(n), dt)
    rng.integers(lo, hi, n)     == gpu_random.randint(seed, c + arange(n), lo, hi)

with ``c`` the counter before the call: the same numbers a kernel computes with
``gpu.uniform(seed, c + i)``. ``uniform`` is ``low + (high - low) * random()`` and ``normal``
``loc + scale * standard_normal()`` in float64, as numpy's Generator computes them. Calls that
permute (``permutation``, ``shuffle``, ``choice`` without replacement) use one counter per
element of the population (see each method). The streams are not numpy's: numpy's Generator
uses PCG64 and other transformations (ziggurat normals, rejection-sampled integers).
"""
from __future__ import annotations

import operator
import secrets
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import asarray
from ._device import resolve_target
from ._dispatch import ops

__all__ = ["Generator", "default_rng", "not_implemented"]

_U64 = 1 << 64
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _shape(size: Any, what: str) -> tuple:
    if size is None:
        return ()
    try:
        dims: "tuple[int, ...]" = (operator.index(size),)
    except TypeError:
        try:
            dims = tuple(operator.index(d) for d in size)
        except TypeError:
            raise TypeError(f"gnp.random.{what}: size must be None, an integer or a tuple of integers, "
                            f"got {size!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"gnp.random.{what}: negative dimensions are not allowed (size={size!r})")
    return dims


def _float_dtype(dtype: Any, what: str) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"gnp.random.{what}: Unsupported dtype {dt} (use np.float32 or np.float64)")
    return dt


class Generator:
    """Random arrays on a device from Philox-4x32-10 keyed by ``seed``; see the module doc for
    which counter each element uses. ``device``: where the arrays are made (default device when
    None). Use :func:`default_rng` to make one."""

    def __init__(self, seed: int, device: Any = None, counter: int = 0) -> None:
        self._seed = operator.index(seed) % _U64
        self._counter = operator.index(counter) % _U64
        self._device = device

    @property
    def seed(self) -> int:
        """The Philox key: ``gpu.uniform(seed, counter)`` in a kernel draws from this stream."""
        return self._seed

    @property
    def counter(self) -> int:
        """The counter the next draw uses (each call advances it by the counters it used)."""
        return self._counter

    def __repr__(self) -> str:
        return f"Generator(Philox seed={self._seed}, counter={self._counter})"

    def _advance(self, n: int) -> int:
        c = self._counter
        self._counter = (c + n) % _U64
        return c

    def _draws(self, kind: str, shape: tuple, dtype: Any, low: int = 0, high: int = 1) -> DeviceArray:
        n = int(np.prod(shape, dtype=np.int64))
        c = self._advance(n)
        return ops().random_draws(kind, shape, dtype, self._device, self._seed, c, low, high)

    def _operand(self, x: Any) -> Any:
        """A device array or host array parameter (loc, scale, low, high): Python scalars stay."""
        if isinstance(x, DeviceArray):
            return x
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return float(x)           # numpy converts the parameters to double first
        a = np.asarray(x, dtype=np.float64)
        return float(a) if a.ndim == 0 else asarray(a, device=self._device)

    def _shape_of(self, size: Any, params: tuple, what: str) -> tuple:
        if size is not None:
            return _shape(size, what)
        return np.broadcast_shapes(*(np.shape(p) if not isinstance(p, DeviceArray) else p.shape for p in params))

    @staticmethod
    def _into(out: Any, result: DeviceArray, size: Any, dt: np.dtype, what: str) -> DeviceArray:
        if out is None:
            return result
        if not isinstance(out, DeviceArray):
            raise TypeError(f"gnp.random.{what}: out must be a device array, got {type(out).__name__}")
        if out.dtype != dt:
            raise TypeError(f"gnp.random.{what}: Supplied output array has dtype {out.dtype}, which is not the "
                            f"requested dtype {dt}")
        out[...] = result
        return out

    def _out_shape(self, out: Any, size: Any, what: str) -> tuple:
        if out is None:
            return _shape(size, what)
        shape = tuple(out.shape)
        if size is not None and _shape(size, what) != shape:
            raise ValueError(f"gnp.random.{what}: size must match out.shape when used together "
                             f"(size={size!r}, out.shape={shape})")
        return shape

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> DeviceArray:
        """Floats in [0, 1): element ``i`` is ``gpu.uniform(seed, counter + i, dtype)``."""
        dt = _float_dtype(dtype, "random")
        shape = self._out_shape(out, size, "random")
        return self._into(out, self._draws("uniform", shape, dt), size, dt, "random")

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> DeviceArray:
        """Standard normal floats: element ``i`` is ``gpu.normal(seed, counter + i, dtype)``."""
        dt = _float_dtype(dtype, "standard_normal")
        shape = self._out_shape(out, size, "standard_normal")
        return self._into(out, self._draws("normal", shape, dt), size, dt, "standard_normal")

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> DeviceArray:
        """float64 ``low + (high - low) * u`` with ``u`` the next ``random()`` draws (numpy's
        formula; ``low``/``high`` broadcast, device arrays included)."""
        lo, hi = self._operand(low), self._operand(high)
        shape = self._shape_of(size, (lo, hi), "uniform")
        span = hi - lo
        if not isinstance(span, DeviceArray) and not np.isfinite(span):
            raise OverflowError(f"gnp.random.uniform: high - low is not finite (low={low!r}, high={high!r})")
        u = self._draws("uniform", shape, np.float64)
        return lo + span * u

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> DeviceArray:
        """float64 ``loc + scale * z`` with ``z`` the next ``standard_normal()`` draws."""
        mu, sigma = self._operand(loc), self._operand(scale)
        negative = bool((sigma < 0).any()) if isinstance(sigma, DeviceArray) else sigma < 0
        if negative:
            raise ValueError("gnp.random.normal: scale < 0 (the standard deviation must be non-negative)")
        shape = self._shape_of(size, (mu, sigma), "normal")
        z = self._draws("normal", shape, np.float64)
        return mu + sigma * z

    def standard_exponential(self, size: Any = None, dtype: Any = np.float64, method: str = "inv",
                             out: Any = None) -> DeviceArray:
        """Exponential floats of rate 1 by inversion: element ``i`` is ``-log1p(-u)`` of
        ``u = gpu.uniform(seed, counter + i, dtype)`` (``method='zig'``, numpy's default, is
        accepted and also inverts; log1p is each platform's, so host and device agree to a few ulp)."""
        if method not in ("inv", "zig"):
            raise ValueError(f"gnp.random.standard_exponential: method must be 'inv' or 'zig', got {method!r}")
        dt = _float_dtype(dtype, "standard_exponential")
        shape = self._out_shape(out, size, "standard_exponential")
        e = -ops().ufunc_call("log1p", (-self._draws("uniform", shape, dt),))
        return self._into(out, e, size, dt, "standard_exponential")

    def exponential(self, scale: Any = 1.0, size: Any = None) -> DeviceArray:
        """float64 ``scale * standard_exponential()`` (numpy's formula)."""
        beta = self._operand(scale)
        negative = bool((beta < 0).any()) if isinstance(beta, DeviceArray) else beta < 0
        if negative:
            raise ValueError("gnp.random.exponential: scale < 0 (the scale must be non-negative)")
        shape = self._shape_of(size, (beta,), "exponential")
        return beta * self.standard_exponential(shape)

    def lognormal(self, mean: Any = 0.0, sigma: Any = 1.0, size: Any = None) -> DeviceArray:
        """float64 ``exp(normal(mean, sigma))``."""
        return ops().ufunc_call("exp", (self.normal(mean, sigma, size),))

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") and hasattr(np.random.Generator, name):
            return not_implemented(f"Generator.{name}")
        raise AttributeError(f"'Generator' object has no attribute {name!r}")

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> DeviceArray:
        """Integers in [low, high) (``endpoint=True``: [low, high]): element ``i`` is
        ``gpu.randint(seed, counter + i, low, high)``, Lemire's multiply-shift of a 64-bit
        Philox word without rejection (each value's probability is off by at most
        ``(high - low) / 2**64``; numpy rejects to be exactly uniform, which would make the
        counters an element uses depend on the values drawn). Scalar bounds inside int64."""
        if high is None:
            low, high = 0, low
        if isinstance(low, DeviceArray) or isinstance(high, DeviceArray) or np.ndim(low) or np.ndim(high):
            raise NotImplementedError("gnp.random.integers: array-valued low/high are not supported; draw with "
                                      "gpu.randint(seed, counter, low[i], high[i]) in a kernel")
        try:
            lo, hi = operator.index(low), operator.index(high)
        except TypeError:
            raise TypeError(f"gnp.random.integers: low and high must be integers, got {low!r} and {high!r}") from None
        dt = np.dtype(dtype)
        if dt.kind not in "iub":
            raise TypeError(f"gnp.random.integers: Unsupported dtype {dt} (an integer or bool dtype)")
        if endpoint:
            hi += 1
        if lo >= hi:
            raise ValueError(f"gnp.random.integers: {'low > high' if endpoint else 'low >= high'} "
                             f"(low={low}, high={high})")
        info_min, info_max = (0, 1) if dt.kind == "b" else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
        if lo < info_min:
            raise ValueError(f"gnp.random.integers: low is out of bounds for {dt}")
        if hi - 1 > info_max:
            raise ValueError(f"gnp.random.integers: high is out of bounds for {dt}")
        if lo < _INT64_MIN or hi > _INT64_MAX:
            raise ValueError(f"gnp.random.integers: the range [{lo}, {hi}) must lie inside int64 "
                             f"([-2**63, 2**63 - 1)): gpu.randint draws int64")
        return self._draws("randint", _shape(size, "integers"), dt, lo, hi)

    def _permutation_indices(self, n: int) -> DeviceArray:
        """A uniformly random permutation of ``range(n)`` (int64): the stable argsort of the keys
        ``gpu.randint(seed, counter + j, -2**63, 2**63 - 1)``, j < n (a tie, chance about
        n**2 / 2**65, keeps index order)."""
        from ._functions import argsort
        keys = self._draws("randint", (n,), np.int64, _INT64_MIN, _INT64_MAX)
        return argsort(keys, kind="stable")

    def permutation(self, x: Any, axis: int = 0) -> DeviceArray:
        """A permuted ``range(x)`` (x an integer) or a permuted copy of ``x`` along ``axis``;
        uses ``n`` counters (n: the permuted length)."""
        from ._functions import take
        if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
            return self._permutation_indices(operator.index(x))
        a = x if isinstance(x, DeviceArray) else asarray(np.asarray(x), device=self._device)
        if a.ndim == 0:
            raise ValueError("gnp.random.permutation: x must be an integer or at least one-dimensional")
        ax = axis + a.ndim if axis < 0 else axis
        return take(a, self._permutation_indices(a.shape[ax]), axis=ax)

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Permute the device array ``x`` in place along ``axis`` (``n`` counters)."""
        if not isinstance(x, DeviceArray):
            raise TypeError(f"gnp.random.shuffle: x must be a device array (shuffled in place), got "
                            f"{type(x).__name__}; use permutation() for host data")
        if x.ndim == 0:
            raise TypeError("gnp.random.shuffle: x must be at least one-dimensional")
        x[...] = self.permutation(x, axis=axis)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True) -> DeviceArray:
        """Samples of ``a`` (an integer n: ``range(n)``) along ``axis``. With replacement:
        ``integers(0, n, size)`` indices, or with ``p`` the first index whose cumulative
        probability exceeds ``random(size)`` (``size`` counters). Without replacement: the first
        ``size`` of ``permutation(n)``, or with ``p`` the ``size`` smallest exponential keys
        ``-log1p(-u_j) / p_j`` (Efraimidis-Spirakis weighted sampling; ``n`` counters). The order
        of a sample without replacement is random whatever ``shuffle`` says."""
        from ._functions import argsort, cumsum, take
        pool = None
        if isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            n = operator.index(a)
        else:
            pool = a if isinstance(a, DeviceArray) else asarray(np.asarray(a), device=self._device)
            if pool.ndim == 0:
                raise ValueError("gnp.random.choice: a must be a sequence or an integer, not a 0-d array")
            axis = axis + pool.ndim if axis < 0 else axis
            n = pool.shape[axis]
        shape = _shape(size, "choice")
        k = int(np.prod(shape, dtype=np.int64))
        if n <= 0 and k:
            raise ValueError("gnp.random.choice: a cannot be empty unless no samples are taken")
        if n < 0:
            raise ValueError("gnp.random.choice: a must be a positive integer unless no samples are taken")
        probs = self._probabilities(p, n, k, replace)
        if replace:
            if probs is None:
                idx = self.integers(0, n, size=shape) if n else DeviceArray(shape, np.int64, self._ctx())
            else:
                cdf = cumsum(probs)
                cdf = cdf / cdf[-1:]      # as numpy: the last is exactly 1, so no index past the last p > 0
                idx = ops().random_search(self._draws("uniform", shape, np.float64), cdf)
        else:
            if k > n:
                raise ValueError("gnp.random.choice: Cannot take a larger sample than population when replace is "
                                 "False")
            if probs is None:
                order = self._permutation_indices(n)
            else:
                keys = -ops().ufunc_call("log1p", (-self._draws("uniform", (n,), np.float64),)) / probs
                order = argsort(keys, kind="stable")
            idx = order[:k].reshape(shape)
        if pool is None:
            return idx
        if shape == ():
            return take(pool, idx.reshape(1), axis=axis).squeeze(axis)
        return take(pool, idx, axis=axis)

    def _ctx(self) -> Any:
        return resolve_target(self._device)[1]

    def _probabilities(self, p: Any, n: int, k: int, replace: bool) -> "DeviceArray | None":
        """``p`` checked as numpy checks it (1-D, length n, non-negative, summing to 1 within
        sqrt(eps)), as a float64 device array; None without ``p``."""
        if p is None:
            return None
        probs = p.astype(np.float64) if isinstance(p, DeviceArray) else asarray(
            np.asarray(p, dtype=np.float64), device=self._device)
        if probs.ndim != 1:
            raise ValueError("gnp.random.choice: p must be 1-dimensional")
        if probs.shape[0] != n:
            raise ValueError(f"gnp.random.choice: a and p must have same size ({n} and {probs.shape[0]})")
        if bool((probs < 0).any()):
            raise ValueError("gnp.random.choice: probabilities are not non-negative")
        total = float(probs.sum())
        if not abs(total - 1.0) <= np.sqrt(np.finfo(np.float64).eps):
            raise ValueError(f"gnp.random.choice: probabilities do not sum to 1 (they sum to {total})")
        if not replace and int((probs > 0).sum()) < k:
            raise ValueError("gnp.random.choice: Fewer non-zero entries in p than size")
        return probs


def not_implemented(name: str) -> Any:
    """A stand-in for numpy's ``name`` that gnp.random lacks: exists, and says what to do when called."""
    def missing(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"gnp.random: {name} is not implemented on the device; draw with gpu.uniform/gpu.normal/gpu.randint "
            "in a @kernel (the same streams as gnp.random.default_rng), or use numpy.random on the host and upload "
            "the result with gnp.asarray")
    missing.__name__ = name.rsplit(".", 1)[-1]
    return missing


def default_rng(seed: Any = None, device: Any = None) -> Generator:
    """A :class:`Generator` keyed by ``seed`` (a non-negative integer below 2**64; None: 64
    fresh bits from the OS; a Generator: itself), its counter at 0, making arrays on ``device``."""
    if isinstance(seed, Generator):
        return seed
    if seed is None:
        seed = secrets.randbits(64)
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError("gnp.random.default_rng: seed must be an integer, got a bool")
    try:
        s = operator.index(seed)
    except TypeError:
        raise TypeError(f"gnp.random.default_rng: seed must be None, a non-negative integer or a Generator, got "
                        f"{type(seed).__name__} (numpy's SeedSequence and seed arrays are not supported: the "
                        "seed is Philox's 64-bit key)") from None
    if not 0 <= s < _U64:
        raise ValueError(f"gnp.random.default_rng: seed must be in [0, 2**64), got {s}")
    return Generator(s, device=device)
