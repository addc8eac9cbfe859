"""The operations of device arrays (``pygpgpu.numpy``): numpy semantics on the host side, and
generated ``@kernel`` functions on the device, so every operation runs on OpenCL, CUDA and HIP.

pygpgpu-core's ``DeviceArray`` forwards ``g + h``, ``g.sum()``, ``np.sqrt(g)``, ``gnp.sort``...
to this module, which registers itself with ``pygpgpu_core.gnp._dispatch`` when imported (core
never imports the translator itself at import time). Each public function here takes what the
numpy function of the same name takes (within what the docs list) and returns device arrays on
the operands' device; nothing is computed on the host.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from pygpgpu_core.gnp import DeviceArray, _dispatch
from pygpgpu_core.gnp._array import check_out_writeable
from pygpgpu_core.gnp._complex_parts import complex_part

from ._bessel import bessel_i0
from ._convolve import convolve
from ._creation import arange, concatenate, linspace, stack
from ._fft import fft_axis
from ._fft_real import irfft_axis, rfft_axis
from ._elementwise import assign, astype, binary, clip, copy, fill, supported_ufunc, ufunc_call, unary, where
from ._indexing import getitem, nonzero, setitem, take
from ._linalg import dot, matmul
from ._linalg_cholesky import cholesky_lower
from ._linalg_eig import schur_eig
from ._linalg_jacobi import jacobi_eigh, jacobi_svd
from ._linalg_lu import lu_solve
from ._linalg_qr import form_qr, householder_qr
from ._numpy_functions import array_function
from ._random import random_draws, random_search
from ._reduction import reduce
from ._scan import scan
from ._sort import argsort, sort
from ._stats import bin_counts, interp_sorted, searchsorted_sorted, segment_sums
from ._user_reduce import DeviceReduction, reduce_decorator

__all__ = ["ufunc_call", "binary", "unary", "array_ufunc", "reduce", "moment", "around", "assign", "fill", "copy",
           "astype", "where", "clip", "scan", "getitem", "setitem", "take", "nonzero", "dot",
           "matmul", "sort", "argsort", "arange", "linspace", "concatenate", "stack",
           "reduce_decorator", "DeviceReduction", "array_function", "convolve", "bessel_i0"]
__all__ += ["random_draws", "random_search"]
__all__ += ["lu_solve", "cholesky_lower", "householder_qr", "form_qr", "jacobi_eigh", "jacobi_svd", "schur_eig"]  # gnp.linalg
__all__ += ["searchsorted_sorted", "interp_sorted", "segment_sums", "bin_counts"]
__all__ += ["fft_axis", "rfft_axis", "irfft_axis"]

_REDUCE_METHODS = {"add": "sum", "multiply": "prod", "minimum": "min", "maximum": "max", "logical_and": "all",
                   "logical_or": "any"}
_ACCUMULATE_METHODS = {"add": "cumsum", "multiply": "cumprod"}


# numpy ufuncs that gnp composes of device operations (gnp.<name>), several with two outputs
_COMPOSED = ("divmod", "modf", "frexp", "ldexp", "nextafter", "spacing")


def _composed_ufunc(ufunc: Any, inputs: tuple, kwargs: dict) -> Any:
    """``np.divmod(g, 3)``, ``np.frexp(g)``...: gnp's function of the same name, numpy's ``out``."""
    from pygpgpu_core import gnp
    name = ufunc.__name__
    out = kwargs.pop("out", None)
    kwargs.pop("subok", None)
    if kwargs.pop("where", True) is not True or kwargs:
        raise TypeError(f"np.{name}: arguments {sorted(kwargs) or ['where']} are not supported on device arrays")
    if isinstance(out, tuple) and ufunc.nout == 1:
        (out,) = out
    if isinstance(out, tuple) and all(o is None for o in out):
        out = None
    return getattr(gnp, name)(*inputs, out=out)


def array_ufunc(ufunc: Any, method: str, inputs: tuple, kwargs: dict) -> Any:
    """``DeviceArray.__array_ufunc__``: ``np.sqrt(g)``, ``np.add(g, h, out=g)``,
    ``np.add.reduce(g, axis=0)``, ``np.multiply.accumulate(g)`` on the device."""
    name = ufunc.__name__
    kwargs = dict(kwargs)
    if method == "__call__" and name in _COMPOSED:
        return _composed_ufunc(ufunc, inputs, kwargs)
    out = kwargs.pop("out", None)
    if isinstance(out, tuple):
        if len(out) != 1:
            raise TypeError(f"np.{name}: device arrays support one output")
        out = out[0]
    check_out_writeable(out)
    if method == "__call__":
        where_ = kwargs.pop("where", True)
        if where_ is not True:
            raise TypeError(f"np.{name}: where= is not supported on device arrays")
        dtype = kwargs.pop("dtype", None)
        casting = kwargs.pop("casting", "same_kind")
        kwargs.pop("subok", None)
        if kwargs.pop("order", "K") not in ("K", "C", "A"):
            raise ValueError(f"np.{name}: device arrays are C-ordered")
        if kwargs:
            raise TypeError(f"np.{name}: arguments {sorted(kwargs)} are not supported on device arrays")
        if name == "clip":
            a, lo, hi = inputs          # numpy passes a ufunc its nin (3) inputs
            return clip(a, lo, hi, out=out)
        if name == "matmul":            # np.matmul is a gufunc: the same kernel as ``a @ b``
            if dtype is not None or casting != "same_kind":
                raise TypeError("np.matmul: dtype= and casting= are not supported on device arrays")
            a, b = inputs
            return matmul(a, b, out=out)
        if not supported_ufunc(name):
            raise TypeError(f"np.{name} is not implemented for device arrays; compute it in a @kernel, or bring the "
                            "data to the host explicitly with g.get()")
        return ufunc_call(name, inputs, out=out, dtype=dtype, casting=casting)
    if method == "reduce" and name in _REDUCE_METHODS:
        (a,) = inputs
        axis = kwargs.pop("axis", 0)
        return reduce(_REDUCE_METHODS[name], a, axis=axis, out=out, **kwargs)
    if method == "accumulate" and name in _ACCUMULATE_METHODS:
        (a,) = inputs
        axis = kwargs.pop("axis", 0)
        return scan(_ACCUMULATE_METHODS[name], a, axis=axis, out=out, **kwargs)
    raise TypeError(f"np.{name}.{method} is not implemented for device arrays")


def moment(op: str, a: DeviceArray, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    """``var``/``std`` as numpy computes them: mean, squared deviations (|d|**2 for complex: a real
    result), their mean over n - ddof."""
    check_out_writeable(out)
    if where is not None and where is not True:
        raise TypeError(f"gnp.{op}: where= is not supported on device arrays")
    m = reduce("mean", a, axis=axis, dtype=dtype, keepdims=True)
    d = ufunc_call("subtract", (a, m))
    if d.dtype.kind != "f":
        d = d.astype(m.dtype)
    if d.dtype.kind == "c":
        # numpy's fast path for complex: |d|**2 as re*re + im*im, in the parts' real type
        re, im = complex_part(d, "real"), complex_part(d, "imag")
        sq = ufunc_call("add", (ufunc_call("multiply", (re, re)), ufunc_call("multiply", (im, im))))
    else:
        sq = ufunc_call("multiply", (d, d))
    s = reduce("sum", sq, axis=axis, dtype=dtype, keepdims=keepdims)
    n = a.size // max(m.size, 1)
    res = ufunc_call("true_divide", (s, float(max(n - ddof, 0))))
    if op == "std":
        res = ufunc_call("sqrt", (res,))
    if out is not None:
        out[...] = res
        return out
    return res


def around(a: DeviceArray, decimals: int = 0, out=None):
    """``np.round``: half to even, the steps of numpy's ``PyArray_Round``: ``decimals >= 0``
    multiplies by 10**decimals, rounds and divides; negative ``decimals`` divide by
    10**-decimals, round and multiply (so ``round(15, -1)`` is 20 and the float results are
    numpy's bit for bit); complex arrays round their two parts so. Integers round only to
    negative ``decimals``, through float64 and back."""
    check_out_writeable(out)
    if a.dtype.kind == "c":
        # numpy rounds a complex array's real and imaginary parts each as a real array
        res = DeviceArray(a.shape, a.dtype, a.context) if out is None else out
        parts = complex_part(res, "real"), complex_part(res, "imag")
        for which, dst in zip(("real", "imag"), parts):
            assign(dst, around(complex_part(a, which), decimals))
        return res
    if a.dtype.kind in "iu" and decimals >= 0:
        if out is None:
            return a.copy()
        assign(out, a)
        return out
    if decimals == 0:
        return ufunc_call("rint", (a,), out=out)
    if a.dtype.kind == "b":         # numpy scales bools in place, which same_kind casting refuses
        raise TypeError(f"gnp.round: cannot round a bool array to {decimals} decimals (numpy's scaled result "
                        "is float64); convert it with .astype() first")
    scale_up, scale_down = ("multiply", "true_divide") if decimals > 0 else ("true_divide", "multiply")
    factor = 10.0 ** abs(decimals)
    x = a.astype(np.float64) if a.dtype.kind in "iu" else a
    r = ufunc_call(scale_down, (ufunc_call("rint", (ufunc_call(scale_up, (x, factor)),)), factor))
    if r.dtype != a.dtype:          # integers: numpy casts the float64 result back to their type
        r = r.astype(a.dtype)
    if out is None:
        return r
    assign(out, r)
    return out


_dispatch.set_provider(sys.modules[__name__])
