"""Advanced indexing on the device: integer index arrays (``g[idx]``, ``gnp.take``) gather,
boolean masks (``g[mask]``, ``gnp.nonzero``) compact through a prefix sum; assignment through
them scatters. Basic indexing (slices, ints) makes views in pygpgpu-core and never gets here."""
from __future__ import annotations

from typing import Any

import numpy as np
from pygpgpu_core.gnp import DeviceArray
from pygpgpu_core.gnp._array import check_out_writeable

from ._codegen import DEFAULT_CONFIG, kernel_from_source, launch
from ._half import bits, stores_half_only
from ._operands import check_dtype, check_same_device, contiguous, normalize_axis

__all__ = ["getitem", "setitem", "take", "nonzero"]

# Row k of the target from index position o: negative indices count from the end, and device
# index arrays (not bounds-checked on the host) are clipped into range rather than read past it.
_ROW_OF_INDEX = '''        k = np.int64(idx[o])
        if k < 0:
            k = k + n
        k = min(max(k, np.int64(0)), np.int64(n - 1))
'''
# one work item per element of the selected rows
_PER_ELEMENT = '''    for t in range(idx.shape[0] * inner):
        o = t // inner
        j = t - o * inner
'''

_TAKE = ('''def gnp_take(out, x, idx, n, inner):
    for t in range(out.shape[0]):
        o = t // inner
        j = t - o * inner
''' + _ROW_OF_INDEX + '''        out[t] = x[k * inner + j]
''')

_PUT = ('''def gnp_put(x, idx, v, n, inner, vsize):
''' + _PER_ELEMENT + _ROW_OF_INDEX + '''        x[k * inner + j] = v[t % vsize]
''')

# numpy assigns through an index array in order, so where indices repeat the last value stays.
# Work items write in no order: the highest position per target row is found first (an atomic
# max into a row-sized int32 array), and only that position writes.
_LAST_WRITER = ('''def gnp_last_writer(winner, idx, n):
    for o in range(idx.shape[0]):
''' + _ROW_OF_INDEX + '''        gpu.atomic_max(winner, k, np.int32(o))
''')

_PUT_LAST = ('''def gnp_put_last(x, idx, v, n, inner, vsize, winner):
''' + _PER_ELEMENT + _ROW_OF_INDEX + '''        if winner[k] == o:
            x[k * inner + j] = v[t % vsize]
''')

def _index_array(key: Any, n: int, device, op: str) -> DeviceArray:
    """An integer index array on ``device``: host keys are bounds-checked like numpy's (and
    uploaded once); device keys are used as they are (out-of-range entries are clipped)."""
    if isinstance(key, DeviceArray):
        check_same_device([key], op)
        if key.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return key
    host = np.asarray(key)
    if host.dtype.kind not in "iu":
        if host.size == 0:
            host = host.astype(np.int64)
        else:
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
    if host.size and (host.max() >= n or host.min() < -n):
        bad = host.max() if host.max() >= n else host.min()
        raise IndexError(f"index {bad} is out of bounds for axis 0 with size {n}")
    from pygpgpu_core.gnp import asarray
    return asarray(host.astype(np.int64, copy=False), device=device.context())


def take(a: DeviceArray, indices: Any, axis: Any = None, out: Any = None) -> DeviceArray:
    """``np.take``: elements along ``axis`` (the flattened array when None) at ``indices``."""
    check_out_writeable(out)
    device = check_same_device([a], "take")
    if axis is None:
        a = contiguous(a).reshape(-1)
        axis = 0
    axis = normalize_axis(axis, a.ndim, "take")
    moved = a if axis == 0 else a.transpose([axis] + [k for k in range(a.ndim) if k != axis])
    n = moved.shape[0]
    idx = _index_array(indices, n, device, "take")
    x = contiguous(moved)
    inner = x.size // n if n else 0
    res = DeviceArray(tuple(idx.shape) + x.shape[1:], x.dtype, device.context())
    if res.size:
        if n == 0:
            raise IndexError("cannot do a non-empty take from an empty axes.")
        dst, src = res.reshape(-1), x.reshape(-1)
        if x.dtype == np.float16 and stores_half_only(device):      # moved as bit patterns
            dst, src = bits(dst), bits(src)
        launch(kernel_from_source("gnp_take", _TAKE), device, DEFAULT_CONFIG,
               (dst, src, contiguous(idx).reshape(-1), n, inner))
    if axis != 0:
        nd = res.ndim
        ki = idx.ndim
        order = list(range(ki, ki + axis)) + list(range(ki)) + list(range(ki + axis, nd))
        res = res.transpose(order).copy()
    if out is not None:
        out[...] = res
        return out
    return res


