"""Sort-based and counting functions of ``pygpgpu.numpy``: ``quantile``/``percentile``/``median``
(and their nan- forms), ``partition``/``argpartition``, ``unique``, ``bincount``, ``histogram``,
``searchsorted``, ``isin`` and ``interp``, with numpy's results, dtypes and errors.

Each one composes the device sort, scans, ufuncs and ``take`` with the kernels of the provider's
``_stats`` (a binary search per element, numpy's ``interp``, per-bin atomic counts and sums),
so the data stays on the device. What the host computes is what depends only on shapes and parameters (the sample indices of a
quantile, histogram edges from a range); a few results whose *size* depends on the data read
back one scalar (``bincount``'s length, ``histogram``'s autodetected range), as numpy must know
them too. ``partition`` returns a full sort, which satisfies numpy's contract (the kth element
in place, smaller before, larger after)."""
from __future__ import annotations

import importlib
import operator
from typing import Any

import numpy as np

from ._array import DeviceArray
from ._array import _normalize_axis as normalize_axis
from ._creation import arange, empty, full, zeros
from ._dispatch import ops
from ._views import device_operand, normalize_axes

# numpy's own quantile index arithmetic (host numbers from n and q): the methods then match numpy's exactly
_npq: Any = importlib.import_module("numpy.lib._function_base_impl")

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian", "partition",
           "argpartition", "unique", "bincount", "histogram", "searchsorted", "isin", "interp", "unique_all",
           "unique_counts", "unique_inverse", "unique_values"]


def _ufunc(name: str, *args: Any) -> DeviceArray:
    return ops().ufunc_call(name, args)


def _concat(parts: list) -> DeviceArray:
    return ops().concatenate(parts)


# ---------------------------------------------------------------- quantiles


def _rows_last(a: DeviceArray, axis: Any) -> "tuple[DeviceArray, tuple, tuple]":
    """``a`` with the reduced axes merged into one last axis (a contiguous copy), the kept shape,
    and the keepdims shape."""
    if axis is None:
        return ops().copy(a).reshape(-1), (), (1,) * a.ndim
    axes = normalize_axes(axis, a.ndim)
    rest = [k for k in range(a.ndim) if k not in axes]
    kept = tuple(a.shape[k] for k in rest)
    moved = ops().copy(a.transpose(rest + list(axes)))
    n = 1
    for k in axes:
        n *= a.shape[k]
    keep = tuple(1 if k in axes else a.shape[k] for k in range(a.ndim))
    return moved.reshape(kept + (n,)), kept, keep


def _sorted_into_input(a: DeviceArray, s: DeviceArray, axis: Any) -> None:
    """``overwrite_input=True``: numpy sorts (partitions) the input in place, so ``a`` may change;
    gnp writes the sorted rows back, which is such a change (the values are ``a``'s own)."""
    if getattr(a, "_readonly", False):
        return
    if axis is None:
        a[...] = s.reshape(a.shape)
        return
    axes = normalize_axes(axis, a.ndim)
    view = a.transpose([k for k in range(a.ndim) if k not in axes] + list(axes))
    view[...] = s.reshape(view.shape)


def _host_q(q: Any, op: str, scale: float) -> "tuple[np.ndarray, bool]":
    """``q`` as a float host array in [0, 1] and whether it was a Python scalar (weak, NEP 50)."""
    if isinstance(q, DeviceArray):
        q = q.get()          # the few requested quantiles decide the kernels' indices: a parameter
    weak = type(q) in (int, float)          # numpy's test: np.float64(0.5) is not weak
    qa = np.true_divide(q, scale) if scale != 1 else np.asanyarray(q)
    if qa.dtype.kind not in "biuf":
        raise TypeError(f"gnp.{op}: q must be real numbers, got {qa.dtype}")
    if not (np.all(qa >= 0) and np.all(qa <= 1)):
        raise ValueError("Quantiles must be in the range [0, 1]" if scale == 1 else
                         "Percentiles must be in the range [0, 100]")
    return qa, weak


def _finish(res: DeviceArray, qshape: tuple, kept: tuple, keep: tuple, keepdims: bool, out: Any) -> DeviceArray:
    res = res.reshape(qshape + (keep if keepdims else kept))
    if out is not None:
        out[...] = res
        return out
    return res


