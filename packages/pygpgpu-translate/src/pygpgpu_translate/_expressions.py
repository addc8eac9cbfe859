"""Expression rules of the function builder: names, constants, attributes and swizzles,
indexing, operators with Python semantics, conversions, and calls (helpers, builtins, vectors)."""
from __future__ import annotations

import ast
import contextlib
import math
import operator
import types as _pytypes
from typing import TYPE_CHECKING, Any, Callable, cast

import numpy as np

from . import _calls
from . import _ir as ir
from ._builtins import lookup_object, supported_in
from ._types import (BOOL, INT32, PYBOOL, UINT32, UINT64, VOID, Scalar, Vector, binary_result, concrete,
                     is_signed_and_uint64, wider_int)
from ._attr_refs import attribute_value
from ._bindings import ObjectRef, ShapeRef, TupleRef, vector_class_info
from ._nesting import deeper_than
from ._complex import (complex_binop, complex_compare, complex_const, complex_conjugate,
                       complex_convert, complex_truth, complex_unary, is_complex)
from ._records import is_record_binding, record_value
from ._signs import is_non_negative
from ._private_arrays import CONSTRUCTORS as PRIVATE_CONSTRUCTORS, misused_constructor
from ._helper_calls import call_helper
from ._vector_convert import vector_convert_call, vector_for_scalar, vector_method
from ._attributes import attribute
from ._choices import bool_op, conditional_value
from ._subscripts import subscript_value
from ._vector_values import vector_ctor

if TYPE_CHECKING:
    from ._builder import FunctionBuilder, ProgramBuilder
    from ._signs import KnownSigns
    from ._source import FunctionSource

__all__ = ["ExpressionRules"]


