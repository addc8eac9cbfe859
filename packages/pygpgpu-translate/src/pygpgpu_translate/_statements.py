"""Statement rules of the function builder: assignments and stores (with the join of a local's
types and int->float conversion), if/while/for, the kernel's iteration-domain loop, returns."""
from __future__ import annotations

import ast
import contextlib
from typing import TYPE_CHECKING, Any, Callable, cast


from . import _ir as ir
from ._types import (BOOL, VOID, ArrayType, Vector, concrete)
from ._bindings import ObjectRef, ShapeRef, TupleRef
from ._bounds import BoundsChecks
from ._subscripts import subscript_target
from ._local_arrays import local_array
from ._loops import for_loop
from ._infer import AssignmentLog, NotYetTyped, builder_state, is_name_assignment, restore_builder_state, widen_local
from ._records import RecordRef, is_record_binding, record_alias, record_store, record_value
from ._signs import guard_bounds, is_non_negative, stores_name
from ._private_arrays import CONSTRUCTORS as PRIVATE_CONSTRUCTORS, private_array
from ._tuples import tuple_return
from ._vector_values import swizzle_indices

if TYPE_CHECKING:
    from ._bindings import Domain
    from ._builder import FunctionBuilder, ProgramBuilder
    from ._signs import KnownSigns
    from ._source import FunctionSource

__all__ = ["StatementRules"]