def _lerp(lo: DeviceArray, hi: DeviceArray, gamma: Any) -> DeviceArray:
    """numpy's ``_lerp``: ``lo + (hi - lo) * g``, or ``hi - (hi - lo) * (1 - g)`` from g = 0.5."""
    diff = _ufunc("subtract", hi, lo)
    if gamma >= 0.5:
        return _ufunc("subtract", hi, _ufunc("multiply", diff, 1 - gamma))
    return _ufunc("add", lo, _ufunc("multiply", diff, gamma))


def _nan_rows(s: DeviceArray) -> "DeviceArray | None":
    """Which rows of the sorted ``s`` hold a NaN (it sorts last); None for types without NaN."""
    return _ufunc("isnan", s[..., -1]) if s.dtype.kind in "fc" else None


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None, _scale: float = 1, _op: str = "quantile") -> DeviceArray:
    """``np.quantile`` on the device: a sort along the reduced axes, the samples numpy's
    ``method`` names (every method of numpy's), and its interpolation; NaN rows give NaN."""
    a = device_operand(a, _op)
    if interpolation is not None:
        raise TypeError(f"gnp.{_op}: interpolation= was renamed method= in numpy 1.22")
    if weights is not None:
        raise NotImplementedError(f"gnp.{_op}: weights= is not supported on device arrays; use gnp.average for "
                                  "weighted means")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"gnp.{_op}: a must be a real array, got {a.dtype}")
    qa, weak = _host_q(q, _op, _scale)
    methods = _npq._QuantileMethods
    if method not in methods:
        raise ValueError(f"{method!r} is not a valid method. Use one of: {methods.keys()}")
    qarg: Any = float(qa) if weak else qa
    rdt = np.quantile(np.zeros(2, a.dtype), qarg, method=method).dtype  # type: ignore[call-overload]
    x, kept, keep = _rows_last(a, axis)
    n = x.shape[-1]
    if n == 0:
        raise IndexError(f"gnp.{_op}: cannot take a quantile of an empty array (numpy raises: index -1 is out of "
                         "bounds for axis 0 with size 0)")
    s = ops().sort(x, axis=-1)
    if overwrite_input:
        _sorted_into_input(a, s, axis)
    props = methods[method]
    vi = np.asanyarray(props["get_virtual_index"](n, qa))
    direct = props["fix_gamma"] is None or (method == "linear" and vi.dtype.kind in "iu")
    results = []
    if direct:
        for v in vi.reshape(-1):
            results.append(s[..., int(v)].astype(rdt))
    else:
        prev, nxt = _npq._get_indexes(np.zeros(0, s.dtype), vi, n)
        gamma = np.asanyarray(_npq._get_gamma(vi, prev, props)).reshape(-1)
        for p, nx, g in zip(prev.reshape(-1), nxt.reshape(-1), gamma):
            gg: Any = float(g) if weak else np.float64(g)
            results.append(_lerp(s[..., int(p)], s[..., int(nx)], gg).astype(rdt, copy=False))
    res = ops().stack(results) if results else zeros((0,) + kept, rdt, a.context)
    nan_rows = _nan_rows(s)
    if nan_rows is not None and rdt.kind == "f":
        res = ops().where(nan_rows, rdt.type(np.nan), res)
    return _finish(res, qa.shape, kept, keep, keepdims, out)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights: Any = None,
               interpolation: Any = None) -> DeviceArray:
    """``np.percentile``: :func:`quantile` of ``q / 100``."""
    return quantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                    interpolation=interpolation, _scale=100, _op="percentile")


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> DeviceArray:
    """``np.median``: the middle of the sorted rows, or the mean of the two middle ones (as
    numpy: ``(lo + hi) / 2`` in float64 for integer data; complex rows in numpy's complex order);
    NaN rows give NaN, empty rows NaN."""
    a = device_operand(a, "median")
    if a.dtype.kind not in "biufc":
        raise TypeError(f"gnp.median: a must be a number array, got {a.dtype}")
    rdt = np.median(np.zeros(2, a.dtype)).dtype
    x, kept, keep = _rows_last(a, axis)
    n = x.shape[-1]
    if n == 0:
        return _finish(full(kept, np.nan, rdt, a.context), (), kept, keep, keepdims, out)
    s = ops().sort(x, axis=-1)
    if overwrite_input:
        _sorted_into_input(a, s, axis)
    hi = s[..., n // 2].astype(rdt)
    res = hi if n % 2 else _ufunc("true_divide", _ufunc("add", s[..., n // 2 - 1].astype(rdt), hi), 2)
    nan_rows = _nan_rows(s)
    if nan_rows is not None:
        res = ops().where(nan_rows, rdt.type(np.nan), res)
    return _finish(res.astype(rdt, copy=False), (), kept, keep, keepdims, out)


def _valid_counts(s: DeviceArray) -> DeviceArray:
    """How many numbers (not NaN) each sorted row holds, as int64."""
    n = s.shape[-1]
    if s.dtype.kind not in "fc":
        return full(s.shape[:-1], n, np.int64, s.context)
    nans = _ufunc("isnan", s).sum(axis=-1, dtype=np.int64)
    return _ufunc("subtract", np.int64(n), nans)


def _gather_rows(s: DeviceArray, idx: DeviceArray) -> DeviceArray:
    """``s[..., idx[...]]``: one element of each row of the 2-D ``s`` at that row's index."""
    rows, n = s.shape
    flat = _ufunc("add", _ufunc("multiply", arange(rows, dtype=np.int64, device=s.context), np.int64(n)), idx)
    return ops().take(s.reshape(-1), flat)


def _nan_prepare(a: Any, axis: Any, op: str, kinds: str = "biuf") -> "tuple[DeviceArray, DeviceArray, tuple, tuple, int]":
    """The rows sorted (NaNs last: numpy's complex order puts a NaN in either part last too), and
    each row's count of numbers."""
    a = device_operand(a, op)
    if a.dtype.kind not in kinds:
        raise TypeError(f"gnp.{op}: a must be a real array, got {a.dtype}")
    x, kept, keep = _rows_last(a, axis)
    n = x.shape[-1]
    rows = x.size // n if n else int(np.prod(kept))
    x2 = x.reshape(rows, n)
    s = ops().sort(x2, axis=-1) if n else x2
    return s, _valid_counts(s), kept, keep, n


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> DeviceArray:
    """``np.nanmedian``: the median of each row's numbers (NaNs sort last, so each row's count
    of numbers picks its middle on the device); all-NaN rows give NaN."""
    s, c, kept, keep, n = _nan_prepare(a, axis, "nanmedian", "biufc")
    rdt = np.nanmedian(np.zeros(2, s.dtype)).dtype
    if n == 0 or s.shape[0] == 0:
        return _finish(full(kept, np.nan, rdt, s.context), (), kept, keep, keepdims, out)
    last = _ufunc("maximum", _ufunc("subtract", c, np.int64(1)), np.int64(0))
    lo_i = _ufunc("floor_divide", last, np.int64(2))
    hi_i = _ufunc("floor_divide", c, np.int64(2))
    hi_i = _ufunc("minimum", hi_i, last)
    lo = _gather_rows(s, lo_i).astype(rdt)
    hi = _gather_rows(s, hi_i).astype(rdt)
    res = _ufunc("true_divide", _ufunc("add", lo, hi), 2).astype(rdt, copy=False)
    odd = _ufunc("equal", _ufunc("remainder", c, np.int64(2)), np.int64(1))
    res = ops().where(odd, hi, res)
    res = ops().where(_ufunc("equal", c, np.int64(0)), rdt.type(np.nan), res)
    return _finish(res, (), kept, keep, keepdims, out)


# numpy's virtual sample index of each method from a row's count of numbers ``c`` (float64, on the
# device) and q (host): alpha/beta for numpy's _compute_virtual_index, or the linear index rounded
_ALPHA_BETA = {"interpolated_inverted_cdf": (0.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3.0, 1 / 3.0), "normal_unbiased": (3 / 8.0, 3 / 8.0)}
_ROUNDED = {"lower": "floor", "higher": "ceil", "nearest": "rint"}      # numpy's np.around is rint's rounding
NAN_METHODS = ("linear", "midpoint", *_ALPHA_BETA, *_ROUNDED)


def _virtual_index(method: str, c: DeviceArray, q: float) -> DeviceArray:
    if method in _ALPHA_BETA:
        alpha, beta = _ALPHA_BETA[method]
        return _ufunc("subtract", _ufunc("add", _ufunc("multiply", c, q), alpha + q * (1 - alpha - beta)), 1.0)
    linear = _ufunc("multiply", _ufunc("subtract", c, 1.0), q)
    if method in _ROUNDED:
        return _ufunc(_ROUNDED[method], linear).astype(np.int64)
    if method == "midpoint":
        return _ufunc("multiply", 0.5, _ufunc("add", _ufunc("floor", linear), _ufunc("ceil", linear)))
    return linear


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights: Any = None,
                interpolation: Any = None, _scale: float = 1, _op: str = "nanquantile") -> DeviceArray:
    """``np.nanquantile``: the quantile of each row's numbers, whose count (NaNs sort last) sets
    the sample indices on the device (the methods of :data:`NAN_METHODS`); all-NaN rows give NaN."""
    if weights is not None or interpolation is not None:
        raise NotImplementedError(f"gnp.{_op}: weights= and interpolation= are not supported on device arrays")
    if method not in NAN_METHODS:
        if method not in _npq._QuantileMethods:
            raise ValueError(f"{method!r} is not a valid method. Use one of: {_npq._QuantileMethods.keys()}")
        raise NotImplementedError(f"gnp.{_op} supports the methods {', '.join(NAN_METHODS)}; for {method!r} remove "
                                  f"the NaNs and use gnp.{_op[3:]}")
    qa, weak = _host_q(q, _op, _scale)
    s, c, kept, keep, n = _nan_prepare(a, axis, _op)
    qarg: Any = float(qa) if weak else qa
    rdt = np.nanquantile(np.zeros(2, s.dtype), qarg, method=method).dtype  # type: ignore[call-overload]
    if s.shape[0] == 0 or n == 0:
        return _finish(full(qa.shape + kept, np.nan, rdt, s.context), qa.shape, kept, keep, keepdims, out)
    last = _ufunc("maximum", _ufunc("subtract", c, np.int64(1)), np.int64(0))
    cf = c.astype(np.float64)
    empty_rows = _ufunc("equal", c, np.int64(0))
    results = []
    for qv in qa.reshape(-1):
        vi = _virtual_index(method, cf, float(qv))
        if vi.dtype.kind == "i":             # a sample itself, no interpolation
            idx = _ufunc("minimum", _ufunc("maximum", vi, np.int64(0)), last)
            r = _gather_rows(s, idx).astype(rdt, copy=False)
        else:
            prev_f = _ufunc("floor", vi)
            gamma = _ufunc("subtract", vi, prev_f)
            prev = _ufunc("minimum", _ufunc("maximum", prev_f.astype(np.int64), np.int64(0)), last)
            nxt = _ufunc("minimum", _ufunc("add", prev, np.int64(1)), last)
            nxt = ops().where(_ufunc("less", vi, 0.0), prev, nxt)      # below the first sample: it alone
            lo, hi = _gather_rows(s, prev), _gather_rows(s, nxt)
            # a Python q is weak in numpy: its gamma and 1 - gamma are float64 values taking the data's type
            rest = _ufunc("subtract", 1.0, gamma)
            g, rest = (gamma, rest) if not weak or rdt.kind != "f" else (gamma.astype(rdt), rest.astype(rdt))
            diff = _ufunc("subtract", hi, lo)
            below = _ufunc("add", lo, _ufunc("multiply", diff, g))
            above = _ufunc("subtract", hi, _ufunc("multiply", diff, rest))
            r = ops().where(_ufunc("greater_equal", gamma, 0.5), above, below).astype(rdt, copy=False)
        results.append(ops().where(empty_rows, rdt.type(np.nan), r) if rdt.kind == "f" else r)
    res = ops().stack(results) if results else zeros((0,) + kept, rdt, s.context)
    return _finish(res, qa.shape, kept, keep, keepdims, out)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> DeviceArray:
    """``np.nanpercentile``: :func:`nanquantile` of ``q / 100``."""
    return nanquantile(a, q, axis, out, overwrite_input, method, keepdims, weights=weights,
                       interpolation=interpolation, _scale=100, _op="nanpercentile")


# ---------------------------------------------------------------- partition


def _check_kth(kth: Any, n: int) -> None:
    for k in np.atleast_1d(np.asarray(kth)).reshape(-1):
        if np.asarray(k).dtype.kind not in "iu":
            raise TypeError("Partition index must be integer")
        if not -n <= int(k) < n:
            raise ValueError(f"kth(={int(k)}) out of bounds ({n})")


def _partition_axis(a: DeviceArray, axis: Any, op: str) -> "tuple[DeviceArray, Any]":
    if axis is None:
        return ops().copy(a).reshape(-1), -1
    if a.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    return a, normalize_axis(axis, a.ndim)      # numpy's AxisError for an axis out of range


def partition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> DeviceArray:
    """``np.partition``: a copy with each ``kth`` element where a sort would put it, smaller
    ones before and larger after (a full device sort, which is one such arrangement)."""
    a = device_operand(a, "partition")
    if kind != "introselect":
        raise ValueError(f"gnp.partition: kind must be 'introselect', got {kind!r}")
    x, ax = _partition_axis(a, axis, "partition")
    if x.ndim == 0:
        raise ValueError("Cannot partition a 0-d array")
    _check_kth(kth, x.shape[ax])
    return ops().sort(x, axis=ax, order=order)


def argpartition(a: Any, kth: Any, axis: Any = -1, kind: str = "introselect", order: Any = None) -> DeviceArray:
    """``np.argpartition``: int64 indices that partition ``a`` (those of a stable sort)."""
    a = device_operand(a, "argpartition")
    if kind != "introselect":
        raise ValueError(f"gnp.argpartition: kind must be 'introselect', got {kind!r}")
    x, ax = _partition_axis(a, axis, "argpartition")
    if x.ndim == 0:
        raise ValueError("Cannot partition a 0-d array")
    _check_kth(kth, x.shape[ax])
    return ops().argsort(x, axis=ax, order=order)


# ---------------------------------------------------------------- searching and counting


def _as_operand(v: Any, ctx: Any, op: str) -> DeviceArray:
    """A device operand, or a Python/numpy scalar as a 0-d device array of its numpy type."""
    if isinstance(v, DeviceArray):
        return v
    if isinstance(v, (bool, int, float, complex, np.generic)):
        return full((), v, np.asarray(v).dtype, ctx)
    return device_operand(v, op)


def _common(a: DeviceArray, v: Any, op: str) -> "tuple[DeviceArray, DeviceArray]":
    weak = isinstance(v, (int, float, complex)) and not isinstance(v, bool)
    vd = _as_operand(v, a.context, op)
    dt = np.result_type(a.dtype, v if weak else vd.dtype)
    if dt.kind not in "biufc":
        raise TypeError(f"gnp.{op}: device arrays of {dt} are not supported here")
    return a.astype(dt, copy=False), vd.astype(dt, copy=False)


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> DeviceArray:
    """``np.searchsorted``: where each ``v`` would go in the sorted 1-D ``a`` (int64, ``v``'s
    shape; a binary search per element on the device, in numpy's order: NaN last)."""
    a = device_operand(a, "searchsorted")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if a.ndim != 1:
        raise ValueError("object too deep for desired array" if a.ndim > 1 else
                         "gnp.searchsorted: a must be 1-D")
    if sorter is not None:
        sorter = device_operand(sorter, "searchsorted")
        if sorter.dtype.kind not in "iu":            # numpy checks the type before the length
            raise TypeError(f"sorter must only contain integers (got {sorter.dtype})")
        if sorter.shape != a.shape:
            raise ValueError("sorter.size must equal a.size")
        a = ops().take(a, sorter)
    x, vd = _common(a, v, "searchsorted")
    return ops().searchsorted_sorted(x, vd, side)


def _integer_input(x: Any, op: str) -> DeviceArray:
    x = device_operand(x, op)
    if not (x.dtype.kind in "bi" or (x.dtype.kind == "u" and x.dtype.itemsize < 8)):
        raise TypeError(f"Cannot cast array data from {x.dtype!r} to dtype('int64') according to the rule 'safe'")
    return x


def bincount(x: Any, weights: Any = None, minlength: Any = 0) -> DeviceArray:
    """``np.bincount``: occurrences of each value 0..max(x) of a non-negative 1-D integer array
    (int64, atomic increments), or the sums of ``weights`` (float64, added in numpy's order
    after a stable sort by value). The length depends on
    ``max(x)``, which is read back (with ``min(x)`` to refuse negatives as numpy does)."""
    x = _integer_input(x, "bincount")
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else "object of too small depth for "
                         "desired array")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    if weights is not None:
        weights = device_operand(weights, "bincount")
        if not np.can_cast(weights.dtype, np.float64, "safe"):       # numpy's bincount sums in double
            raise TypeError(f"Cannot cast array data from {weights.dtype!r} to dtype('float64') according to the "
                            "rule 'safe'")
        if weights.shape != x.shape:
            raise ValueError("The weights and list don't have the same length.")
    length = minlength
    if x.size:
        if int(x.min().get()) < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = max(int(x.max().get()) + 1, minlength)
    xi = x.astype(np.int64, copy=False)
    if weights is None:
        return ops().bin_counts(xi, length)
    if x.size == 0:                 # (numpy's empty input gives integer zeros, weights or not)
        return zeros((length,), np.int64, x.context)
    return _bin_sums(xi, weights, length)


def _bin_sums(bins: DeviceArray, weights: DeviceArray, length: int) -> DeviceArray:
    """float64 sums of ``weights`` per bin 0..length-1 of the int64 ``bins`` (others dropped): a
    stable sort by bin keeps each bin's weights in their original order, numpy's adding order."""
    perm = ops().argsort(bins)
    s = ops().take(bins, perm)
    ks = arange(length, dtype=np.int64, device=bins.context)
    lo, hi = ops().searchsorted_sorted(s, ks, "left"), ops().searchsorted_sorted(s, ks, "right")
    if weights.dtype.kind == "c":        # (histogram's complex weights: each part summed, complex128)
        from ._complex_parts import complex_part
        ws = ops().take(weights, perm)
        out = empty((length,), np.complex128, bins.context)
        for which in ("real", "imag"):
            part = complex_part(ws, which).astype(np.float64)
            complex_part(out, which)[...] = ops().segment_sums(part, lo, hi)
        return out
    ws = ops().take(weights, perm).astype(np.float64, copy=False)
    return ops().segment_sums(ws, lo, hi)


def _histogram_edges(a: DeviceArray, bins: Any, range: Any) -> "tuple[Any, bool]":
    """The bin edges (host numpy for a count of bins, as numpy computes them; the device array
    given) and whether they came from a count."""
    if isinstance(bins, str):
        raise NotImplementedError(f"gnp.histogram: bins={bins!r} (an estimator) is not supported; pass a number "
                                  "of bins or the edges")
    if isinstance(bins, DeviceArray) or np.ndim(bins) == 1:      # the edges (numpy then ignores range)
        edges = bins if isinstance(bins, DeviceArray) else np.asarray(bins)
        if edges.ndim != 1 or edges.shape[0] < 1:
            raise ValueError("`bins` must be 1d, when an array")
        if isinstance(edges, DeviceArray):
            increasing = not bool(_ufunc("greater", edges[:-1], edges[1:]).any().get())
        else:
            increasing = not np.any(edges[:-1] > edges[1:])
        if not increasing:
            raise ValueError("`bins` must increase monotonically, when an array")
        return edges, False
    if np.ndim(bins) != 0:
        raise ValueError("`bins` must be 1d, when an array")
    try:
        count = operator.index(bins)
    except TypeError:
        raise TypeError("`bins` must be an integer, a string, or an array") from None
    if count < 1:
        raise ValueError("`bins` must be positive, when an integer")
    if range is not None:
        first, last = [mi + 0.0 for mi in range]
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = a.dtype.type(a.min().get()), a.dtype.type(a.max().get())
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first = first - 0.5
        last = last + 0.5
    bin_type = np.result_type(first, last, np.empty(0, a.dtype))
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    return np.linspace(first, last, count + 1, endpoint=True, dtype=bin_type), True


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> "tuple[DeviceArray, DeviceArray]":
    """``np.histogram``: counts (int64) or weight sums per bin and the edges (a device array).
    Bins are half-open ``[e_i, e_i+1)`` except the last, closed; values outside are dropped.
    Each value's bin is a binary search of the edges; the counts are atomic increments, the
    weight sums a stable sort by bin and a sum per bin, on the device."""
    a = device_operand(a, "histogram")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"gnp.histogram: a must be a real array, got {a.dtype}")
    if weights is not None:
        weights = device_operand(weights, "histogram")
        if weights.shape != a.shape:
            raise ValueError("weights should have the same shape as a.")
    host_edges, from_count = _histogram_edges(a, bins, range)
    edges = host_edges if isinstance(host_edges, DeviceArray) else _upload(host_edges, a.context)
    flat = ops().copy(a).reshape(-1)
    dt = np.result_type(flat.dtype, edges.dtype)
    x = flat.astype(dt, copy=False)
    e = edges.astype(dt, copy=False)
    # each value's bin (the last one closed; outside and NaN get the past-the-end bin), then
    # bincount's counts, or its per-bin sums, which add the weights in numpy's order
    nbins = e.size - 1
    b = _ufunc("subtract", ops().searchsorted_sorted(e, x, "right"), np.int64(1))
    b = ops().where(_ufunc("equal", x, e[-1]), np.int64(nbins - 1), b)
    b = ops().where(_ufunc("less", b, np.int64(0)), np.int64(nbins), b)
    if weights is None:
        n = ops().bin_counts(b, nbins)
    else:
        wdt = weights.dtype if from_count else np.result_type(np.zeros(1, weights.dtype).cumsum().dtype,
                                                               weights.dtype)
        n = _bin_sums(b, weights.reshape(-1), nbins).astype(wdt, copy=False)
    if density:
        db = _ufunc("subtract", edges[1:], edges[:-1]).astype(float, copy=False)
        return _ufunc("true_divide", _ufunc("true_divide", n, db), n.sum()), edges
    return n, edges


def _upload(host: np.ndarray, ctx: Any) -> DeviceArray:
    from ._creation import asarray
    return asarray(host, device=ctx)       # a parameter computed from shapes: the data is not copied


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
         kind: Any = None) -> DeviceArray:
    """``np.isin``: whether each element of ``element`` is in ``test_elements`` (bool,
    ``element``'s shape): the test elements sorted, each element binary-searched (NaN is in
    nothing, as numpy's ``==``)."""
    element = device_operand(element, "isin")
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    t = _as_operand(test_elements, element.context, "isin")
    e, tt = _common(element, t, "isin")
    if tt.size == 0:
        return full(element.shape, bool(invert), bool, element.context)
    st = ops().sort(ops().copy(tt).reshape(-1))
    idx = _ufunc("minimum", ops().searchsorted_sorted(st, e, "left"), np.int64(st.size - 1))
    found = _ufunc("equal", ops().take(st, idx), e)
    return _ufunc("logical_not", found) if invert else found


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> DeviceArray:
    """``np.interp`` (float64; complex128 for complex ``fp``, each part apart): piecewise-linear
    interpolation of increasing ``xp``; ``period`` wraps ``x`` and ``xp`` as numpy does."""
    x = _as_operand(x, None if not isinstance(xp, DeviceArray) else xp.context, "interp")
    xp = device_operand(xp, "interp")
    fp = device_operand(fp, "interp")
    if fp.dtype.kind == "c":     # numpy: the real and imaginary parts interpolated apart, complex128
        from ._complex_parts import complex_part
        parts = []
        for which in ("real", "imag"):
            ends = [None if v is None else getattr(complex(v), which) for v in (left, right)]
            parts.append(interp(x, xp, complex_part(fp, which), ends[0], ends[1], period))
        res = empty(parts[0].shape, np.complex128, parts[0].context)     # (no arithmetic: inf parts stay as they are)
        complex_part(res, "real")[...] = parts[0]
        complex_part(res, "imag")[...] = parts[1]
        return res
    for name, arr in (("x", x), ("xp", xp), ("fp", fp)):
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"gnp.interp: {name} must be real, got {arr.dtype}")
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("object too deep for desired array")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if xp.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    xf = x.astype(np.float64, copy=False)
    xpf = xp.astype(np.float64, copy=False)
    fpf = fp.astype(np.float64, copy=False)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        xf = _ufunc("remainder", xf, float(period))
        xpf = _ufunc("remainder", xpf, float(period))
        order = ops().argsort(xpf)
        xpf = ops().take(xpf, order)
        fpf = ops().take(fpf, order)
        xpf = _concat([_ufunc("subtract", xpf[-1:], float(period)), xpf, _ufunc("add", xpf[0:1], float(period))])
        fpf = _concat([fpf[-1:], fpf, fpf[0:1]])
    return ops().interp_sorted(xf, xpf, fpf, left, right)


