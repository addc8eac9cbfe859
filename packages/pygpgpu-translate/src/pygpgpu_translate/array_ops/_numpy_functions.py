"""``DeviceArray.__array_function__``: numpy functions called on device arrays (``np.sum(g)``,
``np.concatenate([g, h])``, ``np.where(g > 0, g, 0)``) run the device implementation. A numpy
function with none raises TypeError instead of quietly computing on host copies; the message
says how to do that explicitly (``g.get()``)."""
from __future__ import annotations

from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._array import check_out_writeable

__all__ = ["array_function", "NUMPY_FUNCTIONS"]


def _method(name: str):
    def call(a, *args, **kwargs):
        return getattr(a, name)(*args, **kwargs)
    return call


def _shape(a):
    return a.shape


def _ndim(a):
    return a.ndim


def _size(a, axis=None):
    return a.size if axis is None else a.shape[axis]


def _result_type(*arrays_and_dtypes):
    """numpy 2 types a device array by its dtype alone (no value-based casting), so its dtype
    stands in for it: no data moves."""
    return np.result_type(*(x.dtype if isinstance(x, DeviceArray) else x for x in arrays_and_dtypes))


# numpy functions that take arrays and that gnp has under the same name (np.eye and the like take
# none, so numpy cannot hand them to device arrays: they are gnp.eye only)
COMPOSED: tuple[str, ...] = (
    "expand_dims", "squeeze", "moveaxis", "swapaxes", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to",
    "broadcast_arrays", "flip", "fliplr", "flipud", "diagonal", "split", "array_split", "hsplit", "vsplit", "dsplit",
    "rot90",
    "vstack", "hstack", "column_stack", "dstack", "append", "triu", "tril", "diag", "meshgrid",
    "isclose", "allclose", "array_equal", "count_nonzero", "nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin",
    "nanargmax", "nanargmin", "nancumsum", "nancumprod", "diff", "ptp", "average", "trace", "outer", "inner", "kron", "tile", "repeat", "roll",
    "copyto", "gradient", "convolve", "vander", "polyval", "real", "imag", "angle", "cumulative_sum",
    "cumulative_prod", "matrix_transpose", "row_stack", "asfortranarray", "isfortran",
    "iscomplexobj", "isrealobj", "iscomplex", "isreal", "isposinf", "isneginf", "flatnonzero", "argwhere", "fix",
    "array_equiv", "diagflat", "rollaxis", "may_share_memory", "nan_to_num", "trapezoid", "ediff1d",
    "tril_indices_from", "triu_indices_from", "diag_indices_from", "correlate", "sinc", "select", "compress",
    "extract", "fill_diagonal", "tensordot", "cov", "corrcoef", "polyadd", "polysub", "polymul",
    "sort_complex", "real_if_close",
)
# sort-based and counting functions (pygpgpu_core.gnp._sorting)
COMPOSED += ("quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian", "partition",
             "argpartition", "unique", "bincount", "histogram", "searchsorted", "isin", "interp", "unique_all",
             "unique_counts", "unique_inverse", "unique_values")
COMPOSED += ("union1d", "intersect1d", "setdiff1d", "setxor1d", "lexsort", "digitize")
COMPOSED += ("einsum", "pad", "put", "putmask", "place", "put_along_axis", "choose")


def _table() -> dict:
    from pygpgpu_core import gnp
    from pygpgpu_core.gnp import _creation as _core_creation
    from pygpgpu_core.gnp import _functions as _core_functions

    from . import _creation, _elementwise, _indexing, _linalg, _sort

    t = {
        np.sum: _method("sum"), np.prod: _method("prod"), np.min: _method("min"), np.max: _method("max"),
        np.amin: _method("min"), np.amax: _method("max"), np.mean: _method("mean"), np.var: _method("var"),
        np.std: _method("std"), np.argmin: _method("argmin"), np.argmax: _method("argmax"), np.any: _method("any"),
        np.all: _method("all"), np.cumsum: _method("cumsum"), np.cumprod: _method("cumprod"),
        np.round: _method("round"), np.around: _method("round"), np.ravel: _method("ravel"),
        np.reshape: _core_functions.reshape,
        np.transpose: lambda a, axes=None: a.transpose(axes), np.copy: lambda a, order="K", subok=False: a.copy(order),
        np.shape: _shape, np.ndim: _ndim, np.size: _size,
        np.sort: _sort.sort, np.argsort: _sort.argsort, np.where: _elementwise.where, np.clip: _core_functions.clip,
        np.dot: _linalg.dot, np.concatenate: _creation.concatenate, np.stack: _creation.stack,
        np.nonzero: _indexing.nonzero, np.take: _indexing.take, np.result_type: _result_type,
        np.empty_like: _core_creation.empty_like, np.zeros_like: _core_creation.zeros_like,
        np.ones_like: _core_creation.ones_like, np.full_like: _core_creation.full_like,
    }
    # gnp's functions of numpy's names and parameters (composed of device operations in pygpgpu_core.gnp);
    # never over an entry above (numpy 2's np.concat is np.concatenate, np.permute_dims np.transpose)
    composed = {getattr(np, name): getattr(gnp, name) for name in COMPOSED if hasattr(np, name)}   # (numpy 2.1's)
    t.update({f: impl for f, impl in composed.items() if f not in t})
    # np.fft.fft(g), np.linalg.solve(g, b): gnp's submodules of the same names (their functions only:
    # np.linalg.LinAlgError is numpy's class, and gnp.linalg raises that very class)
    for host_module, device_module in ((np.fft, gnp.fft), (np.linalg, gnp.linalg)):
        for name in device_module.__all__:
            host_func, device_func = getattr(host_module, name, None), getattr(device_module, name)
            if callable(host_func) and not isinstance(host_func, type) and host_func not in t:
                t[host_func] = device_func
    return t


NUMPY_FUNCTIONS: dict = {}


def array_function(func: Any, types: tuple, args: tuple, kwargs: dict) -> Any:
    check_out_writeable(kwargs.get("out"))
    if not NUMPY_FUNCTIONS:
        NUMPY_FUNCTIONS.update(_table())
    impl = NUMPY_FUNCTIONS.get(func)
    if impl is None:
        name = getattr(func, "__name__", repr(func))
        raise TypeError(f"np.{name} is not implemented for pygpgpu device arrays (it would compute on host copies); "
                        f"call it on g.get() to compute on the host explicitly, or write the computation as a "
                        f"@kernel")
    if not all(issubclass(t, DeviceArray) or issubclass(t, np.ndarray) for t in types):
        return NotImplemented
    return impl(*args, **kwargs)
