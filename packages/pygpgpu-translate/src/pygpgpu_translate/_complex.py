"""Complex numbers in kernels: complex64/complex128 arrays, complex scalars and literals.

``ComplexType`` is the translator's type of a complex value; its C form is the ``complex:<T>``
prelude struct (``{re, im}``, numpy's layout), and every operation is a call of that piece's
functions (``prelude/_complex``), so the emitter only prints calls. Typing follows numpy where
the translator's own rules allow: a complex operand and a real one compute in the complex type
of the wider part type (``complex64 * float64`` is complex128, ``complex64 * 2`` stays
complex64), a complex literal (``1j``) adopts the other operand's precision, and on its own is
the complex type of the kernel's default float. A complex value where a real one is expected
is a TypeError that says to take ``.real``, ``.imag`` or ``abs()``.

Supported: ``+ - * /``, ``**`` with a small integer constant, unary ``-``/``+``, ``==``/``!=``,
truth tests, ``abs``/``np.abs``, ``.real``, ``.imag``, ``conjugate()``/``np.conj``, ``np.real``,
``np.imag``, ``complex(re, im)``/``np.complex64/128(...)``, ``cmath.exp``/``cmath.sqrt`` (and
``np.exp``/``np.sqrt`` of a complex value).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import numpy as np

from . import _ir as ir
from ._types import BOOL, FLOAT32, FLOAT64, INT32, ArrayType, Scalar, Vector, binary_result, concrete

if TYPE_CHECKING:
    from ._builder import FunctionBuilder, ProgramBuilder

__all__ = ["ComplexType", "is_complex", "complex_type_of", "complex_const", "complex_convert", "complex_binop",
           "complex_unary", "complex_compare", "complex_truth", "complex_attribute", "complex_conjugate",
           "complex_builtin", "complex_definitions", "complex_from_parts", "lower_cmath", "lower_part", "lower_conj",
           "lower_complex"]

_SUPPORTED = "+ - * /, ** with a small integer constant, abs(), .real, .imag, conjugate(), cmath.exp, cmath.sqrt"


@dataclass(frozen=True)
class ComplexType:
    base: Scalar               # float32 (complex64) or float64 (complex128)

    weak = False
    kind = "c"
    is_float = False
    is_int = False
    width = 2                  # a complex scalar argument travels as two hidden real parameters

    @property
    def name(self) -> str:
        return "complex64" if self.base.name == "float32" else "complex128"

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.name)

    @property
    def bits(self) -> int:
        return 2 * self.base.bits

    @property
    def cname(self) -> str:
        return "pg_" + self.name

    @property
    def part(self) -> str:
        return "float" if self.base.name == "float32" else "double"     # the prelude's type word

    def strong(self) -> "ComplexType":
        return self

    def __str__(self) -> str:
        return self.name


C64, C128 = ComplexType(FLOAT32), ComplexType(FLOAT64)


def is_complex(t) -> bool:
    return isinstance(t, ComplexType)


def complex_type_of(dtype) -> ComplexType:
    return C64 if np.dtype(dtype) == np.complex64 else C128


def _fn(self: FunctionBuilder, ct: ComplexType, op: str) -> str:
    """The prelude function ``pg_c<op>_<T>``, its piece noted as needed."""
    self.prog.prelude_needed.add(f"complex:{ct.part}")
    self.prog.note_type(ct.base)                  # float64 parts need OpenCL's fp64 pragma
    return f"pg_c{op}_{ct.part}"


def _call(self: FunctionBuilder, ct, op, args, t=None):
    return ir.Call(_fn(self, ct, op), args, ct if t is None else t)


def _make(self: FunctionBuilder, ct, re, im):
    return _call(self, ct, "make", [self.convert(re, ct.base), self.convert(im, ct.base)])


def complex_const(self: FunctionBuilder, value: complex, ct: "ComplexType | None" = None):
    """A complex constant; without ``ct`` a literal, which adopts the other operand's precision."""
    literal = ct is None
    ct = ct or ComplexType(self.prog.default_float)
    e = _make(self, ct, ir.Const(float(value.real), ct.base), ir.Const(float(value.imag), ct.base))
    e.complex_value = complex(value)
    e.complex_literal = literal
    return e


def _part(self: FunctionBuilder, e, which):
    if isinstance(e, ir.Call) and hasattr(e, "complex_value"):
        v = e.complex_value
        return ir.Const(v.real if which == "real" else v.imag, e.type.base)
    return _call(self, e.type, which, [e], e.type.base)


