"""Builtin calls: the lowering each row of the builtin table (``_builtins.BUILTINS``) names.

Every function here takes the function builder as its explicit, typed lowering context (``self:
FunctionBuilder``, checked by mypy; called as ``_calls.call_builtin(fb, ...)``, not bound into the
builder); the ``lower_*`` functions take it, the row and the call node. Kept here so each module has one job: the builder walks Python, this file knows what
builtins mean.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import numpy as np

from . import _ir as ir
from .prelude import PRELUDE_NAMES
from .prelude._native import NATIVE_PIECES
from ._bindings import TupleRef
from ._bounds import BoundsChecks
from ._choices import common_type
from ._complex import complex_builtin, is_complex
from ._subscripts import checked_index, index_list
from ._types import BOOL, FLOAT32, INT32, INT64, UINT64, VOID, ArrayType, Scalar, Vector, binary_result, concrete

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

BARRIER_IN_DOMAIN = ("{} cannot be inside a magic loop: work items past the end of the domain skip the "
                     "loop body and never reach it")
BARRIER_HINT = ("declare the domain with gpu.work_size(x), take i = gpu.get_global_id(0), and guard only the "
                "loads/stores with 'if i < n:', leaving the barrier unconditional")

__all__ = ["call_builtin", "call_math", "float_type_of", "componentwise", "prelude_call"]


def float_type_of(self: FunctionBuilder, t):
    """The float type math on ``t`` runs in: floats keep theirs, ints use the default float."""
    if t.is_float:
        return t
    if t.weak:
        return Scalar("float32", weak=True)
    return self.prog.default_float if t.bits < 64 or self.prog.default_float.bits == 64 else Scalar("float64")


def componentwise(self: FunctionBuilder, fn, args, node):
    """Apply a scalar rule ``fn(*scalars)`` to vector arguments component by component (scalars broadcast)."""
    widths = {a.type.width for a in args if isinstance(a.type, Vector)}
    if not widths:
        return fn(*args)
    if len(widths) > 1:
        raise self.type_err(node, f"vector operands of different widths: {sorted(widths)}")
    w = widths.pop()
    args = [self.materialize(a) for a in args]
    comps = [fn(*[self.comp(a, k) for a in args]) for k in range(w)]
    base = concrete(comps[0].type, self.prog.default_float)
    return ir.VecCtor([self.convert(c, base) for c in comps], Vector(base, w))


def _common_type(self: FunctionBuilder, xs):
    t = xs[0].type
    for x in xs[1:]:
        t = binary_result(t, x.type, self.prog.default_float)
    return t


def call_math(self: FunctionBuilder, name, args, node):
    def scalar(*xs):
        ft = float_type_of(self, _common_type(self, xs))
        ct = concrete(ft, self.prog.default_float)
        return ir.MathCall(name, [self.convert(x, ct) for x in xs], ft, ct)
    return componentwise(self, scalar, args, node)


def _native_math(self: FunctionBuilder, name, args, node):
    """gpu.rsqrt and gpu.native_*: the dialect's fast float32 function, the precise one for
    float64; float16 (which the fast hardware functions lack) runs the float32 one."""
    def scalar(*xs):
        ft = float_type_of(self, _common_type(self, xs))
        ct = concrete(ft, self.prog.default_float)
        work = FLOAT32 if ct.bits <= 32 else ct
        if work == FLOAT32 and name in NATIVE_PIECES:   # the helper a dialect's template may call (CUDA's rsqrt)
            self.prog.prelude_needed.add(NATIVE_PIECES[name])
        call = ir.MathCall(name, [self.convert(x, work) for x in xs], ft if work == ct else work, work, fast=True)
        return call if work == ct else ir.Cast(call, ft)
    return componentwise(self, scalar, args, node)


def prelude_call(self: FunctionBuilder, family, xs, t=None):
    """Call prelude piece ``family:<type>`` (Python semantics C lacks, e.g. ``pymod``) on scalars
    ``xs`` converted to their common type (or ``t``). bool computes as int32; float16, which has
    no pieces, computes in float32 (exact for these functions) and converts back."""
    if t is None:
        t = _common_type(self, xs)
    if t.kind == "b":
        t = INT32
    ct = concrete(t, self.prog.default_float)
    if ct.short_name is None:
        call = ir.Call(self.prog.need_piece(family, FLOAT32), [self.convert(x, FLOAT32) for x in xs], FLOAT32)
        return ir.Cast(call, t)
    return ir.Call(self.prog.need_piece(family, ct), [self.convert(x, ct) for x in xs], t)


def _min_max(self: FunctionBuilder, kind, xs, nan_propagates=False):
    """Python's min/max of two scalars (``b`` only when strictly smaller/larger); with
    ``nan_propagates`` numpy's minimum/maximum. Integers have no NaN: funcs.min/max agree."""
    t = _common_type(self, xs)
    if not t.is_float:
        return prelude_call(self, f"funcs.{kind}", xs, t)
    return prelude_call(self, ("np" + kind + "imum") if nan_propagates else ("py" + kind), xs, t)


