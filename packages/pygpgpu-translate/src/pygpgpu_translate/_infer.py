"""Type inference of a function's locals: a worklist over its assignments (issue 34).

A local has one type, the join of every value assigned to it (``_types.join``), so typing is
flow-insensitive: an assignment's value type depends only on the types of the locals it reads
(and on where it stands: inside which loop, which constant item). The first provisional pass
of the builder (``_builder.FunctionBuilder.run_passes``) runs every statement once and, for
each assignment to plain names, notes the statement, the builder state it ran in and the types
of the locals it read (``run_noted``). The worklist (``settle``) then re-runs, with the state it
ran in, each noted assignment that read a local whose type has changed since, and the readers
of whatever a re-run widens, until no assignment widens anything. A chain of locals whose types
settle last to first (``v0 = v1 + 1`` ... ``vN = x[i]``) costs one re-run per link instead of
one pass over the whole body per link, and a body typed in source order re-runs nothing; the
builder then tries the final pass at once (``_final_if_settled``), so translation time grows
linearly with the kernel (benchmarks/translate_time.py).

The worklist applies the builder's own rules (an assignment is re-run through ``stmt``, a for
loop's head, which types the loop variable from the range's bounds or the tuple's items, through
``loop_head``), so it widens each local at most to the type the passes would reach, never past
it. What it does not see (an assignment that binds a tuple, an array or a record element) the
final pass finds changing: its IR is dropped and the whole passes go on until none changes a
type, as before, so the worklist only saves passes and never decides a type the passes would not.

A provisional pass that reads a local no assignment has typed yet raises ``NotYetTyped`` from the
name lookup; the statement that read it types nothing this time and is run again once the local
has a type (the worklist notes it like any other), so the lowering rules never meet ``UNKNOWN``:
it is named only here and in ``_types`` (the lattice's bottom).

Still to do for issue 34 item 1: an inference pass that types without lowering (the provisional
passes above still run the lowering rules and build IR into a scratch ``Recording``); its design
and the way there are in docs/architecture.md, "Type inference: where it stands".
"""
from __future__ import annotations

import ast
import heapq
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._types import UNKNOWN, JoinConflict, Scalar, join, literal_default, literal_join

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["AssignmentLog", "NotYetTyped", "widen_local", "is_name_assignment", "builder_state", "restore_builder_state"]


class NotYetTyped(Exception):
    """A provisional pass read local ``name`` before any value typed it (a value carried round a loop,
    ``prev`` read above ``prev = x[k]``). Raised by the builder's name lookup, caught where the
    statement that read it is run (``_statements.StatementRules.stmts``, ``AssignmentLog``): that
    statement types nothing this time, as it could not, and runs again once ``name`` has a type
    (the worklist, or the next pass). So the lowering rules never meet a value of unknown type:
    ``UNKNOWN`` is the inference's own (the type of a local no assignment has reached yet)."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name

# The builder state a statement's typing can depend on besides the locals' types: restored when
# the statement is re-run (the dicts copied, as later statements of the pass change them).
_STATE = ("item_values", "index_names", "index_depth", "loop_depth", "dead_depth", "top_level_of_domain",
          "domain_identity", "seen_exit", "array_locals", "tuple_locals", "domain_vars")
_COPIED = frozenset({"item_values", "array_locals", "tuple_locals"})


def builder_state(fb: FunctionBuilder) -> dict[str, Any]:
    """What a statement's typing depends on besides the locals' types, as it is now (the dicts copied)."""
    state = {name: getattr(fb, name) for name in _STATE}
    for name in _COPIED:
        state[name] = dict(state[name])
    state["in_domain_body"] = fb.prog.in_domain_body
    return state


def restore_builder_state(fb: FunctionBuilder, state: dict[str, Any]) -> None:
    """Put back a ``builder_state`` (copies again: a re-run may change the dicts)."""
    for name in _STATE:
        setattr(fb, name, dict(state[name]) if name in _COPIED else state[name])
    fb.prog.in_domain_body = state["in_domain_body"]


def widen_local(fb: FunctionBuilder, name: str, vt: Any, s: ast.stmt) -> Any:
    """Local ``name`` is assigned a value of type ``vt`` (statement ``s``): its type becomes the join of
    its values so far and ``vt`` (``fb.changed`` names it when that widened it). Returns its type.

    A local first bound to a bare Python number (``acc = 0``) is concrete from the start, so
    ``acc += img[y, x]`` over uint8 data counts past 255 instead of adopting uint8; a later bare
    number (``acc = 2**40``) widens it instead of being squeezed into it."""
    default_float = fb.prog.default_float
    old = fb.local_types.get(name, UNKNOWN)
    if vt.weak and (old is UNKNOWN or name in fb.literal_locals):
        vt = literal_default(vt, default_float, fb.prog.index_type)
        fb.literal_locals.add(name)
    try:
        new = join(old, vt, default_float)
    except JoinConflict as exc:
        # acc = 0, later acc = u32[i]: int64 holds both (the 0 was never meant as int32 only)
        new = literal_join(exc.a, exc.b) if name in fb.literal_locals else None
        if new is None:
            fix = ("convert explicitly, e.g. " + ("float(...)" if exc.b.is_float else "int(...)")
                   if isinstance(exc.a, Scalar) and isinstance(exc.b, Scalar) else "use one name per type")
            raise fb.type_err(s, f"variable {name!r} is assigned {exc.a} and {exc.b} "
                              f"(conflicting types); {fix}") from None
    if new != old:
        fb.local_types[name] = new
        fb.changed.add(name)
    return new


def _name_targets(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, ast.Attribute):              # v.x = ...: a new value of vector v
        return isinstance(target.value, ast.Name)
    if isinstance(target, ast.Tuple):
        return all(_name_targets(t) for t in target.elts)
    return False


def is_name_assignment(s: ast.stmt) -> bool:
    """Whether ``s`` assigns values to plain names only (``a = ...``, ``a, b = ...``, ``a += ...``,
    ``v.x = ...``): the statements whose re-runs can change a local's type and nothing else."""
    if isinstance(s, ast.Assign):
        return len(s.targets) == 1 and _name_targets(s.targets[0])
    if isinstance(s, (ast.AugAssign, ast.AnnAssign)):
        return s.value is not None and _name_targets(s.target)
    return False


