"""Python AST -> typed IR, one function at a time (kernels and monomorphized helpers).

Type inference runs the builder over the body until every local's type (the join of all
values assigned to it) is stable; the last pass produces the IR. Provisional passes record
into a scratch ``Recording`` that is discarded, so helper specializations, prelude pieces and
features met only at provisional types never reach the output. Python semantics that C
lacks are lowered here (floor division, modulo, power, min/max/abs/round, int->float on
store, vector arithmetic component by component), so the emitter only prints. The rules
themselves live in ``_statements`` and ``_expressions``; this module holds the state.
"""
from __future__ import annotations

import ast
import builtins as _pybuiltins
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import _ir as ir
from ._bindings import C_RESERVED, NP_TYPES, Domain, ObjectRef, ShapeRef, TupleRef, vector_class_info
from ._calls import BARRIER_HINT, BARRIER_IN_DOMAIN
from ._captures import captured_value, constant_value
from ._tuples import lower_tuple_returns
from ._expressions import ExpressionRules
from ._frontend import check_syntax
from ._infer import AssignmentLog, NotYetTyped, builder_state, restore_builder_state
from ._names import c_identifier
from ._records import RecordRef, is_record_binding, record_argument, record_parameter
from ._signs import KnownSigns
from ._source import FunctionSource, KernelTypeError, definition_key, function_source, parameter_names, quoted_line, syntax_error
from ._state import stats
from ._statements import StatementRules
from .prelude import piece_function
from ._types import (INT32, INT64, PYBOOL, TYPE_LATTICE_HEIGHT, VOID, ArrayType, JoinConflict, Scalar, Vector,
                     concrete, join)

if TYPE_CHECKING:
    from ._bounds import BoundsChecks

__all__ = ["ProgramBuilder", "FunctionBuilder", "ObjectRef", "ShapeRef", "TupleRef", "Domain", "vector_class_info"]


