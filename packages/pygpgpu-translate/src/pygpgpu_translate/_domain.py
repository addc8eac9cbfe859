"""The host-side domain function (how many work items a call launches), described by data.

A kernel's iteration domain is computed on the host from the call's arguments: ``range(n)``
needs ``n = x.shape[0]`` evaluated, ``np.ndindex(img.shape)`` needs ``img.shape``. The
translation records *which* parts of the kernel's own source do that, never source text:

- ``setup``: indices of the top-level statements (plain ``name = ...`` assignments) the sizes need;
- ``dims``: per dimension ``[form, [node ids], k]`` with ``form`` one of :data:`FORMS`.

A node id is a position in ``ast.walk`` order over a fresh parse of the kernel's source (the
disk-cache key holds that source, so the ids mean the same nodes in a later process). The
function is rebuilt from those nodes of the kernel the user is calling, inside fixed wrappers,
so a disk-cache entry holds no code: a damaged or planted entry can at worst name other
statements or expressions of the same kernel, and anything that does not validate is
reported as ``ValueError`` (a cache miss: the kernel is translated again).
"""
from __future__ import annotations

import ast
import copy
import textwrap
import types
from typing import Any

import numpy as np

from ._source import function_source, parameter_names, parse

__all__ = ["FORMS", "DomainDim", "render", "render_plan", "plan_of", "build_function", "validate"]

# form -> (how many expression nodes, whether it takes an axis k)
FORMS = {
    "dim": (1, True),       # _pyg_dim(array, k): array.shape[k]
    "item": (1, True),      # _pyg_item(shape tuple, k)
    "int": (1, False),      # int(expr)
    "range": (None, False),  # len(range(a[, b[, c]]))
}


class DomainDim:
    """One dimension of the domain while the kernel is translated (AST nodes, not ids)."""

    __slots__ = ("form", "nodes", "k")

    def __init__(self, form: str, nodes: list, k: int = 0):
        self.form = form
        self.nodes = list(nodes)
        self.k = k


def _pyg_dim(x, k):
    return int(x.shape[k])


def _pyg_item(shape, k):
    return int(tuple(shape)[k])


def _pyg_len(x):
    if type(x) is range:               # len(range(x.shape[0])): the usual domain, checked first
        return len(x)
    shape = getattr(x, "shape", None)
    if shape is not None and not isinstance(x, np.ndarray):
        return int(shape[0])
    return len(x)


_HOST_HELPERS = {"_pyg_dim": _pyg_dim, "_pyg_item": _pyg_item, "len": _pyg_len}


def _wrap(form: str, exprs: list, k: int) -> ast.expr:
    def call(name, args):
        return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=[])

    if form == "dim":
        return call("_pyg_dim", [exprs[0], ast.Constant(k)])
    if form == "item":
        return call("_pyg_item", [exprs[0], ast.Constant(k)])
    if form == "int":
        return call("int", [exprs[0]])
    return call("len", [call("range", list(exprs))])


def render(dim: DomainDim) -> str:
    """The host expression of one dimension as text (messages, name analysis, ``inspect``)."""
    return ast.unparse(_wrap(dim.form, [copy.deepcopy(n) for n in dim.nodes], dim.k))


# ---- node ids --------------------------------------------------------------------------------
_fresh: dict = {}


def _fresh_nodes(src) -> "tuple[ast.FunctionDef | ast.AsyncFunctionDef, list]":
    """The kernel's definition parsed afresh, and its nodes in ``ast.walk`` order."""
    hit = _fresh.get(src.digest)
    if hit is None:
        fdef = parse(textwrap.dedent(src.text)).body[0]
        assert isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)), "function_source only holds defs"
        hit = (fdef, list(ast.walk(fdef)))
        if len(_fresh) > 256:
            _fresh.clear()
        _fresh[src.digest] = hit
    return hit


def _position(node, line_shift: int) -> tuple:
    return (type(node).__name__, node.lineno - line_shift, node.col_offset,
            node.end_lineno - line_shift, node.end_col_offset)


def plan_of(src, setup: list, dims: list) -> dict:
    """The data form of a domain: ``setup`` statements and ``dims`` (DomainDim) of ``src``'s tree."""
    fdef, nodes = _fresh_nodes(src)
    shift = src.tree.lineno - fdef.lineno          # the translator's tree has file line numbers
    ids: dict[tuple, int] = {}
    for i, node in enumerate(nodes):
        if hasattr(node, "end_col_offset") and hasattr(node, "lineno"):
            ids.setdefault(_position(node, 0), i)

    def id_of(node) -> int:
        return ids[_position(node, shift)]

    return {"setup": [id_of(s) for s in setup],
            "dims": [[d.form, [id_of(n) for n in d.nodes], d.k] for d in dims]}


def _descendants(fdef) -> set:
    """Ids of nodes inside the kernel's body (not its decorators, arguments or annotations)."""
    inside: set[int] = set()
    for stmt in fdef.body:
        inside.update(id(n) for n in ast.walk(stmt))
    return inside