def complex_convert(self: FunctionBuilder, e, t):
    """``e`` as a value of type ``t`` where either is complex (``_expressions.convert``)."""
    src = e.type
    if not is_complex(t):
        raise self.type_err(None, f"a {src} value is used where a {concrete(t, self.prog.default_float)} is expected; "
                            "take z.real, z.imag or abs(z)")
    if is_complex(src):
        if src == t:
            return e
        if hasattr(e, "complex_value"):
            return complex_const(self, e.complex_value, t)
        return _make(self, t, _part(self, e, "real"), _part(self, e, "imag"))
    if not isinstance(src, Scalar):
        raise self.type_err(None, f"a {src} cannot become a {t}")
    return _make(self, t, e, ir.Const(0.0, t.base))


def _part_type(e):
    t = e.type
    if is_complex(t):
        return Scalar("float32", weak=True) if getattr(e, "complex_literal", False) else t.base
    if isinstance(t, Scalar):
        return t
    raise TypeError(t)


def _result(self: FunctionBuilder, a, b, node) -> ComplexType:
    if isinstance(a.type, (Vector, ArrayType)) or isinstance(b.type, (Vector, ArrayType)):
        raise self.type_err(node, f"complex numbers do not mix with {a.type if not isinstance(a.type, Scalar) else b.type}")
    df = self.prog.default_float
    t = concrete(binary_result(_part_type(a), _part_type(b), df), df)
    if not t.is_float or t.name == "float16":
        t = FLOAT64 if t.bits == 64 else FLOAT32
    return ComplexType(t)


_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div"}


def complex_binop(self: FunctionBuilder, opname, a, b, node):
    """``a <op> b`` where one side is complex (``_expressions.binop``)."""
    if opname in _OPS:
        ct = _result(self, a, b, node)
        return _call(self, ct, _OPS[opname], [complex_convert(self, a, ct), complex_convert(self, b, ct)])
    if opname == "**":
        if not (is_complex(a.type) and isinstance(b, ir.Const) and isinstance(b.value, int)
                and not isinstance(b.value, bool) and 0 <= b.value <= 16):
            raise self.err(node, "complex ** works with a complex base and an integer constant exponent from 0 to 16 "
                           "in kernels", "multiply out, or use cmath.exp / cmath.sqrt")
        ct = _result(self, a, a, node)
        if b.value == 0:
            return complex_const(self, 1 + 0j, ct)
        x = self.materialize(complex_convert(self, a, ct))
        out, n = None, b.value           # square and multiply, as numpy's small-integer power does
        while n:
            if n & 1:
                out = x if out is None else self.materialize(_call(self, ct, "mul", [out, x]))
            n >>= 1
            if n:
                x = self.materialize(_call(self, ct, "mul", [x, x]))
        return out
    raise self.err(node, f"operator {opname} is not defined for complex numbers", f"kernels support {_SUPPORTED}")


def complex_unary(self: FunctionBuilder, op, v, node):
    import ast
    if isinstance(op, ast.USub):
        return _call(self, v.type, "neg", [v])
    if isinstance(op, ast.UAdd):
        return v
    if isinstance(op, ast.Not):
        return ir.Un("!", complex_truth(self, v), BOOL)
    raise self.type_err(node, f"operator ~ needs an integer, got {v.type}")


def _equal(self: FunctionBuilder, a, b, node):
    ct = _result(self, a, b, node)
    return _call(self, ct, "eq", [complex_convert(self, a, ct), complex_convert(self, b, ct)], INT32)


def complex_truth(self: FunctionBuilder, e):
    """``bool(z)``: either part non-zero."""
    return ir.Bin("==", _equal(self, e, ir.Const(0.0, Scalar("float32", weak=True)), None), ir.Const(0, INT32), BOOL)


def complex_compare(self: FunctionBuilder, node, left, rights):
    """``a == b`` / ``a != b`` with a complex side; complex numbers have no order."""
    import ast
    if len(rights) != 1 or not isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        raise self.type_err(node, "complex numbers compare only with == and != (they have no order)")
    eq = _equal(self, left, rights[0], node)
    return ir.Bin("!=" if isinstance(node.ops[0], ast.Eq) else "==", eq, ir.Const(0, INT32), BOOL)


def complex_attribute(self: FunctionBuilder, base, attr, node):
    """``z.real``, ``z.imag`` (also of real numbers: x.real is x, x.imag 0)."""
    if attr in ("real", "imag"):
        if is_complex(base.type):
            return _part(self, base, attr)
        return base if attr == "real" else ir.Const(0, concrete(base.type, self.prog.default_float))
    if attr == "conjugate":
        raise self.err(node, "conjugate is a method", "call it: z.conjugate()")
    raise self.err(node, f"complex numbers have no attribute {attr!r} in kernels", "use .real, .imag or .conjugate()")


