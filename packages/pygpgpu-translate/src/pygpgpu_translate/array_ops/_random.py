"""The device half of ``gnp.random``: arrays filled with ``gpu.uniform`` / ``gpu.normal`` /
``gpu.randint`` draws at consecutive counters, and the weighted-choice lookup.

Element ``i`` of the flat (C-order) result is the draw at counter ``counter + i`` (modulo 2**64),
the same call a user's kernel makes, so a Generator's arrays are the streams of
``pygpgpu_core.gpu_random`` on the host (see ``pygpgpu_core.gnp._random_generator`` for the mapping).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._device import resolve_target

from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch, np_type
from ._operands import check_dtype

__all__ = ["random_draws", "random_search"]

# one kernel per kind; the counter sum is taken in uint64 so it wraps modulo 2**64 as on the host
_DRAWS = {
    "uniform": "gpu.uniform(seed, counter + np.uint64(i), dtype={T})",
    "normal": "gpu.normal(seed, counter + np.uint64(i), dtype={T})",
    "randint": "{T}(gpu.randint(seed, counter + np.uint64(i), low, high))",
}


def _draw_source(kname: str, kind: str, dt: np.dtype) -> str:
    return (f"def {kname}(out, seed, counter, low, high):\n"
            "    for i in range(out.shape[0]):\n"
            f"        out[i] = {_DRAWS[kind].format(T=np_type(dt))}\n")


def random_draws(kind: str, shape: tuple, dtype: Any, device: Any, seed: int, counter: int,
                 low: int = 0, high: int = 1) -> DeviceArray:
    """A new C-ordered array of ``shape``: element ``i`` (flat) is the ``kind`` draw
    (``uniform``, ``normal``: float32/float64; ``randint`` in [low, high): any integer dtype
    holding the range) at ``(seed, counter + i)``."""
    dt = np.dtype(dtype)
    dev, ctx = resolve_target(device)
    check_dtype(dt, "random", "dtype", dev)
    n = int(np.prod(shape, dtype=np.int64))
    out = DeviceArray((n,), dt, ctx)
    if n:
        kname = f"gnp_random_{kind}_{dt.name}"
        launch(kernel_from_source(kname, _draw_source(kname, kind, dt)), dev, DEFAULT_CONFIG,
               (out, np.uint64(seed), np.uint64(counter), np.int64(low), np.int64(high)))
    return out.reshape(shape)


_SEARCH = '''def gnp_random_search(out, u, cdf, last):
    for i in range(out.shape[0]):
        lo = np.int64(0)
        hi = np.int64(last)
        while lo < hi:
            mid = (lo + hi) // 2
            if cdf[mid] <= u[i]:
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo
'''


def random_search(u: DeviceArray, cdf: DeviceArray) -> DeviceArray:
    """For each ``u[i]``, the first index ``k`` with ``u[i] < cdf[k]`` (numpy's
    ``searchsorted(cdf, u, side='right')``), clamped to ``len(cdf) - 1`` so that rounding in the
    last cumulative sum can never give an index past the end. int64, ``u``'s shape."""
    flat = u.reshape(-1)
    out = DeviceArray((flat.size,), np.int64, u.context)
    if flat.size:
        launch(kernel_from_source("gnp_random_search", _SEARCH), u.device, DEFAULT_CONFIG,
               (out, flat, cdf, np.int64(cdf.size - 1)))
    return out.reshape(u.shape)
