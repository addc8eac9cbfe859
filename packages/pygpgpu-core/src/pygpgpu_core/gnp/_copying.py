"""``copyto``: numpy's checked assignment, run as a device copy (or a device select with
``where=``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ._array import DeviceArray
from ._functions import where as choose
from ._views import device_operand

__all__ = ["copyto"]


def _stand_in(x: Any) -> Any:
    """An empty host array of ``x``'s type (a scalar stays itself): numpy's copyto on stand-ins
    checks the casting rule, and converts scalars, with numpy's errors and no data."""
    if isinstance(x, DeviceArray):
        return np.empty(0, x.dtype)
    return np.empty(0, np.asarray(x).dtype) if np.ndim(x) else x


def copyto(dst: DeviceArray, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """``dst[...] = src`` where ``src`` converts to ``dst``'s type under ``casting`` (numpy's
    TypeError otherwise), broadcast as numpy's; with ``where``, only where it is True. Host data
    as ``src`` is uploaded, as ``dst[...] = host`` uploads it."""
    dst = device_operand(dst, "copyto")
    if isinstance(where, (bool, int, float, complex)) and not isinstance(where, np.ndarray):
        where = bool(where)              # a Python scalar is weak: numpy takes its truth value
    if where is False:
        np.copyto(np.empty(0, dst.dtype), _stand_in(src), casting=casting)   # type: ignore[arg-type]
        return
    if where is True:
        np.copyto(np.empty(0, dst.dtype), _stand_in(src), casting=casting)   # type: ignore[arg-type]
        dst[...] = src
        return
    mask = device_operand(where, "copyto")
    np.copyto(np.empty(0, dst.dtype), _stand_in(src), casting=casting,     # type: ignore[arg-type]
              where=np.empty(0, mask.dtype))
    dst[...] = choose(mask, src, dst)