def complex_conjugate(self: FunctionBuilder, base, node):
    """``z.conjugate()`` / ``np.conj(z)``: a real number is its own conjugate."""
    if is_complex(base.type):
        return _call(self, base.type, "conj", [base])
    if isinstance(base.type, Scalar):
        return base
    raise self.err(node, f"conjugate() of a {base.type} is not supported", "conjugate complex numbers")


def complex_builtin(self: FunctionBuilder, b, node, args):
    """A builtin on numbers given a complex argument (``_calls._on_numbers``)."""
    if b.lowering == "lower_abs":
        z = args[0]
        return _call(self, z.type, "abs", [z], z.type.base)
    if b.lowering == "lower_math" and b.key in ("exp", "sqrt") and len(args) == 1:
        return _call(self, args[0].type, b.key, [args[0]])
    raise self.type_err(node, f"{b.name}() does not take complex numbers in kernels; kernels support {_SUPPORTED}")


# ---- the rows of _builtins that only complex numbers have --------------------------------------------------------
def _numbers(self: FunctionBuilder, b, node) -> list[ir.Expr]:
    args = [self.value(a) for a in node.args]
    for a in args:
        if not (is_complex(a.type) or isinstance(a.type, Scalar)):
            raise self.type_err(node, f"{b.name}() takes numbers, got {a.type}")
    return args


def _complex_of(self: FunctionBuilder, e):
    """The complex type a number becomes: a float's own precision, an int the default float's."""
    if is_complex(e.type):
        return e.type
    t = concrete(e.type, self.prog.default_float)
    if t.is_float:
        return C128 if t.name == "float64" else C64
    return ComplexType(self.prog.default_float)


def lower_cmath(self: FunctionBuilder, b, node):
    """cmath.exp / cmath.sqrt: of a real number too (cmath.sqrt(-1.0) is 1j)."""
    args = _numbers(self, b, node)
    ct = _complex_of(self, args[0])
    return _call(self, ct, b.key, [complex_convert(self, args[0], ct)])


def lower_part(self: FunctionBuilder, b, node):
    """np.real / np.imag."""
    args = _numbers(self, b, node)
    return complex_attribute(self, args[0], b.key, node)


def lower_conj(self: FunctionBuilder, b, node):
    """np.conj / np.conjugate."""
    args = _numbers(self, b, node)
    return complex_conjugate(self, args[0], node)


def lower_complex(self: FunctionBuilder, b, node):
    """complex(re, im), np.complex64(...), np.complex128(...): ``key`` the part type, "" for
    complex() (the kernel's default float, float64 when a part is float64)."""
    args = _numbers(self, b, node)
    if b.key:
        ct = ComplexType(Scalar(b.key))
    else:
        ct = ComplexType(self.prog.default_float)
        for a in args:
            if _complex_of(self, a) == C128:
                ct = C128
    if not args:
        return complex_const(self, 0j, ct)
    z = complex_convert(self, args[0], ct)
    if len(args) == 1:
        return z
    im = args[1]            # complex(a, b) is a + b*1j, also for complex a and b
    if is_complex(im.type):
        return complex_binop(self, "+", z, complex_binop(self, "*", im, complex_const(self, 1j, ct), node), node)
    if is_complex(args[0].type):
        return complex_binop(self, "+", z, _make(self, ct, ir.Const(0.0, ct.base), im), node)
    return _make(self, ct, args[0], im)


# ---- the definitions a translation needs ------------------------------------------------------------------------
def complex_definitions(prog: ProgramBuilder, functions: list[ir.Function]) -> None:
    """Note the ``complex:<T>`` pieces of every complex parameter, array and local (a kernel that
    only copies complex arrays calls no complex function, yet names the struct)."""
    for fn in functions:
        types = [p.type for p in fn.params] + list(fn.locals.values()) + [fn.ret]
        for t in types:
            t = getattr(t, "elem", t)
            if is_complex(t):
                prog.prelude_needed.add(f"complex:{t.part}")
                prog.note_type(t.base)


def complex_from_parts(self: FunctionBuilder, parts, ct):
    """A complex kernel argument rebuilt from its two hidden real parameters (``_entry``)."""
    return _call(self, ct, "make", list(parts))


def join_complex(a, b):
    """The type of a local assigned ``a`` and ``b`` where one is complex (``_types.join``): the
    complex type of the wider part type (acc = 0j, then acc += a complex128: complex128)."""
    from ._types import JoinConflict
    parts = []
    for t in (a, b):
        if is_complex(t):
            parts.append(t.base)
        elif isinstance(t, Scalar) and t.kind in "biuf":
            parts.append(FLOAT64 if (t.is_float and t.bits == 64) else FLOAT32)
        else:
            raise JoinConflict(a, b)
    return C128 if FLOAT64 in parts else C64
