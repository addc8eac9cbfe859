"""Types for annotating what a kernel or function accepts: a numpy array or a device array.

    import numpy as np
    import pygpgpu

    @pygpgpu.kernel
    def saxpy(x: pygpgpu.Array[np.float32], out: pygpgpu.Array[np.float32], alpha: float) -> None: ...

``Array[np.float32]`` is ``numpy.typing.NDArray[np.float32] | pygpgpu.numpy.DeviceArray`` (device
arrays carry their dtype at run time only); ``ArrayLike`` is either array of any element type.
Kernels are translated from the arguments they are called with, never from these annotations,
which exist for mypy and pyright: a kernel annotated ``npt.NDArray[np.float32]`` alone reports a
gnp array argument as an error.
"""
from __future__ import annotations

from typing import Any, TypeVar, Union

import numpy as np

from .gnp._array import DeviceArray

__all__ = ["Array", "ArrayLike", "ScalarT"]

ScalarT = TypeVar("ScalarT", bound=np.generic)

Array = Union[np.ndarray[Any, np.dtype[ScalarT]], DeviceArray]
"""``Array[np.float32]``: a numpy array of that element type, or a device array."""

ArrayLike = Union[np.ndarray[Any, np.dtype[Any]], DeviceArray]
"""A numpy array or a device array, of any element type."""