class ExpressionRules:
    """Mixed into FunctionBuilder: one ``ex_<Node>`` method per accepted expression."""

    if TYPE_CHECKING:   # for the type checker: what these rules use of FunctionBuilder (_builder)
        prog: ProgramBuilder
        err: Callable[..., SyntaxError]
        type_err: Callable[..., Exception]
        materialize: Callable[[ir.Expr], ir.Expr]
        evaluated: dict[int, ir.Expr]
        item_values: dict[str, ir.Expr]
        cnames: dict[str, str]
        literal_locals: set[str]
        non_negative: KnownSigns
        is_kernel: bool
        kernel_name: str
        src: FunctionSource
        line: int
        pre: list[ir.Stmt]
        params: dict[str, object]
        local_types: dict[str, object]
        self_attrs: dict[str, object]
        lookup: Callable[..., Any]
        object_value: Callable[..., Any]
        temp: Callable[..., ir.Var]

    @property
    def fb(self) -> FunctionBuilder:
        """This builder as the explicit, typed lowering context the rule modules take (``_records``,
        ``_complex``, ``_tuples``...: ``fb: FunctionBuilder``); the rules mixed in here are its methods."""
        return cast("FunctionBuilder", self)

    def value(self, node) -> ir.Expr:
        e = self.no_void(self.expr(node), node)
        if is_record_binding(e):              # p[i].pos as a vector, or an error saying what to read
            e = record_value(self.fb, e, node)
        if isinstance(e, ir.Expr) and not isinstance(e, ir.ArrayRef):
            return self.shallow(e)
        if isinstance(e, ir.ArrayRef):
            raise self.err(node, "an array is used where a number is expected", "index it, e.g. x[i]")
        if isinstance(e, ShapeRef):
            raise self.err(node, "x.shape is a tuple; use x.shape[k] with a constant k")
        if isinstance(e, TupleRef):
            raise self.err(node, "a tuple is used where a number is expected")
        if isinstance(e, ObjectRef):
            o = e.obj
            what = getattr(o, "__name__", type(o).__name__)
            raise self.err(node, f"{what!r} ({type(o).__name__}) cannot be used as a value in a kernel",
                           "kernels use numbers, vectors and arrays; module constants must be int/float/bool")
        raise self.err(node, "this expression has no value")

    def no_void(self, e, node):
        """``e``, unless it is the call of a helper without a return value, which is None in Python:
        used as a number, C would fail to build it (or the translator stumble)."""
        if isinstance(e, ir.Expr) and e.type is VOID:
            what = f"{ast.unparse(node.func)}()" if isinstance(node, ast.Call) else "this call"
            raise self.err(node, f"{what} returns nothing (None), so it has no value to use here",
                           "return a value from the helper, or call it as a statement of its own")
        return e

    def expr(self, node):
        done = self.evaluated.get(id(node)) if self.evaluated else None
        if done is not None:                  # an index of x[f()] += 1, evaluated once already
            return done
        m = getattr(self, "ex_" + type(node).__name__, None)
        if m is None:
            raise self.err(node, f"{type(node).__name__} expressions are not supported in kernels")
        return m(node)

    def ex_Constant(self, node):
        v = node.value
        if isinstance(v, bool):
            return ir.Const(v, PYBOOL)
        if isinstance(v, int):
            if not -2**63 <= v < 2**64:
                raise self.err(node, f"integer literal {v} does not fit in 64 bits")
            return ir.Const(v, _weak_int_type(v))
        if isinstance(v, float):
            return ir.Const(v, Scalar("float32", weak=True))
        if isinstance(v, complex):               # 2j: a complex literal (_complex)
            return complex_const(self.fb, v)
        raise self.err(node, f"constant {v!r} is not supported in kernels")

    def ex_Name(self, node):
        if node.id in self.item_values:
            return self.item_values[node.id]
        v = self.lookup(node.id, node)
        if node.id in self.index_names and isinstance(v, ir.Var):
            return self.index_value(v)
        return v

    # The loop index (and range-loop variables, len(a), a.shape[k], a.size) is a Python int when the
    # function runs on the host, so in arithmetic with array values it is weak: int8_data[i] + i stays
    # int8 as on the host (NEP 50). Inside a subscript it stays the index type, so index arithmetic
    # (a[i + off[j]] with int8 offsets) never narrows. Under 64-bit indexing it stays a strong int64.
    index_names: frozenset = frozenset()    # Python names of loop indices (set per builder as loops bind them)
    index_depth = 0                         # > 0 while the indices of an array subscript are evaluated
    dead_depth = 0                          # > 0 in the branch a constant test never takes (st_If, ex_IfExp)

    def index_value(self, e):
        """``e`` (an int32 index value) as a weak int outside subscripts, itself inside them."""
        if self.index_depth or self.prog.index_type != INT32 or e.type != INT32:
            return e
        if isinstance(e, ir.Var):
            return ir.Var(e.name, Scalar("int32", weak=True))
        if isinstance(e, ir.Const):
            return ir.Const(e.value, Scalar("int32", weak=True))
        if isinstance(e, ir.Bin):
            return ir.Bin(e.op, e.a, e.b, Scalar("int32", weak=True))
        return e

    def ex_Tuple(self, node):
        return TupleRef([self.expr(e) for e in node.elts])

    def ex_Attribute(self, node):
        return attribute(self.fb, node)

    self_obj = None

    def comp(self, v, k):
        if isinstance(v, ir.VecCtor):
            return v.args[k]
        if not isinstance(v.type, Vector):
            return v
        if not isinstance(v, ir.Var):
            v = self.materialize(v)
            if isinstance(v, ir.VecCtor):
                return v.args[k]
        return ir.Swizzle(v, k, v.type.base)

    def ex_Subscript(self, node):
        return subscript_value(self.fb, node)       # arrays, shapes, tuples, vectors (_subscripts)

    def add(self, a, b):
        return ir.Bin("+", a, b, a.type)

    # ---- conversions -------------------------------------------------------------------------------
    def convert(self, e: ir.Expr, t):
        """``e`` as a C value of concrete type ``t`` (casts only when the C types differ)."""
        if is_complex(t) or is_complex(e.type):
            return complex_convert(self.fb, e, t)
        t = concrete(t, self.prog.default_float)
        src = concrete(e.type, self.prog.default_float)
        if isinstance(t, Vector):
            if isinstance(src, Vector):
                if src == t:
                    return e
                if src.width != t.width:
                    raise self.type_err(None, f"cannot convert {src} to {t}")
                vec = self.materialize(e)
                return ir.VecCtor([self.convert(self.comp(vec, k), t.base) for k in range(t.width)], t)
            s = self.materialize(self.convert(e, t.base))
            return ir.VecCtor([s] * t.width, t)
        if isinstance(src, Vector):
            raise self.type_err(None, vector_for_scalar(src, t))
        if src == t and e.type == t:
            return e
        if isinstance(e, ir.Ternary) and isinstance(e.type, Scalar) and e.type.weak:
            # Python numbers chosen by a condition (0.1 if c else 0.2, np.where, t[k]) take the type
            # they meet, as each number would: a float64 kernel's 0.1 stays a double, not 0.1f
            return ir.Ternary(e.cond, self.convert(e.a, t), self.convert(e.b, t), t)
        if isinstance(e, ir.Const):
            v = e.value
            if t.kind == "b":
                v = bool(v)
            elif t.is_int:
                if isinstance(v, float):
                    v = int(v) if math.isfinite(v) else 0
                elif e.type.weak and isinstance(v, int) and not _fits(v, t):
                    raise self.literal_overflow(v, t)
                v = int(np.array(int(v)).astype(t.dtype)) if isinstance(v, (int, bool)) and not t.dtype.type(0).dtype.kind == "b" else v
            else:
                v = float(v)
            return ir.Const(v, t)
        if src == t:
            return e
        self.prog.note_type(t)
        return ir.Cast(e, t)

    def literal_overflow(self, v, t):
        """numpy (NEP 50) raises when a Python int meets an integer type that cannot hold it:
        ``np.int8(1) + 300``. A kernel cannot raise at run time, but a literal is known now."""
        return OverflowError(
            f"kernel {self.kernel_name!r}, {self.src.filename}:{self.line}: the Python int {v} does not fit {t.name}, "
            f"the type it meets here (numpy raises OverflowError too: np.{t.name}(1) + {v}); convert the other operand "
            f"to a wider type first (e.g. np.int64(x) + {v}), or write a constant that fits")

    def truth(self, e, node):
        if is_complex(e.type):
            return complex_truth(self.fb, e)
        if isinstance(e.type, Vector):
            raise self.err(node, "a vector has no single truth value", "compare components, e.g. v.x > 0 and v.y > 0")
        if e.type.kind == "b":
            return e
        if isinstance(e, ir.Const):
            return ir.Const(bool(e.value), BOOL)
        return ir.Bin("!=", e, ir.Const(0, concrete(e.type, self.prog.default_float)), BOOL)

    # ---- operators ---------------------------------------------------------------------------------
    _BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
               ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&"}

    def ex_BinOp(self, node):
        # a + b + c + ... is a left-leaning tree as deep as it is long: walk it in a loop, not by
        # recursion (400 terms overflowed Python's stack), keeping the result shallow as it grows
        chain = []
        while isinstance(node, ast.BinOp):
            chain.append(node)
            node = node.left
        acc = self.value(node)
        for n in reversed(chain):
            acc = self.shallow(self.binop(n.op, acc, self.value(n.right), n))
        return acc

    def shallow(self, e):
        """``e``, or a temporary holding it when it nests too deeply for C compilers (_nesting)."""
        return self.materialize(e) if deeper_than(e) else e

    def binop(self, op, a, b, node):
        opname = self._BINOPS[type(op)] if not isinstance(op, str) else op
        if is_complex(a.type) or is_complex(b.type):
            return complex_binop(self.fb, opname, a, b, node)
        if isinstance(a.type, Vector) or isinstance(b.type, Vector):
            return self.vector_binop(opname, a, b, node)
        return self.scalar_binop(opname, a, b, node)

    def vector_binop(self, opname, a, b, node):
        va = a.type if isinstance(a.type, Vector) else None
        vb = b.type if isinstance(b.type, Vector) else None
        if va and vb and va.width != vb.width:
            raise self.type_err(node, f"operands have different widths: {va} and {vb}")
        vt = va or vb
        assert vt is not None, "vector_binop needs a vector operand"     # binop calls it only then
        width = vt.width
        a = self.materialize(a) if va else self.materialize(a)
        b = self.materialize(b) if vb else self.materialize(b)
        if opname in ("<<", ">>") and vt.base.is_int:
            # the host vector classes take the count modulo the bit width (OpenCL's rule): so do we
            base = vt.base
            mask = ir.Const(base.bits - 1, base)
            comps = [self.shift(opname, self.comp(a, k), self.scalar_binop("&", self.convert(self.comp(b, k), base), mask, node),
                                base, count_in_range=True) for k in range(width)]
            return ir.VecCtor(comps, Vector(base, width))
        comps = [self.scalar_binop(opname, self.comp(a, k), self.comp(b, k), node) for k in range(width)]
        base = comps[0].type.strong() if not comps[0].type.weak else concrete(comps[0].type, self.prog.default_float)
        if base.kind == "b":
            raise self.err(node, "vector comparisons are not supported",
                           "compare components one by one, e.g. a.x < b.x")
        comps = [self.convert(c, base) for c in comps]
        return ir.VecCtor(comps, Vector(base, width))

    def const_fold(self, opname, a, b, t):
        if not (isinstance(a, ir.Const) and isinstance(b, ir.Const)):
            return None
        x, y = a.value, b.value
        try:
            if opname in ("/", "//", "%") and y == 0:
                return None
            r = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y,
                 "//": lambda: x // y, "%": lambda: x % y, "<<": lambda: x << y, ">>": lambda: x >> y,
                 "|": lambda: x | y, "^": lambda: x ^ y, "&": lambda: x & y}.get(opname)
            if r is None:
                return None
            v = r()
        except (TypeError, ValueError, OverflowError):
            return None
        if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < (2**64 if t.weak else 2**63):
            if t.weak and t.is_int:       # Python ints: computing it in 64 bits at run time would wrap
                raise OverflowError(f"kernel {self.kernel_name!r}, {self.src.filename}:{self.line}: the constant "
                                    f"{x} {opname} {y} = {v} does not fit in 64 bits")
            return None
        if t.weak and t.is_int and isinstance(v, int):
            t = _weak_int_type(v)
        elif not t.weak and t.is_int and isinstance(v, int):
            v = _wrap_int(v, t)   # wrap like numpy
        return ir.Const(v, t)

    def scalar_binop(self, opname, a, b, node):
        df = self.prog.default_float
        a, b = self.host_ints_meet_uint64(a, b)
        ta, tb = a.type, b.type
        if opname in ("<<", ">>", "|", "^", "&"):
            if ta.is_float or tb.is_float:
                raise self.type_err(node, f"operator {opname} needs integers, got {ta} and {tb}")
            if is_signed_and_uint64(ta, tb) and not (ta.weak or tb.weak):
                raise self.type_err(node, f"numpy has no {opname} of {ta} and {tb} (it raises TypeError: no int "
                                    f"type holds both); convert one operand, e.g. np.uint64(a) {opname} b")
            if ta.kind == "b" and tb.kind == "b" and opname in ("|", "^", "&"):
                # bool ^ bool is bool != bool: every target has that (WGSL has no ^ of bools)
                return ir.Bin("!=" if opname == "^" else opname, a, b, BOOL)
            t = binary_result(ta, tb, df)    # shifts promote like numpy too: int8 << int16 is int16
            f = self.const_fold(opname, a, b, t)
            if f is not None:
                return f
            if opname in ("<<", ">>"):
                return self.shift(opname, a, b, t)
            ct = concrete(t, df)
            return self.wrap_narrow(ir.Bin(opname, self.convert(a, ct), self.convert(b, ct), t))
        if ta.kind == "b" and tb.kind == "b" and not (self.is_python_bool(a) and self.is_python_bool(b)):
            return self.numpy_bool_binop(opname, a, b, node)
        if opname == "**":
            return self.power(a, b, node)
        t = binary_result(ta, tb, df)
        if opname == "/":
            if not t.is_float:
                t = Scalar("float32", weak=True) if (ta.weak and tb.weak) else (
                    df if max(ta.bits, tb.bits) < 64 or df.bits == 64 else Scalar("float64"))
            f = self.const_fold(opname, a, b, t)
            if f is not None and isinstance(f.value, float):
                return f
            ct = concrete(t, df)
            return ir.Bin("/", self.convert(a, ct), self.convert(b, ct), t)
        f = self.const_fold(opname, a, b, t)
        if f is not None:
            return f
        ct = concrete(t, df)
        if opname in ("//", "%"):
            return _calls.prelude_call(self.fb, "pyfloordiv" if opname == "//" else "pymod", [a, b], t)
        ca, cb = self.convert(a, ct), self.convert(b, ct)
        if ct.kind == "b":       # True + True == 2 in Python
            ct = t = INT32
            ca, cb = self.convert(a, ct), self.convert(b, ct)
        return self.wrap_narrow(ir.Bin(opname, ca, cb, t))

    def numpy_bool_binop(self, opname, a, b, node):
        """Arithmetic of numpy bools (a Python bool meeting one is one, NEP 50): ``+`` is numpy's
        logical or and ``*`` its and (``mask[i] + mask[j]`` is True), ``-`` raises, and ``//``,
        ``%`` and ``**`` compute in int8."""
        if opname == "-":
            raise self.type_err(node, "numpy has no - of two bools (it raises TypeError); write a ^ b for the "
                                "difference, or int(a) - int(b)")
        if opname in ("+", "*"):
            return ir.Bin("|" if opname == "+" else "&", self.convert(a, BOOL), self.convert(b, BOOL), BOOL)
        if opname == "/":
            return self.scalar_binop("/", self.convert(a, INT32), self.convert(b, INT32), node)
        int8 = Scalar("int8")
        return self.binop(opname, self.convert(a, int8), self.convert(b, int8), node)

    @staticmethod
    def python_bool(c):
        """Bool ``c`` typed as a Python bool (``PYBOOL``)."""
        if isinstance(c, ir.Bin):
            return ir.Bin(c.op, c.a, c.b, PYBOOL)
        if isinstance(c, ir.Un):
            return ir.Un(c.op, c.a, PYBOOL)
        if isinstance(c, ir.Const):
            return ir.Const(c.value, PYBOOL)
        return ir.Cast(c, PYBOOL)

    def is_python_bool(self, e) -> bool:
        """``e`` is a Python bool on the host: a literal or constant, ``not x``, a comparison of
        Python numbers, a local only ever bound to those; other bools are numpy's."""
        return e.type == PYBOOL

    def is_python_number(self, e) -> bool:
        """``e`` is a Python number (int, float or bool) on the host."""
        return isinstance(e.type, Scalar) and (e.type.weak or self.is_python_bool(e) or
                                               (e.type.is_int and self.is_host_int(e)))

    def host_ints_meet_uint64(self, a, b):
        """``(a, b)``, a signed int that is a Python int on the host converted to uint64 where the
        other is uint64 data: numpy makes a Python int meeting uint64 uint64, where two numpy ints
        of these types give float64. Two such ints with a strong C type: a counter first bound to
        a bare number (``acc = 0``, then ``acc += x_u64[j]``) and index arithmetic proven
        non-negative (``x_u64[i] + i`` under 64-bit indexing, where the index is int64)."""
        if not is_signed_and_uint64(a.type, b.type) or a.type.weak or b.type.weak:
            return a, b
        if a.type.kind == "i" and self.is_host_int(a):
            return self.convert(a, UINT64), b
        if b.type.kind == "i" and self.is_host_int(b):
            return a, self.convert(b, UINT64)
        return a, b

    def is_python_int(self, e) -> bool:
        """``e`` is a Python int when the function runs on the host: a weak int or one of is_host_int."""
        return isinstance(e.type, Scalar) and e.type.is_int and (e.type.weak or self.is_host_int(e))

    def is_host_int(self, e) -> bool:
        """``e``, of a strong int type here, is a Python int when the function runs on the host:
        arithmetic on such locals (``acc * 2``) and constants, or index arithmetic proven >= 0."""
        if isinstance(e, ir.Const):
            return False                         # a strong constant is a numpy scalar (np.int64(5))
        names = {self.cnames.get(n) for n in self.literal_locals}
        return _arithmetic_of(e, names) or is_non_negative(e, self.non_negative)

    def wrap_narrow(self, e):
        """Integer results wrap like numpy's. C computes char/short in int (cast back), and signed
        int/long overflow is undefined behaviour that compilers exploit (it once turned a guarded
        division into a trapping one), so + - * << on them are done in the unsigned type."""
        ct = concrete(e.type, self.prog.default_float)
        if not (isinstance(ct, Scalar) and ct.is_int):
            return e
        if ct.bits < 32:
            if isinstance(e, ir.Bin) and e.op in ("*", "<<"):
                # C computes char/short in int, where ushort * ushort overflows and a negative value
                # shifted left is undefined (NVIDIA's compilers then gave int16 results out of
                # range): multiply and shift in uint32; the low bits are the same
                b = e.b if e.op == "<<" else _unsigned(e.b, UINT32)
                return ir.Cast(ir.Bin(e.op, _unsigned(e.a, UINT32), b, UINT32), e.type)
            if (isinstance(e, ir.Bin) and e.op in ("+", "-") and isinstance(e.a, ir.Cast) and e.a.type == e.type
                    and isinstance(e.a.a, ir.Bin) and e.a.a.op in ("+", "-")):
                # wrapping once at the end of a run of + and - is the same: a + b + c stays flat
                e = ir.Bin(e.op, e.a.a, e.b, e.type)
            return ir.Cast(e, e.type)
        if ct.kind == "i" and isinstance(e, (ir.Bin, ir.Un)) and e.op in ("+", "-", "*", "<<"):
            u = Scalar(f"uint{ct.bits}")
            if isinstance(e, ir.Un):
                return ir.Cast(ir.Bin("-", ir.Const(0, u), _unsigned(e.a, u), u), e.type)
            b = e.b if e.op == "<<" else _unsigned(e.b, u)
            return ir.Cast(ir.Bin(e.op, _unsigned(e.a, u), b, u), e.type)
        return e

    def shift(self, opname, a, b, t, count_in_range=False):
        """``a << b`` / ``a >> b`` in type ``t`` with numpy's results: a count outside 0..bits-1
        gives 0 (-1 for a negative value shifted right), where C's behaviour is undefined. A
        constant count in range (the common case) shifts inline; other counts go through the
        prelude's ``pyshl``/``pyshr``, which test the count first. ``count_in_range``: the caller
        made sure of it (vector components mask their counts)."""
        ct = concrete(t, self.prog.default_float)
        if ct.kind == "b":
            t = ct = INT32
        ca, cb = self.convert(a, ct), self.convert(b, ct)
        if count_in_range or (isinstance(cb, ir.Const) and 0 <= cb.value < ct.bits):
            return self.wrap_narrow(ir.Bin(opname, ca, cb, t))
        return _calls.prelude_call(self.fb, "pyshl" if opname == "<<" else "pyshr", [ca, cb], t)

    def power(self, a, b, node):
        df = self.prog.default_float
        if isinstance(a.type, Vector):
            return self.vector_binop("**", a, b, node)
        if (isinstance(a, ir.Const) and isinstance(b, ir.Const) and a.type.weak and b.type.weak and a.type.is_int
                and b.type.is_int and b.value >= 0):     # 2**40 is a constant, not int32 arithmetic
            v = a.value ** b.value if abs(a.value) < 2 or b.value < 64 else 2**64
            if not -2**63 <= v < 2**64:
                raise self.err(node, f"{a.value} ** {b.value} does not fit in 64 bits")
            return ir.Const(v, _weak_int_type(v))
        if (isinstance(a, ir.Const) and isinstance(b, ir.Const) and a.type.weak and b.type.weak
                and (a.type.is_float or b.type.is_float)):
            try:                              # 2 ** 0.5 in double precision, weak like a literal
                f = a.value ** b.value
            except ArithmeticError:
                f = None
            if isinstance(f, float):          # not (-8.0) ** (1/3), a complex number in Python
                return ir.Const(f, Scalar("float32", weak=True))
        if (isinstance(b, ir.Const) and isinstance(b.value, int) and not isinstance(b.value, bool) and b.value < 0
                and isinstance(a.type, Scalar) and (a.type.is_int or a.type.kind == "b")):
            a = self.negative_int_power_base(a, b, node)
            if isinstance(a, ir.Const):
                return a
            b = ir.Const(float(b.value), Scalar("float32", weak=True))
        if isinstance(b, ir.Const) and isinstance(b.value, int) and not isinstance(b.value, bool) and 0 <= b.value <= 8:
            t = a.type if a.type.kind != "b" else INT32
            n = b.value
            if n == 0:
                return ir.Const(1, Scalar(t.name, weak=t.weak)) if not t.is_float else ir.Const(1.0, t)
            x = self.materialize(self.convert(a, concrete(t, df)))
            out = x
            for _ in range(n - 1):        # each product wraps like numpy's (int8 ** 3 stays int8)
                out = self.wrap_narrow(ir.Bin("*", out, x, t))
            return out
        if isinstance(b, ir.Const) and b.value == 0.5 and not a.type.is_int:
            return _calls.call_math(self.fb, "sqrt", [a], node)
        t = binary_result(a.type, b.type, df)
        if t.is_int or t.kind == "b":
            return _calls.prelude_call(self.fb, "pypow", [a, b], t)
        ct = concrete(t, df)
        return ir.MathCall("pow", [self.convert(a, ct), self.convert(b, ct)], t, ct)

    def negative_int_power_base(self, a, b, node):
        """The base of ``a ** b``, an integer ``a`` and a negative constant ``b``, as a float: a Python
        int's ``2 ** -2`` is 0.25 (a constant base folds to it), where C's integer power gave 0.
        numpy raises ValueError for its own integers, which a kernel cannot: an error here."""
        if not a.type.weak:
            raise self.err(node, f"{a.type} ** {b.value}: numpy's integers to negative integer powers are not "
                           "allowed (numpy raises ValueError)",
                           f"write a float power ({ast.unparse(node.left) if isinstance(node, ast.BinOp) else 'x'} "
                           f"** {b.value}.0) or a division")
        if isinstance(a, ir.Const):
            try:
                return ir.Const(float(a.value) ** b.value, Scalar("float32", weak=True))
            except ZeroDivisionError:          # Python raises; the device's pow gives inf
                pass
        return ir.Cast(a, Scalar("float32", weak=True))

    def ex_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            c = self.condition(node.operand)
            return ir.Un("!", c, PYBOOL)      # Python's not: a Python bool
        v = self.value(node.operand)
        if is_complex(v.type):
            return complex_unary(self.fb, node.op, v, node)
        if isinstance(v.type, Vector):
            if isinstance(node.op, ast.UAdd):
                return v
            v = self.materialize(v)
            op = "-" if isinstance(node.op, ast.USub) else "~"
            return ir.VecCtor([ir.Un(op, self.comp(v, k), v.type.base) for k in range(v.type.width)], v.type)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub):
            if v.type.kind == "b" and not self.is_python_bool(v):
                raise self.type_err(node, "numpy has no - of a bool (it raises TypeError); write ~x or not x for "
                                    "the negation, or -int(x)")
            if isinstance(v, ir.Const):
                t = v.type if v.type.kind != "b" else INT32
                if t.is_int and t.weak and -2**63 <= -v.value < 2**64:
                    return ir.Const(-v.value, _weak_int_type(-v.value))     # -(2**63) is an int64
                return ir.Const(_wrap_int(-v.value, t) if t.is_int and not t.weak else -v.value, t)
            t = v.type if v.type.kind != "b" else INT32
            ct = concrete(t, self.prog.default_float)
            if isinstance(ct, Scalar) and ct.kind == "i" and ct.bits < 32:
                # int8/int16: the prelude's wrapping negation (-int16(-32768) is -32768); the plain
                # (short)-a came out of NVRTC 13.0 as 32768 once widened (prelude._pysem.negation)
                return _calls.prelude_call(self.fb, "pyneg", [v], t)
            if isinstance(ct, Scalar) and ct.kind == "u":
                # 0 - x: the same wrap-around as C's -x of an unsigned, and WGSL has no - of a u32
                return self.wrap_narrow(ir.Bin("-", ir.Const(0, ct), self.convert(v, ct), t))
            return self.wrap_narrow(ir.Un("-", self.convert(v, ct), t))
        if v.type.is_float:
            raise self.type_err(node, f"operator ~ needs an integer, got {v.type}")
        if v.type.kind == "b":
            # numpy's ~ of a bool is `not` (~mask); Python's ~True is -2, deprecated since 3.12,
            # and stored into a bool array it made every element True
            return ir.Un("!", v, BOOL)
        if isinstance(v, ir.Const):
            return ir.Const(~v.value if v.type.weak else _wrap_int(~v.value, v.type), v.type)
        return self.wrap_narrow(ir.Un("~", v, v.type))     # ~uint8(10) is 245: C computes it in int

    @contextlib.contextmanager
    def dead_unless(self, cond, taken):
        """Build the branch run when ``cond`` is ``taken``; one a constant ``cond`` never runs is
        still built (its types count) but raises no errors that only running it would raise."""
        dead = isinstance(cond, ir.Const) and bool(cond.value) != taken
        self.dead_depth += dead
        try:
            yield
        finally:
            self.dead_depth -= dead

    def condition(self, node):
        """The truth of ``node`` where only its truth is used: an if/while/ternary test, an operand
        of ``not``. An ``and``/``or`` there stays a C ``&&``/``||`` whatever its operands' types
        (and the bounds proofs of _bounds read it), where its value elsewhere is an operand's."""
        if isinstance(node, ast.BoolOp):
            return bool_op(self.fb, node, as_test=True)
        return self.truth(self.value(node), node)

    def ex_BoolOp(self, node):
        return bool_op(self.fb, node, as_test=False)

    _CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}

    def ex_Compare(self, node):
        left = self.value(node.left)
        out = None
        rights = [self.value(c) for c in node.comparators]
        if any(is_complex(v.type) for v in [left] + rights):
            return complex_compare(self.fb, node, left, rights)
        for i, (op, right) in enumerate(zip(node.ops, rights)):
            if i + 1 < len(rights):
                right = self.materialize(right)      # evaluated once, as in Python
            if isinstance(left.type, Vector) or isinstance(right.type, Vector):
                raise self.err(node, "vector comparisons are not supported",
                               "compare components one by one, e.g. a.x < b.x")
            left, right = self.host_ints_meet_uint64(left, right)
            t = binary_result(left.type, right.type, self.prog.default_float)
            ct = concrete(t, self.prog.default_float)
            ct, known = self.by_value(self._CMPOPS[type(op)], left, right, ct)
            if _python_number(left) and _python_number(right):   # N > 4 of constants: a constant test
                known = ir.Const(_COMPARE[type(op)](left.value, right.value), BOOL)
            if known is not None:
                c = known
            elif is_signed_and_uint64(left.type, right.type) and not (left.type.weak or right.type.weak):
                c = self.compare_signed_with_uint64(self._CMPOPS[type(op)], left, right)
            else:
                c = ir.Bin(self._CMPOPS[type(op)], self.convert(left, ct), self.convert(right, ct), BOOL)
            if self.is_python_number(left) and self.is_python_number(right):
                c = self.python_bool(c)        # Python numbers compare to a Python bool, numpy's to np.bool_
            out = c if out is None else ir.Bin("&&", out, c, PYBOOL if out.type == c.type == PYBOOL else BOOL)
            left = right
        return out

    _FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}

    def compare_signed_with_uint64(self, op, left, right):
        """numpy 2 compares a signed int with uint64 exactly, where float64 rounds both and int64
        wraps the uint64: a negative signed value decides alone, else both compare as uint64."""
        left, right = self.materialize(left), self.materialize(right)
        signed = left if left.type.kind == "i" else right
        below = self._FLIPPED[op] if signed is right else op       # signed `below` the other
        negative = ir.Bin("<", signed, ir.Const(0, signed.type), BOOL)
        c = ir.Bin(op, self.convert(left, UINT64), self.convert(right, UINT64), BOOL)
        if below in ("<", "<=", "!="):
            return ir.Bin("||", negative, c, BOOL)
        return ir.Bin("&&", ir.Un("!", negative, BOOL), c, BOOL)

    def by_value(self, op, left, right, ct):
        """``(type to compare in, None)``, or ``(ct, constant result)``. numpy compares a Python int
        with an integer array by value (``np.int8(5) < 300`` is True, ``== 300`` False), where the
        weak rule would squeeze the int into int8: compare in a type holding both (int8 with a
        Python-int argument: int32; uint32: int64). A literal beyond every such type (uint64 data
        with -1) decides the comparison alone."""
        if not (isinstance(ct, Scalar) and ct.is_int) or left.type.weak == right.type.weak:
            return ct, None
        weak, strong = (left, right) if left.type.weak else (right, left)
        if not (weak.type.is_int and strong.type.is_int):
            return ct, None
        if isinstance(weak, ir.Const):
            if _fits(weak.value, strong.type):
                return ct, None
            wide = wider_int(strong.type, concrete(weak.type, self.prog.default_float))
            if wide is None:                          # e.g. uint64 data and a negative literal
                self.materialize(strong)              # still evaluated, as in Python
                above = weak.value > 0
                if weak is left:                      # 300 > x reads as x < 300
                    op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
                result = {"==": False, "!=": True, "<": above, "<=": above, ">": not above, ">=": not above}[op]
                return ct, ir.Const(result, BOOL)
            return wide, None
        wide = wider_int(strong.type, concrete(weak.type, self.prog.default_float))
        return (wide if wide is not None else ct), None

    def ex_IfExp(self, node):
        return conditional_value(self.fb, node)

    # ---- calls ---------------------------------------------------------------------------------------
    def resolve_callee(self, fnode):
        if isinstance(fnode, ast.Name):
            if fnode.id in self.local_types or fnode.id in self.params:
                return None
            try:
                return self.lookup(fnode.id, fnode)
            except SyntaxError:
                return None
        if isinstance(fnode, ast.Attribute):
            try:
                base = self.resolve_callee(fnode.value)
            except SyntaxError:
                return None
            if isinstance(base, ObjectRef) and hasattr(base.obj, fnode.attr):
                if isinstance(base.obj, _pytypes.ModuleType):
                    value = getattr(base.obj, fnode.attr)
                    if lookup_object(value) is None:      # mod.helper: rebinding it retranslates, as for a global
                        self.prog.global_refs[(id(base.obj.__dict__), fnode.attr)] = (base.obj.__dict__, fnode.attr, value)
                    return ObjectRef(value)
                if self.self_obj is not None and base.obj is self.self_obj:
                    return ObjectRef(getattr(base.obj, fnode.attr))
                if isinstance(base.obj, type):          # Cls.helper: rebinding it retranslates
                    return ObjectRef(*attribute_value(self.fb, base, fnode.attr, fnode))
        return None

    def builtin_of(self, callee):
        if not isinstance(callee, ObjectRef):
            return None
        return lookup_object(callee.obj)

    def ex_Call(self, node):
        if (isinstance(node.func, ast.Attribute) and node.func.attr == "conjugate" and not node.args
                and not node.keywords):       # z.conjugate() (_complex); a module's conjugate resolves below
            base = self.expr(node.func.value)
            if isinstance(base, ir.Expr):
                return complex_conjugate(self.fb, self.shallow(base), node)
        callee = self.expr(node.func) if not isinstance(node.func, (ast.Name, ast.Attribute)) else None
        if callee is None:
            callee = self.resolve_callee(node.func)
            if callee is None:
                callee = self.expr(node.func)
        if not isinstance(callee, ObjectRef):
            raise self.err(node, "this is not a function a kernel can call",
                           "call plain Python helper functions, math/np functions or gpu.* builtins")
        obj = callee.obj
        b = self.builtin_of(callee)
        if b is not None:
            return _calls.call_builtin(self.fb, b, node, obj)
        vi = vector_class_info(obj)
        if vi:
            return vector_ctor(self.fb, Vector(Scalar(vi[0]), vi[1]), node)
        if obj is range or obj in (enumerate, np.ndindex, np.ndenumerate):
            raise self.err(node, f"{getattr(obj, '__name__', obj)}() is only valid as the iterable of a for loop")
        if obj is print:                       # device printf, formatted like Python (_print)
            from ._print import build_print
            return build_print(self.fb, node)
        from ._kernel import KernelFunction   # a kernel called from a kernel runs as a helper
        if isinstance(obj, KernelFunction):
            obj = obj.py_func
        if isinstance(obj, staticmethod):
            obj = obj.__func__
        vm = vector_method(obj)
        if vm is not None and vm[1] == "convert":        # float3.convert(v), as on the host
            return vector_convert_call(self.fb, vm[0], node)
        if isinstance(obj, _pytypes.MethodType) and isinstance(obj.__func__, _pytypes.FunctionType):
            raise self.err(node, "calling methods from a kernel is not supported",
                           "make it a module-level function or a @staticmethod and pass the attributes it needs")
        if any(obj is c for c in PRIVATE_CONSTRUCTORS):    # np.zeros(...) not bound to a name
            raise misused_constructor(self.fb, obj, node)
        if isinstance(obj, _pytypes.FunctionType):
            # a helper under a functools.wraps decorator: its source is the wrapped function's
            # (inspect follows __wrapped__), so its names must be the wrapped function's too
            while isinstance(wrapped := getattr(obj, "__wrapped__", None), _pytypes.FunctionType):
                obj = wrapped
            return call_helper(self.fb, obj, node)
        what = ast.unparse(node.func)
        if _defined_in(obj, "numpy.random"):       # a bound method of numpy's generator, not user code
            raise self.err(node, f"{what}() draws random numbers, which a kernel cannot do",
                           "draw them on the host (r = np.random.default_rng().random(n)) and pass r as an array argument")
        module = getattr(obj, "__module__", None)
        if module in ("numpy", "math"):           # the hint below would send the user back to these
            raise self.err(node, f"{what}() is not one of the {module} functions kernels translate",
                           f"write it with operators or in a plain Python helper function; the {module} functions "
                           f"kernels translate are {', '.join(supported_in(module))}")
        raise self.err(node, f"{what}() cannot be called from a kernel",
                       "call plain Python helper functions, math/np functions or gpu.* builtins")


