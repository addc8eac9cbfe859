"""The parts of numbers that numpy defines for every dtype: ``real``, ``imag`` and ``angle`` (and
``conj``/``conjugate``, which are ufuncs in :mod:`._functions`). gnp arrays are real (complex is not
supported yet), so these are numpy's results for real input; complex input raises
NotImplementedError saying so."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray
from ._creation import zeros
from ._dispatch import ops
from ._views import device_operand

__all__ = ["real", "imag", "angle"]


def _real_operand(a: Any, op: str) -> DeviceArray:
    if not isinstance(a, DeviceArray) and np.iscomplexobj(a):
        raise NotImplementedError(f"gnp.{op}: complex numbers are not supported by gnp yet; compute "
                                  f"np.{op} on the host (numpy data, or g.get() of a device array)")
    a = device_operand(a, op)
    if a.dtype.kind == "c":
        raise NotImplementedError(f"gnp.{op}: complex arrays are not supported by gnp yet; compute np.{op}(g.get()) "
                                  "on the host")
    return a


def real(val: Any) -> DeviceArray:
    """The real part: a real array itself (numpy's ``a.real`` is ``a`` for real dtypes)."""
    return _real_operand(val, "real")


def imag(val: Any) -> DeviceArray:
    """The imaginary part: zeros of the array's shape and dtype for a real array (as numpy's,
    read-only, since numpy's ``a.imag`` of a real array cannot be written)."""
    a = _real_operand(val, "imag")
    out = zeros(a.shape, a.dtype, a.context)
    out._readonly = True
    return out


def angle(z: Any, deg: bool = False) -> DeviceArray:
    """The counterclockwise angle from the positive real axis: numpy's ``arctan2(0, z)`` for real
    ``z`` (0 for positive numbers and +0.0, pi for negative ones and -0.0), in degrees with ``deg``."""
    a = ops().ufunc_call("arctan2", (0, _real_operand(z, "angle")))
    if deg:
        a = ops().ufunc_call("multiply", (a, 180 / np.pi))
    return a