def _sign(self: FunctionBuilder, x, nan_gives_zero=False):
    """np.sign (NaN stays NaN) or, with ``nan_gives_zero``, OpenCL's sign (funcs.sign); both
    keep signed zeros, and integers have one meaning."""
    return prelude_call(self, "funcs.sign" if nan_gives_zero or not x.type.is_float else "npsign", [x])


def call_builtin(self: FunctionBuilder, b, node, obj):
    """A call of builtin row ``b`` (``_builtins.BUILTINS``): its arity and keywords checked, then
    the row's own lowering."""
    if b.checked:
        lo, hi = b.arity
        n = len(node.args)
        extra = [kw.arg for kw in node.keywords if kw.arg not in b.keywords]
        if extra:
            raise self.err(node, f"{b.name}() does not take keyword arguments in kernels" if not b.keywords else
                           f"{b.name}() takes no keyword argument {extra[0]!r} in kernels")
        if n < lo or (hi is not None and n > hi):
            want = f"{lo}" if lo == hi else (f"{lo} to {hi}" if hi is not None else f"at least {lo}")
            raise self.err(node, f"{b.name}() takes {want} arguments, {n} given")
    return b.lower(self, node)


# ---- the lowerings the rows of _builtins name ------------------------------------------------------------
# Each is lower_<what>(builder, row, call node) -> IR (None: the call is erased). A lowering on
# numbers (@_on_numbers) gets the evaluated arguments; while a provisional pass still has an
# argument of unknown type, the call's type is unknown too.
def _on_numbers(fn):
    def lower(self: FunctionBuilder, b, node):
        args = [self.value(a) for a in node.args]
        for a in args:
            if isinstance(a.type, ArrayType):
                raise self.err(node, f"{b.name}() works on numbers and vectors, not whole arrays", "index the array")
        if any(is_complex(a.type) for a in args):      # abs(z), np.exp(z), np.sqrt(z); others refuse
            return complex_builtin(self, b, node, args)
        folded = _fold_python_numbers(b, node, args) if fn.__name__ in _FOLDED else None
        return folded if folded is not None else fn(self, b, node, args)
    lower.__name__, lower.__doc__ = fn.__name__, fn.__doc__
    return lower


# the lowerings whose builtins compute a number from numbers alone, as their host functions do
_FOLDED = frozenset({"lower_math", "lower_log", "lower_abs", "lower_min_max", "lower_round", "lower_power",
                     "lower_clamp", "lower_sign", "lower_float_to_int", "lower_operator", "lower_square", "lower_scale"})


def _fold_python_numbers(b, node, args):
    """``math.sqrt(2.0)``, ``abs(-0.1)``, ``max(0.1, 0.2)``: of Python numbers alone, the Python
    number the host computes (floats in double precision), weak like a literal, so a float64
    kernel's ``x * math.sqrt(2.0)`` is not multiplied by sqrt(2.0f). None where the host raises
    (math.sqrt(-1.0): the device's NaN) or gives something else than an int or a float."""
    if node.keywords or not all(isinstance(a, ir.Const) and isinstance(a.type, Scalar) and a.type.weak for a in args):
        return None
    try:
        value = b.host(*(a.value for a in args))
    except (ArithmeticError, ValueError, TypeError):
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    if isinstance(value, (float, np.floating)):
        return ir.Const(float(value), Scalar("float32", weak=True))
    v = int(value)
    if not -2**63 <= v < 2**64:
        return None
    return ir.Const(v, Scalar("int32" if -2**31 <= v < 2**31 else ("int64" if v < 2**63 else "uint64"), weak=True))


