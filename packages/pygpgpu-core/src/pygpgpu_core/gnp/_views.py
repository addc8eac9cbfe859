"""numpy's functions that only re-lay an array: each result is a view of the same device memory
(a new shape, strides and offset, as numpy's are), so nothing is copied and no kernel runs.
``gnp.broadcast_to(g, shape)`` has zero strides, ``gnp.flip(g)`` negative ones, and
``gnp.split(g, 3)`` gives three views of ``g``."""
from __future__ import annotations

from operator import index as operator_index
from typing import Any

import numpy as np

from ._array import DeviceArray, _normalize_axis, _view
from ._indexing import MAXDIMS

__all__ = ["expand_dims", "squeeze", "moveaxis", "swapaxes", "atleast_1d",
           "atleast_2d", "atleast_3d", "broadcast_to", "broadcast_arrays", "flip", "fliplr", "flipud", "diagonal",
           "split", "array_split", "hsplit", "vsplit", "dsplit", "rot90"]


# Python values numpy takes in place of an array (a list of coefficients, a scalar bound): small by
# nature, so gnp uploads them as numpy would convert them (np.asarray: int64, float64, bool)
PYTHON_OPERANDS = (list, tuple, bool, int, float, complex, np.bool_, np.integer, np.floating,
                   np.complexfloating)   # numpy scalars are host scalars


def device_operand(a: Any, op: str, device: Any = None) -> DeviceArray:
    """``a`` when it is a device array; a Python scalar, list or tuple uploaded as numpy converts it
    (to ``device``, else the default device); numpy arrays are refused, as gnp never moves array
    data implicitly."""
    if isinstance(a, DeviceArray):
        return a
    if isinstance(a, PYTHON_OPERANDS):
        from ._creation import asarray
        return asarray(a, device=device)
    raise TypeError(f"gnp.{op} takes device arrays, got {type(a).__name__}; upload host data once with "
                    "gnp.asarray(x)")


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """numpy's ``normalize_axis_tuple``: an int or a sequence of them, each in range
    (``AxisError``), none repeated (``ValueError``)."""
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(_normalize_axis(a, ndim) for a in items)
    if len(set(out)) != len(out):
        raise ValueError("repeated axis")
    return out


def expand_dims(a: DeviceArray, axis: Any) -> DeviceArray:
    """A view with axes of length 1 inserted at ``axis`` (an int or a tuple, in the result's numbering)."""
    a = device_operand(a, "expand_dims")
    axes = normalize_axes(axis, a.ndim + len(axis if isinstance(axis, (tuple, list)) else (axis,)))
    if a.ndim + len(axes) > MAXDIMS:       # numpy reshapes here: its ValueError, not indexing's IndexError
        raise ValueError(f"maximum supported dimension for an ndarray is currently {MAXDIMS}, found "
                         f"{a.ndim + len(axes)}")
    key = tuple(None if k in axes else slice(None) for k in range(a.ndim + len(axes)))
    return a[key]


def squeeze(a: DeviceArray, axis: Any = None) -> DeviceArray:
    """A view without the axes of length 1 (only those of ``axis`` when given)."""
    a = device_operand(a, "squeeze")
    if a.ndim == 0:
        return a.squeeze(axis)      # (numpy's axis 0 or -1 of a 0-d array)
    return a.squeeze(axis if axis is None else normalize_axes(axis, a.ndim))


