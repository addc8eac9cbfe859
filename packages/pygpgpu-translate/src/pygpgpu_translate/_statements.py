"""Statement rules of the function builder: the statement dispatch (``stmts``, where type
inference's worklist notes assignments and loop heads, ``_infer``), if/while with the sign proofs
their tests give, break/continue, expression statements and returns. Assignments and stores are
``_assignments``; for loops and the kernel's iteration-domain loop are ``_loops``."""
from __future__ import annotations

import ast
import contextlib
from typing import TYPE_CHECKING, Any, Callable, cast

from . import _ir as ir
from ._types import BOOL, VOID
from ._bindings import TupleRef
from ._assignments import assign_to, augmented_assignment
from ._loops import for_loop
from ._infer import AssignmentLog, NotYetTyped, builder_state, is_name_assignment, restore_builder_state
from ._records import RecordRef
from ._signs import guard_bounds, stores_name
from ._tuples import tuple_return

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
        return assign_to(self.fb, s.target, s.value, s)

    def st_Assign(self, s, top):
        return assign_to(self.fb, s.targets[0], s.value, s)

    def st_AugAssign(self, s, top):
        return augmented_assignment(self.fb, s, top)

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
