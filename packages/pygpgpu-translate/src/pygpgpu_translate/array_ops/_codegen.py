"""Kernels from generated Python source: every gnp operation is an ordinary ``@kernel`` function
whose source text is written here per operation family (and per compute dtype where the
expression needs one), so it is translated, cached and launched like a user's kernel and runs on
every backend.

The source is registered with :mod:`linecache` under a ``<pygpgpu.numpy ...>`` file name, which
is what the translator reads (``inspect.getsource``) and what its messages point at. Each
distinct source becomes one :class:`~pygpgpu_translate.KernelFunction`, kept for the life of the
process; the translator specializes it per argument dtypes as it does for any kernel.
"""
from __future__ import annotations

import hashlib
import linecache
import math
import threading
from typing import Any

import numpy as np
from pygpgpu_core import gpu

from .._kernel import KernelFunction, _Config

__all__ = ["kernel_from_source", "launch", "np_type", "DEFAULT_CONFIG", "grid"]

_kernels: dict = {}
_lock = threading.Lock()

DEFAULT_CONFIG = _Config()     # work size from the kernel's own domain (its magic loop)
_grids: dict = {}


def grid(global_size: int, local_size: int) -> _Config:
    """A launch configuration of ``global_size`` work items in groups of ``local_size`` (1-D)."""
    key = (global_size, local_size)
    c = _grids.get(key)
    if c is None:
        if len(_grids) > 4096:
            _grids.clear()
        c = _grids[key] = _Config(None, (global_size,), (local_size,))
    return c


def np_type(dtype: np.dtype) -> str:
    """The spelling of ``dtype``'s scalar type in generated source (``np.float32``, ``np.bool_``)."""
    dtype = np.dtype(dtype)
    return "np.bool_" if dtype.kind == "b" else f"np.{dtype.name}"


def kernel_from_source(name: str, source: str, helpers: "dict[str, Any] | None" = None,
                       contract: bool = True) -> KernelFunction:
    """The kernel ``name`` defined by ``source`` (one KernelFunction per distinct source and
    helper set). ``helpers`` are extra globals the source may call (a user's binary function);
    ``contract=False``: built without fused multiply-add (numpy's rounding of each step)."""
    key = (source, tuple(sorted((k, id(v)) for k, v in (helpers or {}).items())), contract)
    k = _kernels.get(key)
    if k is not None:
        return k
    with _lock:
        k = _kernels.get(key)
        if k is not None:
            return k
        digest = hashlib.sha256(source.encode()).hexdigest()[:10]
        filename = f"<pygpgpu.numpy {name} {digest}>"
        lines = source.splitlines(True)
        linecache.cache[filename] = (len(source), None, lines, filename)
        namespace: dict = {"np": np, "gpu": gpu, "math": math, "__name__": "pygpgpu_translate.array_ops.generated"}
        if helpers:
            namespace.update(helpers)
        exec(compile(source, filename, "exec"), namespace)
        k = KernelFunction(namespace[name], contract=contract)
        _kernels[key] = k
        return k


def launch(kern: KernelFunction, device: Any, config: _Config, args: tuple) -> None:
    """Run ``kern`` on ``device`` (the arrays' own device object) with ``args``."""
    kern._launch(device, config, args)