# ---------------------------------------------------------------- unique


def _lexsorted_rows(rows: DeviceArray) -> "tuple[DeviceArray, DeviceArray]":
    """The permutation that sorts the rows of the 2-D ``rows`` lexicographically (stable: equal
    rows keep their order), by one stable device sort per column from the last, and the sorted rows."""
    n, m = rows.shape
    perm = arange(n, dtype=np.int64, device=rows.context)
    for c in range(m - 1, -1, -1):
        key = ops().take(ops().copy(rows[:, c]), perm)
        perm = ops().take(perm, ops().argsort(key))
    return perm, ops().take(rows, perm, axis=0)


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: Any = None, *, equal_nan: bool = True, sorted: bool = True) -> Any:
    """``np.unique``: the sorted distinct values of the flattened array (NaNs as one with
    ``equal_nan``), or the distinct slices along ``axis`` (in lexicographic order), and on
    request the first index of each, the inverse (``ar``'s shape for ``axis=None``, as numpy 2)
    and the counts; stable device sorts and a compaction."""
    ar = device_operand(ar, "unique")
    if axis is None:
        flat = ops().copy(ar).reshape(-1)
        n = flat.size
        perm = ops().argsort(flat) if (return_index or return_inverse) and n else None
        s = ops().take(flat, perm) if perm is not None else ops().sort(flat)
        new = _ufunc("not_equal", s[1:], s[:-1]) if n else None
        if new is not None and equal_nan and s.dtype.kind == "f":
            both_nan = _ufunc("logical_and", _ufunc("isnan", s[1:]), _ufunc("isnan", s[:-1]))
            new = _ufunc("logical_and", new, _ufunc("logical_not", both_nan))
        item_shape: tuple = ()
    else:
        if ar.ndim == 0:
            raise np.exceptions.AxisError(axis, 0)
        ax = normalize_axes(axis, ar.ndim)[0]
        order = [ax] + [k for k in range(ar.ndim) if k != ax]      # numpy's moveaxis(ar, axis, 0)
        moved = ops().copy(ar.transpose(order))
        n = moved.shape[0]
        item_shape = moved.shape[1:]
        rows = moved.reshape(n, -1) if n else moved.reshape(0, int(np.prod(item_shape)))
        perm, s = _lexsorted_rows(rows) if n else (zeros((0,), np.int64, ar.context), rows)
        new = _ufunc("not_equal", s[1:], s[:-1]).any(axis=1) if n else None
    if new is not None:
        flags = _concat([full((1,), True, bool, ar.context), new])
        (starts,) = ops().nonzero(flags)
        values = ops().take(s, starts, axis=0)
    else:
        starts = zeros((0,), np.int64, ar.context)
        values = zeros((0,) + tuple(s.shape[1:]), ar.dtype, ar.context)
    if axis is not None:
        values = values.reshape((values.shape[0],) + item_shape)
        values = ops().copy(values.transpose([int(k) for k in np.argsort(order)])) if ax else values
    extra: list = []
    if return_index:
        extra.append(ops().take(perm, starts) if n else zeros((0,), np.int64, ar.context))
    if return_inverse:
        if n:
            group = _ufunc("subtract", ops().scan("cumsum", flags.astype(np.int64), axis=0), np.int64(1))
            inverse = ops().take(group, ops().argsort(perm))
        else:
            inverse = zeros((0,), np.int64, ar.context)
        extra.append(inverse.reshape(ar.shape) if axis is None else inverse)
    if return_counts:
        ends = _concat([starts[1:], full((1,), n, np.int64, ar.context)])
        extra.append(_ufunc("subtract", ends, starts) if n else zeros((0,), np.int64, ar.context))
    return (values, *extra) if extra else values


