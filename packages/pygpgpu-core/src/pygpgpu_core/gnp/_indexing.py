"""Basic indexing as numpy does it, on (shape, strides, offset) only: what ``g[2:10:2]``,
``g[:, 1]``, ``g[..., None]`` and ``g.T`` select, without touching any data."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

__all__ = ["is_basic_key", "basic_view_layout", "c_strides", "is_c_contiguous", "span"]


MAXDIMS = 64     # numpy's NPY_MAXDIMS (numpy 2): more axes are its ValueError (IndexError when indexing)


def c_strides(shape: tuple, itemsize: int) -> tuple:
    strides = []
    step = itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def is_c_contiguous(shape: tuple, strides: tuple, itemsize: int) -> bool:
    """numpy's rule: axes of length 1 may have any stride; an empty array is contiguous."""
    if 0 in shape:          # whatever its strides (any axis may be the empty one)
        return True
    step = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != step:
            return False
        step *= n
    return True


def span(shape: tuple, strides: tuple, offset: int, itemsize: int) -> tuple:
    """(first byte, end byte) of the memory a layout touches; (offset, offset) when empty."""
    if any(n == 0 for n in shape):
        return offset, offset
    lo = hi = offset
    for n, s in zip(shape, strides):
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + itemsize


def _is_int(k: Any) -> bool:
    if isinstance(k, (bool, np.bool_)):
        return False
    if isinstance(k, (int, np.integer)):
        return True
    return False


def is_basic_key(key: Any) -> bool:
    """True for keys made only of ints, slices, Ellipsis and None (numpy's basic indexing)."""
    items = key if isinstance(key, tuple) else (key,)
    for k in items:
        if not (k is None or k is Ellipsis or isinstance(k, slice) or _is_int(k)):
            return False
    return True


def basic_view_layout(shape: tuple, strides: tuple, offset: int, key: Any) -> tuple:
    """(shape, strides, offset) of ``a[key]`` for a basic ``key``; IndexError as numpy raises it."""
    items = list(key) if isinstance(key, tuple) else [key]
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    if used > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but {used} were indexed")
    if Ellipsis in items:
        i = next(j for j, k in enumerate(items) if k is Ellipsis)
        items[i:i + 1] = [slice(None)] * (len(shape) - used)
    else:
        items += [slice(None)] * (len(shape) - used)
    new_shape, new_strides = [], []
    axis = 0
    for k in items:
        if k is None:
            new_shape.append(1)
            new_strides.append(0)
            continue
        n, s = shape[axis], strides[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            if count:
                offset += start * s
            new_shape.append(count)
            new_strides.append(s * step)
        else:
            i = int(operator_index(k))
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            offset += (i % n) * s
        axis += 1
    if len(new_shape) > MAXDIMS:
        raise IndexError(f"number of dimensions must be within [0, {MAXDIMS}], indexing result would have "
                         f"{len(new_shape)}")
    return tuple(new_shape), tuple(new_strides), offset
