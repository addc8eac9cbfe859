"""numpy.linalg's named result tuples (same field names, so ``res.eigenvalues`` and unpacking both work)."""
from __future__ import annotations

from typing import NamedTuple

from .._array import DeviceArray

__all__ = ["EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]


class EigResult(NamedTuple):
    eigenvalues: DeviceArray
    eigenvectors: DeviceArray


class EighResult(NamedTuple):
    eigenvalues: DeviceArray
    eigenvectors: DeviceArray


class QRResult(NamedTuple):
    Q: DeviceArray
    R: DeviceArray


class SlogdetResult(NamedTuple):
    sign: DeviceArray
    logabsdet: DeviceArray


class SVDResult(NamedTuple):
    U: DeviceArray
    S: DeviceArray
    Vh: DeviceArray
