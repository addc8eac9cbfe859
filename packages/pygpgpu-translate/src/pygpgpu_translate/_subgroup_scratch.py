"""Subgroup operations in helpers where the dialect emulates them in the kernel's local memory.

OpenCL C declares ``__local`` variables only at kernel scope, and its subgroup emulation
(``prelude/_subgroups``) exchanges values through the kernel's ``pg_sg_scratch`` array
(``Dialect.kernel_locals``). So every helper that reaches a subgroup operation, itself or
through the helpers it calls, takes that array as a last hidden parameter of the same name, and
every call of such a helper passes it on: the prelude's macros (``pg_sg_add_float(v)`` ->
``pg_sg_add_float_(pg_sg_scratch, v)``) then find it in the helper as in the kernel.

This is a dialect's matter (CUDA and HIP shuffle in registers and need nothing), so it runs
when rendering (``_translate.render``), on a copy of the dialect-free IR, which other dialects
render unchanged.
"""
from __future__ import annotations

import copy

from . import _ir as ir
from ._types import UINT64, ArrayType

__all__ = ["pass_subgroup_scratch"]

_SCRATCH_TYPE = ArrayType(UINT64, 1, space="local")
_PIECE_PREFIX = "pg_sg_"     # the prelude's subgroup functions (prelude/_subgroups.function_name)


def _calls(node) -> list:
    """Every ir.Call under ``node``, each once (the builder may share an expression between
    statements); helper calls are not followed into the callee."""
    seen: dict[int, ir.Call] = {}

    def walk(n) -> None:
        if isinstance(n, list):
            for x in n:
                walk(x)
        elif isinstance(n, (ir.Expr, ir.Stmt)) and id(n) not in seen:
            if isinstance(n, ir.Call):
                seen[id(n)] = n
            for name, value in vars(n).items():
                if name != "helper" and isinstance(value, (ir.Expr, ir.Stmt, list)):
                    walk(value)
    walk(node)
    return list(seen.values())


def _needing(helpers: list) -> set[int]:
    """ids of the helpers that reach a subgroup operation, directly or through callees."""
    calls = {id(h): _calls(h.body) for h in helpers}
    need = {id(h) for h in helpers if any(c.fn.startswith(_PIECE_PREFIX) for c in calls[id(h)])}
    grew = True
    while grew:         # helpers calling helpers that need it, until nothing changes
        grew = False
        for h in helpers:
            if id(h) not in need and any(id(getattr(c, "helper", None)) in need for c in calls[id(h)]):
                need.add(id(h))
                grew = True
    return need


def pass_subgroup_scratch(kernel: ir.Function, helpers: list, name: str) -> tuple[ir.Function, list]:
    """Copies of ``kernel`` and ``helpers`` in which each helper reaching a subgroup operation takes
    the scratch array ``name`` as its last parameter and each call of one passes it."""
    if not helpers:
        return kernel, helpers
    kernel, helpers = copy.deepcopy((kernel, helpers))     # one memo: calls keep pointing at the copies
    need = _needing(helpers)
    if not need:
        return kernel, helpers
    scratch = ir.Var(name, _SCRATCH_TYPE)
    for fn in [kernel] + helpers:
        for call in _calls(fn.body):
            if id(getattr(call, "helper", None)) in need:
                call.args.append(scratch)
    for h in helpers:
        if id(h) in need:
            h.params.append(ir.Param(name, _SCRATCH_TYPE, hidden=True))
            h.access[name] = {"r", "w"}
    return kernel, helpers
