"""Python AST -> typed IR, one function at a time (kernels and monomorphized helpers).

Type inference runs the builder over the body until every local's type (the join of all
values assigned to it) is stable; the last pass produces the IR. Python semantics that C
lacks are lowered here (floor division, modulo, power, min/max/abs/round, int->float on
store, vector arithmetic component by component), so the emitter only prints.
"""
from __future__ import annotations

import ast
import builtins as _pybuiltins
import math
import types as _pytypes
from dataclasses import dataclass, field

import numpy as np

from . import _ir as ir
from ._builtins import BUILTINS, CAST_TYPES, lookup_namespace, lookup_object, Builtin
from ._frontend import check_syntax
from ._source import FunctionSource, KernelTypeError, function_source, syntax_error
from ._support import support_function
from ._types import (BOOL, INT32, INT64, UNKNOWN, VOID, ArrayType, JoinConflict, Scalar, Vector,
                     VECTOR_WIDTHS, binary_result, concrete, join)

__all__ = ["ProgramBuilder", "ObjectRef", "Domain", "vector_class_info"]

_C_RESERVED = set("""auto break case char const continue default do double else enum extern float for goto if inline
int long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
bool true false half uchar ushort uint ulong kernel global local constant private image2d_t sampler_t event_t
class new delete this template typename namespace using operator friend virtual public private protected
throw try catch asm export mutable explicit size_t ptrdiff_t intptr_t uintptr_t NULL main
sqrt exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan atan2 sinh cosh tanh floor ceil trunc fabs abs
pow hypot fmod copysign isnan isinf isfinite min max rint round erf cbrt fmin fmax fma sign clamp mix step dot cross
length distance normalize barrier threadIdx blockIdx blockDim gridDim warpSize select vload vstore""".split())
_COMP_LETTERS = "xyzw"
_SWIZZLE_INDEX = {**{c: i for i, c in enumerate("xyzw")}, **{c: i for i, c in enumerate("rgba")}}
_NP_TYPES = {np.dtype(t).name for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                        "uint64", "float16", "float32", "float64")}


def vector_class_info(obj):
    """(base numpy name, width) when ``obj`` is one of the host vector classes (float4, int3, ...)."""
    if not isinstance(obj, type):
        return None
    mod = getattr(obj, "__module__", "") or ""
    if not mod.startswith("pygpgpu"):
        return None
    width = getattr(obj, "width", None)
    base = getattr(obj, "base", None)
    if isinstance(width, int) and width in VECTOR_WIDTHS and base is not None:
        try:
            return np.dtype(base).name, width
        except TypeError:
            return None
    name = obj.__name__
    for short, npname in (("uchar", "uint8"), ("ushort", "uint16"), ("uint", "uint32"), ("ulong", "uint64"),
                          ("char", "int8"), ("short", "int16"), ("int", "int32"), ("long", "int64"),
                          ("float", "float32"), ("double", "float64")):
        if name.startswith(short) and name[len(short):].isdigit() and int(name[len(short):]) in VECTOR_WIDTHS:
            return npname, int(name[len(short):])
    return None


@dataclass
class ObjectRef:
    """A compile-time Python object: a module, ``self``, a function, a class."""
    obj: object


@dataclass
class ShapeRef:
    array: ir.ArrayRef


@dataclass
class TupleRef:
    items: list


@dataclass
class Domain:
    kind: str                     # "range" | "ndindex" | "ndenumerate" | "enumerate" | "work_size"
    ndim: int
    host_exprs: list              # Python source strings evaluated on the host (sizes per dim)
    node: object = None           # the For statement (None for work_size)
    covers: set = field(default_factory=set)     # arrays stored unconditionally at the domain index


class _Early(Exception):
    pass


class ProgramBuilder:
    """Everything one kernel specialization produces: kernel + helpers + support functions."""

    def __init__(self, dialect, default_float: Scalar, index_bits: int, kernel_name: str):
        self.dialect = dialect
        self.default_float = default_float
        self.index_type = INT64 if index_bits == 64 else INT32
        self.kernel_name = kernel_name
        self.support: dict[str, str] = {}
        self.helpers: dict = {}              # key -> ir.Function (dependencies first)
        self.helper_names: set[str] = set()
        self.features: set[str] = set()
        self.sources: dict = {}              # code object -> FunctionSource
        self.global_refs: dict = {}          # (id(globals), name) -> (globals, name, value)
        self.stack: list = []
        self.local_arrays: list = []
        self.prelude_needed: set[str] = set()

    def need_support(self, kind, t, extra=""):
        name, text = support_function(self.dialect, kind, t, extra)
        if name not in self.support:
            self.support[name] = text
        return name

    def note_type(self, t):
        if isinstance(t, Vector):
            self.prelude_needed.add(f"vec:{t.name}")
            t = t.base
        if isinstance(t, ArrayType):
            return self.note_type(t.elem)
        if isinstance(t, Scalar):
            if t.name == "float64" and not t.weak:
                self.features.add("fp64")
            if t.name == "float16":
                self.features.add("fp16")

    def unique_helper_name(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base)
        n = 0
        name = base
        while name in self.helper_names or name in _C_RESERVED or name == self.kernel_name:
            n += 1
            name = f"{base}_{n}"
        self.helper_names.add(name)
        return name

    def source_of(self, func) -> FunctionSource:
        src = function_source(func)
        if func.__code__ not in self.sources:
            check_syntax(src)
            self.sources[func.__code__] = src
        return src

    def specialize_helper(self, func, arg_bindings: list, call_node, caller):
        """Device function for ``func`` at these argument types (recursively, memoized)."""
        code = func.__code__
        if code in self.stack:
            raise syntax_error(caller.src, call_node, f"recursion is not supported: {func.__name__}() calls itself "
                               f"(through {' -> '.join(c.co_name for c in self.stack)})",
                               "rewrite it as a loop", caller.kernel_name)
        if func.__closure__:
            raise syntax_error(caller.src, call_node, f"closures are not supported: {func.__name__}() captures "
                               f"{', '.join(code.co_freevars)} from an enclosing function",
                               "define the helper at module level and pass the values as arguments", caller.kernel_name)
        key_types = []
        for b in arg_bindings:
            if isinstance(b, ir.ArrayRef):
                key_types.append(("array", b.type))
            elif isinstance(b, ir.Expr):
                key_types.append(("value", concrete(b.type, self.default_float)))
            else:
                raise syntax_error(caller.src, call_node, f"cannot pass a {type(b).__name__} to helper {func.__name__}()",
                                   "pass numbers, vectors or arrays", caller.kernel_name)
        key = (code, tuple(key_types))
        if key in self.helpers:
            return self.helpers[key]
        src = self.source_of(func)
        self.stack.append(code)
        try:
            fb = FunctionBuilder(self, src, func, is_kernel=False, kernel_name=caller.kernel_name)
            fn = fb.build_helper(key_types)
        finally:
            self.stack.pop()
        self.helpers[key] = fn
        return fn


