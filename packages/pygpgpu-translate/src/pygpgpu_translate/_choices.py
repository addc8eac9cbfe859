"""Values Python chooses between: ``a and b`` / ``a or b`` (as a test, C's ``&&``/``||``; as a value,
the operand that decided, in the operands' common type) and ``x if c else y``, each operand's
temporaries run only where Python would evaluate it (short-circuit). A constant test's branch
that never runs is still typed but raises no run-time-only errors (``dead_unless``). Each function
takes the function builder as its explicit, typed lowering context."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from . import _ir as ir
from ._types import BOOL, PYBOOL, Scalar, Vector, binary_result, concrete

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["guarded", "bool_op", "conditional_value", "common_type"]


def guarded(fb: FunctionBuilder, node):
    """Evaluate ``node`` collecting the temporaries it needs separately, so a caller can run
    them only when Python would evaluate the expression (short-circuit, conditional)."""
    outer = fb.pre
    fb.pre = []
    try:
        v = fb.value(node)
        return v, fb.pre
    finally:
        fb.pre = outer


def bool_op(fb: FunctionBuilder, node, as_test):
    op = "&&" if isinstance(node.op, ast.And) else "||"
    first = fb.value(node.values[0])
    rest = [guarded(fb, v) for v in node.values[1:]]
    operands = [first] + [v for v, _ in rest]
    if not as_test and any(not (isinstance(v.type, Scalar) and v.type.kind == "b") for v in operands):
        return bool_op_value(fb, op, first, rest, node)
    t = PYBOOL if all(fb.is_python_bool(v) for v in operands) else BOOL
    out = fb.truth(first, node)
    for v, pre in rest:
        if not pre:
            out = ir.Bin(op, out, fb.truth(v, node), t)
            continue
        # the right operand needs statements: run them only when Python would evaluate it
        r = fb.temp(BOOL)
        fb.pre.append(ir.Assign(r, out, fb.line))
        run_right = r if op == "&&" else ir.Un("!", r, BOOL)
        fb.pre.append(ir.If(run_right, pre + [ir.Assign(r, fb.truth(v, node), fb.line)], [], fb.line))
        out = r
    return out


def bool_op_value(fb: FunctionBuilder, op, first, rest, node):
    """Python's value of ``a and b`` (``a`` when it is falsy, else ``b``) and ``a or b`` (``a``
    when it is truthy, else ``b``) over numbers that are not all bools: ``x and 5 or 7`` is 5
    or 7, not True. The result has the operands' common type, as ``b if a else a`` would (on
    the host it is whichever operand decided); each operand's truth is tested before that
    conversion (``256 and int8_x`` is ``int8_x``), and later operands run only when reached."""
    t = first.type
    for v, _ in rest:
        t = common_type(fb, t, v.type, node)
    ct = concrete(t, fb.prog.default_float)
    r = fb.temp(ct)
    stmts: list = []                       # built from the last operand back to the first
    for v, pre in reversed([(first, []), *rest]):
        if not stmts:                      # the last operand decides nothing: just its value
            stmts = pre + [ir.Assign(r, fb.convert(v, ct), fb.line)]
            continue
        held = v
        if not isinstance(v, (ir.Var, ir.Const)):      # read twice: its value and its truth
            held = fb.temp(v.type)
            pre = pre + [ir.Assign(held, v, fb.line)]
        go_on = fb.truth(held, node) if op == "&&" else ir.Un("!", fb.truth(held, node), BOOL)
        stmts = pre + [ir.Assign(r, fb.convert(held, ct), fb.line), ir.If(go_on, stmts, [], fb.line)]
    fb.pre.extend(stmts)
    return r


def conditional_value(fb: FunctionBuilder, node):
    cond = fb.condition(node.test)
    with fb.dead_unless(cond, True):
        a, pre_a = guarded(fb, node.body)
    with fb.dead_unless(cond, False):
        b, pre_b = guarded(fb, node.orelse)
    t = common_type(fb, a.type, b.type, node)
    ct = concrete(t, fb.prog.default_float)
    if not pre_a and not pre_b:
        return ir.Ternary(cond, fb.convert(a, ct), fb.convert(b, ct), t)
    r = fb.temp(ct)           # a branch needs statements: only the taken one may run
    fb.pre.append(ir.If(cond, pre_a + [ir.Assign(r, fb.convert(a, ct), fb.line)],
                        pre_b + [ir.Assign(r, fb.convert(b, ct), fb.line)], fb.line))
    return r


def common_type(fb: FunctionBuilder, ta, tb, node):
    if isinstance(ta, Vector) or isinstance(tb, Vector):
        if ta == tb:
            return ta
        if isinstance(ta, Vector) and isinstance(tb, Vector):
            raise fb.type_err(node, f"mixing {ta} and {tb}")
        return ta if isinstance(ta, Vector) else tb
    if isinstance(ta, Scalar) and isinstance(tb, Scalar) and ta.kind == tb.kind == "b":
        return PYBOOL if ta.weak and tb.weak else BOOL
    return binary_result(ta, tb, fb.prog.default_float)
