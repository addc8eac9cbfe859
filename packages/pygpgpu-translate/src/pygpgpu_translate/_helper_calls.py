"""Calls of helpers (plain Python functions a kernel calls): arguments bound to parameters as
Python binds them, each helper specialised for its argument types, arrays passed with their
extents and record elements by reference. Takes the function builder as its explicit, typed
lowering context."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import _ir as ir
from ._attr_refs import DefaultsRef
from ._bindings import ObjectRef, TupleRef
from ._records import is_record_binding, record_argument
from ._source import parameter_names
from ._tuples import tuple_result
from ._types import VOID, Scalar, Vector

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["call_helper"]


def call_helper(fb: FunctionBuilder, func, node) -> ir.Expr | TupleRef:
    """A call of helper ``func`` (a plain Python function): its arguments bound to its parameters
    (keywords, defaults compiled in), the helper specialised for their types (``ProgramBuilder.specialize_helper``)
    and called with its scalars converted to its parameter types."""
    src = fb.prog.source_of(func)
    fargs = src.tree.args
    names = parameter_names(fargs)           # positional, then keyword-only (def h(a, *, c=3))
    positional = len(fargs.posonlyargs) + len(fargs.args)
    defaults = dict(zip(names[positional - len(fargs.defaults):positional], func.__defaults__ or ()))
    defaults.update(func.__kwdefaults__ or {})
    bound = {}
    if len(node.args) > positional:
        raise fb.err(node, f"{func.__name__}() takes {positional} positional arguments, {len(node.args)} given")
    for n, a in zip(names, node.args):
        bound[n] = a
    for kw in node.keywords:
        if kw.arg not in names:
            raise fb.err(kw.value, f"{func.__name__}() has no parameter {kw.arg!r}")
        bound[kw.arg] = kw.value
    values = []
    for n in names:
        if n in bound:
            values.append(fb.expr(bound[n]))
        elif n in defaults:       # compiled in: h.__defaults__ = (...) translates again (_attr_refs)
            fb.prog.global_refs[("default", id(func), n)] = (DefaultsRef(func, n, defaults[n]), n, defaults[n])
            values.append(fb.object_value(defaults[n], node, n))
        else:
            raise fb.err(node, f"{func.__name__}() is missing argument {n!r}")
    for v, n in zip(values, names):
        if isinstance(v, ObjectRef):
            raise fb.err(node, f"argument {n!r} of {func.__name__}() is not a number, vector or array")
    fn = fb.prog.specialize_helper(func, values, node, fb)
    args = []
    for v in values:
        if isinstance(v, ir.ArrayRef):
            args.append(v)
            args.extend(v.shape)
        elif is_record_binding(v):             # by reference: array, extents, element (_records)
            args.extend(record_argument(v, fb.prog.index_type)[1])
        else:
            args.append(v)
    # convert scalar args to the helper's parameter types
    conv = []
    pi = 0
    for p in fn.params[:len(args)]:              # a tuple-returning helper's out-parameters follow
        a = args[pi]
        conv.append(fb.convert(a, p.type) if isinstance(p.type, (Scalar, Vector)) and not isinstance(a, ir.ArrayRef) else a)
        pi += 1
    call = ir.Call(fn.name, conv, fn.ret)
    call.helper = fn
    if fn.tuple_returns:
        return tuple_result(fb, call, fn)
    if fn.ret is VOID:
        return call
    return call
