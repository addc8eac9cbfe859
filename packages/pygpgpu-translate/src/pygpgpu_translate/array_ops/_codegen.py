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

from pygpgpu_core.errors import ClosedError

from .._kernel import KernelFunction, _Config
from .._launch import CallPlan
from .._launch_checks import WideIndexNeeded

__all__ = ["kernel_from_source", "launch", "bind", "BoundLaunch", "np_type", "DEFAULT_CONFIG", "grid"]

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


class BoundLaunch:
    """One launch's fixed parts, kept by a gnp fast path for calls like the one that made it:
    the plan's resident packer (which still checks that each array is a device array of the
    plan's device and refuses a read-only output), the backend's launcher, and the domain and
    work sizes the plan worked out then. Calling it skips the launch path's per-call work
    (argument tokens, the plan lookup, the domain and group shape) for the fixed cost of a
    small gnp call; it returns False, having launched nothing, where the full path must run.

    Only valid for arguments of the same types, the same array shapes and the same values of
    the scalars the kernel's domain reads as the call that made it: the caller keeps it under
    a key that fixes those (see :func:`bind`)."""

    __slots__ = ("pack", "launcher", "domain", "global_size", "local_size")

    def __init__(self, plan: CallPlan, domain: Any, global_size: tuple, local_size: Any) -> None:
        self.pack = plan._resident_packer
        self.launcher = plan.launcher
        self.domain = domain
        self.global_size = global_size
        self.local_size = local_size

    def __call__(self, args: tuple) -> bool:
        packed = self.pack(args, self.domain)
        if packed is None:                  # an array not resident on the plan's device
            return False
        try:
            self.launcher(self.global_size, self.local_size, packed)
        except ClosedError:                 # a closed program: the full path rebuilds or says why
            return False
        return True


def bind(kern: KernelFunction, device: Any, config: _Config, args: tuple) -> "BoundLaunch | None":
    """:func:`launch`, and where the call took a warm plan whose per-call work depends only on
    the argument types, array shapes and the scalars the domain reads (no integer range checks,
    no guards, no vector or byte-swapped arrays, no local sizes from the call, a work size
    derived from the domain or a kernel without one), that launch's :class:`BoundLaunch`."""
    plan = kern.warm_plan(device, config, args)
    if (plan is None or type(plan) is not CallPlan or plan.swapped or plan.int_checks or plan.vector_arrays
            or plan.local_sized or plan.t.guards
            or (config.global_size is not None and plan.domain_fn is not None)):
        kern._launch(device, config, args)
        return None
    try:
        ran = plan.run(args, config.global_size, config.local_size)
    except (WideIndexNeeded, ClosedError):      # nothing ran: the full path decides (as in _launch)
        kern._launch(device, config, args)
        return None
    if ran is None:                         # not every array resident (or nothing to launch)
        return None
    domain = plan.domain_fn(*args) if plan.domain_fn is not None else None
    return BoundLaunch(plan, domain, ran[0], ran[1])