@_on_numbers
def lower_divmod(self: FunctionBuilder, b, node, args):
    """divmod(a, b): the tuple (a // b, a % b) with Python's floor rules (ints and floats, numpy's
    0 for an integer division by zero); a and b are evaluated once. ``q, r = divmod(a, b)`` unpacks it."""
    a, d = (self.materialize(x) for x in args)
    return TupleRef([self.binop("//", a, d, node), self.binop("%", a, d, node)])


def lower_work_size(self: FunctionBuilder, b, node):
    """gpu.work_size(...): read by the entry analysis, erased from the body."""
    return None


def lower_local_array(self: FunctionBuilder, b, node):
    """gpu.local_array: only as the value of an assignment (``_statements``), never in an expression."""
    raise self.err(node, "gpu.local_array(...) must be assigned to a name: tile = gpu.local_array(256, np.float32)")


def _fence(node, default):
    """The fence a gpu.LOCAL / gpu.GLOBAL flags expression names (defaults as on the host)."""
    if not node.args:
        return default
    names = " ".join(x.attr if isinstance(x, ast.Attribute) else getattr(x, "id", "")
                     for x in ast.walk(node.args[0]) if isinstance(x, (ast.Attribute, ast.Name))).upper()
    has_l, has_g = "LOCAL" in names, "GLOBAL" in names
    return "both" if has_l and has_g else ("global" if has_g else "local")


def lower_barrier(self: FunctionBuilder, b, node):
    if self.prog.in_domain_body:
        # The magic loop's body sits behind the bounds guard: work items past the end
        # would skip a barrier the others wait at (undefined on every backend).
        raise self.err(node, BARRIER_IN_DOMAIN.format("gpu.barrier()"), BARRIER_HINT)
    self.uses_barrier = self.prog.uses_barrier = True
    return ir.Barrier(_fence(node, "local"), VOID)


_SUBGROUP_VALUES = ("int32", "uint32", "int64", "uint64", "float32", "float64")


def lower_subgroup(self: FunctionBuilder, b, node):
    """gpu.shuffle & co (prelude/_subgroups): every work item of the group must reach them, so
    they stay outside a magic loop's bounds guard (helpers too: _builder; on OpenCL a helper
    gets the kernel's scratch, _subgroup_scratch)."""
    if self.prog.in_domain_body:
        raise self.err(node, BARRIER_IN_DOMAIN.format(f"{b.name}()"), BARRIER_HINT)
    op = b.key
    self.prog.features.add("subgroups")
    if op in ("size", "local_id"):
        return ir.Call(self.prog.need_piece(f"subgroup_{op}", INT32), [], INT32)
    v = self.value(node.args[0])
    if op in ("any", "all", "ballot"):
        p = self.convert(self.truth(v, node.args[0]), INT32)
        call = ir.Call(self.prog.need_piece(f"subgroup_{op}", INT32), [p], INT32)
        return ir.Cast(call, UINT64) if op == "ballot" else ir.Cast(call, BOOL)
    t = concrete(v.type, self.prog.default_float)
    if not isinstance(t, Scalar) or t.name not in _SUBGROUP_VALUES:
        if isinstance(t, Scalar) and t.kind in "biu":       # bool, int8, uint16...: as int32, as CUDA promotes
            t = INT32
        else:
            raise self.type_err(node.args[0], f"{b.name}() moves one number of type int32, uint32, int64, uint64, "
                                f"float32 or float64, not {t}; move vector components one at a time")
    args = [self.convert(v, t)]
    if len(node.args) > 1:
        k = self.value(node.args[1])
        args.append(self.convert(k, INT32))
    self.prog.note_type(t)
    return ir.Call(self.prog.need_piece(f"subgroup_{op}", t), args, t)


