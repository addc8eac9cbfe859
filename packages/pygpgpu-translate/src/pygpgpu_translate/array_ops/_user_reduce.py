"""``@pygpgpu.reduce``: a binary Python function and its identity become a device reduction, like
Numba's ``cuda.reduce``::

    @pygpgpu.reduce(identity=0.0)
    def add(a, b):
        return a + b

    add(g)              # a 0-d device array: the sum of g
    add(g, axis=0)      # per column

The function is compiled as a helper of the same two-pass block-reduction kernels that
``g.sum()`` uses, so it must be associative (and, as elements are combined in no fixed order,
commutative); ``identity`` must leave any value unchanged (``f(identity, x) == x``): work items
past the end of the data start from it.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._array import check_out_writeable

from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch, np_type
from ._operands import check_dtype, check_same_device
from ._reduction import Reduction, reduce_with

__all__ = ["DeviceReduction", "reduce_decorator", "reduce"]


class DeviceReduction:
    """A reduction built from a binary function (see :func:`reduce_decorator`)."""

    __name__: str       # the function's, copied by functools.update_wrapper

    def __init__(self, func: Callable, identity: Any, dtype: Any = None):
        if not callable(func):
            raise TypeError(f"@pygpgpu.reduce decorates a function of two arguments, got {type(func).__name__}")
        if identity is None:
            raise TypeError(f"@pygpgpu.reduce needs the identity of {getattr(func, '__name__', func)!r}: "
                            "@pygpgpu.reduce(identity=0.0) for a sum, 1 for a product, -np.inf for a maximum...")
        self.func = func
        self.identity = identity
        self.dtype = None if dtype is None else np.dtype(dtype)
        functools.update_wrapper(self, func)
        self._reductions: dict = {}

    def _reduction(self, dt: np.dtype) -> Reduction:
        r = self._reductions.get(dt)
        if r is None:
            name = f"user_{getattr(self.func, '__name__', 'f')}"
            r = self._reductions[dt] = Reduction(name, "_gnp_user_op({a}, {b})", dt, dt, self.identity,
                                                 helpers={"_gnp_user_op": self.func})
        return r

    def __call__(self, a: Any, axis: Any = None, keepdims: bool = False, out: Any = None, init: Any = None):
        """Reduce device array ``a`` (over all axes, or ``axis``); ``init`` is combined with the
        result (``f(init, result)``), as in Numba. Host arrays are uploaded once."""
        check_out_writeable(out)
        if not isinstance(a, DeviceArray):
            if isinstance(a, np.ndarray):
                from pygpgpu_core.gnp import asarray
                a = asarray(a)
            else:
                raise TypeError(f"{self.__name__}() reduces device arrays (or numpy arrays, uploaded once), got "
                                f"{type(a).__name__}")
        device = check_same_device([a], self.__name__)
        check_dtype(a.dtype, self.__name__, 0, device)
        dt = self.dtype or (np.dtype(np.int64) if a.dtype.kind == "b" else a.dtype)
        red = self._reduction(dt)
        # an empty reduction is the identity (reduce_with fills it in)
        res = reduce_with(red, a, axis, keepdims, f"reduce({self.__name__})", device)
        if init is not None:
            kname = f"gnp_user_init_{dt.name}"
            src = (f"def {kname}(x, init):\n"
                   "    for i in range(x.shape[0]):\n"
                   f"        x[i] = {np_type(dt)}(_gnp_user_op(init, x[i]))\n")
            if res.size:
                launch(kernel_from_source(kname, src, {"_gnp_user_op": self.func}), device, DEFAULT_CONFIG,
                       (res.reshape(-1), dt.type(init)))
        if out is not None:
            out[...] = res
            return out
        return res

    def __repr__(self) -> str:
        return f"<pygpgpu device reduction {self.__name__} (identity {self.identity!r})>"


def reduce_decorator(func: "Callable[..., Any] | None" = None, *, identity: Any = None, dtype: Any = None
                     ) -> "DeviceReduction | Callable[[Callable[..., Any]], DeviceReduction]":
    """``@pygpgpu.reduce(identity=...)``: turn ``def f(a, b): return ...`` into a device
    reduction ``f(g, axis=None)`` (see the module docstring). ``dtype`` fixes the accumulator
    type (default: the array's dtype; bool arrays accumulate in int64)."""
    if func is None:
        return lambda f: DeviceReduction(f, identity, dtype)
    return DeviceReduction(func, identity, dtype)


reduce = reduce_decorator      # pygpgpu.reduce
