"""The uniform struct of a translated kernel's values, both sides of it: the WGSL field type the
dialect declares for a value, and the bytes the runtime packs, in WGSL's uniform layout (4-byte
scalars at their size; vec2 aligned to 8, vec3 and vec4 to 16; the struct rounded up to 16)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["VALUES_STRUCT", "VALUES_BINDING_NAME", "wgsl_value_type", "ValuesLayout"]

VALUES_STRUCT = "pg_Values"
VALUES_BINDING_NAME = "pg_values"

_BOOL_FIELDS = ("bool",)
# 8- and 16-bit integers travel as 32-bit ones (their WGSL aliases are u32/i32)
_WIDENED = {np.dtype(np.bool_): np.dtype(np.uint32), np.dtype(np.uint8): np.dtype(np.uint32),
            np.dtype(np.uint16): np.dtype(np.uint32), np.dtype(np.int8): np.dtype(np.int32),
            np.dtype(np.int16): np.dtype(np.int32)}


def wgsl_value_type(type_text: str) -> "tuple[str, str]":
    """(the struct field's type, a template reading it as the kernel's value): a bool travels as u32."""
    if type_text in _BOOL_FIELDS:
        return "u32", "({} != 0u)"
    return type_text, "{}"


def _align(dtype: np.dtype) -> int:
    """WGSL's AlignOf: a scalar its size (f16: 2), vec2 twice that, vec3 and vec4 four times."""
    if dtype.shape:
        return dtype.base.itemsize * (2 if dtype.shape[0] == 2 else 4)
    return dtype.itemsize


class ValuesLayout:
    """Where each value argument goes in the struct (by launch position), and its size."""

    def __init__(self, kinds: "Sequence[tuple[int, np.dtype]]") -> None:
        offset = 0
        self.fields: list[tuple[int, int, np.dtype]] = []
        for index, dtype in kinds:
            stored = _WIDENED.get(dtype, dtype)
            a = _align(stored)
            offset = (offset + a - 1) // a * a
            self.fields.append((index, offset, stored))
            offset += stored.itemsize
        self.nbytes = max(16, (offset + 15) // 16 * 16)
        self._block = np.zeros(self.nbytes, np.uint8)

    def pack(self, args: "Sequence[Any]") -> bytes:
        block = self._block
        for index, offset, dtype in self.fields:
            raw = np.asarray(args[index], dtype=dtype.base).tobytes()
            block[offset:offset + len(raw)] = np.frombuffer(raw, np.uint8)
        return block.tobytes()