def validate(plan, src) -> "tuple[list, list]":
    """The statements and wrapped expressions ``plan`` names in ``src``; ValueError unless it
    is well formed and names only suitable nodes of the kernel's body."""
    if not isinstance(plan, dict) or set(plan) != {"setup", "dims"}:
        raise ValueError("domain plan has the wrong fields")
    setup, dims = plan["setup"], plan["dims"]
    if not isinstance(setup, list) or not isinstance(dims, list) or not 1 <= len(dims) <= 3:
        raise ValueError("domain plan has fields of the wrong type")
    fdef, nodes = _fresh_nodes(src)
    body = _descendants(fdef)

    def node(i, kind):
        if type(i) is not int or not 0 <= i < len(nodes):
            raise ValueError(f"domain plan names no node ({i!r})")
        n = nodes[i]
        if not isinstance(n, kind) or id(n) not in body:
            raise ValueError(f"domain plan node {i} is not a {kind.__name__} of the kernel's body")
        return n

    stmts = []
    for i in setup:
        s = node(i, ast.Assign)
        if not any(s is top for top in fdef.body):
            raise ValueError("a domain setup statement is not a top-level statement of the kernel")
        if not all(isinstance(t, (ast.Name, ast.Tuple, ast.Store)) for t in ast.walk(s.targets[0])
                   if not isinstance(t, ast.expr_context)):
            raise ValueError("a domain setup statement assigns to something other than names")
        stmts.append(copy.deepcopy(s))
    exprs = []
    for item in dims:
        if not (isinstance(item, list) and len(item) == 3 and item[0] in FORMS and isinstance(item[1], list)
                and type(item[2]) is int and 0 <= item[2] < 3):
            raise ValueError(f"bad domain dimension {item!r}")
        form, ids, k = item
        count, _axis = FORMS[form]
        if not (len(ids) == count if count is not None else 1 <= len(ids) <= 3):
            raise ValueError(f"domain dimension {item!r} has the wrong number of expressions")
        exprs.append(_wrap(form, [copy.deepcopy(node(i, ast.expr)) for i in ids], k))
    return stmts, exprs


def render_plan(plan, func) -> str:
    """The extents ``plan`` names in ``func``'s source as text, as written (messages)."""
    _stmts, exprs = validate(plan, function_source(func))
    texts = []
    for e in exprs:            # the wrappers of _wrap, undone: _pyg_dim(x, k) reads x.shape[k]
        name = e.func.id if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) else ""
        if name == "int":
            texts.append(ast.unparse(e.args[0]))
        elif name == "_pyg_dim":
            texts.append(f"{ast.unparse(e.args[0])}.shape[{ast.unparse(e.args[1])}]")
        elif name == "_pyg_item":
            texts.append(f"{ast.unparse(e.args[0])}[{ast.unparse(e.args[1])}]")
        elif name == "len":
            texts.append(ast.unparse(e.args[0]))
        else:
            texts.append(ast.unparse(e))
    return ", ".join(texts)


def build_function(plan, func):
    """The host function ``(*kernel params) -> tuple of extents`` for ``plan`` (None: no domain),
    made from the nodes of ``func``'s own source that the plan names (see :func:`validate`)."""
    if not plan:
        return None
    src = function_source(func)
    stmts, exprs = validate(plan, src)
    fdef = _fresh_nodes(src)[0]
    params = [ast.arg(arg=name) for name in parameter_names(fdef.args)]
    body = stmts + [ast.Return(ast.Tuple(elts=exprs, ctx=ast.Load()))]
    no_args: dict[str, Any] = dict(posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    fields: dict[str, Any] = dict(name="_pyg_domain", args=ast.arguments(args=params, **no_args), body=body,
                                  decorator_list=[], returns=None, type_comment=None)
    if "type_params" in ast.FunctionDef._fields:       # Python 3.12+
        fields["type_params"] = []
    fn = ast.FunctionDef(**fields)
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    if cells:
        # the sizes may read names of the kernel's enclosing function (range(N), data.shape[0] of a
        # captured array): define the function where those names are locals of a maker, then give
        # it the kernel's own cells, so each call reads what they hold then
        maker: dict[str, Any] = dict(fields, name="_pyg_make", args=ast.arguments(args=[], **no_args),
                                     body=[ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store()) for n in cells],
                                                      value=ast.Constant(None)),
                                           fn, ast.Return(ast.Name(id="_pyg_domain", ctx=ast.Load()))])
        fn = ast.FunctionDef(**maker)
    module = ast.fix_missing_locations(ast.Module(body=[fn], type_ignores=[]))
    g = dict(getattr(func, "__globals__", {}))
    g.update(_HOST_HELPERS)
    ns: dict = {}
    exec(compile(module, f"<pygpgpu domain of {func.__qualname__}>", "exec"), g, ns)
    if not cells:
        return ns["_pyg_domain"]
    inner = ns["_pyg_make"]()
    code = inner.__code__
    return types.FunctionType(code, g, "_pyg_domain", None, tuple(cells[n] for n in code.co_freevars))