def _arithmetic_of(e, names) -> bool:
    """``e`` is arithmetic (and Python's // % ** pieces) on variables of ``names`` and constants,
    with at least one such variable."""
    todo, seen_var = [e], False
    while todo:
        n = todo.pop()
        if isinstance(n, ir.Var):
            if n.name not in names:
                return False
            seen_var = True
        elif isinstance(n, (ir.Bin, ir.Un, ir.Cast)) or (isinstance(n, ir.Call) and n.fn.startswith("pg_py")):
            todo.extend(ir.operands(n))
        elif not isinstance(n, ir.Const):
            return False
    return seen_var


_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}


def _python_number(e) -> bool:
    """A constant that is a Python number on the host (a literal, a module constant)."""
    return isinstance(e, ir.Const) and isinstance(e.type, Scalar) and e.type.weak


def _weak_int_type(v: int) -> Scalar:
    """The weak type of a Python int: int32 when it fits, else int64, else uint64."""
    return Scalar("int32" if -2**31 <= v < 2**31 else ("int64" if v < 2**63 else "uint64"), weak=True)


def _fits(v: int, t: Scalar) -> bool:
    info = np.iinfo(t.dtype)
    return int(info.min) <= v <= int(info.max)


def _wrap_int(v: int, t: Scalar) -> int:
    """``v`` wrapped into integer type ``t`` (two's complement), as numpy's arithmetic does."""
    return int(np.array(v & ((1 << t.bits) - 1), dtype=f"uint{t.bits}").astype(t.dtype))


def _defined_in(obj, package: str) -> bool:
    """Whether a callable (a function, or a method of an object) comes from ``package``."""
    owner = getattr(obj, "__self__", None)
    modules = [getattr(obj, "__module__", None) or "", type(owner).__module__ if owner is not None else ""]
    return any(m == package or m.startswith(package + ".") for m in modules)


def _unsigned(x, u):
    """``x`` as unsigned ``u``; (uint)(int)y is y when y is already unsigned, so a chain of wrapped
    int operations stays one flat unsigned chain instead of nesting two casts per operation."""
    if isinstance(x, ir.Cast) and x.a.type == u:
        return x.a
    return ir.Cast(x, u)


# ---- the kernel entry point ------------------------------------------------------------------------------
