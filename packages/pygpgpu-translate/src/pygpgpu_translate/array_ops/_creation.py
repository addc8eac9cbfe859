"""Arrays made on the device: ``arange`` and ``linspace`` (computed as numpy computes them, no
upload), ``concatenate`` and ``stack`` (device copies into slices of the result)."""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._array import check_out_writeable
from pygpgpu_core.gnp._device import resolve_target

from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch, np_type
from ._elementwise import Casting
from ._half import narrow, stores_half_only
from ._operands import check_dtype, check_same_device, classify, normalize_axis

__all__ = ["arange", "linspace", "concatenate", "stack"]


def _upload(host: np.ndarray, ctx: Any) -> DeviceArray:
    from pygpgpu_core.gnp import asarray
    return asarray(host, device=ctx)


def _fill_source(kname: str, t: np.dtype) -> str:
    """numpy's arange fill: out[i] = start + i * delta in the result type."""
    T = np_type(t)
    return (f"def {kname}(out, start, delta):\n"
            "    for i in range(out.shape[0]):\n"
            f"        out[i] = {T}(start + {T}(i) * delta)\n")


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None, device: Any = None) -> DeviceArray:
    """``np.arange`` computed on the device (same length, dtype and values as numpy's)."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        np.arange(start, stop, step)                             # numpy's own error
    # numpy's rule: the common type of the three values, Python ints as int64, floats as float64
    dt = np.dtype(dtype) if dtype is not None else np.result_type(*(np.asarray(v).dtype for v in (start, stop, step)))
    dev, ctx = resolve_target(device)
    # a private context (kernels run in the shared one), or bool (numpy allows at most 2 elements, and
    # has no bool subtraction for the step): fill on the host with numpy's own rules and errors
    if ctx is not dev.context() or dt.kind == "b":
        return _upload(np.arange(start, stop, step, dtype=dt), ctx)
    if dt == np.float16 and stores_half_only(dev):
        # numpy's HALF_fill: the first two values as halves, then start + i * delta in float32, rounded
        wide = arange(start, stop, step, dtype=np.float32, device=ctx)
        if wide.size > 1:
            first = np.float32(np.asarray(start).astype(np.float16))
            with np.errstate(all="ignore"):
                delta = np.float32(np.asarray(start + step).astype(np.float16)) - first
            kname = "gnp_arange_float32"
            launch(kernel_from_source(kname, _fill_source(kname, np.dtype(np.float32))), dev, DEFAULT_CONFIG,
                   (wide, first, delta))
        return narrow(wide)
    check_dtype(dt, "arange", "dtype", dev)
    if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)):
        length = len(range(int(start), int(stop), int(step)))
    else:
        length = max(int(math.ceil((stop - start) / step)), 0)
    out = DeviceArray((length,), dt, ctx)
    if length:
        first = np.asarray(start).astype(dt)[()]
        second = np.asarray(start + step).astype(dt)[()] if length > 1 else first
        with np.errstate(all="ignore"):
            delta = (np.asarray(second, dt) - np.asarray(first, dt))[()]
        kname = f"gnp_arange_{dt.name}"
        launch(kernel_from_source(kname, _fill_source(kname, dt)), dev, DEFAULT_CONFIG, (out, first, delta))
    return out


_LINSPACE = '''def gnp_linspace_{name}(out, start, divide, scale, stop, last):
    for i in range(out.shape[0]):
        v = np.float64(i) / divide * scale
        v = v + start    # rounded on its own as numpy's: the kernel is built with contract=False
        if i == last:
            v = stop
        out[i] = {conv}
'''


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype: Any = None,
             axis: int = 0, device: Any = None):
    """``np.linspace`` on the device: computed in float64 as numpy does, then converted."""
    if np.ndim(start) or np.ndim(stop):
        raise TypeError("gnp.linspace takes scalar start and stop")
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dt = np.dtype(dtype) if dtype is not None else np.result_type(start, stop, float(num))
    dev, ctx = resolve_target(device)
    if ctx is not dev.context():      # a private context (kernels run in the shared one): fill on the host
        if retstep:
            values, step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True, dtype=dt)
            return _upload(values, ctx), step
        return _upload(np.linspace(start, stop, num, endpoint=endpoint, dtype=dt), ctx)
    if dt == np.float16 and stores_half_only(dev):      # computed in float64 as numpy does, then rounded once
        res = linspace(start, stop, num, endpoint, retstep, np.float64, axis, device)
        if retstep:
            return narrow(res[0]), res[1]
        return narrow(res)
    check_dtype(dt, "linspace", "dtype", dev)
    div = (num - 1) if endpoint else num
    if np.iscomplexobj(start) or np.iscomplexobj(stop):
        return _complex_linspace(start, stop, num, endpoint, retstep, dt, ctx)
    delta = float(stop) - float(start)
    step = delta / div if div > 0 else np.nan
    out = DeviceArray((num,), dt, ctx)
    if num:
        conv = f"{np_type(dt)}(np.floor(v))" if dt.kind in "iu" else f"{np_type(dt)}(v)"
        src = _LINSPACE.format(name=dt.name, conv=conv)
        # numpy's i * step; where the step underflows to 0 (linspace(0, 5e-324, 10)), (i / div) * delta;
        # without a step (one sample), i * delta. Dividing by 1.0 is exact, so one formula does all three.
        divide, scale = (1.0, step) if div > 0 and step != 0 else ((float(div), delta) if div > 0 else (1.0, delta))
        launch(kernel_from_source(f"gnp_linspace_{dt.name}", src, contract=False), dev, DEFAULT_CONFIG,
               (out, np.float64(start), np.float64(divide), np.float64(scale), np.float64(stop),
                (num - 1) if endpoint and num > 1 else -1))
    if retstep:
        return out, (step if div > 0 else np.nan)
    return out


def _complex_linspace(start: Any, stop: Any, num: int, endpoint: bool, retstep: bool, dt: np.dtype, ctx: Any):
    """numpy's linspace steps for complex bounds, in its complex type: ``i * step + start`` with
    numpy's complex multiply (``(i / div) * delta`` where the step is 0), the last sample ``stop``."""
    from ._elementwise import ufunc_call
    ct = np.result_type(start, stop, float(num))
    first, last = ct.type(start), ct.type(stop)
    div = (num - 1) if endpoint else num
    with np.errstate(all="ignore"):
        delta = last - first
        step = delta / div if div > 0 else ct.type(np.nan)
    y = arange(0, num, dtype=np.float64, device=ctx).astype(ct)
    if div > 0 and step == 0:
        y = ufunc_call("multiply", (ufunc_call("true_divide", (y, div)), delta))
    elif div > 0:
        y = ufunc_call("multiply", (y, step))
    else:
        y = ufunc_call("multiply", (y, delta))
    y = ufunc_call("add", (y, first))
    if endpoint and num > 1:
        y[-1] = last
    y = y.astype(dt) if y.dtype != dt else y
    return (y, step) if retstep else y


