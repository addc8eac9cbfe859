"""``gnp.histogramdd`` and ``gnp.histogram2d``, numpy's multi-dimensional histograms: per
dimension, each sample's bin is a binary search of that dimension's edges (on the device); the
bins combine into one flat index (numpy's ravel_multi_index, with an outlier bin at each end),
counted by atomic increments or summed by weight, then the outlier bins are cut off. Edges from
a count of bins are made on the host from the range (``min``/``max`` read back when not given),
as numpy makes them; edges given as device arrays stay on the device."""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._dispatch import ops
from ._sorting import _bin_sums, _ufunc, _upload
from ._views import device_operand

__all__ = ["histogramdd", "histogram2d"]


def _sample_columns(sample: Any) -> DeviceArray:
    """numpy's reading of ``sample``: an (N, D) array, or a sequence of D 1-D arrays (columns)."""
    if isinstance(sample, (list, tuple)) and sample and all(isinstance(s, DeviceArray) for s in sample):
        from ._functions import stack
        return stack([s.reshape(-1) for s in sample], axis=1)
    s = device_operand(sample, "histogramdd")
    if s.ndim < 2:
        return s.reshape(-1, 1) if s.ndim == 1 else s.reshape(1, 1)
    if s.ndim > 2:
        raise ValueError(f"gnp.histogramdd: sample must be (N, D) or a sequence of D arrays, got {s.ndim} dimensions")
    return s


def _outer_edges(column: DeviceArray, rng: Any) -> tuple[Any, Any]:
    """numpy's ``_get_outer_edges``: the range given, or the column's min and max (read back)."""
    if rng is not None:
        first, last = rng
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif column.size == 0:
        first, last = 0, 1
    else:
        first, last = column.min().get()[()], column.max().get()[()]
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _edges(column: DeviceArray, bins: Any, rng: Any, i: int) -> DeviceArray:
    if isinstance(bins, DeviceArray) and bins.ndim == 1:
        if bins.size > 1 and bool(_ufunc("greater", bins[:-1], bins[1:]).any().get()):
            raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an array")
        return bins
    if np.ndim(bins) == 0 and not isinstance(bins, DeviceArray):
        if bins < 1:
            raise ValueError(f"`bins[{i}]` must be positive, when an integer")
        try:
            n = operator.index(bins)
        except TypeError:
            raise TypeError(f"`bins[{i}]` must be an integer, when a scalar") from None
        first, last = _outer_edges(column, rng)
        return _upload(np.linspace(first, last, n + 1), column.context)
    if np.ndim(bins) == 1 and not isinstance(bins, DeviceArray):
        host = np.asarray(bins)
        if np.any(host[:-1] > host[1:]):
            raise ValueError(f"`bins[{i}]` must be monotonically increasing, when an array")
        return _upload(host, column.context)
    raise ValueError(f"`bins[{i}]` must be a scalar or 1d array")


def histogramdd(sample: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> "tuple[DeviceArray, list[DeviceArray]]":
    """``np.histogramdd``: the float64 histogram of the (N, D) ``sample`` and the D edge arrays."""
    s = _sample_columns(sample)
    n, d = s.shape
    if s.dtype.kind not in "biuf":
        raise TypeError(f"gnp.histogramdd: sample must be real, got {s.dtype}")
    try:
        count = len(bins)
    except TypeError:           # one count for every dimension
        per_dim = [bins] * d
    else:
        if count != d:
            raise ValueError("The dimension of bins must be equal to the dimension of the sample x.")
        per_dim = list(bins)
    if range is None:
        range = (None,) * d
    elif len(range) != d:
        raise ValueError("range argument must have one entry per dimension")
    if weights is not None:
        weights = device_operand(weights, "histogramdd")
        if weights.shape != (n,):
            raise ValueError(f"weights should have the same length as the sample ({n}), got shape {weights.shape}")
    edges = [_edges(s[:, i], per_dim[i], range[i], i) for i in builtins.range(d)]
    nbin = [e.size + 1 for e in edges]          # an outlier bin at each end
    flat = None
    stride = 1
    for i in reversed(builtins.range(d)):
        col = s[:, i]
        dt = np.result_type(col.dtype, edges[i].dtype)
        x, e = col.astype(dt, copy=False), edges[i].astype(dt, copy=False)
        b = ops().searchsorted_sorted(e, ops().copy(x), "right")
        if e.size:      # the last edge is inside the last bin, not an outlier
            b = ops().where(_ufunc("equal", x, e[-1]), _ufunc("subtract", b, np.int64(1)), b)
        term = _ufunc("multiply", b.astype(np.int64, copy=False), np.int64(stride))
        flat = term if flat is None else _ufunc("add", flat, term)
        stride *= nbin[i]
    total = math.prod(nbin)
    if flat is None or n == 0:
        from ._creation import zeros
        hist = zeros(tuple(nbin), np.float64, s.context)
    elif weights is None:
        hist = ops().bin_counts(flat, total).astype(np.float64).reshape(tuple(nbin))
    else:
        hist = _bin_sums(flat, weights, total).reshape(tuple(nbin))
    hist = hist[(slice(1, -1),) * d].copy()
    if density:
        whole = hist.sum()
        for i in builtins.range(d):
            shape = [1] * d
            shape[i] = nbin[i] - 2
            widths = _ufunc("subtract", edges[i][1:], edges[i][:-1]).reshape(tuple(shape))
            hist = _ufunc("true_divide", hist, widths)
        hist = _ufunc("true_divide", hist, whole)
    return hist, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, density: Any = None,
                weights: Any = None) -> "tuple[DeviceArray, DeviceArray, DeviceArray]":
    """``np.histogram2d``: the histogram of the points (x, y) and the x and y edges."""
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):      # one array of edges for both axes
        bins = [bins, bins]
    x, y = device_operand(x, "histogram2d"), device_operand(y, "histogram2d")
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