class ProgramBuilder:
    """Everything one kernel specialization produces: kernel + helpers + the prelude pieces they call.

    It knows no dialect: the IR it builds is printed for any of them (``_translate.render``)."""

    bounds: BoundsChecks | None = None   # in the bounds-checked debug mode: every subscript is checked

    def __init__(self, default_float: Scalar, index_bits: int, kernel_name: str):
        self.default_float = default_float
        self.index_type = INT64 if index_bits == 64 else INT32
        self.kernel_name = kernel_name
        self.kernel_cname = c_identifier(kernel_name)   # the entry point's C name: the launcher looks it up
        self.rec = Recording()               # what the output keeps (a scratch copy in provisional passes)
        self.built: dict = {}                # helper key -> (ir.Function, its Recording): built once, reused
        self.helper_names: set[str] = set()
        self.sources: dict = {}              # code object -> FunctionSource
        self.global_refs: dict = {}          # (id(globals), name) -> (globals, name, value)
        self.stack: list = []
        self.local_arrays: list = []
        # gpu.local_array(n, dtype) sized by the kernel's int parameter n: C name -> (ArrayRef, n's Python name)
        self.dynamic_locals: dict = {}
        self.in_domain_body = False          # building code behind the magic loop's bounds guard
        self.work_dims = 0                   # 1 + the highest dimension a gpu.get_*(d) the user wrote reads

    # What the rest of the translator reads: the final recording
    @property
    def helpers(self) -> dict:
        return self.rec.helpers

    @property
    def features(self) -> set:
        return self.rec.features

    @property
    def prelude_needed(self) -> set:
        return self.rec.prelude

    @property
    def uses_barrier(self) -> bool:
        return self.rec.uses_barrier

    @uses_barrier.setter
    def uses_barrier(self, value: bool) -> None:
        self.rec.uses_barrier = value

    def scratch(self) -> "Recording":
        """Start a provisional pass: record into a copy, discarded by :meth:`restore`. Returns the
        recording to restore."""
        kept = self.rec
        self.rec = kept.copy()
        return kept

    def restore(self, kept: "Recording") -> None:
        self.rec = kept

    def need_piece(self, family: str, t) -> str:
        """The C function of prelude piece ``family:<t>`` (``"pymod"``, ``"funcs.abs"``...), emitted once."""
        piece = f"{family}:{t.short_name}"
        self.prelude_needed.add(piece)
        fn = piece_function(piece)
        if fn is None:
            raise ValueError(f"prelude piece {piece} defines more than one function: it cannot be called")
        return fn

    def note_type(self, t):
        if isinstance(t, Vector):
            self.prelude_needed.add(f"vec:{t.name}")
            t = t.base
        if isinstance(t, ArrayType):
            return self.note_type(t.elem)
        if isinstance(t, Scalar):
            if t.name == "float64" and not t.weak:
                self.features.add("fp64")
                self.prelude_needed.add("ext:fp64")     # OpenCL's pragma (empty elsewhere)
            if t.name == "float16":
                self.features.add("fp16")

    def name_helpers(self) -> None:
        """Give the helpers the output keeps their C names, in order (``pyg_f``, ``pyg_f_1``...).
        Named once the kernel is built, so specializations that only provisional passes made
        take no names."""
        for fn in self.helpers.values():
            fn.name = self.unique_helper_name(fn.name)

    def unique_helper_name(self, base: str) -> str:
        # the pyg_ prefix is reserved (locals named pyg_* are renamed), so a local variable can never
        # shadow a helper: `weight = weight(x)` stays valid C
        base = "pyg_" + "".join(c if c.isalnum() or c == "_" else "_" for c in base)
        n = 0
        name = base
        while name in self.helper_names or name in C_RESERVED or name == self.kernel_cname:
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
        key_types = []
        for b in arg_bindings:
            if isinstance(b, ir.ArrayRef):
                key_types.append(("array", b.type))
            elif isinstance(b, ir.Expr):
                key_types.append(("value", concrete(b.type, self.default_float)))
            elif is_record_binding(b):             # p[i], p[i].pos: by reference (_records)
                key_types.append(("record", record_argument(b, self.index_type)[0]))
            else:
                raise syntax_error(caller.src, call_node, f"cannot pass a {type(b).__name__} to helper {func.__name__}()",
                                   "pass numbers, vectors, arrays or record elements", caller.kernel_name)
        key = (definition_key(func), tuple(key_types))
        built = self.built.get(key)
        if built is None:
            # built once, into a recording of its own: a later pass (or caller) that calls it
            # again takes the function and everything it needs from there
            src = self.source_of(func)
            self.stack.append(code)
            outer, self.rec = self.rec, Recording()
            try:
                fb = FunctionBuilder(self, src, func, is_kernel=False, kernel_name=caller.kernel_name)
                fn = fb.build_helper(key_types)
            finally:
                self.stack.pop()
                own, self.rec = self.rec, outer
            own.helpers[key] = fn
            if own.uses_barrier or "subgroups" in own.features:    # every work item must reach it
                own.barrier_helpers.add(key)
            built = self.built[key] = (fn, own)
        fn, own = built
        if key in own.barrier_helpers and self.in_domain_body:
            what = "gpu.barrier()" if own.uses_barrier else "a subgroup operation"
            raise syntax_error(caller.src, call_node, BARRIER_IN_DOMAIN.format(f"{func.__name__}() calls {what}, which"),
                               BARRIER_HINT, caller.kernel_name)
        self.rec.merge(own)
        return fn


@dataclass
class Recording:
    """What lowering records for the output besides the IR: the helper functions (dependencies
    first), the prelude pieces and target features they use, which helpers reach a barrier and
    whether any code does. Type inference's provisional passes record into a copy that is
    thrown away, so a specialization, piece or feature seen only at a provisional type never
    reaches the generated source."""
    helpers: dict = field(default_factory=dict)      # key -> ir.Function
    prelude: set = field(default_factory=set)        # prelude piece names
    features: set = field(default_factory=set)       # "fp64", "fp16"
    barrier_helpers: set = field(default_factory=set)
    uses_barrier: bool = False

    def copy(self) -> "Recording":
        return Recording(dict(self.helpers), set(self.prelude), set(self.features), set(self.barrier_helpers),
                         self.uses_barrier)

    def merge(self, other: "Recording") -> None:
        self.helpers.update(other.helpers)          # keys already here keep their (earlier) place
        self.prelude |= other.prelude
        self.features |= other.features
        self.barrier_helpers |= other.barrier_helpers
        self.uses_barrier = self.uses_barrier or other.uses_barrier


