"""``gnp.random`` (``pygpgpu.numpy.random``): numpy's ``Generator`` API (:func:`default_rng`)
over the Philox streams kernels draw with ``gpu.uniform`` / ``gpu.normal`` / ``gpu.randint``,
and numpy's module-level functions (``rand``, ``randn``, ``randint``, ``seed``...), as CuPy has
them, drawing from one module-wide Generator that :func:`seed` re-keys (counter back to 0).

Which counter each element uses is in :mod:`._random_generator`'s doc and in
docs/device-arrays.md. Other names of ``numpy.random`` exist here and raise
``NotImplementedError`` saying what to use instead when called.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ._random_generator import Generator, default_rng, not_implemented

__all__ = ["Generator", "default_rng", "seed", "get_random_state", "rand", "randn", "random", "random_sample",
           "ranf", "sample", "randint", "uniform", "normal", "standard_normal", "standard_exponential",
           "exponential", "lognormal", "choice", "permutation", "shuffle"]

_global: "Generator | None" = None


def get_random_state() -> Generator:
    """The module-wide Generator the functions below draw from (seeded from the OS at first use)."""
    global _global
    if _global is None:
        _global = default_rng()
    return _global


def seed(seed: Any = None) -> None:
    """Re-key the module-wide Generator (None: fresh OS bits); its counter starts again at 0."""
    global _global
    _global = default_rng(seed)


def _dims(args: tuple) -> "tuple[int, ...] | None":
    return tuple(operator.index(d) for d in args) if args else None


def rand(*shape: int) -> Any:
    """float64 in [0, 1) of shape ``shape`` (numpy's ``rand(d0, d1, ...)``)."""
    return get_random_state().random(_dims(shape))


def randn(*shape: int) -> Any:
    """Standard normal float64 of shape ``shape`` (numpy's ``randn(d0, d1, ...)``)."""
    return get_random_state().standard_normal(_dims(shape))


def random_sample(size: Any = None) -> Any:
    """float64 in [0, 1) (numpy's legacy ``random_sample``; also ``random``, ``ranf``, ``sample``)."""
    return get_random_state().random(size)


random = ranf = sample = random_sample


def randint(low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64) -> Any:
    """Integers in [low, high) (``high`` None: [0, low)), numpy's legacy ``randint``."""
    return get_random_state().integers(low, high, size=size, dtype=dtype)


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
    return get_random_state().uniform(low, high, size)


def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
    return get_random_state().normal(loc, scale, size)


def standard_normal(size: Any = None) -> Any:
    return get_random_state().standard_normal(size)


def standard_exponential(size: Any = None) -> Any:
    return get_random_state().standard_exponential(size)


def exponential(scale: Any = 1.0, size: Any = None) -> Any:
    return get_random_state().exponential(scale, size)


def lognormal(mean: Any = 0.0, sigma: Any = 1.0, size: Any = None) -> Any:
    return get_random_state().lognormal(mean, sigma, size)


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
    return get_random_state().choice(a, size, replace, p)


def permutation(x: Any) -> Any:
    return get_random_state().permutation(x)


def shuffle(x: Any) -> None:
    get_random_state().shuffle(x)


def __getattr__(name: str) -> Any:
    # numpy.random's other names exist (CuPy's API check) and say what to do when called
    if not name.startswith("_") and hasattr(np.random, name):
        return not_implemented(name)
    raise AttributeError(f"module 'pygpgpu.numpy.random' has no attribute {name!r}")
