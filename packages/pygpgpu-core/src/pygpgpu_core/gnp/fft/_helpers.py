"""numpy's helpers of ``numpy.fft``: the sample frequencies of a transform (``fftfreq``,
``rfftfreq``, made on the device as numpy computes them: integers times ``1 / (n * d)``) and
the shifts that put the zero frequency in the middle (``fftshift``, ``ifftshift``: ``roll``)."""
from __future__ import annotations

import operator
from typing import Any

from .._array import DeviceArray
from .._creation import arange, empty
from .._rearranging import roll
from ._arguments import operand

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _check_spacing(d: Any, what: str) -> None:
    if isinstance(d, DeviceArray):
        raise TypeError(f"gnp.fft.{what}: d is the sample spacing, a Python or numpy scalar (got a device array)")


def fftfreq(n: int, d: float = 1.0, device: Any = None) -> DeviceArray:
    """numpy's ``fftfreq``: ``[0, 1, ..., n//2 - 1 (or (n-1)//2), -(n//2), ..., -1] / (d * n)``
    (float64), on ``device`` (the default device when None)."""
    _check_spacing(d, "fftfreq")
    n = operator.index(n)
    val = 1.0 / (n * d)
    results = empty(n, int, device)
    half = (n - 1) // 2 + 1
    results[:half] = arange(0, half, dtype=int, device=device)
    results[half:] = arange(-(n // 2), 0, dtype=int, device=device)
    return results * val


def rfftfreq(n: int, d: float = 1.0, device: Any = None) -> DeviceArray:
    """numpy's ``rfftfreq``: ``[0, 1, ..., n//2] / (d * n)`` (float64), the frequencies of
    :func:`~pygpgpu_core.gnp.fft.rfft`'s terms, on ``device``."""
    _check_spacing(d, "rfftfreq")
    n = operator.index(n)
    val = 1.0 / (n * d)
    return arange(0, n // 2 + 1, dtype=int, device=device) * val


def _shifts(x: DeviceArray, axes: Any, sign: int) -> tuple[Any, Any]:
    """numpy's shifts of half each axis's length (rounded down; ``sign`` -1: ifftshift's)."""
    if axes is None:
        return [sign * (dim // 2) for dim in x.shape], tuple(range(x.ndim))
    if hasattr(axes, "__index__"):                       # one axis (an int or numpy integer)
        return sign * (x.shape[operator.index(axes)] // 2), axes
    return [sign * (x.shape[ax] // 2) for ax in axes], axes


def fftshift(x: Any, axes: Any = None) -> DeviceArray:
    """numpy's ``fftshift``: the zero-frequency term moved to the middle of ``axes`` (all by default)."""
    x = operand(x, "fftshift")
    shift, axes = _shifts(x, axes, 1)
    return roll(x, shift, axes)


def ifftshift(x: Any, axes: Any = None) -> DeviceArray:
    """numpy's ``ifftshift``: the inverse of :func:`fftshift` (they differ for odd lengths)."""
    x = operand(x, "ifftshift")
    shift, axes = _shifts(x, axes, -1)
    return roll(x, shift, axes)
