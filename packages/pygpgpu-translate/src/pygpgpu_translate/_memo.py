"""The memo of a configured kernel's last warm launch with resident arrays
(docs/architecture.md#the-launch-path).

What a warm call does before the driver call (signature tokens, the plan lookup, the host
checks, the work size, packing) is a function of: the arguments' exact types; of each device
array its buffer, shape, dtype and device (and whether it owns its memory, where a row
alignment depends on it); the scalars' values; the globals and closure cells the translation
read (``plan.t.refs``); and the kernel's configuration. A configured kernel (``k``, ``k["cuda"]``,
``k[(n, 256)]``) keeps the last call whose arrays were all resident on its device together with
everything that call computed. When the next call's inputs are the same objects, it launches
the same packed arguments again and skips the rest. A scalar that is not part of the work size
may change: it is checked (type, the int range its token and the kernel's int checks allow) and
packed into a copy of the arguments. Anything else that differs is a miss, and the call takes
the ordinary warm path, which then keeps the new call.

A plan is memoized only when every input of its checks is covered that way: its work size may
read only the parameters (their shapes, their scalar values), not globals, closure cells or
array elements (:func:`_domain_reads`); byte-swapped arrays, vector and complex scalars, the
debug mode's checked plans and method kernels always take the ordinary path.

The memo keeps the last call's packed arguments (its buffers, as the context's last launch
does). Only calls whose device arrays own their memory are kept: a pool block's buffer is
closed by the pool when it gives the block back to the driver, whoever holds the Python object,
whereas a gnp array over another library's memory (DLPack, ``__cuda_array_interface__``) would
keep that memory alive.
"""
from __future__ import annotations

import ast

from pygpgpu_core.backend.fastpath import compile_source

from ._domain import validate
from ._launch import PACK_BOUND, PACK_BUFFER, PACK_SCALAR, PACK_SHAPE, CallPlan
from ._source import function_source
from ._state import _MISSING

__all__ = ["build_memo", "remember", "forget", "ENABLED"]

ENABLED = True
"""False: no call is kept (benchmarks of the ordinary warm path; existing memos are still used)."""

# names a domain may call (the domain function's own helpers and plain builtins)
_HELPERS = frozenset({"_pyg_dim", "_pyg_item", "len"})
_BUILTINS = frozenset({"range", "int", "min", "max", "abs"})
_ARRAY_ATTRS = frozenset({"shape", "ndim", "size"})
_INT32 = (-2**31, 2**31 - 1)


def build_memo(plan, func):
    """The plan's memo, generated once by its constructor: ``(hit, keep)``, or False where the
    plan cannot be memoized (``func``: the kernel's Python function, whose source the work size
    is computed from)."""
    return _build(plan, plan.tokens, func) or False


def remember(owner, plan, args, ran) -> None:
    """Keep the call ``plan`` just launched (``ran``: its ``(global, local, packed)``) as the
    memo of the configured kernel ``owner``, if the plan can be memoized. The memo before it
    moves to ``owner._memo2``: two calls that take turns (double buffers) both hit."""
    if not ENABLED:
        return
    made = plan._memo_hit
    if made is False:
        return
    hit, keep = made
    state = keep(args, ran)
    if state is not None:
        owner._memo2 = owner._memo
        owner._memo = (hit, state)


def forget(owner) -> None:
    owner._memo = owner._memo2 = None