def _arrays(arrays: Any, op: str) -> list:
    if isinstance(arrays, DeviceArray):
        arrays = list(arrays) if arrays.ndim else [arrays]
    out = []
    for k, a in enumerate(arrays):
        c = classify(a, op, k)
        if not isinstance(c, DeviceArray):
            raise TypeError(f"gnp.{op}: element {k} is {type(a).__name__}, not a device array (upload host data with "
                            "gnp.asarray)")
        out.append(c)
    if not out:
        raise ValueError("need at least one array to concatenate")
    return out


def concatenate(arrays: Any, axis: Any = 0, out: Any = None, dtype: Any = None,
                casting: Casting = "same_kind") -> DeviceArray:
    """``np.concatenate`` of device arrays (numpy's result type, copies on the device); each
    array must convert to ``dtype`` under ``casting``, as numpy checks."""
    check_out_writeable(out)
    arrays = _arrays(arrays, "concatenate")
    device = check_same_device(arrays, "concatenate")
    if axis is None:
        arrays = [a.reshape(-1) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    for k, a in enumerate(arrays):
        if a.ndim != nd:
            raise ValueError(f"all the input arrays must have same number of dimensions, but the array at index 0 "
                             f"has {nd} dimension(s) and the array at index {k} has {a.ndim} dimension(s)")
    ax = normalize_axis(axis, nd, "concatenate")
    for k, a in enumerate(arrays[1:], 1):
        for d in range(nd):
            if d != ax and a.shape[d] != arrays[0].shape[d]:
                raise ValueError(f"all the input array dimensions except for the concatenation axis must match "
                                 f"exactly, but along dimension {d}, the array at index 0 has size "
                                 f"{arrays[0].shape[d]} and the array at index {k} has size {a.shape[d]}")
    shape = list(arrays[0].shape)
    shape[ax] = sum(a.shape[ax] for a in arrays)
    if out is not None:           # numpy: the arrays cast into out's dtype, by ``casting``
        if dtype is not None:
            raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both were provided.")
        if not isinstance(out, DeviceArray):
            raise TypeError(f"gnp.concatenate: out must be a device array, got {type(out).__name__}")
        if out.ndim != nd:
            raise ValueError(f"Output array has wrong dimensionality ({out.ndim}; the result has {nd})")
        if out.shape != tuple(shape):
            raise ValueError(f"Output array is the wrong shape {out.shape}; expected {tuple(shape)}")
        dtype = out.dtype
    dt = np.dtype(dtype) if dtype is not None else np.result_type(*[a.dtype for a in arrays])
    for k, a in enumerate(arrays):
        if a.dtype != dt and not stores_half_only(device):
            # (arrays of the result's type are copied as they are, complex ones too; a device that
            # stores half converts float16 through float32 in the copy)
            check_dtype(a.dtype, "concatenate", k, device)
        if not np.can_cast(a.dtype, dt, casting):
            raise TypeError(f"Cannot cast array data from {a.dtype!r} to {dt!r} according to the rule {casting!r}")
    res = out if out is not None else DeviceArray(tuple(shape), dt, device.context())
    start = 0
    for a in arrays:
        n = a.shape[ax]
        if n and a.size:
            key = (slice(None),) * ax + (slice(start, start + n),)
            res[key] = a
        start += n
    return res


def stack(arrays: Any, axis: int = 0, out: Any = None, dtype: Any = None,
          casting: Casting = "same_kind") -> DeviceArray:
    """``np.stack``: join same-shaped device arrays along a new axis."""
    check_out_writeable(out)
    arrays = _arrays(arrays, "stack")
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        raise ValueError("all input arrays must have the same shape")
    ax = normalize_axis(axis, len(shape) + 1, "stack")
    expanded = [a[(slice(None),) * ax + (None,)] for a in arrays]
    return concatenate(expanded, axis=ax, out=out, dtype=dtype, casting=casting)
