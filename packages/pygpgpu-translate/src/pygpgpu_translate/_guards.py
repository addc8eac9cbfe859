"""The extents a gid-style kernel guards its work-item ids against, for the launch check.

A kernel without an iteration domain that writes ``i = gpu.get_global_id(0)`` and then
``if i < a.size:`` (or ``if i >= n: return``) tells us how many work items it expects in that
dimension. A bracket work size that launches fewer processes a fraction of the data with no
error, which is what Numba's ``k[blocks, threads]`` and Warp's ``dim=(h, w)`` spellings do here
(a bracket is OpenCL's ``(total, per group)``): the launch plan compares and warns
(``_launch.LaunchPlan``, docs/launching.md).

Each extent is recorded as a one-dimension domain plan (``_domain``): node ids of the kernel's
own source, rebuilt into a host function, never code in the cache. Only plain extents are
taken (parameters, ``a.size``, ``a.shape[k]``, ``len(a)``, int constants, module or enclosing
constants, and ``+ - * //`` of those, through plain assignments before the guard); anything
else is simply not checked.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ._domain import DomainDim, plan_of, render

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["find_guards"]

_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)


def _plain_extent(node) -> bool:
    """Whether ``node`` is an extent the host can evaluate from the call's arguments."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.Attribute):
        return node.attr == "size" and isinstance(node.value, ast.Name)
    if isinstance(node, ast.Subscript):
        v = node.value
        return (isinstance(v, ast.Attribute) and v.attr == "shape" and isinstance(v.value, ast.Name)
                and isinstance(node.slice, ast.Constant) and type(node.slice.value) is int)
    if isinstance(node, ast.Call):
        return (isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1
                and not node.keywords and isinstance(node.args[0], ast.Name))
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, _ARITH) and _plain_extent(node.left) and _plain_extent(node.right)
    return False


def _work_item(fb: FunctionBuilder, node, name):
    """d for a call ``gpu.<name>(d)`` with a constant d, else None."""
    if not isinstance(node, ast.Call):
        return None
    b = fb.builtin_of(fb.resolve_callee(node.func))
    if b is None or b.name != f"gpu.{name}":
        return None
    if not node.args:
        return 0
    d = node.args[0]
    return d.value if isinstance(d, ast.Constant) and d.value in (0, 1, 2) else None


def _global_id_dim(fb: FunctionBuilder, node):
    """d for ``gpu.get_global_id(d)``, or for CUDA's spelling of it that Numba and CuPy users port,
    ``gpu.get_group_id(d) * gpu.get_local_size(d) + gpu.get_local_id(d)`` (either order); else None."""
    d = _work_item(fb, node, "get_global_id")
    if d is not None or not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return d
    for prod, lid in ((node.left, node.right), (node.right, node.left)):
        if isinstance(prod, ast.BinOp) and isinstance(prod.op, ast.Mult):
            d = _work_item(fb, lid, "get_local_id")
            for g, size in ((prod.left, prod.right), (prod.right, prod.left)):
                if d is not None and _work_item(fb, g, "get_group_id") == d == _work_item(fb, size, "get_local_size"):
                    return d
    return None


def _conjuncts(test):
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        for v in test.values:
            yield from _conjuncts(v)
    else:
        yield test


def _exits(body) -> bool:
    return len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is None


def find_guards(fb: FunctionBuilder, body, src, argnames) -> list:
    """``[[d, plan], ...]``: the extent each guard ``if id < E`` / ``if id >= E: return`` of the
    global id of dimension d names, as a one-dimension domain plan of ``src``."""
    from ._entry import domain_setup_or_none
    counts = fb._scan_assigned(body)
    ids = {}                              # local name -> dimension, bound once to gpu.get_global_id(d)
    for stmt in body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and counts.get(stmt.targets[0].id) == 1):
            d = _global_id_dim(fb, stmt.value)
            if d is not None:
                ids[stmt.targets[0].id] = d

    def dim_of(node):
        if isinstance(node, ast.Name) and node.id in ids:
            return ids[node.id]
        return _global_id_dim(fb, node)

    found: dict[int, dict] = {}
    for k, top in enumerate(body):
        for node in ast.walk(top):
            if not isinstance(node, ast.If):
                continue
            for c in _conjuncts(node.test) if not _exits(node.body) else [node.test]:
                if not (isinstance(c, ast.Compare) and len(c.ops) == 1):
                    continue
                left, op, right = c.left, c.ops[0], c.comparators[0]
                below = isinstance(op, ast.Lt) if not _exits(node.body) else isinstance(op, ast.GtE)
                above = isinstance(op, ast.Gt) if not _exits(node.body) else isinstance(op, ast.LtE)
                if below and dim_of(left) is not None:
                    d, extent = dim_of(left), right
                elif above and dim_of(right) is not None:
                    d, extent = dim_of(right), left
                else:
                    continue
                if d in found or not _plain_extent(extent) or _mentions(extent, ids):
                    continue
                setup = domain_setup_or_none(fb, body[:k], [render(DomainDim("int", [extent]))], argnames)
                if setup is not None:
                    found[d] = plan_of(src, setup, [DomainDim("int", [extent])])
    return [[d, plan] for d, plan in sorted(found.items())]


def _mentions(node, names) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))