def lower_mem_fence(self: FunctionBuilder, b, node):
    return ir.MemFence(_fence(node, "both"), VOID)


def lower_work_item(self: FunctionBuilder, b, node):
    """gpu.get_<key>(dim): widened to 64 bits by the dialect, then the kernel's index type."""
    d = 0
    if node.args:
        dv = self.value(node.args[0])
        if not (isinstance(dv, ir.Const) and dv.value in (0, 1, 2)):
            raise self.err(node.args[0], f"{b.name}() needs a constant dimension 0, 1 or 2")
        d = dv.value
    # the launch must have dimension d: get_global_id(1) of a 1-D launch is 0 in every work item
    self.prog.work_dims = max(self.prog.work_dims, d + 1)
    return ir.Cast(ir.WorkItem(b.key, d, INT64), self.prog.index_type)


def lower_work_items(self: FunctionBuilder, b, node):
    """gpu.<key>s(ndim): the tuple of gpu.get_<key>(ndim - 1) .. gpu.get_<key>(0), in array order
    as np.ndindex's domain (the last index is dimension 0, the fastest)."""
    nv = self.value(node.args[0])
    if not (isinstance(nv, ir.Const) and nv.value in (1, 2, 3)):
        raise self.err(node.args[0], f"{b.name}() needs a constant number of dimensions: 1, 2 or 3")
    n = nv.value
    return TupleRef([ir.Cast(ir.WorkItem(b.key, n - 1 - k, INT64), self.prog.index_type) for k in range(n)])


def lower_len(self: FunctionBuilder, b, node):
    a = self.expr(node.args[0])
    if isinstance(a, ir.ArrayRef):
        return self.index_value(a.shape[0])        # a Python int on the host: weak (_expressions)
    if isinstance(a, ir.Expr) and isinstance(a.type, Vector):
        return ir.Const(a.type.width, Scalar("int32", weak=True))
    if isinstance(a, TupleRef):                    # for k in range(len(WEIGHTS)): WEIGHTS[k]
        return ir.Const(len(a.items), Scalar("int32", weak=True))
    raise self.err(node, "len() needs an array, a vector or a tuple")


def lower_atomic(self: FunctionBuilder, b, node):
    return _atomic(self, b, node)


@_on_numbers
def lower_math(self: FunctionBuilder, b, node, args):
    """The math function ``key`` (sqrt, atan2, fabs, np.floor...) in the arguments' float type."""
    return call_math(self, b.key, args, node)


@_on_numbers
def lower_native(self: FunctionBuilder, b, node, args):
    return _native_math(self, b.key, args, node)


@_on_numbers
def lower_log(self: FunctionBuilder, b, node, args):
    """math.log(x) and np.log(x); math.log(x, base) is log(x) / log(base), as Python computes it."""
    if len(args) == 1:
        return call_math(self, "log", args, node)

    def scalar(x, base):                    # both logarithms in one float type: log(2.0) of a double x is no 0.693f
        ft = float_type_of(self, _common_type(self, [x, base]))
        ct = concrete(ft, self.prog.default_float)
        return self.binop("/", *(ir.MathCall("log", [self.convert(v, ct)], ft, ct) for v in (x, base)), node)
    return componentwise(self, scalar, args, node)


@_on_numbers
def lower_operator(self: FunctionBuilder, b, node, args):
    """np.add, np.floor_divide, np.mod...: the operator ``key`` with its Python/numpy rules."""
    return self.binop(b.key, args[0], args[1], node)


@_on_numbers
def lower_square(self: FunctionBuilder, b, node, args):
    x = self.materialize(args[0])
    return self.binop("*", x, x, node)


@_on_numbers
def lower_power(self: FunctionBuilder, b, node, args):
    return self.power(args[0], args[1], node)


@_on_numbers
def lower_float_to_int(self: FunctionBuilder, b, node, args):
    """math.floor/ceil/trunc: the float function, then an int (Python semantics)."""
    def f(x):
        if not x.type.is_float:
            return x
        r = call_math(self, b.key, [x], node)
        return ir.Cast(r, Scalar("int64" if x.type.bits == 64 else "int32", weak=True))
    return componentwise(self, f, args, node)


