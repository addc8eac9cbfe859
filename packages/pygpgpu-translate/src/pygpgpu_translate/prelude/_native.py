"""Helpers a dialect's fast-math call templates (``Dialect.native32``) may call.

``native_rsqrt:float``
    ``pg_native_rsqrt_float(x)``: what ``gpu.rsqrt`` / ``gpu.native_rsqrt`` compute at float32
    where the dialect's template calls it. CUDA: the PTX ``rsqrt.approx.ftz.f32``, one MUFU.RSQ
    (``rsqrtf`` built without ``-ftz`` adds a compare and two multiplies around it to rescale a
    subnormal argument). Empty in the dialects whose templates call a toolchain function.

The lowering notes the piece for every float32 call (the built IR is dialect-independent); the
dialect decides whether it has a body (``Dialect.native_source``).
"""
from __future__ import annotations

from ._types import dialect_of

__all__ = ["NATIVE_FAMILIES", "NATIVE_PIECES", "native_source"]

NATIVE_FAMILIES = ("native_rsqrt",)
# gpu.<name> -> the piece its float32 call may use. Not callable through piece_function: the
# lowering notes it, only a dialect's template names its function.
NATIVE_PIECES = {"rsqrt": "native_rsqrt:float", "native_rsqrt": "native_rsqrt:float"}


def native_source(dialect, family: str) -> str:
    return dialect_of(dialect).native_source(family)