class FunctionBuilder:
    def __init__(self, prog: ProgramBuilder, src: FunctionSource, func, is_kernel: bool, kernel_name: str):
        self.prog = prog
        self.src = src
        self.func = func
        self.is_kernel = is_kernel
        self.kernel_name = kernel_name
        self.globals = getattr(func, "__globals__", {})
        self.local_types: dict[str, object] = {}     # Python local name -> joined type
        self.cnames: dict[str, str] = {}             # Python local name -> C name
        self.temp_types: dict[str, object] = {}
        self.params: dict[str, object] = {}          # Python param name -> binding
        self.array_locals: dict[str, ir.ArrayRef] = {}
        self.tuple_locals: dict[str, TupleRef] = {}
        self.final = False
        self.changed = False
        self.pre: list = []
        self.ntemp = 0
        self.returns: list = []
        self.domain: Domain | None = None
        self.domain_vars: list[str] = []
        self.top_level_of_domain = False
        self.seen_exit = False
        self.uses_barrier = False
        self.fn_params: list[ir.Param] = []
        self.self_attrs: dict[str, object] = {}

    # ---- errors ---------------------------------------------------------------------------------
    def err(self, node, msg, hint=""):
        return syntax_error(self.src, node, msg, hint, self.kernel_name)

    def type_err(self, node, msg):
        line = getattr(node, "lineno", self.src.tree.lineno)
        return KernelTypeError(f"kernel {self.kernel_name!r}, {self.src.filename}:{line}: {msg}")

    # ---- names ------------------------------------------------------------------------------------
    def cname(self, pyname: str) -> str:
        c = self.cnames.get(pyname)
        if c is None:
            c = pyname if pyname not in _C_RESERVED and not pyname.startswith("pyg_") else pyname + "_"
            taken = set(self.cnames.values()) | {p.name for p in self.fn_params}
            while c in taken:
                c += "_"
            self.cnames[pyname] = c
        return c

    def temp(self, t) -> ir.Var:
        self.ntemp += 1
        name = f"_t{self.ntemp}"
        self.temp_types[name] = concrete(t, self.prog.default_float)
        return ir.Var(name, self.temp_types[name])

    def materialize(self, e: ir.Expr) -> ir.Expr:
        """A side-effect-free, cheap-to-repeat form of ``e`` (a temp for anything complex)."""
        if isinstance(e, (ir.Var, ir.Const)):
            return e
        if isinstance(e, ir.VecCtor) and all(isinstance(a, (ir.Var, ir.Const, ir.Swizzle)) for a in e.args):
            return e
        if e.type is UNKNOWN:
            return e
        v = self.temp(e.type)
        self.pre.append(ir.Assign(v, e, self.line))
        return v

    # ---- resolution -------------------------------------------------------------------------------
    def lookup(self, name: str, node):
        if name in self.tuple_locals:
            return self.tuple_locals[name]
        if name in self.array_locals:
            return self.array_locals[name]
        if name in self.params:
            return self.params[name]
        if name in self.local_types or name in self.assigned:
            t = self.local_types.get(name, UNKNOWN)
            if t is UNKNOWN:
                if self.final:
                    raise self.err(node, f"local variable {name!r} is used before it is assigned")
                return ir.Var(self.cname(name), UNKNOWN)
            return ir.Var(self.cname(name), t)
        if name in self.globals:
            return self.global_value(name, self.globals[name], node)
        if hasattr(_pybuiltins, name):
            return ObjectRef(getattr(_pybuiltins, name))
        raise self.err(node, f"name {name!r} is not defined", "define it at module level or pass it as an argument")

    def global_value(self, name, value, node):
        self.prog.global_refs[(id(self.globals), name)] = (self.globals, name, value)
        return self.object_value(value, node, name)

    def object_value(self, value, node, what):
        if isinstance(value, bool):
            return ir.Const(value, BOOL)
        if isinstance(value, int):
            return ir.Const(value, Scalar("int32" if -2**31 <= value < 2**31 else "int64", weak=True))
        if isinstance(value, float):
            return ir.Const(value, Scalar("float32", weak=True))
        if isinstance(value, np.generic) and value.dtype.name in _NP_TYPES:
            return ir.Const(value.item(), Scalar(value.dtype.name))
        if isinstance(value, np.ndarray):
            raise self.err(node, f"{what!r} is a global numpy array; kernels cannot capture arrays",
                           f"pass {what} as a kernel argument")
        if isinstance(value, (str, bytes)):
            raise self.err(node, f"{what!r} is a string; strings are not supported in kernels",
                           "use int constants instead")
        if isinstance(value, (list, dict, tuple, set)):
            raise self.err(node, f"{what!r} is a {type(value).__name__}; lists/dicts/tuples are not supported in kernels",
                           "pass a numpy array argument instead")
        return ObjectRef(value)

    # ---- building ---------------------------------------------------------------------------------
    def _scan_assigned(self, body):
        names = set()
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
        return names

    def run_passes(self, body):
        self.assigned = self._scan_assigned(body)
        for _ in range(12):
            self.changed = False
            self.reset_pass()
            self.stmts(body, top=True)
            if not self.changed:
                break
        self.final = True
        self.reset_pass()
        return self.stmts(body, top=True)

    def reset_pass(self):
        self.pre = []
        self.ntemp = 0
        self.temp_types = {}
        self.returns = []
        self.array_locals = {}
        self.tuple_locals = {}
        self.prog.local_arrays = [] if self.is_kernel else self.prog.local_arrays
        self.seen_exit = False
        if self.domain:
            self.domain.covers = set()

    def body_without_docstring(self):
        body = self.src.tree.body
        if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body = body[1:]
        return body

    def build_helper(self, key_types):
        fdef = self.src.tree
        args = fdef.args
        names = [a.arg for a in args.posonlyargs + args.args]
        if len(names) != len(key_types):
            raise self.err(fdef, f"{fdef.name}() expects {len(names)} arguments, got {len(key_types)}")
        for pyname, (kind, t) in zip(names, key_types):
            c = self.cname(pyname)
            if kind == "array":
                shape = [ir.Var(f"{c}_shape{k}", self.prog.index_type) for k in range(t.ndim)]
                ref = ir.ArrayRef(pyname, c, shape, t)
                self.params[pyname] = ref
                self.fn_params.append(ir.Param(c, t, root=pyname))
                for s in shape:
                    self.fn_params.append(ir.Param(s.name, s.type, hidden=True))
            else:
                self.prog.note_type(t)
                self.params[pyname] = ir.Var(c, t)
                self.fn_params.append(ir.Param(c, t))
        body = self.run_passes(self.body_without_docstring())
        ret = VOID
        for t in self.returns:
            if t is not VOID:
                try:
                    ret = t if ret is VOID else join(ret, t)
                except JoinConflict as exc:
                    raise self.type_err(fdef, f"helper {fdef.name}() returns both {exc.a} and {exc.b}; "
                                        "convert one explicitly (e.g. float(...))") from None
        ret = concrete(ret, self.prog.default_float)
        if any(t is VOID for t in self.returns) and ret is not VOID:
            raise self.err(fdef, f"helper {fdef.name}() returns a value on some paths and nothing on others",
                           "return a value on every path")
        body = self._cast_returns(body, ret)
        name = self.prog.unique_helper_name(fdef.name)
        fn = ir.Function(name, self.fn_params, ret, body, self.locals_table(), False, self.src.filename, fdef.lineno)
        return fn

    def _cast_returns(self, body, ret):
        for s in body:
            if isinstance(s, ir.Return) and s.value is not None:
                s.value = self.convert(s.value, ret)
            elif isinstance(s, ir.If):
                self._cast_returns(s.body, ret)
                self._cast_returns(s.orelse, ret)
            elif isinstance(s, (ir.While, ir.For)):
                self._cast_returns(s.body, ret)
        return body

    def locals_table(self):
        table = {}
        for py, t in self.local_types.items():
            if py in self.array_locals or py in self.tuple_locals or t is UNKNOWN:
                continue
            table[self.cname(py)] = concrete(t, self.prog.default_float)
        table.update(self.temp_types)
        for p in self.fn_params:
            table.pop(p.name, None)
        for t in table.values():
            self.prog.note_type(t)
        return table

    # ---- statements ---------------------------------------------------------------------------------
    def stmts(self, body, top=False):
        out = []
        outer_pre = self.pre
        for s in body:
            self.line = s.lineno
            self.pre = []
            res = self.stmt(s, top)
            out.extend(self.pre)
            self.pre = []
            if res is None:
                continue
            out.extend(res if isinstance(res, list) else [res])
        self.pre = outer_pre
        return out

    def stmt(self, s, top):
        m = getattr(self, "st_" + type(s).__name__, None)
        if m is None:
            raise self.err(s, f"{type(s).__name__} statements are not supported in kernels")
        return m(s, top)

    def st_Pass(self, s, top):
        return None

    def st_Expr(self, s, top):
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return None
        if not isinstance(s.value, ast.Call):
            raise self.err(s, "an expression statement has no effect here", "assign the value or remove the line")
        e = self.expr(s.value)
        if e is None:
            return None
        if isinstance(e, ir.Expr):
            return ir.ExprStmt(e, s.lineno)
        return None

    def st_Break(self, s, top):
        if self.loop_depth == 0:
            raise self.err(s, "break outside a loop", "in the magic loop, use 'continue'/'return' to skip one item")
        self.seen_exit = True
        return ir.Break(s.lineno)

    def st_Continue(self, s, top):
        self.seen_exit = True
        if self.loop_depth == 0:
            return ir.Return(None, s.lineno)     # continue in the domain loop: this work item is done
        return ir.Continue(s.lineno)

    loop_depth = 0
    domain_identity = True

    def st_Return(self, s, top):
        self.seen_exit = True
        if self.is_kernel:
            if s.value is not None:
                raise self.err(s, "kernels cannot return values",
                               "write the result into an output array argument")
            return ir.Return(None, s.lineno)
        if s.value is None:
            self.returns.append(VOID)
            return ir.Return(None, s.lineno)
        v = self.value(s.value)
        if isinstance(v.type, ArrayType):
            raise self.err(s, "helpers cannot return arrays", "write into an array argument instead")
        self.returns.append(v.type)
        return ir.Return(v, s.lineno)

    def st_If(self, s, top):
        cond = self.truth(self.value(s.test), s.test)
        pre = self.pre
        self.pre = []
        saved = self.top_level_of_domain
        self.top_level_of_domain = False
        body = self.stmts(s.body)
        orelse = self.stmts(s.orelse)
        self.top_level_of_domain = saved
        self.pre = pre
        if isinstance(cond, ir.Const):     # compile-time constant condition (e.g. a module flag)
            return body if cond.value else orelse
        return ir.If(cond, body, orelse, s.lineno)

    def st_While(self, s, top):
        saved = self.top_level_of_domain
        self.top_level_of_domain = False
        cond_pre_start = len(self.pre)
        cond = self.truth(self.value(s.test), s.test)
        if len(self.pre) > cond_pre_start:   # the condition needed temporaries: re-evaluate them each turn
            setup = self.pre[cond_pre_start:]
            del self.pre[cond_pre_start:]
            self.loop_depth += 1
            body = self.stmts(s.body)
            self.loop_depth -= 1
            self.top_level_of_domain = saved
            brk = ir.If(ir.Un("!", cond, BOOL), [ir.Break(s.lineno)], [], s.lineno)
            return ir.While(ir.Const(True, BOOL), list(setup) + [brk] + body, s.lineno)
        self.loop_depth += 1
        body = self.stmts(s.body)
        self.loop_depth -= 1
        self.top_level_of_domain = saved
        return ir.While(cond, body, s.lineno)

    def st_AnnAssign(self, s, top):
        return self.assign_to(s.target, s.value, s)

    def st_Assign(self, s, top):
        return self.assign_to(s.targets[0], s.value, s)

    def assign_to(self, target, value_node, s):
        if isinstance(target, ast.Tuple):
            if not isinstance(value_node, ast.Tuple) or len(value_node.elts) != len(target.elts):
                raise self.err(s, "tuple unpacking needs a tuple of the same length on the right",
                               "write a, b = x, y or assign one name per statement")
            vals = [self.value(v) for v in value_node.elts]
            vals = [self.materialize_for_swap(v) for v in vals]
            out = []
            for t, v in zip(target.elts, vals):
                out.extend(self.store(t, v, s))
            return out
        # gpu.local_array(...) and array aliases bind names instead of assigning values
        if isinstance(target, ast.Name) and isinstance(value_node, ast.Call):
            callee = self.resolve_callee(value_node.func)
            b = self.builtin_of(callee)
            if b is not None and b.rule == "local_array":
                return self.local_array(target.id, value_node)
        value = self.expr(value_node)
        if isinstance(value, ir.ArrayRef):
            if not isinstance(target, ast.Name):
                raise self.err(s, "arrays cannot be stored into other arrays", "copy element by element in a loop")
            prev = self.array_locals.get(target.id)
            if prev is not None and prev.root != value.root:
                raise self.err(s, f"{target.id!r} refers to two different arrays",
                               "use one name per array; an array name cannot be rebound conditionally")
            self.array_locals[target.id] = value
            return None
        if isinstance(value, TupleRef) and isinstance(target, ast.Name):
            self.tuple_locals[target.id] = value
            return None
        if not isinstance(value, ir.Expr):
            raise self.err(value_node, "this value cannot be stored in a variable",
                           "kernel variables hold numbers, vectors or arrays")
        return self.store(target, value, s)

    def materialize_for_swap(self, v):
        if isinstance(v, ir.Const):
            return v
        t = self.temp(v.type)
        self.pre.append(ir.Assign(t, v, self.line))
        return ir.Var(t.name, v.type)

    def store(self, target, value: ir.Expr, s):
        if isinstance(target, ast.Name):
            name = target.id
            if name in self.params or name in self.array_locals:
                b = self.params.get(name) or self.array_locals.get(name)
                if isinstance(b, ir.ArrayRef):
                    raise self.err(target, f"cannot assign to array {name!r}", f"write elements: {name}[i] = ...")
            if name in self.domain_vars:
                raise self.err(target, f"cannot assign to the loop index {name!r}", "use another variable")
            if name in self.params:                          # a scalar parameter keeps its declared type
                pv = self.params[name]
                if isinstance(pv, ObjectRef):
                    raise self.err(target, f"cannot assign to {name!r}")
                if value.type is UNKNOWN:
                    return []
                var = ir.Var(pv.name, concrete(pv.type, self.prog.default_float))
                return [ir.Assign(var, self.convert(value, var.type), s.lineno)]
            old = self.local_types.get(name, UNKNOWN)
            vt = value.type
            if vt is not UNKNOWN:
                if isinstance(vt, ArrayType):
                    raise self.err(target, "cannot assign an array here")
                try:
                    new = join(old, vt)
                except JoinConflict as exc:
                    raise self.type_err(s, f"variable {name!r} is assigned {exc.a} and {exc.b} "
                                        f"(conflicting types); convert explicitly, e.g. {'float' if isinstance(exc.b, Scalar) and exc.b.is_float else 'int'}(...)") from None
                if new != old:
                    self.local_types[name] = new
                    self.changed = True
            t = self.local_types.get(name, UNKNOWN)
            if t is UNKNOWN:
                return []
            var = ir.Var(self.cname(name), concrete(t, self.prog.default_float))
            return [ir.Assign(var, self.convert(value, var.type), s.lineno)]
        if isinstance(target, ast.Subscript):
            arr, index, row = self.subscript_target(target)
            if value.type is UNKNOWN:
                return []
            full = (self.top_level_of_domain and not self.seen_exit and self.is_domain_index(target)
                    and self.loop_depth == 0 and self.domain_identity)
            if full:
                self.domain.covers.add(arr.root)
            if row:
                elem = arr.type.elem
                if not isinstance(value.type, Vector):
                    value_b = self.convert(value, elem)
                    comps = [value_b] * row
                else:
                    if value.type.width != row:
                        raise self.type_err(target, f"cannot store a {value.type} into a row of width {row}")
                    v = self.materialize(value)
                    comps = [self.convert(self.comp(v, k), elem) for k in range(row)]
                return [ir.Store(arr, self.add(index, ir.Const(k, self.prog.index_type)) if k else index, c, s.lineno, full)
                        for k, c in enumerate(comps)]
            return [ir.Store(arr, index, self.convert(value, arr.type.elem), s.lineno, full)]
        if isinstance(target, ast.Attribute):
            raise self.err(target, "writing through a vector component or swizzle is not supported",
                           "build a new vector instead, e.g. v = float4(v.x, 2.0, v.z, v.w)")
        raise self.err(target, "cannot assign to this target")

    def st_AugAssign(self, s, top):
        if isinstance(s.target, ast.Subscript):
            current = self.expr(ast.Subscript(value=s.target.value, slice=s.target.slice, ctx=ast.Load(),
                                              lineno=s.lineno, col_offset=s.target.col_offset))
        else:
            current = self.value(ast.Name(id=s.target.id, ctx=ast.Load(), lineno=s.lineno, col_offset=s.col_offset)) \
                if isinstance(s.target, ast.Name) else None
            if current is None:
                raise self.err(s, "augmented assignment to this target is not supported")
        result = self.binop(s.op, current, self.value(s.value), s)
        saved = self.top_level_of_domain
        self.top_level_of_domain = False     # a read-modify-write never fully overwrites
        out = self.store(s.target, result, s)
        self.top_level_of_domain = saved
        return out

    def local_array(self, name, call):
        if not self.is_kernel:
            raise self.err(call, "gpu.local_array must be declared in the kernel itself",
                           "declare it in the kernel and pass it to the helper")
        if len(call.args) < 1:
            raise self.err(call, "gpu.local_array(shape, dtype) needs a shape")
        shape_v = self.expr(call.args[0])
        dims = shape_v.items if isinstance(shape_v, TupleRef) else [shape_v]
        shape = []
        for d in dims:
            if not (isinstance(d, ir.Const) and isinstance(d.value, int) and d.value > 0):
                raise self.err(call.args[0], "gpu.local_array needs a compile-time shape",
                               "use an int literal or a module-level int constant")
            shape.append(d.value)
        dt_node = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "dtype"), None)
        elem = self.prog.default_float
        if dt_node is not None:
            obj = self.expr(dt_node)
            elem = self.dtype_from_object(obj, dt_node)
        self.prog.note_type(elem)
        t = ArrayType(elem, len(shape), space="local", static_shape=tuple(shape))
        ref = ir.ArrayRef(name, self.cname(name), [ir.Const(n, self.prog.index_type) for n in shape], t)
        self.array_locals[name] = ref
        self.prog.local_arrays.append(ir.LocalArrayDecl(ref, int(np.prod(shape)), call.lineno))
        return None

    def dtype_from_object(self, obj, node):
        if isinstance(obj, ObjectRef):
            o = obj.obj
            if o in CAST_TYPES and CAST_TYPES[o] in _NP_TYPES:
                return Scalar(CAST_TYPES[o])
            if o is float:
                return self.prog.default_float
            if o is int:
                return INT32
            vi = vector_class_info(o)
            if vi:
                return Vector(Scalar(vi[0]), vi[1])
            try:
                return Scalar(np.dtype(o).name)
            except TypeError:
                pass
        raise self.err(node, "expected a numpy dtype such as np.float32")

    # ---- for loops -----------------------------------------------------------------------------------
    def st_For(self, s, top):
        if top and self.is_kernel and self.domain is not None and self.domain.node is s:
            return self.domain_loop(s)
        it = s.iter
        callee = self.resolve_callee(it.func) if isinstance(it, ast.Call) else None
        if not (isinstance(callee, ObjectRef) and callee.obj is range):
            if isinstance(it, ast.Call) and isinstance(callee, ObjectRef) and callee.obj in (enumerate, np.ndindex, np.ndenumerate):
                raise self.err(s, f"{callee.obj.__name__}() loops are only supported as the kernel's top-level iteration domain",
                               "use nested 'for j in range(n)' loops inside the kernel")
            raise self.err(s, "for loops inside a kernel must iterate over range(...)",
                           "write for i in range(n): ... (lists and arbitrary iterables are not supported)")
        if not isinstance(s.target, ast.Name):
            raise self.err(s.target, "the loop variable of a range loop must be a plain name")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.err(it, "range() takes 1 to 3 positional arguments")
        vals = [self.value(a) for a in it.args]
        if len(vals) == 1:
            vals = [ir.Const(0, Scalar("int32", weak=True))] + vals
        if len(vals) == 2:
            vals.append(ir.Const(1, Scalar("int32", weak=True)))
        for v, a in zip(vals, it.args):
            if isinstance(v.type, Scalar) and not (v.type.is_int or v.type.kind == "b"):
                raise self.type_err(a, f"range() needs integers, got {v.type}")
        start, stop, step = vals
        t = start.type
        for v in (stop, step):
            if v.type is not UNKNOWN and t is not UNKNOWN:
                t = binary_result(t, v.type, self.prog.default_float)
        name = s.target.id
        store = self.store(s.target, ir.Const(0, t if t is not UNKNOWN else INT32), s)
        if not store:
            var = None
        else:
            var = store[0].target
        stop = self.materialize(self.convert(stop, var.type) if var else stop)
        step_c = self.convert(step, var.type) if var else step
        sign = 0
        if isinstance(step_c, ir.Const):
            if step_c.value == 0:
                raise self.err(it, "range() step must not be zero")
            sign = 1 if step_c.value > 0 else -1
        else:
            step_c = self.materialize(step_c)
        self.loop_depth += 1
        saved = self.top_level_of_domain
        self.top_level_of_domain = False
        body = self.stmts(s.body)
        self.top_level_of_domain = saved
        self.loop_depth -= 1
        if var is None:
            return []
        return ir.For(var, self.convert(start, var.type), stop, step_c, body, s.lineno, sign)

    def domain_loop(self, s):
        d = self.domain
        idx = self.prog.index_type
        gid = [ir.Cast(ir.Raw(self.prog.dialect.work_item("global_id", d.ndim - 1 - k), INT64), idx) for k in range(d.ndim)]
        bounds = [ir.Var(f"_pyg_n{k}", idx) for k in range(d.ndim)]
        out = []
        it = s.iter
        names = []
        if d.kind == "range":
            vals = [self.value(a) for a in it.args]
            start = vals[0] if len(vals) >= 2 else ir.Const(0, idx)
            step = vals[2] if len(vals) == 3 else ir.Const(1, idx)
            if not isinstance(s.target, ast.Name):
                raise self.err(s.target, "the loop variable must be a plain name")
            names = [s.target.id]
            self.bind_index(names[0], idx)
            value = gid[0]
            self.domain_identity = (isinstance(start, ir.Const) and start.value == 0
                                    and isinstance(step, ir.Const) and step.value == 1)
            if not self.domain_identity:
                value = self.add(self.convert(start, idx), ir.Bin("*", gid[0], self.convert(step, idx), idx))
            out.append(ir.Assign(ir.Var(self.cname(names[0]), idx), value, s.lineno))
        elif d.kind == "ndindex":
            tgt = s.target
            if not isinstance(tgt, ast.Tuple) or len(tgt.elts) != d.ndim or not all(isinstance(e, ast.Name) for e in tgt.elts):
                raise self.err(tgt, f"unpack np.ndindex into {d.ndim} names, e.g. for y, x in np.ndindex(out.shape)")
            names = [e.id for e in tgt.elts]
            for k, n in enumerate(names):
                self.bind_index(n, idx)
                out.append(ir.Assign(ir.Var(self.cname(n), idx), gid[k], s.lineno))
        else:   # enumerate / ndenumerate: index names + value snapshot
            tgt = s.target
            if not isinstance(tgt, ast.Tuple) or len(tgt.elts) != 2:
                raise self.err(tgt, f"unpack {d.kind}() as: for index, value in {d.kind}(arr)")
            arr = self.expr(it.args[0])
            itarget, vtarget = tgt.elts
            if d.kind == "enumerate" or d.ndim == 1 and isinstance(itarget, ast.Name):
                if isinstance(itarget, ast.Name) and d.kind == "enumerate":
                    names = [itarget.id]
                elif isinstance(itarget, ast.Tuple):
                    names = [e.id for e in itarget.elts]
                else:
                    names = [itarget.id]
            elif isinstance(itarget, ast.Tuple) and all(isinstance(e, ast.Name) for e in itarget.elts):
                names = [e.id for e in itarget.elts]
            elif isinstance(itarget, ast.Name):
                names = [f"{itarget.id}_{k}" for k in range(d.ndim)]
            else:
                raise self.err(itarget, "the index of ndenumerate must be a name or a tuple of names")
            if len(names) != d.ndim:
                raise self.err(itarget, f"ndenumerate over a {d.ndim}-D array yields {d.ndim} indices")
            for k, n in enumerate(names):
                self.bind_index(n, idx)
                out.append(ir.Assign(ir.Var(self.cname(n), idx), gid[k], s.lineno))
            if isinstance(itarget, ast.Name) and d.kind == "ndenumerate" and d.ndim > 1:
                self.tuple_locals[itarget.id] = TupleRef([ir.Var(self.cname(n), idx) for n in names])
            snapshot = self.index_array(arr, [ir.Var(self.cname(n), idx) for n in names], it)
            self.line = s.lineno
            out.extend(self.pre)
            self.pre = []
            out.extend(self.store(vtarget, snapshot, s))
        self.domain_vars = names
        cond = None
        for k in range(d.ndim):
            c = ir.Bin("<", ir.Var(self.cname(names[k]), idx) if d.kind != "range" else gid[0], bounds[k], BOOL)
            if d.kind == "range":
                c = ir.Bin("<", gid[0], bounds[0], BOOL)
            cond = c if cond is None else ir.Bin("&&", cond, c, BOOL)
        saved = self.top_level_of_domain
        self.top_level_of_domain = True
        body = self.stmts(s.body)
        self.top_level_of_domain = saved
        if d.kind == "range":
            return [ir.If(cond, out + body, [], s.lineno)]
        return out + [ir.If(cond, body, [], s.lineno)]

    def bind_index(self, name, idx):
        self.local_types[name] = idx

    def is_domain_index(self, target):
        if self.domain is None or self.domain.kind == "work_size" or not self.domain_vars:
            return False
        sl = target.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if len(elts) == 1 and isinstance(elts[0], ast.Name) and elts[0].id in self.tuple_locals:
            return len(self.domain_vars) > 1
        return (len(elts) == len(self.domain_vars)
                and all(isinstance(e, ast.Name) and e.id == v for e, v in zip(elts, self.domain_vars)))

    # ---- expressions ---------------------------------------------------------------------------------
    def value(self, node) -> ir.Expr:
        e = self.expr(node)
        if isinstance(e, ir.Expr) and not isinstance(e, ir.ArrayRef):
            return e
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

    def expr(self, node):
        m = getattr(self, "ex_" + type(node).__name__, None)
        if m is None:
            raise self.err(node, f"{type(node).__name__} expressions are not supported in kernels")
        return m(node)

    def ex_Constant(self, node):
        v = node.value
        if isinstance(v, bool):
            return ir.Const(v, BOOL)
        if isinstance(v, int):
            if not -2**63 <= v < 2**64:
                raise self.err(node, f"integer literal {v} does not fit in 64 bits")
            return ir.Const(v, Scalar("int32" if -2**31 <= v < 2**31 else ("int64" if v < 2**63 else "uint64"), weak=True))
        if isinstance(v, float):
            return ir.Const(v, Scalar("float32", weak=True))
        raise self.err(node, f"constant {v!r} is not supported in kernels")

    def ex_Name(self, node):
        return self.lookup(node.id, node)

    def ex_Tuple(self, node):
        return TupleRef([self.expr(e) for e in node.elts])

    def ex_Attribute(self, node):
        base = self.expr(node.value)
        attr = node.attr
        if isinstance(base, ir.ArrayRef):
            if attr == "shape":
                return ShapeRef(base)
            if attr == "size":
                out = base.shape[0]
                for s in base.shape[1:]:
                    out = ir.Bin("*", out, s, self.prog.index_type)
                return out
            if attr == "ndim":
                return ir.Const(base.type.ndim, Scalar("int32", weak=True))
            raise self.err(node, f"arrays have no attribute {attr!r} in kernels", "use .shape, .size, .ndim or len()")
        if isinstance(base, ObjectRef):
            obj = base.obj
            if self.is_kernel and obj is self.self_obj and self.self_obj is not None:
                return self.self_attribute(attr, node)
            if not hasattr(obj, attr):
                raise self.err(node, f"{getattr(obj, '__name__', type(obj).__name__)} has no attribute {attr!r}")
            if isinstance(obj, _pytypes.ModuleType):
                b = lookup_namespace(obj.__name__, attr)
                if b is not None:
                    return ObjectRef(getattr(obj, attr))
                self.prog.global_refs[(id(obj.__dict__), attr)] = (obj.__dict__, attr, getattr(obj, attr))
            value = getattr(obj, attr)
            return self.object_value(value, node, f"{getattr(obj, '__name__', '?')}.{attr}")
        if isinstance(base, ir.Expr) and isinstance(base.type, Vector):
            return self.swizzle(base, attr, node)
        if isinstance(base, ir.Expr) and base.type is UNKNOWN:
            return ir.Raw("?", UNKNOWN)
        raise self.err(node, f"attribute {attr!r} is not supported here",
                       "attributes work on vectors (.x, .xy, .s0), arrays (.shape, .size, .ndim) and self")

    self_obj = None

    def self_attribute(self, attr, node):
        binding = self.self_attrs.get(attr)
        if binding is None:
            raise self.err(node, f"self.{attr} is not usable in a kernel",
                           "self attributes must be numpy/device arrays, numbers or vectors")
        return binding

    def swizzle(self, v, attr, node):
        w = v.type.width
        idx = []
        if attr.startswith("s") and len(attr) > 1 and all(c in "0123456789abcdefABCDEF" for c in attr[1:]):
            idx = [int(c, 16) for c in attr[1:]]
        elif all(c in "xyzw" for c in attr) or all(c in "rgba" for c in attr):
            idx = [_SWIZZLE_INDEX[c] for c in attr]
        else:
            raise self.err(node, f"vectors have no component {attr!r}", "use .x .y .z .w, .s0 ... .sF or swizzles like .xy")
        if any(i >= w for i in idx):
            raise self.err(node, f"{v.type} has no component {attr!r}")
        if len(idx) == 1:
            return self.comp(v, idx[0])
        if len(idx) not in VECTOR_WIDTHS:
            raise self.err(node, f"a swizzle of {len(idx)} components is not a vector width")
        v = self.materialize(v)
        return ir.VecCtor([self.comp(v, i) for i in idx], Vector(v.type.base, len(idx)))

    def comp_name(self, k, width):
        if width <= 4:
            return _COMP_LETTERS[k]
        return "s" + "0123456789abcdef"[k]

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
        base = self.expr(node.value)
        if isinstance(base, ShapeRef):
            k = self.expr(node.slice)
            if not (isinstance(k, ir.Const) and isinstance(k.value, int)):
                raise self.err(node.slice, "dynamic shape indexing is not supported: x.shape[k] needs a constant k",
                               "use x.shape[0], x.shape[1], ... with literal indices")
            nd = base.array.type.ndim
            kk = k.value + nd if k.value < 0 else k.value
            if not 0 <= kk < nd:
                raise self.err(node.slice, f"shape index {k.value} is out of range for a {nd}-D array")
            return base.array.shape[kk]
        if isinstance(base, TupleRef):
            k = self.expr(node.slice)
            if not (isinstance(k, ir.Const) and isinstance(k.value, int)):
                raise self.err(node.slice, "tuples can only be indexed with a constant")
            return base.items[k.value]
        if isinstance(base, ir.Expr) and isinstance(base.type, Vector):
            k = self.expr(node.slice)
            if not (isinstance(k, ir.Const) and isinstance(k.value, int) and 0 <= k.value < base.type.width):
                raise self.err(node.slice, "vector components are indexed with a constant", "use v.x, v.s0 or v[0]")
            return self.comp(base, k.value)
        if not isinstance(base, ir.ArrayRef):
            if isinstance(base, ir.Expr) and base.type is UNKNOWN:
                return ir.Raw("?", UNKNOWN)
            raise self.err(node, "only arrays, vectors, shapes and tuples can be indexed")
        idx = self.index_list(node.slice)
        return self.index_array(base, idx, node)

    def index_list(self, sl):
        if isinstance(sl, ast.Tuple):
            items = []
            for e in sl.elts:
                v = self.expr(e)
                items.extend(v.items if isinstance(v, TupleRef) else [v])
            return items
        v = self.expr(sl)
        return list(v.items) if isinstance(v, TupleRef) else [v]

    def flat_index(self, arr, idx, node):
        it = self.prog.index_type
        parts = []
        for k, i in enumerate(idx):
            if not isinstance(i, ir.Expr) or isinstance(i, ir.ArrayRef):
                raise self.err(node, "array indices must be integers")
            if i.type is UNKNOWN:
                return ir.Raw("?", UNKNOWN)
            if not isinstance(i.type, Scalar) or not (i.type.is_int or i.type.kind == "b"):
                raise self.type_err(node, f"array index must be an integer, got {i.type}; convert with int(...)")
            if isinstance(i, ir.Const) and i.value < 0:        # Python negative index from the end
                i = ir.Bin("+", arr.shape[k], ir.Const(i.value, it), it)
            parts.append(self.convert(i, it))
        flat = parts[0]
        for k in range(1, len(parts)):
            flat = ir.Bin("+", ir.Bin("*", flat, arr.shape[k], it), parts[k], it)
        return flat

    def index_array(self, arr, idx, node):
        t = arr.type
        if len(idx) == t.ndim:
            flat = self.flat_index(arr, idx, node)
            if flat.type is UNKNOWN:
                return flat
            return ir.Load(arr, flat, t.elem)
        if len(idx) == t.ndim - 1 and t.row_width in VECTOR_WIDTHS and isinstance(t.elem, Scalar):
            flat = self.flat_index(arr, idx + [ir.Const(0, self.prog.index_type)], node)
            if flat.type is UNKNOWN:
                return flat
            flat = self.materialize(flat)
            vt = Vector(t.elem, t.row_width)
            return ir.VecCtor([ir.Load(arr, self.add(flat, ir.Const(k, self.prog.index_type)) if k else flat, t.elem)
                               for k in range(t.row_width)], vt)
        if len(idx) < t.ndim:
            raise self.err(node, f"a {t.ndim}-D array needs {t.ndim} indices here, got {len(idx)}",
                           "index every dimension: x[i, j] (rows of width 2, 3, 4, 8 or 16 load as vectors)")
        raise self.err(node, f"too many indices ({len(idx)}) for a {t.ndim}-D array")

    def subscript_target(self, target):
        arr = self.expr(target.value)
        if not isinstance(arr, ir.ArrayRef):
            if isinstance(arr, ir.Expr) and isinstance(arr.type, Vector):
                raise self.err(target, "writing a vector component is not supported",
                               "build a new vector, e.g. v = float4(v.x, 1.0, v.z, v.w)")
            raise self.err(target, "only arrays can be assigned by index")
        idx = self.index_list(target.slice)
        t = arr.type
        if len(idx) == t.ndim:
            return arr, self.flat_index(arr, idx, target), 0
        if len(idx) == t.ndim - 1 and t.row_width in VECTOR_WIDTHS:
            flat = self.flat_index(arr, idx + [ir.Const(0, self.prog.index_type)], target)
            return arr, self.materialize(flat), t.row_width
        raise self.err(target, f"a {t.ndim}-D array needs {t.ndim} indices, got {len(idx)}")

    def add(self, a, b):
        return ir.Bin("+", a, b, a.type)

    # ---- conversions -------------------------------------------------------------------------------
    def convert(self, e: ir.Expr, t):
        """``e`` as a C value of concrete type ``t`` (casts only when the C types differ)."""
        if e.type is UNKNOWN or t is UNKNOWN:
            return e
        t = concrete(t, self.prog.default_float)
        src = concrete(e.type, self.prog.default_float)
        if isinstance(t, Vector):
            if isinstance(src, Vector):
                if src == t:
                    return e
                if src.width != t.width:
                    raise KernelTypeError(f"kernel {self.kernel_name!r}, line {self.line}: cannot convert {src} to {t}")
                v = self.materialize(e)
                return ir.VecCtor([self.convert(self.comp(v, k), t.base) for k in range(t.width)], t)
            s = self.materialize(self.convert(e, t.base))
            return ir.VecCtor([s] * t.width, t)
        if isinstance(src, Vector):
            raise KernelTypeError(f"kernel {self.kernel_name!r}, line {self.line}: a {src} vector is used where a "
                                  f"{t} scalar is expected; pick a component (v.x) or reduce it (funcs.dot)")
        if src == t and e.type == t:
            return e
        if isinstance(e, ir.Const):
            v = e.value
            if t.kind == "b":
                v = bool(v)
            elif t.is_int:
                if isinstance(v, float):
                    v = int(v) if math.isfinite(v) else 0
                v = int(np.array(int(v)).astype(t.dtype)) if isinstance(v, (int, bool)) and not t.dtype.type(0).dtype.kind == "b" else v
            else:
                v = float(v)
            return ir.Const(v, t)
        if src == t:
            return e
        self.prog.note_type(t)
        return ir.Cast(e, t)

    def truth(self, e, node):
        if e.type is UNKNOWN:
            return e
        if isinstance(e.type, Vector):
            raise self.err(node, "a vector has no single truth value", "compare components, e.g. v.x > 0 and v.y > 0")
        if e.type == BOOL:
            return e
        if isinstance(e, ir.Const):
            return ir.Const(bool(e.value), BOOL)
        return ir.Bin("!=", e, ir.Const(0, concrete(e.type, self.prog.default_float)), BOOL)

    # ---- operators ---------------------------------------------------------------------------------
    _BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
               ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&"}

    def ex_BinOp(self, node):
        return self.binop(node.op, self.value(node.left), self.value(node.right), node)

    def binop(self, op, a, b, node):
        opname = self._BINOPS[type(op)] if not isinstance(op, str) else op
        if a.type is UNKNOWN or b.type is UNKNOWN:
            return ir.Raw("?", UNKNOWN)
        if isinstance(a.type, Vector) or isinstance(b.type, Vector):
            return self.vector_binop(opname, a, b, node)
        return self.scalar_binop(opname, a, b, node)

    def vector_binop(self, opname, a, b, node):
        va = a.type if isinstance(a.type, Vector) else None
        vb = b.type if isinstance(b.type, Vector) else None
        if va and vb and va.width != vb.width:
            raise self.type_err(node, f"operands have different widths: {va} and {vb}")
        width = (va or vb).width
        a = self.materialize(a) if va else self.materialize(a)
        b = self.materialize(b) if vb else self.materialize(b)
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
        if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63:
            return None
        if t.weak and t.is_int and isinstance(v, int) and not -2**31 <= v < 2**31:
            t = Scalar("int64", weak=True)
        return ir.Const(v, t)

    def scalar_binop(self, opname, a, b, node):
        df = self.prog.default_float
        ta, tb = a.type, b.type
        if opname in ("<<", ">>", "|", "^", "&"):
            if ta.is_float or tb.is_float:
                raise self.type_err(node, f"operator {opname} needs integers, got {ta} and {tb}")
            if ta.kind == "b" and tb.kind == "b" and opname in ("|", "^", "&"):
                return ir.Bin(opname, a, b, BOOL)
            t = binary_result(ta, tb, df) if opname not in ("<<", ">>") else (ta if not ta.weak else binary_result(ta, tb, df))
            f = self.const_fold(opname, a, b, t)
            if f is not None:
                return f
            ct = concrete(t, df)
            return self.wrap_narrow(ir.Bin(opname, self.convert(a, ct), self.convert(b, ct), t))
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
        ca, cb = self.convert(a, ct), self.convert(b, ct)
        if opname == "//":
            if ct.is_float:
                return ir.Call(self.prog.need_support("ffloordiv", ct), [ca, cb], t)
            if ct.kind == "u":
                return ir.Bin("/", ca, cb, t)
            return ir.Call(self.prog.need_support("floordiv", ct), [ca, cb], t)
        if opname == "%":
            if ct.is_float:
                return ir.Call(self.prog.need_support("fmod_py", ct), [ca, cb], t)
            if ct.kind == "u":
                return ir.Bin("%", ca, cb, t)
            return ir.Call(self.prog.need_support("mod", ct), [ca, cb], t)
        if ct.kind == "b":       # True + True == 2 in Python
            ct = t = INT32
            ca, cb = self.convert(a, ct), self.convert(b, ct)
        return self.wrap_narrow(ir.Bin(opname, ca, cb, t))

    def wrap_narrow(self, e):
        """C computes char/short arithmetic in int; numpy wraps to the narrow type."""
        ct = concrete(e.type, self.prog.default_float)
        if isinstance(ct, Scalar) and ct.is_int and ct.bits < 32:
            return ir.Cast(e, e.type)
        return e

    def power(self, a, b, node):
        df = self.prog.default_float
        if isinstance(a.type, Vector):
            return self.vector_binop("**", a, b, node)
        if isinstance(b, ir.Const) and isinstance(b.value, int) and not isinstance(b.value, bool) and 0 <= b.value <= 8:
            t = a.type if a.type.kind != "b" else INT32
            n = b.value
            if n == 0:
                return ir.Const(1, Scalar(t.name, weak=t.weak)) if not t.is_float else ir.Const(1.0, t)
            x = self.materialize(self.convert(a, concrete(t, df)))
            out = x
            for _ in range(n - 1):
                out = ir.Bin("*", out, x, t)
            return out
        if isinstance(b, ir.Const) and b.value == 0.5 and not a.type.is_int:
            return self.call_math("sqrt", [a], node)
        t = binary_result(a.type, b.type, df)
        if t.is_int or t.kind == "b":
            t = INT32 if t.kind == "b" else t
            ct = concrete(t, df)
            return ir.Call(self.prog.need_support("ipow", ct), [self.convert(a, ct), self.convert(b, ct)], t)
        ct = concrete(t, df)
        return ir.Call(self.prog.dialect.math_name("pow", ct), [self.convert(a, ct), self.convert(b, ct)], t)

    def ex_UnaryOp(self, node):
        v = self.value(node.operand)
        if v.type is UNKNOWN:
            return v
        if isinstance(node.op, ast.Not):
            return ir.Un("!", self.truth(v, node), BOOL)
        if isinstance(v.type, Vector):
            if isinstance(node.op, ast.UAdd):
                return v
            v = self.materialize(v)
            op = "-" if isinstance(node.op, ast.USub) else "~"
            return ir.VecCtor([ir.Un(op, self.comp(v, k), v.type.base) for k in range(v.type.width)], v.type)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub):
            if isinstance(v, ir.Const):
                return ir.Const(-v.value, v.type if v.type.kind != "b" else INT32)
            t = v.type if v.type.kind != "b" else INT32
            return self.wrap_narrow(ir.Un("-", self.convert(v, concrete(t, self.prog.default_float)), t))
        if v.type.is_float:
            raise self.type_err(node, f"operator ~ needs an integer, got {v.type}")
        if v.type.kind == "b":
            return ir.Un("-", ir.Bin("+", self.convert(v, INT32), ir.Const(1, INT32), INT32), INT32)
        if isinstance(v, ir.Const):
            return ir.Const(~v.value, v.type)
        return ir.Un("~", v, v.type)

    def ex_BoolOp(self, node):
        op = "&&" if isinstance(node.op, ast.And) else "||"
        vals = [self.value(v) for v in node.values]
        if any(v.type is UNKNOWN for v in vals):
            return ir.Raw("?", UNKNOWN)
        out = self.truth(vals[0], node)
        for v in vals[1:]:
            out = ir.Bin(op, out, self.truth(v, node), BOOL)
        return out

    _CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}

    def ex_Compare(self, node):
        left = self.value(node.left)
        out = None
        rights = [self.value(c) for c in node.comparators]
        if any(v.type is UNKNOWN for v in [left] + rights):
            return ir.Raw("?", UNKNOWN)
        for i, (op, right) in enumerate(zip(node.ops, rights)):
            if i + 1 < len(rights):
                right = self.materialize(right)      # evaluated once, as in Python
            if isinstance(left.type, Vector) or isinstance(right.type, Vector):
                raise self.err(node, "vector comparisons are not supported",
                               "compare components one by one, e.g. a.x < b.x")
            t = binary_result(left.type, right.type, self.prog.default_float)
            ct = concrete(t, self.prog.default_float)
            c = ir.Bin(self._CMPOPS[type(op)], self.convert(left, ct), self.convert(right, ct), BOOL)
            out = c if out is None else ir.Bin("&&", out, c, BOOL)
            left = right
        return out

    def ex_IfExp(self, node):
        cond = self.truth(self.value(node.test), node)
        a, b = self.value(node.body), self.value(node.orelse)
        if a.type is UNKNOWN or b.type is UNKNOWN or cond.type is UNKNOWN:
            return ir.Raw("?", UNKNOWN)
        t = self.common_type(a.type, b.type, node)
        ct = concrete(t, self.prog.default_float)
        return ir.Ternary(cond, self.convert(a, ct), self.convert(b, ct), t)

    def common_type(self, ta, tb, node):
        if isinstance(ta, Vector) or isinstance(tb, Vector):
            if ta == tb:
                return ta
            if isinstance(ta, Vector) and isinstance(tb, Vector):
                raise self.type_err(node, f"mixing {ta} and {tb}")
            return ta if isinstance(ta, Vector) else tb
        return binary_result(ta, tb, self.prog.default_float) if not (ta == BOOL and tb == BOOL) else BOOL

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
                    return ObjectRef(getattr(base.obj, fnode.attr))
                if self.self_obj is not None and base.obj is self.self_obj:
                    return ObjectRef(getattr(base.obj, fnode.attr))
                if isinstance(base.obj, type):
                    return ObjectRef(getattr(base.obj, fnode.attr))
        return None

    def builtin_of(self, callee):
        if not isinstance(callee, ObjectRef):
            return None
        obj = callee.obj
        if obj in CAST_TYPES if _hashable(obj) else False:
            return BUILTINS[CAST_TYPES[obj]] if CAST_TYPES[obj] in ("int", "float", "bool") else Builtin(
                f"np.{CAST_TYPES[obj]}", (1, 1), "cast")
        return lookup_object(obj)

    def ex_Call(self, node):
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
            return self.call_builtin(b, node, obj)
        vi = vector_class_info(obj)
        if vi:
            return self.vector_ctor(Vector(Scalar(vi[0]), vi[1]), node)
        if obj is range or obj in (enumerate, np.ndindex, np.ndenumerate):
            raise self.err(node, f"{getattr(obj, '__name__', obj)}() is only valid as the iterable of a for loop")
        if obj is print:
            raise self.err(node, "print() is not supported in kernels", "write values into an output array and print on the host")
        from ._kernel import KernelFunction   # a kernel called from a kernel runs as a helper
        if isinstance(obj, KernelFunction):
            obj = obj.py_func
        if isinstance(obj, staticmethod):
            obj = obj.__func__
        if isinstance(obj, _pytypes.MethodType):
            raise self.err(node, "calling methods from a kernel is not supported",
                           "make it a module-level function or a @staticmethod and pass the attributes it needs")
        if isinstance(obj, _pytypes.FunctionType):
            return self.call_helper(obj, node)
        name = getattr(obj, "__name__", type(obj).__name__)
        raise self.err(node, f"{name!r} cannot be called from a kernel",
                       "call plain Python helper functions, math/np functions or gpu.* builtins")

    def call_helper(self, func, node):
        src = self.prog.source_of(func)
        fargs = src.tree.args
        names = [a.arg for a in fargs.posonlyargs + fargs.args]
        defaults = fargs.defaults
        bound = {}
        if len(node.args) > len(names):
            raise self.err(node, f"{func.__name__}() takes {len(names)} arguments, {len(node.args)} given")
        for n, a in zip(names, node.args):
            bound[n] = a
        for kw in node.keywords:
            if kw.arg not in names:
                raise self.err(kw.value, f"{func.__name__}() has no parameter {kw.arg!r}")
            bound[kw.arg] = kw.value
        values = []
        for i, n in enumerate(names):
            if n in bound:
                values.append(self.expr(bound[n]))
            else:
                di = i - (len(names) - len(defaults))
                if di < 0:
                    raise self.err(node, f"{func.__name__}() is missing argument {n!r}")
                dv = func.__defaults__[di]
                values.append(self.object_value(dv, node, n))
        for v, n in zip(values, names):
            if isinstance(v, ir.Expr) and v.type is UNKNOWN:
                return ir.Raw("?", UNKNOWN)
            if isinstance(v, ObjectRef):
                raise self.err(node, f"argument {n!r} of {func.__name__}() is not a number, vector or array")
        fn = self.prog.specialize_helper(func, values, node, self)
        args = []
        for v in values:
            if isinstance(v, ir.ArrayRef):
                if v.type.space == "local" and self.prog.dialect.name == "opencl":
                    pass
                args.append(v)
                args.extend(v.shape)
            else:
                p_t = None
                args.append(v)
        # convert scalar args to the helper's parameter types
        conv = []
        pi = 0
        for p in fn.params:
            a = args[pi]
            conv.append(self.convert(a, p.type) if isinstance(p.type, (Scalar, Vector)) and not isinstance(a, ir.ArrayRef) else a)
            pi += 1
        call = ir.Call(fn.name, conv, fn.ret)
        call.helper = fn
        if fn.ret is VOID:
            return call
        return call

    def vector_ctor(self, vt: Vector, node):
        comps = []
        for a in node.args:
            v = self.value(a)
            if v.type is UNKNOWN:
                return ir.Raw("?", UNKNOWN)
            if isinstance(v.type, Vector):
                v = self.materialize(v)
                comps.extend(self.comp(v, k) for k in range(v.type.width))
            else:
                comps.append(v)
        if len(comps) == 1:
            s = self.materialize(self.convert(comps[0], vt.base))
            comps = [s] * vt.width
        if len(comps) == 0:
            comps = [ir.Const(0, vt.base)] * vt.width
        if len(comps) != vt.width:
            raise self.err(node, f"{vt} needs {vt.width} components, got {len(comps)}",
                           f"pass {vt.width} numbers, one number to broadcast, or smaller vectors plus numbers")
        self.prog.note_type(vt)
        return ir.VecCtor([self.convert(c, vt.base) for c in comps], vt)

    from ._calls import call_builtin, call_math, float_type_of, componentwise  # noqa: E402