def lower_python_classify(self: FunctionBuilder, b, node):
    """math.isnan/isinf/isfinite: a Python bool (math.isnan(a) + math.isnan(b) is 2)."""
    c = lower_classify(self, b, node)
    return c if c is None else self.python_bool(c)


@_on_numbers
def lower_classify(self: FunctionBuilder, b, node, args):
    """math.isnan/isinf/isfinite: a bool; integers are finite."""
    x = args[0]
    if isinstance(x.type, Vector):
        raise self.err(node, f"{b.name}() on a vector is not supported", "test each component")
    if not x.type.is_float:
        return ir.Const(b.key == "isfinite", BOOL)
    ct = concrete(x.type, self.prog.default_float)
    return ir.Bin("!=", ir.Cast(ir.MathCall(b.key, [self.convert(x, ct)], INT32, ct), INT32), ir.Const(0, INT32), BOOL)


@_on_numbers
def lower_abs(self: FunctionBuilder, b, node, args):
    """abs, np.abs, funcs.abs: the same type (ints stay ints, unsigned ones unchanged)."""
    def f(x):
        if x.type.is_float:
            return call_math(self, "fabs", [x], node)
        if x.type.kind == "u":
            return x
        return prelude_call(self, "funcs.abs", [x])
    return componentwise(self, f, args, node)


@_on_numbers
def lower_min_max(self: FunctionBuilder, b, node, args):
    """``key``: (min or max, NaN rule): None is Python's (the first of equal ones wins, a NaN first
    stays), "propagate" numpy's minimum/maximum, "ignore" C's fmin/fmax (the number wins)."""
    kind, nan_rule = b.key
    df = self.prog.default_float

    def f(*xs):
        out = xs[0]
        for x in xs[1:]:
            t = binary_result(out.type, x.type, df)
            if nan_rule == "ignore" and t.is_float:            # C fmin/fmax: the number wins over NaN
                out = call_math(self, "f" + kind, [out, x], node)
            else:
                out = _min_max(self, kind, [out, x], nan_propagates=nan_rule == "propagate")
        return out
    return componentwise(self, f, args, node)


@_on_numbers
def lower_clamp(self: FunctionBuilder, b, node, args):
    """np.clip, funcs.clamp: min(max(x, lo), hi)."""
    return componentwise(self, lambda x, lo_, hi_: _min_max(self, "min", [_min_max(self, "max", [x, lo_]), hi_]),
                         args, node)


@_on_numbers
def lower_where(self: FunctionBuilder, b, node, args):
    cond = self.truth(args[0], node)
    t = common_type(self, args[1].type, args[2].type, node)
    ct = concrete(t, self.prog.default_float)
    return ir.Ternary(cond, self.convert(args[1], ct), self.convert(args[2], ct), t)


@_on_numbers
def lower_sign(self: FunctionBuilder, b, node, args):
    """np.sign(NaN) is NaN; OpenCL's (funcs.sign, ``key`` True) is 0."""
    return componentwise(self, lambda x: _sign(self, x, nan_gives_zero=b.key), args, node)


@_on_numbers
def lower_round(self: FunctionBuilder, b, node, args):
    """Python's round: half to even; an int without ndigits, the float's type with them."""
    x = args[0]
    if isinstance(x.type, Vector):
        raise self.err(node, "round() on a vector is not supported", "round each component")
    nd = args[1] if len(args) > 1 else None
    for kw in node.keywords:
        if kw.arg == "ndigits":
            nd = self.value(kw.value)

    def to_int(x):
        if x.type.is_float:
            r = call_math(self, "rint", [x], node)
            return ir.Cast(r, Scalar("int64" if x.type.bits == 64 else "int32", weak=True))
        return x
    if nd is None:
        return to_int(x)
    if not (isinstance(nd, ir.Const) and isinstance(nd.value, int)):
        raise self.err(node, "round(x, ndigits) needs a constant ndigits")
    ft = float_type_of(self, x.type)
    scale = ir.Const(10.0 ** nd.value, ft)
    x = self.convert(x, concrete(ft, self.prog.default_float))
    return ir.Bin("/", call_math(self, "rint", [ir.Bin("*", x, scale, ft)], node), scale, ft)