@dataclass
class _Noted:
    stmt: ast.stmt
    line: int
    state: dict[str, Any]           # builder_state before the statement ran
    seen: dict[str, Any]            # the types of the locals it reads, as it read them
    head: bool = False              # a for loop's head (the loop variable's typing), not the statement

    def rerun(self, fb: FunctionBuilder) -> None:
        if self.head:
            from ._loops import loop_head     # here: the loop rules import this module
            loop_head(fb, self.stmt)
        else:
            fb.stmt(self.stmt, False)


def _reads(s: ast.stmt) -> set[str]:
    """The names statement ``s`` reads: loads, and the target of ``a += ...`` (``v.x = ...`` loads v)."""
    names = {node.id for node in ast.walk(s) if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store)}
    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
        names.add(s.target.id)
    return names


def _bindings(fb: FunctionBuilder) -> tuple[int, int, int, int]:
    """Sizes of what binds names rather than typing them (array and tuple aliases, local arrays)."""
    return len(fb.array_locals), len(fb.tuple_locals), len(fb.prog.local_arrays), len(fb.prog.dynamic_locals)


class AssignmentLog:
    """The name assignments of one provisional pass, with their state, indexed by the locals they read."""

    def __init__(self) -> None:
        self.noted: list[_Noted] = []
        self.readers: dict[str, list[int]] = {}        # local name -> indices into noted

    def run_noted(self, fb: FunctionBuilder, s: ast.stmt, top: bool) -> Any:
        """Run statement ``s`` through the builder (``fb.stmt``) and note it when it only typed names."""
        state = builder_state(fb)
        reads = _reads(s)
        seen = {name: fb.local_types.get(name, UNKNOWN) for name in reads}
        before = _bindings(fb)
        try:
            res = fb.stmt(s, top)
        except NotYetTyped:
            res = None                                   # typed nothing: the worklist runs it again
        if _bindings(fb) != before:                      # bound an array or a tuple: the passes handle it
            return res
        index = len(self.noted)
        self.noted.append(_Noted(s, s.lineno, state, seen))
        for name in reads:
            self.readers.setdefault(name, []).append(index)
        return res

    def note_head(self, fb: FunctionBuilder, s: ast.For) -> None:
        """Note the head of ``for`` loop ``s`` (run next by the builder): it types the loop variable
        from the range's bounds or the tuple's items, so the worklist re-runs it (``loop_head``, not
        the body, whose statements are noted one by one) when a local it reads widens."""
        reads = {node.id for node in ast.walk(s.iter) if isinstance(node, ast.Name)}
        seen = {name: fb.local_types.get(name, UNKNOWN) for name in reads}
        index = len(self.noted)
        self.noted.append(_Noted(s, s.lineno, builder_state(fb), seen, head=True))
        for name in reads:
            self.readers.setdefault(name, []).append(index)

    def settle(self, fb: FunctionBuilder, widened: set[str]) -> None:
        """Re-run the noted assignments that read a local whose type has changed since they ran (one
        of ``widened``, the pass's widened locals), then those reading what a re-run widens, until
        none widens a type. A local the pass typed before its readers ran (``a = x[i]`` then
        ``b = a + 1``) re-runs nothing: only the chains that settle against the source order cost.

        Runs inside the caller's scratch recording; the IR it builds is dropped. An error stops it
        quietly: the builder's next whole pass meets the same statement in its own order and raises
        it there if it still holds."""
        types = fb.local_types
        queued = sorted({i for name in widened for i in self.readers.get(name, ())
                         if self.noted[i].seen[name] != types.get(name, UNKNOWN)})   # a heap: source order
        pending = set(queued)
        saved = builder_state(fb)
        saved_pre, saved_line = fb.pre, getattr(fb, "line", None)
        try:
            while queued:
                index = heapq.heappop(queued)
                pending.discard(index)
                noted = self.noted[index]
                restore_builder_state(fb, noted.state)
                fb.line = noted.line
                fb.pre = []
                fb.changed = set()
                try:
                    noted.rerun(fb)
                except NotYetTyped:    # reads a local still untyped: it runs again when that one widens
                    continue
                except Exception:      # noqa: BLE001 -- the whole passes after this raise it, in order
                    return
                for name in fb.changed:
                    for reader in self.readers.get(name, ()):
                        if reader not in pending:
                            pending.add(reader)
                            heapq.heappush(queued, reader)
        finally:
            restore_builder_state(fb, saved)
            fb.pre = saved_pre
            if saved_line is not None:
                fb.line = saved_line
            fb.changed = set(widened)