_setops: Any = importlib.import_module("numpy.lib._arraysetops_impl")      # numpy's result namedtuples


def unique_all(x: Any) -> Any:
    """``np.unique_all``: values, first indices, inverse (``x``'s shape) and counts; NaNs distinct."""
    return _setops.UniqueAllResult(*unique(x, True, True, True, equal_nan=False))


def unique_counts(x: Any) -> Any:
    """``np.unique_counts``: the sorted values and their counts; NaNs distinct."""
    return _setops.UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False))


def unique_inverse(x: Any) -> Any:
    """``np.unique_inverse``: the sorted values and the inverse (``x``'s shape); NaNs distinct."""
    return _setops.UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False))


def unique_values(x: Any) -> DeviceArray:
    """``np.unique_values``: the distinct values (sorted: numpy leaves the order open); NaNs distinct."""
    return unique(x, equal_nan=False)


def _install_methods() -> None:
    """``g.partition(kth)`` (in place, as numpy's method), ``g.argpartition``, ``g.searchsorted``."""
    def _partition_method(self: DeviceArray, kth: Any, axis: int = -1, kind: str = "introselect",
                          order: Any = None) -> None:
        self[...] = partition(self, kth, axis=axis, kind=kind, order=order)

    def _argpartition_method(self: DeviceArray, kth: Any, axis: Any = -1, kind: str = "introselect",
                             order: Any = None) -> DeviceArray:
        return argpartition(self, kth, axis=axis, kind=kind, order=order)

    def _searchsorted_method(self: DeviceArray, v: Any, side: str = "left", sorter: Any = None) -> DeviceArray:
        return searchsorted(self, v, side=side, sorter=sorter)

    for name, fn in (("partition", _partition_method), ("argpartition", _argpartition_method),
                     ("searchsorted", _searchsorted_method)):
        if not hasattr(DeviceArray, name):
            fn.__name__ = fn.__qualname__ = name
            setattr(DeviceArray, name, fn)


_install_methods()