def moveaxis(a: DeviceArray, source: Any, destination: Any) -> DeviceArray:
    """A view with the axes ``source`` moved to the positions ``destination``; the others keep their order."""
    a = device_operand(a, "moveaxis")
    src, dst = normalize_axes(source, a.ndim), normalize_axes(destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [k for k in range(a.ndim) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


def swapaxes(a: DeviceArray, axis1: int, axis2: int) -> DeviceArray:
    """A view with two axes exchanged."""
    return device_operand(a, "swapaxes").swapaxes(axis1, axis2)


def _at_least(arys: tuple, op: str, keys: dict) -> Any:
    """Each array with axes of length 1 added as ``keys[ndim]`` indexes them (numpy's placement)."""
    out = []
    for a in arys:
        a = device_operand(a, op)
        key = keys.get(a.ndim)
        out.append(a if key is None else a[key])
    return out[0] if len(out) == 1 else tuple(out)


def atleast_1d(*arys: DeviceArray) -> Any:
    """Views with at least one axis (a 0-d array becomes shape (1,)); one array, or a tuple of them."""
    return _at_least(arys, "atleast_1d", {0: (None,)})


def atleast_2d(*arys: DeviceArray) -> Any:
    """Views with at least two axes: a 1-D array of n becomes one row, (1, n)."""
    return _at_least(arys, "atleast_2d", {0: (None, None), 1: (None, slice(None))})


def atleast_3d(*arys: DeviceArray) -> Any:
    """Views with at least three axes: (n,) becomes (1, n, 1) and (m, n) becomes (m, n, 1)."""
    return _at_least(arys, "atleast_3d", {0: (None, None, None), 1: (None, slice(None), None),
                                          2: (slice(None), slice(None), None)})


def _broadcast_shape_of(shape: tuple, to: Any) -> tuple:
    """The shape ``np.broadcast_to`` gives an array of ``shape``, with numpy's errors: asked of
    numpy on a zero-stride stand-in for the array (one byte, whatever its shape)."""
    stand_in = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=shape, strides=(0,) * len(shape))
    return np.broadcast_to(stand_in, to).shape


def broadcast_to(array: DeviceArray, shape: Any, subok: bool = False) -> DeviceArray:
    """A view of ``array`` with ``shape``: broadcast axes step by 0 bytes, so every element of
    them is the same memory, so the view is read-only, as numpy's is (``flags.writeable``)."""
    a = device_operand(array, "broadcast_to")
    out = _broadcast_shape_of(a.shape, shape)
    lead = len(out) - a.ndim
    strides = tuple(0 if k < lead or a.shape[k - lead] != n else a.strides[k - lead] for k, n in enumerate(out))
    return _read_only(_view(a, out, strides, a.offset))


def _read_only(view: DeviceArray) -> DeviceArray:
    """``view`` with numpy's WRITEABLE flag off (it may be set back where the base is writeable)."""
    view._readonly = True
    return view


def broadcast_arrays(*args: DeviceArray, subok: bool = False) -> tuple[DeviceArray, ...]:
    """The arrays broadcast against each other, as views (an array already of that shape is itself).
    The broadcast views are read-only: numpy 2 still lets them be written with a FutureWarning
    that it will make them read-only, which gnp does now, as a write to them reaches every
    element sharing the memory."""
    arrays = [device_operand(a, "broadcast_arrays") for a in args]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    return tuple(a if a.shape == shape else broadcast_to(a, shape) for a in arrays)


def flip(m: DeviceArray, axis: Any = None) -> DeviceArray:
    """A view with the order of elements reversed along ``axis`` (every axis when None)."""
    m = device_operand(m, "flip")
    axes = range(m.ndim) if axis is None else normalize_axes(axis, m.ndim)
    return m[tuple(slice(None, None, -1) if k in axes else slice(None) for k in range(m.ndim))]


def fliplr(m: DeviceArray) -> DeviceArray:
    """A view with the columns (axis 1) reversed."""
    m = device_operand(m, "fliplr")
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


def flipud(m: DeviceArray) -> DeviceArray:
    """A view with the rows (axis 0) reversed."""
    m = device_operand(m, "flipud")
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1, ...]


def diagonal(a: DeviceArray, offset: int = 0, axis1: int = 0, axis2: int = 1) -> DeviceArray:
    """A view of the diagonal of ``axis1`` and ``axis2`` (moved to the last axis, as numpy's):
    one stride that is the sum of the two. Read-only, as numpy's is (``d.flags.writeable = True``
    makes it writable, as there, where ``a`` is writable)."""
    return _read_only(writable_diagonal(device_operand(a, "diagonal"), offset, axis1, axis2))