def _hashable(o):
    try:
        hash(o)
        return True
    except TypeError:
        return False


# ---- the kernel entry point ------------------------------------------------------------------------------

@dataclass
class KernelParamSpec:
    """One Python-level kernel input: a parameter or a ``self.attr``."""
    name: str                 # Python name ("x", "self.weights")
    kind: str                 # "array" | "scalar" | "vector" | "self"
    type: object = None       # ArrayType / Scalar (weak for Python scalars) / Vector


@dataclass
class KernelIR:
    function: ir.Function
    layout: list              # C parameter order: ("buffer", name) ("shape", name, k) ("scalar", name, dtype)
                              # ("vcomp", name, k, dtype) ("bound", k, dtype)
    domain: "Domain | None"
    domain_src: str           # Python source of the host-side domain function ("" without a domain)
    uses_barrier: bool
    self_attrs_used: set


def _domain_form(fb, s):
    if not (isinstance(s, ast.For) and isinstance(s.iter, ast.Call)):
        return None
    callee = fb.resolve_callee(s.iter.func)
    if not isinstance(callee, ObjectRef):
        return None
    o = callee.obj
    if o is range:
        return "range"
    if o is np.ndindex:
        return "ndindex"
    if o is np.ndenumerate:
        return "ndenumerate"
    if o is enumerate:
        return "enumerate"
    return None


