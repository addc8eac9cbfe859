"""``gnp.broadcast(*arrays)``: numpy's broadcast object for device arrays: the common ``shape``,
``size``, ``ndim`` / ``nd`` and ``numiter`` of its operands, and ``values``, the operands as
broadcast views (numpy's element iterator is host-side and left out: index with the views)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._views import broadcast_to, device_operand

__all__ = ["broadcast"]


class broadcast:  # noqa: N801  (numpy's class name)
    """The broadcast of up to 64 operands (device arrays, or Python scalars and sequences)."""

    def __init__(self, *args: Any) -> None:
        if len(args) > 64:
            raise ValueError(f"Need at least 0 and at most 64 array objects, got {len(args)}")
        arrays = [a if isinstance(a, broadcast) else device_operand(a, "broadcast") for a in args]
        self.shape: tuple[int, ...] = np.broadcast_shapes(*(a.shape for a in arrays))   # numpy's ValueError
        self._arrays = [v for a in arrays for v in (a.values if isinstance(a, broadcast) else (a,))]

    @property
    def values(self) -> tuple:
        """The operands broadcast to ``shape`` (read-only views, as numpy's broadcast_arrays)."""
        return tuple(broadcast_to(a, self.shape) for a in self._arrays)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    nd = ndim

    @property
    def numiter(self) -> int:
        return len(self._arrays)

    def __repr__(self) -> str:
        return f"gnp.broadcast(shape={self.shape}, numiter={self.numiter})"
