"""An array element read as a value.

numpy stores a bool as one byte and reads any non-zero byte as True: ``np.array([3, -1], np.int8)
.view(bool)`` holds the bytes 3 and 255 and is ``[True, True]`` to every numpy operation. A
bool element therefore loads as its byte compared with 0, never as the byte itself (which C
would widen to 3 or 255 in ``i + b[i]``); the compare is one instruction next to the load.
"""
from __future__ import annotations

from . import _ir as ir
from ._types import BOOL, Scalar

UINT8 = Scalar("uint8")


def element_value(array: ir.ArrayRef, flat: ir.Expr, elem, member: str = "") -> ir.Expr:
    """Element ``flat`` of ``array`` (its field ``member`` for a record) as a value of type ``elem``."""
    if isinstance(elem, Scalar) and elem.name == "bool":
        return ir.Bin("!=", ir.Load(array, flat, UINT8, member=member), ir.Const(0, UINT8), BOOL)
    return ir.Load(array, flat, elem, member=member)