def _is_work_size(fb, s):
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        b = fb.builtin_of(fb.resolve_callee(s.value.func))
        return b is not None and b.rule == "work_size"
    return False


def _uses_work_items(fb, stmts):
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                b = fb.builtin_of(fb.resolve_callee(node.func))
                if b is not None and b.rule in ("workitem", "barrier", "local_array"):
                    return True
    return False


def build_kernel(prog: ProgramBuilder, func, specs: list, self_obj=None) -> KernelIR:
    src = prog.source_of(func)
    fb = FunctionBuilder(prog, src, func, is_kernel=True, kernel_name=src.name)
    fb.self_obj = self_obj
    layout = []
    params = []
    prologue = []
    idx = prog.index_type
    for spec in specs:
        if spec.kind == "self":
            fb.params[spec.name] = ObjectRef(self_obj)
            continue
        pyname = spec.name
        c = fb.cname(pyname.replace(".", "_"))
        t = spec.type
        prog.note_type(t)
        if spec.kind == "array":
            shape = [ir.Var(f"{c}_shape{k}", idx) for k in range(t.ndim)]
            binding = ir.ArrayRef(pyname, c, shape, t)
            params.append(ir.Param(c, t, root=pyname))
            layout.append(("buffer", pyname))
            for k, sv in enumerate(shape):
                params.append(ir.Param(sv.name, idx, hidden=True))
                layout.append(("shape", pyname, k, idx.dtype))
        elif spec.kind == "scalar":
            ct = concrete(t, prog.default_float)
            binding = ir.Var(c, t)
            params.append(ir.Param(c, ct))
            layout.append(("scalar", pyname, np.dtype("uint8") if ct.name == "bool" else ct.dtype))
        elif spec.kind == "vector":
            comps = []
            for k in range(t.width):
                params.append(ir.Param(f"{c}_{k}", t.base, hidden=True))
                layout.append(("vcomp", pyname, k, t.base.dtype))
                comps.append(ir.Var(f"{c}_{k}", t.base))
            binding = ir.Var(c, t)
            prologue.append(ir.Assign(binding, ir.VecCtor(comps, t), src.tree.lineno))
            fb.temp_types_extra = getattr(fb, "temp_types_extra", {})
            fb.temp_types_extra[c] = t
        else:
            raise ValueError(spec.kind)
        if pyname.startswith("self."):
            fb.self_attrs[pyname[5:]] = binding
        else:
            fb.params[pyname] = binding
    fb.fn_params = params
    body = fb.body_without_docstring()
    fb.assigned = fb._scan_assigned(body)
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Return) and node.value is not None:
            raise fb.err(node, "kernels cannot return values", "write the result into an output array argument")
    # the iteration domain
    ws = [s for s in body if _is_work_size(fb, s)]
    domain_src = ""
    argnames = [a.arg for a in src.tree.args.posonlyargs + src.tree.args.args]
    if ws:
        call = ws[0].value
        dims = []
        for a in call.args:
            v = fb.expr(a)
            if isinstance(v, ir.ArrayRef):
                dims.extend(f"_pyg_dim({ast.unparse(a)}, {k})" for k in range(v.type.ndim))
            elif isinstance(v, ShapeRef):
                dims.extend(f"_pyg_dim({ast.unparse(a.value)}, {k})" for k in range(v.array.type.ndim))
            else:
                dims.append(f"int({ast.unparse(a)})")
        if not 1 <= len(dims) <= 3:
            raise fb.err(call, "gpu.work_size() describes 1 to 3 dimensions")
        fb.domain = Domain("work_size", len(dims), dims)
    else:
        top_loops = [s for s in body if _domain_form(fb, s)]
        if top_loops and _uses_work_items(fb, body[:body.index(top_loops[0])]):
            top_loops = []     # a gid-style kernel: its top-level loops are ordinary loops
        if top_loops:
            s = top_loops[0]
            kind = _domain_form(fb, s)
            it = s.iter
            if it.keywords:
                raise fb.err(it, f"{kind}() with keyword arguments is not supported as an iteration domain")
            after = body[body.index(s) + 1:]
            if after:
                raise fb.err(after[0], "statements after the kernel's iteration-domain loop are not supported",
                             "put the work inside the loop; every loop iteration runs as its own work item")
            if kind == "range":
                if not 1 <= len(it.args) <= 3:
                    raise fb.err(it, "range() takes 1 to 3 arguments")
                dims = [f"len(range({', '.join(ast.unparse(a) for a in it.args)}))"]
            elif kind == "ndindex":
                if len(it.args) == 1:
                    v = fb.expr(it.args[0])
                    if isinstance(v, ShapeRef):
                        nd = v.array.type.ndim
                    elif isinstance(v, TupleRef):
                        nd = len(v.items)
                    else:
                        raise fb.err(it.args[0], "np.ndindex needs a shape: x.shape or a tuple (h, w)")
                    dims = [f"_pyg_item({ast.unparse(it.args[0])}, {k})" for k in range(nd)]
                else:
                    dims = [f"int({ast.unparse(a)})" for a in it.args]
            else:
                if len(it.args) != 1:
                    raise fb.err(it, f"{kind}() takes one array here")
                v = fb.expr(it.args[0])
                if not isinstance(v, ir.ArrayRef):
                    raise fb.err(it.args[0], f"{kind}() iterates over an array argument")
                nd = 1 if kind == "enumerate" else v.type.ndim
                if kind == "enumerate" and v.type.ndim > 1 and not v.type.row_width:
                    raise fb.err(it, "enumerate() over a multi-dimensional array is not supported",
                                 "use np.ndenumerate(arr) or np.ndindex(arr.shape)")
                dims = [f"_pyg_dim({ast.unparse(it.args[0])}, {k})" for k in range(nd)]
            if len(dims) > 3:
                raise fb.err(it, "iteration domains have at most 3 dimensions")
            fb.domain = Domain(kind, len(dims), dims, node=s)
    if fb.domain is not None:
        domain_src = (f"def _pyg_domain({', '.join(argnames)}):\n"
                      f"    return ({', '.join(fb.domain.host_exprs)},)\n")
        for k in range(fb.domain.ndim):
            params.append(ir.Param(f"_pyg_n{k}", idx, hidden=True))
            layout.append(("bound", k, idx.dtype))
    body_ir = fb.run_passes(body)
    if fb.domain is not None and fb.domain.kind == "work_size" and not fb.uses_barrier:
        cond = None
        for k in range(fb.domain.ndim):
            gid = ir.Cast(ir.Raw(prog.dialect.work_item("global_id", fb.domain.ndim - 1 - k), INT64), idx)
            c = ir.Bin(">=", gid, ir.Var(f"_pyg_n{k}", idx), BOOL)
            cond = c if cond is None else ir.Bin("||", cond, c, BOOL)
        body_ir = [ir.If(cond, [ir.Return(None, src.tree.lineno)], [], src.tree.lineno)] + body_ir
    body_ir = list(prog.local_arrays) + prologue + body_ir
    local_table = fb.locals_table()
    local_table.update(getattr(fb, "temp_types_extra", {}))
    fn = ir.Function(src.name, params, VOID, body_ir, local_table, True, src.filename, src.tree.lineno)
    return KernelIR(fn, layout, fb.domain, domain_src, fb.uses_barrier, set(fb.self_attrs))