def _build(plan, tokens, func):
    """``(hit, keep)`` generated for ``plan``, or None if the plan cannot be memoized.
    ``keep(args, ran)``: the state of a call (None when a device array does not own its
    memory); ``hit(args, state) -> bool``: launches, and answers True, when ``args`` match a
    state."""
    if type(plan) is not CallPlan or plan.swapped or plan._n_call_params != len(tokens):
        return None
    if any(code not in (PACK_BUFFER, PACK_SHAPE, PACK_SCALAR, PACK_BOUND) for code, _pos, _extra in plan.pack):
        return None
    if not all(type(tok) is tuple and tok[0] == "d" or _scalar_type(tok) is not None for tok in tokens):
        return None             # numpy arrays (staged each call), vectors, complex scalars
    names = plan.param_names[:len(tokens)]
    domain = _domain_reads(plan, names, tokens, func)
    if domain is None:
        return None
    packs: dict = {}            # argument position -> [(packed index, numpy type to convert to or None)]
    for index, (code, pos, extra) in enumerate(plan.pack):
        if code == PACK_SCALAR:
            packs.setdefault(pos, []).append((index, extra))
    checked = {pos: (lo, hi) for pos, _name, lo, hi, _types in plan.int_checks}
    env = {"DA": plan.device_array_type, "DEV": plan.device, "P": plan, "MISSING": _MISSING}
    n = len(tokens)
    arg_names = [f"a{i}" for i in range(n)]
    lines = ["def hit(args, S):",
             f"    if len(args) != {n}:",
             "        return False",
             f"    {', '.join(arg_names)}{',' if n == 1 else ''} = args" if n else "    pass"]
    scalars = []
    slot = 3                    # state: global, local, packed, then per argument
    for i, tok in enumerate(tokens):
        a = f"a{i}"
        if type(tok) is tuple and tok[0] == "d":
            own = f" or not {a}.owns_memory" if tok[4] else ""     # the row alignment in the token
            if i in plan.written:   # made read-only since it was kept: the plan refuses it
                own += f" or {a}._readonly"
            lines += [f"    if (type({a}) is not DA or {a}.buffer is not S[{slot}] or {a}._shape is not S[{slot + 1}]"
                      f" or {a}._dtype is not S[{slot + 2}] or {a}.device is not DEV{own}):",
                      "        return False"]
            slot += 3
            continue
        kind = _scalar_type(tok)
        if kind is None:
            return None
        env[f"T{i}"] = kind
        if i in domain:         # part of the work size: the same object, or an equal int of the same type
            same = f"(type({a}) is not T{i} or {a} != S[{slot}])" if issubclass(kind, int) and kind is not bool else "True"
            lines += [f"    if {a} is not S[{slot}] and {same}:", "        return False"]
        else:
            scalars.append((i, slot, tok, kind))
        slot += 1
    for j, (g, name, value) in enumerate(plan.t.refs):      # refs_current, unrolled
        env[f"G{j}"], env[f"N{j}"], env[f"V{j}"] = g, name, value
        lines += [f"    if G{j}.get(N{j}, MISSING) is not V{j}:", "        return False"]
    lines.append("    packed = S[2]")
    for i, s, tok, kind in scalars:
        a = f"a{i}"
        lines += [f"    if {a} is not S[{s}]:", f"        if type({a}) is not T{i}:", "            return False"]
        if tok == "i":          # the token of a Python int says it fits 32 bits
            lo, hi = checked.get(i, _INT32)
            lo, hi = max(lo, _INT32[0]), min(hi, _INT32[1])
            lines += [f"        if not {lo} <= {a} <= {hi}:", "            return False"]
        elif i in checked:      # (only Python ints are range-checked)
            return None
        if packs.get(i):
            lines += ["        if packed is S[2]:", "            packed = packed.copy()"]
            for index, conv in packs[i]:
                if tok in ("f", "i", "b") or kind is conv:
                    lines.append(f"        packed[{index}] = {a}")
                else:           # a numpy scalar of another type than the parameter's (as CallPlan._packed)
                    env[f"C{index}"] = conv
                    lines.append(f"        packed[{index}] = C{index}({a})")
    # the kept packed arguments (never mutated: a changed scalar goes into a copy) may skip the
    # launcher's packing through its again() where it has one (backend/launcher.py)
    lines += ["    L = P.launcher",
              "    (getattr(L, 'again', L) if packed is S[2] else L)(S[0], S[1], packed)", "    return True", ""]
    # keep(): the state hit() reads, slot by slot
    lines += ["def keep(args, ran):", f"    {', '.join(arg_names)}{',' if n == 1 else ''} = args" if n else "    pass"]
    owned = [f"a{i}" for i, tok in enumerate(tokens) if type(tok) is tuple and tok[0] == "d"]
    if owned:       # another library's memory (DLPack, __cuda_array_interface__): a memo must not keep it
        lines += [f"    if not ({' and '.join(f'{a}.owns_memory' for a in owned)}):", "        return None"]
    parts = ["ran[0]", "ran[1]", "ran[2]"]
    for i, tok in enumerate(tokens):
        parts += [f"a{i}.buffer", f"a{i}.shape", f"a{i}.dtype"] if type(tok) is tuple and tok[0] == "d" else [f"a{i}"]
    lines.append(f"    return ({', '.join(parts)})")
    src = "\n".join(lines)
    ns = compile_source(src, f"<pygpgpu memo of {plan.t.name}>", env)
    ns["hit"].source = src                 # the generated text, for a reader in a debugger
    return ns["hit"], ns["keep"]


def _scalar_type(tok):
    """The exact Python type of a scalar argument with this token (None: not memoized)."""
    if tok == "f":
        return float
    if tok == "i":
        return int
    if tok == "b":
        return bool
    if type(tok) is tuple and tok[0] == "s" and tok[1].kind in "biuf":
        return tok[1].type
    return None


def _domain_reads(plan, names, tokens, func):
    """Positions of the scalar parameters the work size is computed from, or None when it may
    read anything else than the parameters' shapes and values (globals, closure cells, array
    elements, attributes other than shape/ndim/size, calls other than a few builtins)."""
    spec = plan.t.domain_plan
    if not spec:
        return frozenset()
    try:
        stmts, exprs = validate(spec, function_source(func))
    except (ValueError, OSError, TypeError):
        return None
    shadowed = set(getattr(func, "__globals__", {})) - _HELPERS
    arrays = {n for n, tok in zip(names, tokens) if type(tok) is tuple and tok[0] in ("d", "a", "av")}
    position = {n: i for i, n in enumerate(names)}
    local: set = set()
    reads: set = set()

    def ok(node, array_ok=False) -> bool:
        if isinstance(node, ast.Constant):
            return type(node.value) in (int, bool)
        if isinstance(node, ast.Name):
            if node.id in local:
                return True
            if node.id in arrays:
                return array_ok
            if node.id in position:
                reads.add(position[node.id])
                return True
            return False
        if isinstance(node, ast.Attribute):
            return node.attr in _ARRAY_ATTRS and isinstance(node.value, ast.Name) and node.value.id in arrays
        if isinstance(node, ast.Subscript):
            return ok(node.value) and ok(node.slice)
        if isinstance(node, ast.BinOp):
            return ok(node.left) and ok(node.right)
        if isinstance(node, ast.UnaryOp):
            return ok(node.operand)
        if isinstance(node, ast.Tuple):
            return all(ok(e) for e in node.elts)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            f = node.func.id
            if f in _HELPERS:
                return bool(node.args) and ok(node.args[0], array_ok=True) and all(ok(e) for e in node.args[1:])
            if f in _BUILTINS and f not in shadowed and f not in position and f not in local:
                return all(ok(e) for e in node.args)
        return False

    for stmt in stmts:
        if not ok(stmt.value):
            return None
        local.update(t.id for t in ast.walk(stmt.targets[0]) if isinstance(t, ast.Name))
    if not all(ok(e) for e in exprs):
        return None
    return frozenset(reads)

