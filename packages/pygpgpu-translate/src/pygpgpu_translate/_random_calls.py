"""The type rule of ``gpu.uniform(seed, counter)``, ``gpu.normal(seed, counter)`` and
``gpu.randint(seed, counter, low, high)``: calls of the ``random_*`` prelude pieces.

Seeds and counters are integers taken modulo 2**64, as on the host; the floats are the kernel's default float unless ``dtype=np.float32/np.float64`` says
otherwise; ``randint`` is int32, or int64 when ``low`` or ``high`` needs 64 bits (int64,
uint64, or uint32 whose values int32 cannot hold), and runs in 64-bit arithmetic either way so
both widths draw the same number as the host.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import _ir as ir
from ._dtype_objects import dtype_from_object
from ._types import FLOAT32, FLOAT64, INT32, INT64, Scalar, concrete

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["call_random"]

UINT64 = Scalar("uint64")
_PARAMS = {"uniform": ("seed", "counter"), "normal": ("seed", "counter"), "randint": ("seed", "counter", "low", "high")}


def call_random(self: FunctionBuilder, b, node):
    kind = b.key
    names = _PARAMS[kind]
    float_type = self.prog.default_float
    for kw in node.keywords:
        if kw.arg != "dtype" or kind == "randint":
            raise self.err(kw.value, f"{b.name}() takes no keyword argument {kw.arg!r}",
                           f"call {b.name}({', '.join(names)})" + ("" if kind == "randint" else " or add dtype=np.float64"))
        float_type = dtype_from_object(self, self.expr(kw.value), kw.value)
        if float_type not in (FLOAT32, FLOAT64):
            raise self.type_err(kw.value, f"{b.name}(dtype=...) must be np.float32 or np.float64, got {float_type}")
    if len(node.args) != len(names):
        raise self.err(node, f"{b.name}() takes {len(names)} arguments ({', '.join(names)}), {len(node.args)} given")
    args = [self.value(a) for a in node.args]
    for a, name in zip(args, names):
        if not (isinstance(a.type, Scalar) and a.type.is_int):
            raise self.type_err(node, f"{b.name}(): {name} must be an integer, got {concrete(a.type, float_type)}"
                                + ("; convert it with int(...)" if isinstance(a.type, Scalar) else ""))
    # to the piece's ulong parameters through C's implicit conversion (modulo 2**64, the host's
    # rule): an IR cast to uint64 would read as a narrowing conversion of a signed Python int,
    # which the launch range-checks (_int_meets), and seeds are meant to be any 64-bit value
    seed, counter = (self.convert(a, INT64 if a.type.kind == "i" else UINT64) for a in args[:2])
    if kind == "randint":
        low, high = args[2], args[3]
        wide = any(concrete(a.type, float_type).bits == 64 or a.type.name == "uint32" for a in (low, high))
        call = ir.Call(self.prog.need_piece("random_randint", INT64),
                       [seed, counter, self.convert(low, INT64), self.convert(high, INT64)], INT64)
        return call if wide else ir.Cast(call, INT32)
    self.prog.note_type(float_type)
    return ir.Call(self.prog.need_piece(f"random_{kind}", float_type), [seed, counter], float_type)