def lower_cast(self: FunctionBuilder, b, node):
    """int(x), float(x), bool(x) with Python semantics; np.<dtype>(x) converts to that type.
    ``float("inf")`` and friends are constants."""
    if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
        return ir.Const(float(node.args[0].value), Scalar("float32", weak=True))
    return _cast(self, b, node)


@_on_numbers
def _cast(self: FunctionBuilder, b, node, args):
    target = b.key
    df = self.prog.default_float
    x = args[0]
    if isinstance(x.type, Vector):
        raise self.err(node, f"{b.name}() of a vector is not supported", "convert components, or build a new vector type")
    if target == "int":
        if x.type.is_float:
            return ir.Cast(x, Scalar("int64" if x.type.bits == 64 else "int32", weak=True))
        return self.convert(x, INT32) if x.type.kind == "b" else x
    if target == "float":
        if x.type.is_float:
            return x
        ft = float_type_of(self, x.type)
        return ir.Cast(x, Scalar(ft.name, weak=True)) if not isinstance(x, ir.Const) else ir.Const(float(x.value), Scalar("float32", weak=True))
    if target == "bool":
        return self.python_bool(self.truth(x, node))     # bool(a) + bool(b) is 2
    t = Scalar(target)
    self.prog.note_type(t)
    if isinstance(x, ir.Const):
        return self.convert(x, t)
    return ir.Cast(self.convert(x, concrete(x.type, df)), t) if concrete(x.type, df) != t else (
        ir.Cast(x, t) if x.type.weak else x)


# ---- funcs.*: geometric and blending functions, lowered to IR (the prelude's pg_<f> where Python
# semantics need a piece) -------------------------------------------------------------------------------------
def _dot(self: FunctionBuilder, a, b, node):
    if not isinstance(a.type, Vector):
        return self.binop("*", a, b, node)
    a, b = self.materialize(a), self.materialize(b)
    out = None
    for k in range(a.type.width):
        p = self.scalar_binop("*", self.comp(a, k), self.comp(b, k), node)
        out = p if out is None else self.scalar_binop("+", out, p, node)
    return out


def _length(self: FunctionBuilder, v, node):
    v = self.materialize(v)
    if not isinstance(v.type, Vector):
        return call_math(self, "fabs", [v], node)
    return call_math(self, "sqrt", [_dot(self, v, v, node)], node)


@_on_numbers
def lower_dot(self: FunctionBuilder, b, node, args):
    return _dot(self, args[0], args[1], node)


@_on_numbers
def lower_length(self: FunctionBuilder, b, node, args):
    return _length(self, args[0], node)


@_on_numbers
def lower_distance(self: FunctionBuilder, b, node, args):
    return _length(self, self.binop("-", args[0], args[1], node), node)


@_on_numbers
def lower_normalize(self: FunctionBuilder, b, node, args):
    """A zero vector comes back unchanged, as on the host and in OpenCL."""
    v = self.materialize(args[0])
    if not isinstance(v.type, Vector):
        return _sign(self, self.convert(v, float_type_of(self, v.type)))
    n = self.materialize(_length(self, v, node))
    ct = concrete(n.type, self.prog.default_float)
    safe = ir.Ternary(ir.Bin("==", n, ir.Const(0.0, ct), BOOL), ir.Const(1.0, ct), n, n.type)
    return self.binop("/", v, self.materialize(safe), node)


@_on_numbers
def lower_cross(self: FunctionBuilder, b, node, args):
    a, c = self.materialize(args[0]), self.materialize(args[1])
    if not (isinstance(a.type, Vector) and a.type.width in (3, 4) and a.type == c.type):
        raise self.type_err(node, "funcs.cross needs two 3- or 4-wide vectors of the same type")

    def m(i, j):
        return self.scalar_binop("-", self.scalar_binop("*", self.comp(a, i), self.comp(c, j), node),
                                 self.scalar_binop("*", self.comp(a, j), self.comp(c, i), node), node)
    comps = [m(1, 2), m(2, 0), m(0, 1)]
    if a.type.width == 4:
        comps.append(ir.Const(0, a.type.base))
    return ir.VecCtor([self.convert(x, a.type.base) for x in comps], a.type)