class StatementRules:
    """Mixed into FunctionBuilder: one ``st_<Node>`` method per accepted statement."""

    if TYPE_CHECKING:   # for the type checker: what these rules use of FunctionBuilder (_builder) and its rules
        prog: ProgramBuilder
        params: dict[str, object]
        array_locals: dict[str, ir.ArrayRef | RecordRef]
        local_types: dict[str, object]
        literal_locals: set[str]
        item_values: dict[str, ir.Expr]
        src: FunctionSource
        changed: set[str]
        store_counts: dict[str, int]
        non_negative: KnownSigns
        domain: Domain | None
        final: bool
        assignment_log: AssignmentLog | None
        err: Callable[..., SyntaxError]
        type_err: Callable[..., Exception]
        cname: Callable[[str], str]
        materialize: Callable[[ir.Expr], ir.Expr]
        expr: Callable[..., Any]                  # the expression rules (_expressions)
        no_void: Callable[..., Any]
        evaluated: dict[int, Any]
        index_depth: int
        convert: Callable[..., Any]
        comp: Callable[..., Any]
        add: Callable[..., Any]
        is_kernel: bool
        returns: list[Any]
        pre: list[ir.Stmt]
        line: int
        cnames: dict[str, str]
        tuple_locals: dict[str, TupleRef]
        domain_vars: list[str]
        top_level_of_domain: bool
        index_names: frozenset[str]
        value: Callable[..., ir.Expr]
        condition: Callable[..., ir.Expr]
        dead_unless: Callable[..., Any]             # a context manager (_expressions)
        resolve_callee: Callable[..., Any]
        builtin_of: Callable[..., Any]
        temp: Callable[..., ir.Var]
        binop: Callable[..., Any]

    @property
    def fb(self) -> FunctionBuilder:
        """This builder as the explicit, typed lowering context the rule modules take (``_records``,
        ``_complex``, ``_tuples``...: ``fb: FunctionBuilder``); the rules mixed in here are its methods."""
        return cast("FunctionBuilder", self)

    def stmts(self, body, top=False):
        out: list[ir.Stmt] = []
        outer_pre = self.pre
        for s in body:
            self.line = s.lineno
            self.pre = []
            state = None if self.final else builder_state(self.fb)
            if (self.assignment_log is not None and isinstance(s, ast.For)
                    and not (top and self.is_kernel and self.domain is not None and self.domain.node is s)):
                self.assignment_log.note_head(self.fb, s)       # the loop variable's typing (_infer)
            try:
                if self.assignment_log is not None and is_name_assignment(s):
                    res = self.assignment_log.run_noted(self.fb, s, top)     # type inference's worklist (_infer)
                else:
                    res = self.stmt(s, top)
            except NotYetTyped:
                if state is None:            # the final pass reads only typed locals (lookup says so)
                    raise
                restore_builder_state(self.fb, state)
                self.pre = []
                self.type_bodies(s)
                res = None
            except RecursionError:
                raise self.err(s, "this statement nests its expressions too deeply to translate (more levels of "
                               "brackets, calls or ** than Python's stack allows)",
                               "split it into several statements with intermediate variables") from None
            out.extend(self.pre)
            self.pre = []
            if res is None:
                continue
            out.extend(res if isinstance(res, list) else [res])
        self.pre = outer_pre
        return out

    def type_bodies(self, s) -> None:
        """A provisional pass met a statement whose head reads a local not yet typed (``if prev > 0:``,
        ``for k in range(m):`` with ``m`` assigned further down a loop): the statement types nothing
        itself this time, but the statements inside it still type theirs (_infer.NotYetTyped)."""
        if not isinstance(s, (ast.If, ast.For, ast.While)):
            return None
        saved = self.top_level_of_domain
        self.top_level_of_domain = False
        loop = 0 if isinstance(s, ast.If) else 1
        self.loop_depth += loop
        try:
            self.stmts(s.body)
            self.stmts(s.orelse)
        finally:
            self.loop_depth -= loop
            self.top_level_of_domain = saved
        return None

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
        v = self.expr(s.value)
        if isinstance(v, TupleRef):                  # return a, b: out-parameters (_tuples)
            return tuple_return(self.fb, v, s)
        if isinstance(v, ir.ArrayRef):
            raise self.err(s, "helpers cannot return arrays", "write into an array argument instead")
        if isinstance(v, RecordRef):
            raise self.err(s, "helpers cannot return a record element",
                           "return one of its fields (return rec.mass), or pass the element to the helpers that need it")
        v = self.value(s.value) if not isinstance(v, ir.Expr) else v
        self.returns.append(v.type)
        return ir.Return(v, s.lineno)

    def st_If(self, s, top):
        cond = self.condition(s.test)
        pre = self.pre
        self.pre = []
        saved = self.top_level_of_domain
        self.top_level_of_domain = False
        # what the test proves (if i > 0: i - 1 >= 0) for each branch that keeps the variable as tested
        holds, fails = guard_bounds(cond, self.non_negative)
        with self.known_bounds(self.unassigned_in(holds, s.body)), self.dead_unless(cond, True):
            body = self.stmts(s.body)
        with self.known_bounds(self.unassigned_in(fails, s.orelse)), self.dead_unless(cond, False):
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
        cond = self.condition(s.test)
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
            if isinstance(value_node, ast.Tuple):
                vals = [self.value(v) for v in value_node.elts]
            else:                        # h, w = x.shape  /  a, b = some_tuple
                whole = self.expr(value_node)
                if isinstance(whole, ShapeRef):
                    vals = list(whole.array.shape)
                elif isinstance(whole, TupleRef):
                    vals = list(whole.items)
                else:
                    vals = None
            if vals is None or len(vals) != len(target.elts):
                raise self.err(s, "tuple unpacking needs a tuple of the same length on the right",
                               "write a, b = x, y, h, w = arr.shape, or assign one name per statement")
            vals = [self.materialize_for_swap(v) for v in vals]
            out = []
            for t, v in zip(target.elts, vals):
                out.extend(self.store(t, v, s))
            return out
        # gpu.local_array(...) and array aliases bind names instead of assigning values
        if isinstance(target, ast.Name) and isinstance(value_node, ast.Call):
            callee = self.resolve_callee(value_node.func)
            b = self.builtin_of(callee)
            if b is not None and b.name == "gpu.local_array":
                return local_array(self.fb, target.id, value_node)
            if isinstance(callee, ObjectRef) and any(callee.obj is c for c in PRIVATE_CONSTRUCTORS):
                return private_array(self.fb, target.id, value_node, callee.obj)    # t = np.zeros(8, ...)
        value = self.no_void(self.expr(value_node), value_node)
        if is_record_binding(value):             # v = p[i].pos: a vector, or an error saying what to read
            if isinstance(target, ast.Name) and record_alias(self.fb, target.id, value, value_node):
                return None                      # r = p[i]: r names the element, as numpy's view does
            value = record_value(self.fb, value, value_node)
        if isinstance(value, ir.ArrayRef):
            if not isinstance(target, ast.Name):
                raise self.err(s, "arrays cannot be stored into other arrays", "copy element by element in a loop")
            prev = self.array_locals.get(target.id)
            if prev is not None and (not isinstance(prev, ir.ArrayRef) or prev.root != value.root):   # or a record
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
            if is_record_binding(value) and record_alias(self.fb, name, value, target):
                return []                        # for i, r in enumerate(p): r names the element p[i]
            if name in self.params or name in self.array_locals:
                b = self.params.get(name) or self.array_locals.get(name)
                if isinstance(b, ir.ArrayRef):
                    raise self.err(target, f"cannot assign to array {name!r}", f"write elements: {name}[i] = ...")
                if is_record_binding(b):
                    raise self.err(target, f"{name!r} names a record element and cannot be assigned a value",
                                   f"assign its fields ({name}.field = ...) or use another name")
            if name in self.domain_vars:
                raise self.err(target, f"cannot assign to the loop index {name!r}", "use another variable")
            if name in self.params:                          # a scalar parameter keeps its declared type
                pv = self.params[name]
                if not isinstance(pv, ir.Var):             # an ObjectRef (arrays and records are refused above)
                    raise self.err(target, f"cannot assign to {name!r}")
                var = ir.Var(pv.name, concrete(pv.type, self.prog.default_float))
                return [ir.Assign(var, self.convert(value, var.type), s.lineno)]
            if isinstance(value.type, ArrayType):
                raise self.err(target, "cannot assign an array here")
            t = widen_local(self.fb, name, value.type, s)        # the join of its values (_infer)
            var = ir.Var(self.cname(name), concrete(t, self.prog.default_float))
            converted = self.convert(value, var.type)
            if self.store_counts.get(name) == 1 and is_non_negative(converted, self.non_negative):
                self.non_negative.add(var.name)      # its only value, e.g. i = gpu.global_id(0)
            return [ir.Assign(var, converted, s.lineno)]
        if isinstance(target, ast.Subscript):
            arr, index, ok, row = subscript_target(self.fb, target)
            if is_record_binding(arr):
                return record_store(self.fb, arr, target.slice, value, s)
            full = (self.top_level_of_domain and not self.seen_exit and self.is_domain_index(target)
                    and self.loop_depth == 0 and self.domain_identity)
            if full and self.domain is not None:       # full: is_domain_index found the domain
                self.domain.covers[arr.root] = row
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
                return BoundsChecks.stores(ok, [ir.Store(arr, self.add(index, ir.Const(k, self.prog.index_type)) if k else index,
                                                         c, s.lineno, full) for k, c in enumerate(comps)], s.lineno)
            return BoundsChecks.stores(ok, [ir.Store(arr, index, self.convert(value, arr.type.elem), s.lineno, full)], s.lineno)
        if isinstance(target, ast.Attribute):
            base = self.expr(target.value)
            if is_record_binding(base):           # p[i].mass = ... (_records)
                return record_store(self.fb, base, target.attr, value, s)
            if isinstance(base, ir.ArrayRef):
                raise self.err(target, f"cannot set attribute {target.attr!r} of array {ast.unparse(target.value)!r}: "
                               "arrays have no attributes to assign in a kernel",
                               f"write elements instead, e.g. {ast.unparse(target.value)}[i] = ...")
            if isinstance(base, ir.Expr) and isinstance(base.type, Vector):
                return self.component_store(target, base, value, s)
            raise self.err(target, f"cannot set attribute {target.attr!r} of {ast.unparse(target.value)!r} in a kernel",
                           "kernels cannot change Python objects; write results into an output array")
        raise self.err(target, "cannot assign to this target")

    def component_store(self, target, base, value, s):
        """``v.x = e`` / ``v.xy = w``: ``v`` gets a new vector, its other components kept."""
        if not isinstance(target.value, ast.Name):
            raise self.err(target, "writing a vector component needs a vector variable",
                           "assign the vector to a name first, then set its component")
        picked = swizzle_indices(self.fb, base.type, target.attr, target)
        if len(set(picked)) != len(picked):
            raise self.err(target, f"swizzle .{target.attr} names a component twice and cannot be assigned")
        old = self.materialize(base)
        comps = [self.comp(old, k) for k in range(base.type.width)]
        if isinstance(value.type, Vector):
            if value.type.width != len(picked):
                raise self.type_err(target, f"cannot assign a {value.type} to .{target.attr} "
                                            f"({len(picked)} component{'s' if len(picked) > 1 else ''})")
            v = self.materialize(value)
            new = [self.comp(v, j) for j in range(len(picked))]
        else:
            new = [value] * len(picked)          # a number to every component named, as numpy broadcasts
        for k, c in zip(picked, new):
            comps[k] = self.convert(c, base.type.base)
        whole = ast.copy_location(ast.Name(target.value.id, ast.Store()), target)
        return self.store(whole, ir.VecCtor(comps, base.type), s)

    def st_AugAssign(self, s, top):
        once = self.indices_evaluated_once(s.target)
        try:
            return self.augmented(s)
        finally:
            for node in once:
                del self.evaluated[id(node)]

    def indices_evaluated_once(self, target):
        """The index expressions of ``target`` that call something (``out[gpu.atomic_add(c, 0, 1)]``),
        evaluated now into temporaries: ``x[k] += v`` reads and writes ``x[k]``, and Python
        evaluates ``k`` once. The nodes' values stay in ``self.evaluated`` until the caller drops them."""
        once: list = []
        todo = [target]
        while todo:
            node = todo.pop()
            if not isinstance(node, ast.Subscript):
                todo.extend(ast.iter_child_nodes(node))
                continue
            todo.append(node.value)
            for e in node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]:
                if not any(isinstance(n, ast.Call) for n in ast.walk(e)):
                    continue
                self.index_depth += 1                # typed as an index, as index_list would
                try:
                    v = self.expr(e)                 # x[a[f()]]: the inner f() with it, once
                finally:
                    self.index_depth -= 1
                if isinstance(v, ir.Expr) and not isinstance(v, ir.ArrayRef):
                    self.evaluated[id(e)] = self.materialize(v)
                    once.append(e)
        return once

    def augmented(self, s):
        if isinstance(s.target, ast.Subscript):
            current = self.expr(ast.Subscript(value=s.target.value, slice=s.target.slice, ctx=ast.Load(),
                                              lineno=s.lineno, col_offset=s.target.col_offset))
        else:
            current = self.value(ast.Name(id=s.target.id, ctx=ast.Load(), lineno=s.lineno, col_offset=s.col_offset)) \
                if isinstance(s.target, ast.Name) else None
            if isinstance(s.target, ast.Attribute):       # p[i].mass += ... (record fields)
                current = self.value(ast.Attribute(value=s.target.value, attr=s.target.attr, ctx=ast.Load(),
                                                   lineno=s.lineno, col_offset=s.target.col_offset))
            if current is None:
                raise self.err(s, "augmented assignment to this target is not supported")
        result = self.binop(s.op, current, self.value(s.value), s)
        saved = self.top_level_of_domain
        self.top_level_of_domain = False     # a read-modify-write never fully overwrites
        out = self.store(s.target, result, s)
        self.top_level_of_domain = saved
        return out

    # ---- for loops -----------------------------------------------------------------------------------
    def st_For(self, s, top):
        return for_loop(self.fb, s, top)      # range and tuple loops, the kernel's domain loop (_loops)

    @contextlib.contextmanager
    def non_negative_names(self, cnames, start=None):
        """``cnames`` count as proven >= 0 inside the ``with`` block (a loop body), and as >= ``start``
        when that is given (a counter's proven first value)."""
        with self.known_bounds({n: max(start or 0, 0) for n in cnames}):
            yield

    @contextlib.contextmanager
    def known_bounds(self, bounds):
        """Inside the ``with`` block, each C name of ``bounds`` is proven >= its value (>= 0)."""
        known = self.non_negative
        lower = known.lower
        saved = {n: lower.get(n) for n in bounds}
        added = [n for n in bounds if n not in known]
        known.update(added)
        for n, low in bounds.items():
            if low > lower.get(n, 0):
                lower[n] = low
        try:
            yield
        finally:
            known.difference_update(added)
            for n, low in saved.items():
                if low is None:
                    lower.pop(n, None)
                else:
                    lower[n] = low

    def unassigned_in(self, bounds, body):
        """The bounds of variables that ``body`` never assigns (there they keep the tested value)."""
        pynames = {c: p for p, c in self.cnames.items()}
        return {c: low for c, low in bounds.items() if c in pynames and not stores_name(body, pynames[c])}

    def is_domain_index(self, target):
        if self.domain is None or self.domain.kind == "work_size" or not self.domain_vars:
            return False
        sl = target.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if len(elts) == 1 and isinstance(elts[0], ast.Name) and elts[0].id in self.tuple_locals:
            return len(self.domain_vars) > 1
        return (len(elts) == len(self.domain_vars)
                and all(isinstance(e, ast.Name) and e.id == v for e, v in zip(elts, self.domain_vars)))