def _is_mask(key: Any) -> bool:
    dt = getattr(key, "dtype", None)
    if dt is not None:
        return np.dtype(dt).kind == "b"
    if isinstance(key, list):
        flat = np.asarray(key)
        return flat.dtype.kind == "b"
    return False


def getitem(a: DeviceArray, key: Any) -> DeviceArray:
    """``a[key]`` for an integer index array or a boolean mask (alone, or after ``...``)."""
    if isinstance(key, tuple):
        from ._multi_index import is_multi_index, multi_getitem
        if is_multi_index(key):
            return multi_getitem(a, key)
        if len(key) == 1:
            key = key[0]
        else:
            raise IndexError("device arrays support integer index arrays with ints and slices, or one boolean "
                             "mask, as an advanced index (apply ... and None through a view first: g[..., 2:][idx])")
    if _is_mask(key):
        mask = key if isinstance(key, DeviceArray) else None
        if mask is None:
            from pygpgpu_core.gnp import asarray
            mask = asarray(np.asarray(key), device=a.context)
        if mask.shape != a.shape[:mask.ndim]:
            raise IndexError(f"boolean index did not match indexed array along axis 0; size of axis is "
                             f"{a.shape[0] if a.ndim else 0} but size of corresponding boolean axis is "
                             f"{mask.shape[0] if mask.ndim else 0}")
        from ._scan import mask_select
        check_same_device([a, mask], "getitem")
        return mask_select(contiguous(a), contiguous(mask).reshape(-1), a.shape[mask.ndim:])
    if key is None or isinstance(key, (str, float)):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                         "boolean arrays are valid indices")
    if a.ndim == 0:
        raise IndexError("too many indices for array: array is 0-dimensional, but 1 were indexed")
    return take(a, key, axis=0)


def setitem(a: DeviceArray, key: Any, value: Any) -> None:
    """``a[key] = value`` for an integer index array or a boolean mask (scatter on the device)."""
    if isinstance(key, tuple) and len(key) == 1:
        key = key[0]
    device = check_same_device([a], "setitem")
    half_bits_only = a.dtype == np.float16 and stores_half_only(device)      # halves move as bit patterns
    if not half_bits_only:
        check_dtype(a.dtype, "setitem", 0, device)
    if _is_mask(key) and not isinstance(value, DeviceArray) and np.ndim(value) == 0:
        # a[mask] = scalar: a = where(mask, scalar, a) in place
        from pygpgpu_core.gnp import asarray

        from ._elementwise import run
        mask = key if isinstance(key, DeviceArray) else asarray(np.asarray(key), device=a.context)
        if mask.shape != a.shape[:mask.ndim]:
            raise IndexError(f"boolean index of shape {mask.shape} does not match the indexed array's shape {a.shape}")
        mask = mask.reshape(mask.shape + (1,) * (a.ndim - mask.ndim))
        with np.errstate(all="ignore"):
            fill = np.asarray(value, dtype=a.dtype)[()]
        if half_bits_only:
            u16 = np.dtype(np.uint16)
            run("__where__", [mask, fill.view(np.uint16), bits(a)], (np.dtype(bool), u16, u16), bits(a), device)
            return
        run("__where__", [mask, fill, a], (np.dtype(bool), a.dtype, a.dtype), a, device)
        return
    if _is_mask(key):
        if isinstance(key, DeviceArray):
            mask = key
        else:
            from pygpgpu_core.gnp import asarray
            mask = asarray(np.asarray(key), device=a.context)
        (positions,) = nonzero(mask.reshape(-1))
        key = positions
        target = a if a.ndim == mask.ndim else None
        if target is None:
            raise IndexError("assignment through a boolean mask of fewer dimensions than the array is not supported")
        flat = a.reshape(-1) if type(a) is DeviceArray else None
        if flat is None:
            raise IndexError("assignment through a boolean mask needs a C-contiguous array")
        return setitem(flat, key, value)
    if isinstance(key, tuple):
        _setitem_through_positions(a, key, value)
        return
    if type(a) is not DeviceArray:
        raise IndexError("assignment through an index array needs a C-contiguous array (not a strided view)")
    n = a.shape[0]
    idx = contiguous(_index_array(key, n, device, "setitem")).reshape(-1)
    inner = a.size // n if n else 0
    from pygpgpu_core.gnp import asarray
    v = value if isinstance(value, DeviceArray) else asarray(np.asarray(value, dtype=a.dtype), device=a.context)
    v = contiguous(v.astype(a.dtype, copy=False))
    want = (idx.size * inner,)
    if v.size not in (1, inner, want[0]):
        raise ValueError(f"shape mismatch: value array of shape {v.shape} could not be broadcast to indexing "
                         f"result of shape {(idx.size,) + a.shape[1:]}")
    if idx.size and inner:
        dst, src = a.reshape(-1), v.reshape(-1)
        if half_bits_only:
            dst, src = bits(dst), bits(src)
        if idx.size == 1 or idx.size >= 2**31:
            # one index cannot repeat; past int32 positions the order is not kept (as CuPy)
            launch(kernel_from_source("gnp_put", _PUT), device, DEFAULT_CONFIG, (dst, idx, src, n, inner, v.size))
            return
        from pygpgpu_core.gnp import full

        winner = full(n, -1, dtype=np.int32, device=a.context)
        launch(kernel_from_source("gnp_last_writer", _LAST_WRITER), device, DEFAULT_CONFIG, (winner, idx, n))
        launch(kernel_from_source("gnp_put_last", _PUT_LAST), device, DEFAULT_CONFIG,
               (dst, idx, src, n, inner, v.size, winner))