def writable_diagonal(a: DeviceArray, offset: int = 0, axis1: int = 0, axis2: int = 1) -> DeviceArray:
    """:func:`diagonal` with ``a``'s own WRITEABLE flag (``eye`` and ``diag`` fill it in place)."""
    if a.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    k = operator_index(offset)
    a1, a2 = _normalize_axis(axis1, a.ndim), _normalize_axis(axis2, a.ndim)
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    n1, n2 = a.shape[a1], a.shape[a2]
    s1, s2 = a.strides[a1], a.strides[a2]
    n = max(min(n1, n2 - k) if k >= 0 else min(n1 + k, n2), 0)
    start = a.offset + ((k * s2 if k >= 0 else -k * s1) if n else 0)
    rest = [d for d in range(a.ndim) if d not in (a1, a2)]
    shape = tuple(a.shape[d] for d in rest) + (n,)
    return _view(a, shape, tuple(a.strides[d] for d in rest) + (s1 + s2,), start)


def array_split(ary: DeviceArray, indices_or_sections: Any, axis: int = 0) -> list[DeviceArray]:
    """Views of consecutive parts of ``ary`` along ``axis``: ``n`` parts as equal as can be (the
    first ones one longer), or cut before each index of a sequence."""
    ary = device_operand(ary, "array_split")
    total = ary.shape[axis]
    try:
        count = len(indices_or_sections) + 1
        points = [0] + [operator_index(i) for i in indices_or_sections] + [total]
    except TypeError:
        count = operator_index(indices_or_sections)
        if count <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(total, count)
        sizes = [0] + extras * [each + 1] + (count - extras) * [each]
        points = [sum(sizes[:k + 1]) for k in range(len(sizes))]
    moved = ary.swapaxes(axis, 0)
    return [moved[points[k]:points[k + 1]].swapaxes(axis, 0) for k in range(count)]


def split(ary: DeviceArray, indices_or_sections: Any, axis: int = 0) -> list[DeviceArray]:
    """Like :func:`array_split`, but ``n`` parts must be equal (``ValueError`` otherwise)."""
    ary = device_operand(ary, "split")
    try:
        len(indices_or_sections)
    except TypeError:
        if ary.shape[axis] % indices_or_sections:
            raise ValueError("array split does not result in an equal division") from None
    return array_split(ary, indices_or_sections, axis)


def _split_along(ary: DeviceArray, indices_or_sections: Any, op: str, least: int, axis: int) -> list:
    ary = device_operand(ary, op)
    if ary.ndim < least:
        raise ValueError(f"{op} only works on arrays of {least} or more dimensions")
    return split(ary, indices_or_sections, axis)


def hsplit(ary: DeviceArray, indices_or_sections: Any) -> list[DeviceArray]:
    """:func:`split` along axis 1 (axis 0 of a 1-D array)."""
    return _split_along(ary, indices_or_sections, "hsplit", 1, 1 if getattr(ary, "ndim", 0) > 1 else 0)


def vsplit(ary: DeviceArray, indices_or_sections: Any) -> list[DeviceArray]:
    """:func:`split` along axis 0 of an array of 2 or more dimensions."""
    return _split_along(ary, indices_or_sections, "vsplit", 2, 0)


def dsplit(ary: DeviceArray, indices_or_sections: Any) -> list[DeviceArray]:
    """:func:`split` along axis 2 of an array of 3 or more dimensions."""
    return _split_along(ary, indices_or_sections, "dsplit", 3, 2)


def rot90(m: DeviceArray, k: int = 1, axes: Any = (0, 1)) -> DeviceArray:
    """A view rotated by 90 degrees ``k`` times, from the first of ``axes`` towards the second:
    a flip and a transposition, as numpy's."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    m = device_operand(m, "rot90")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if not all(-m.ndim <= a < m.ndim for a in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k = operator_index(k) % 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    order = list(range(m.ndim))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return flip(m, axes[1]).transpose(order)
    return flip(m.transpose(order), axes[1])