@_on_numbers
def lower_mix(self: FunctionBuilder, b, node, args):
    return componentwise(self, lambda x, y, t: self.scalar_binop(
        "+", x, self.scalar_binop("*", self.scalar_binop("-", y, x, node), t, node), node), args, node)


@_on_numbers
def lower_step(self: FunctionBuilder, b, node, args):
    df = self.prog.default_float

    def f(edge, x):
        t = float_type_of(self, binary_result(edge.type, x.type, df))
        ct = concrete(t, df)
        return ir.Ternary(ir.Bin("<", self.convert(x, ct), self.convert(edge, ct), BOOL), ir.Const(0.0, ct), ir.Const(1.0, ct), t)
    return componentwise(self, f, args, node)


@_on_numbers
def lower_smoothstep(self: FunctionBuilder, b, node, args):
    df = self.prog.default_float

    def f(e0, e1, x):
        t = float_type_of(self, binary_result(binary_result(e0.type, e1.type, df), x.type, df))
        ct = concrete(t, df)
        e0, e1, x = (self.materialize(self.convert(v, ct)) for v in (e0, e1, x))
        r = self.scalar_binop("/", self.scalar_binop("-", x, e0, node), self.scalar_binop("-", e1, e0, node), node)
        r = _min_max(self, "min", [_min_max(self, "max", [r, ir.Const(0.0, ct)]), ir.Const(1.0, ct)])
        r = self.materialize(r)
        return self.scalar_binop("*", self.scalar_binop("*", r, r, node),
                                 self.scalar_binop("-", ir.Const(3.0, ct), self.scalar_binop("*", ir.Const(2.0, ct), r, node), node), node)
    return componentwise(self, f, args, node)


@_on_numbers
def lower_scale(self: FunctionBuilder, b, node, args):
    """funcs.radians / funcs.degrees: a product with the constant ``key``."""
    return componentwise(self, lambda x: self.scalar_binop("*", x, ir.Const(b.key, Scalar("float32", weak=True)), node),
                         args, node)


@_on_numbers
def lower_reflect(self: FunctionBuilder, b, node, args):
    i, nrm = self.materialize(args[0]), self.materialize(args[1])
    d = self.materialize(_dot(self, nrm, i, node))
    two_d = self.scalar_binop("*", ir.Const(2.0, Scalar("float32", weak=True)), d, node)
    return self.binop("-", i, self.binop("*", nrm, two_d, node), node)


def _atomic(self: FunctionBuilder, b, node):
    op = b.key
    arr = self.expr(node.args[0])
    if not isinstance(arr, ir.ArrayRef):
        raise self.err(node.args[0], f"{b.name}() needs an array as its first argument")
    t = arr.type.elem
    short = t.short_name if isinstance(t, Scalar) else None
    if f"atomic_add:{short}" not in PRELUDE_NAMES:       # the prelude's atomics say which types exist
        raise self.type_err(node, f"{b.name}() on a {t} array is not supported; atomics work on "
                            "int32, uint32, int64, uint64, float32 and float64 arrays")
    if f"atomic_{op}:{short}" not in PRELUDE_NAMES:
        raise self.type_err(node, f"{b.name}() needs an integer array, got {t}")
    idx = index_list(self, node.args[1])
    flat, ok = checked_index(self, arr, idx, node, "atomic")
    vals = [self.value(a) for a in node.args[2:]]
    self.prog.note_type(t)
    local = ".local" if arr.type.space == "local" else ""
    fn = self.prog.need_piece(f"atomic_{op}{local}", t)     # pragmas for 64-bit types come with it
    ptr = ir.Un("&", ir.Load(arr, flat, t), t)
    call = ir.Call(fn, [ptr] + [self.convert(v, t) for v in vals], t)
    call.atomic_root = arr.root
    return BoundsChecks.load(ok, call)