class FunctionBuilder(StatementRules, ExpressionRules):
    def __init__(self, prog: ProgramBuilder, src: FunctionSource, func, is_kernel: bool, kernel_name: str):
        self.prog = prog
        self.src = src
        self.func = func
        self.is_kernel = is_kernel
        self.kernel_name = kernel_name
        self.globals = getattr(func, "__globals__", {})
        self.local_types: dict[str, object] = {}     # Python local name -> joined type
        self.literal_locals: set[str] = set()        # locals first bound to a bare Python number
        self.item_values: dict[str, ir.Expr] = {}    # for w in (0.1, 0.2): w stands for the item (for_tuple)
        self.cnames: dict[str, str] = {}             # Python local name -> C name
        self.temp_types: dict[str, object] = {}
        self.params: dict[str, object] = {}          # Python param name -> binding
        self.array_locals: dict[str, ir.ArrayRef | RecordRef] = {}   # arrays and record elements by name
        self.tuple_locals: dict[str, TupleRef] = {}
        self.final = False
        self.assignment_log: AssignmentLog | None = None   # the first pass notes its assignments (_infer)
        self.changed: set[str] = set()               # locals whose type this pass widened
        self.pre: list = []
        self.evaluated: dict[int, ir.Expr] = {}     # id(AST node) -> its value, computed once (st_AugAssign)
        self.ntemp = 0
        self.returns: list = []
        self.domain: Domain | None = None
        self.domain_vars: list[str] = []
        self.top_level_of_domain = False
        self.seen_exit = False
        self.uses_barrier = False
        self.fn_params: list[ir.Param] = []
        self.self_attrs: dict[str, object] = {}
        self.non_negative = KnownSigns()             # C names of variables proven >= 0 here, bounds (_signs)
        self.store_counts: dict[str, int] = {}       # Python name -> assignments in the function

    # ---- errors ---------------------------------------------------------------------------------
    def err(self, node, msg, hint=""):
        return syntax_error(self.src, node, msg, hint, self.kernel_name)

    def type_err(self, node, msg):
        """A KernelTypeError at ``node`` (None: the statement being built) naming file and line."""
        line = getattr(node, "lineno", None) or getattr(self, "line", None) or self.src.tree.lineno
        return KernelTypeError(f"kernel {self.kernel_name!r}, {self.src.filename}:{line}: {msg}"
                               f"{quoted_line(self.src, line, getattr(node, 'col_offset', None))}",
                               self.src.filename, line)

    # ---- names ------------------------------------------------------------------------------------
    def cname(self, pyname: str) -> str:
        c = self.cnames.get(pyname)
        if c is None:
            c = c_identifier(pyname)             # never a C word, a macro or a name pygpgpu generates
            taken = set(self.cnames.values()) | {p.name for p in self.fn_params}
            while c in taken or c in C_RESERVED:
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
            t = self.local_types.get(name)
            if t is None:                        # no assignment has typed it yet
                if self.final:
                    raise self.err(node, f"local variable {name!r} is used before it is assigned")
                raise NotYetTyped(name)          # the statement reading it runs again later (_infer)
            return ir.Var(self.cname(name), t)
        if name in self.func.__code__.co_freevars:      # read from the enclosing function (_captures)
            return captured_value(self, name, node)
        if name in self.globals:
            return self.global_value(name, self.globals[name], node)
        if hasattr(_pybuiltins, name):
            return ObjectRef(getattr(_pybuiltins, name))
        raise self.err(node, f"name {name!r} is not defined", "define it at module level or pass it as an argument")

    def global_value(self, name, value, node):
        self.prog.global_refs[(id(self.globals), name)] = (self.globals, name, value)
        return self.object_value(value, node, name, (self.globals.get("__name__", "?"), name))

    def object_value(self, value, node, what, path=None):
        """``value`` as the kernel sees it: a constant, or an ObjectRef (``path``: how a later
        process finds the object again, for the attributes read through it; see _attr_refs)."""
        if isinstance(value, bool):
            return ir.Const(value, PYBOOL)
        if isinstance(value, int):
            return ir.Const(value, Scalar("int32" if -2**31 <= value < 2**31 else "int64", weak=True))
        if isinstance(value, float):
            return ir.Const(value, Scalar("float32", weak=True))
        if isinstance(value, np.generic) and value.dtype.name in NP_TYPES:
            return ir.Const(value.item(), Scalar(value.dtype.name))
        if isinstance(value, (complex, np.complexfloating)):     # I = 1j at module level (_complex)
            from ._complex import complex_const, complex_type_of
            return complex_const(self, complex(value), complex_type_of(value.dtype) if isinstance(value, np.generic) else None)
        folded = constant_value(self, value, node, what)     # vectors, tuples of constants (_captures)
        if folded is not None:
            return folded
        if isinstance(value, np.ndarray):
            if "." in what:              # P.arr, cfg.arr: read through an object or a module
                raise self.err(node, f"{what!r} is an array read through an object; kernels take arrays as "
                               "arguments (or module-level arrays by name)", f"pass {what} as a kernel argument")
            if not self.is_kernel:
                raise self.err(node, f"helper {self.src.name}() reads the module-level array {what!r}; only a kernel "
                               "takes module-level arrays (as hidden arguments)", f"pass {what} to the helper as an argument")
            raise self.err(node, f"{what!r} is a module-level array the kernel did not take when it was defined",
                           f"a kernel takes the module-level arrays it names that exist when it is defined (define "
                           f"{what} before the kernel), or pass {what} as a kernel argument")
        if isinstance(value, (str, bytes)):
            raise self.err(node, f"{what!r} is a string; strings are not supported in kernels",
                           "use int constants instead")
        if isinstance(value, (list, dict, set)):
            raise self.err(node, f"{what!r} is a {type(value).__name__}; lists, dicts and sets are not supported in kernels",
                           "pass a numpy array argument instead, or make it a tuple of numbers")
        return ObjectRef(value, path)

    # ---- building ---------------------------------------------------------------------------------
    def _scan_assigned(self, body):
        counts: dict[str, int] = {}
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    counts[node.id] = counts.get(node.id, 0) + 1
                elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                      and isinstance(node.value, ast.Name)):       # v.x = ...: a new value of v
                    counts[node.value.id] = counts.get(node.value.id, 0) + 1
        return counts

    def run_passes(self, body):
        """Re-run the body until no local's type changes (a fixed point), then build the IR.

        Each pass that changes something moves at least one local one step up the type lattice
        (joins only widen), so ``TYPE_LATTICE_HEIGHT`` passes per local always suffice. After the
        first pass a worklist re-runs just the assignments that read a widened local (``_infer``),
        so a chain of locals settling last to first costs one statement per link rather than one
        pass; the final pass is tried next (``_final_if_settled``), and where it still changes a
        type (what the worklist does not see: a loop variable, an array binding) the passes go on
        until none changes, as before. Past the bound, or when the last pass still changes a type, the types are not
        trustworthy and no code is emitted."""
        self.store_counts = self._scan_assigned(body)
        self.assigned = set(self.store_counts)
        limit = TYPE_LATTICE_HEIGHT * max(1, len(self.assigned)) + 1
        for n in range(limit):
            self.changed = set()
            self.reset_pass()
            self.assignment_log = AssignmentLog() if n == 0 else None
            kept = self.prog.scratch()       # a provisional pass leaves nothing behind but types
            try:
                self.stmts(body, top=True)
                if self.changed and self.assignment_log is not None:
                    # the assignments reading what this pass widened, again until none widens (_infer)
                    self.assignment_log.settle(self, self.changed)
            finally:
                self.assignment_log = None
                self.prog.restore(kept)
            if not self.changed:
                break
            if n == 0:
                out = self._final_if_settled(body)
                if out is not None:
                    return out
                stats["typed_by_whole_passes"] += 1      # the fallback the inference pass must end
        else:
            raise self._unconverged(limit)
        self.final = True
        self.reset_pass()
        out = self.stmts(body, top=True)
        if self.changed:
            raise self._unconverged(limit)
        return out

    def _final_if_settled(self, body):
        """The final pass, tried right after the first pass and its worklist, which usually leave
        no type to change: its IR, or None when it changed a type after all (it was one more
        provisional pass, and its recording is dropped) or raised (the passes after it meet the
        same statement and raise what still holds). Saves the pass that only confirmed."""
        state = builder_state(self)
        kept = self.prog.scratch()
        self.final = True
        self.changed = set()
        self.reset_pass()
        try:
            out = self.stmts(body, top=True)
        except Exception:      # noqa: BLE001 -- the passes after this raise it, with settled types
            restore_builder_state(self, state)
            out = None
            self.changed = {"?"}
        if out is None or self.changed:
            self.final = False
            self.prog.restore(kept)
            return None
        return out            # self.prog.rec, the copy this pass recorded into, is the output's

    def _unconverged(self, passes):
        names = ", ".join(sorted(self.changed))
        return self.type_err(self.src.tree, f"type inference did not settle after {passes} pass{'es' if passes != 1 else ''} over "
                             f"{self.src.name}() (still changing: {names}); no code was generated from these types. "
                             "Give those variables one type each, e.g. x = float(0) or x = int(...) at their first "
                             "assignment, and please report this kernel: it is a translator bug")

    def reset_pass(self):
        self.pre = []
        self.ntemp = 0
        self.temp_types = {}
        self.returns = []
        self.array_locals = {}
        self.tuple_locals = {}
        self.prog.local_arrays = [] if self.is_kernel else self.prog.local_arrays
        self.prog.dynamic_locals = {} if self.is_kernel else self.prog.dynamic_locals
        self.seen_exit = False
        if self.domain:
            self.domain.covers = {}

    def body_without_docstring(self):
        body = self.src.tree.body
        if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body = body[1:]
        return body

    def build_helper(self, key_types):
        fdef = self.src.tree
        args = fdef.args
        names = parameter_names(args)
        if len(names) != len(key_types):
            raise self.err(fdef, f"{fdef.name}() expects {len(names)} arguments, got {len(key_types)}")
        for pyname, (kind, t) in zip(names, key_types):
            c = self.cname(pyname)
            if kind == "record":                   # the record array, then the element (_records)
                self.params[pyname] = record_parameter(self, self._array_parameter(pyname, c, t.array), t)
            elif kind == "array":
                self.params[pyname] = self._array_parameter(pyname, c, t)
            else:
                self.prog.note_type(t)
                self.params[pyname] = ir.Var(c, t)
                self.fn_params.append(ir.Param(c, t))
        body = self.run_passes(self.body_without_docstring())
        tuple_types: tuple = ()
        lowered = lower_tuple_returns(self, body)      # return a, b: out-parameters (_tuples)
        if lowered is not None:
            body, tuple_types = lowered
        ret = VOID
        for t in self.returns:
            if t is not VOID:
                try:
                    ret = t if ret is VOID else join(ret, t, self.prog.default_float)
                except JoinConflict as exc:
                    raise self.type_err(fdef, f"helper {fdef.name}() returns both {exc.a} and {exc.b}; "
                                        "convert one explicitly (e.g. float(...))") from None
        ret = concrete(ret, self.prog.default_float)
        if ret is not VOID and not _always_returns(body):
            self.returns.append(VOID)          # falling off the end returns None in Python
        if any(t is VOID for t in self.returns) and ret is not VOID:
            raise self.err(fdef, f"helper {fdef.name}() returns a value on some paths and nothing on others",
                           "return a value on every path")
        body = self._cast_returns(body, ret)
        fn = ir.Function(fdef.name, self.fn_params, ret, body, self.locals_table(), False, self.src.filename, fdef.lineno)
        fn.tuple_returns = tuple_types
        return fn

    def _array_parameter(self, pyname, c, t) -> ir.ArrayRef:
        """Array parameter ``c`` of type ``t``, then its extents (hidden parameters)."""
        extents = [ir.Var(f"{c}_shape{k}", self.prog.index_type) for k in range(t.ndim)]
        self.fn_params.append(ir.Param(c, t, root=pyname))
        for s in extents:
            self.fn_params.append(ir.Param(s.name, s.type, hidden=True))
            self.non_negative.add(s.name)
        shape: list[ir.Expr] = list(extents)
        if t.known_last:
            shape[-1] = ir.Const(t.known_last, self.prog.index_type)
        return ir.ArrayRef(pyname, c, shape, t)

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
            if py in self.array_locals or py in self.tuple_locals:
                continue
            table[self.cname(py)] = concrete(t, self.prog.default_float)
        table.update(self.temp_types)
        for p in self.fn_params:
            table.pop(p.name, None)
        for t in table.values():
            self.prog.note_type(t)
        return table


def _always_returns(body) -> bool:
    """Whether every path through ``body`` ends in a return (conservative: loops may not run)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ir.Return):
        return True
    if isinstance(last, ir.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    if isinstance(last, ir.While) and isinstance(last.cond, ir.Const) and last.cond.value:
        return True                            # while True: ... exits only through return/break
    return False