def _setitem_through_positions(a: DeviceArray, key: tuple, value: Any) -> None:
    """``a[rows, cols] = v`` and other tuple keys mixing index arrays with ints and slices: the
    selection is numpy's getitem of the same key applied to the element positions (so every key
    ``g[key]`` reads, this writes), then one scatter to those positions. A strided view is
    written through a contiguous copy."""
    from pygpgpu_core.gnp import arange, asarray, broadcast_to

    positions = arange(a.size, dtype=np.int64, device=a.context).reshape(a.shape)[key]
    v = value if isinstance(value, DeviceArray) else asarray(np.asarray(value, dtype=a.dtype), device=a.context)
    if v.ndim > positions.ndim and all(n == 1 for n in v.shape[:v.ndim - positions.ndim]):
        v = v.reshape(v.shape[v.ndim - positions.ndim:])          # numpy drops extra leading 1s
    try:
        v = broadcast_to(v.astype(a.dtype, copy=False), positions.shape)
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {v.shape} could not be broadcast to indexing "
                         f"result of shape {positions.shape}") from None
    if positions.size == 0:
        return
    flat_positions, flat_values = contiguous(positions).reshape(-1), contiguous(v).reshape(-1)
    if type(a) is DeviceArray:
        setitem(a.reshape(-1), flat_positions, flat_values)
        return
    flat = contiguous(a).reshape(-1)
    setitem(flat, flat_positions, flat_values)
    a[...] = flat.reshape(a.shape)


def nonzero(a: Any) -> tuple:
    """``np.nonzero``: one int64 index array per dimension (a prefix sum compacts on the device;
    the number of nonzero elements is read back, as the result's size depends on it)."""
    from ._scan import compact_indices
    if not isinstance(a, DeviceArray):
        raise TypeError("gnp.nonzero takes a device array")
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use gnp.atleast_1d(scalar).nonzero() instead.")
    device = check_same_device([a], "nonzero")
    flat = contiguous(a).reshape(-1)
    if flat.dtype == np.float16 and stores_half_only(device):
        from ._elementwise import ufunc_call as _ufunc
        flat = _ufunc("not_equal", (flat, 0))
    flat_idx = compact_indices(flat)
    if a.ndim <= 1:
        return (flat_idx,)
    from ._elementwise import ufunc_call
    out = []
    rem = flat_idx
    strides = []
    step = 1
    for n in reversed(a.shape):
        strides.append(step)
        step *= n
    strides.reverse()
    for s in strides:
        q = ufunc_call("floor_divide", (rem, s))
        out.append(q)
        rem = ufunc_call("subtract", (rem, ufunc_call("multiply", (q, s))))
    return tuple(out)
