"""The syntax gate without a device: a kernel and the helpers it calls, checked before any device
problem is reported.

A kernel with unsupported syntax must show the SyntaxError at the user's line even when no device
can be found (a bad ``PYGPGPU_BACKEND``, no driver): that error does not depend on the device,
and fixing the device first would only lead to it. The translator runs the same gate
(``_frontend.check_syntax``) on every function it reaches; this walk finds the helpers the way
the builder resolves callees (module globals, ``module.attr``, ``Class.static``), without types.
"""
from __future__ import annotations

import ast
import builtins
import collections
import types

from pygpgpu_core.errors import GPGPUError

from ._captures import closure_cells
from ._frontend import check_syntax
from ._source import function_source

__all__ = ["check_syntax_deep"]


def check_syntax_deep(func) -> None:
    """Raise the gate's SyntaxError for ``func`` or any helper it calls, directly or not.

    Anything this walk cannot decide (a callee without source, a name it cannot resolve) is
    left to the translator, which reports it with the types in hand."""
    seen: set = set()
    todo = [func]
    while todo:
        fn = todo.pop()
        if fn.__code__ in seen:
            continue
        seen.add(fn.__code__)
        try:
            src = function_source(fn)
        except GPGPUError:
            continue
        check_syntax(src)
        todo.extend(_helpers_called(src.tree, fn))


def _helpers_called(tree: ast.FunctionDef | ast.AsyncFunctionDef, fn) -> list:
    local = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
    local |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    found = []
    names = fn.__globals__
    cells = closure_cells(fn)
    if cells:          # helpers read from the enclosing function (_captures)
        captured = {}
        for name, cell in cells:
            try:
                captured[name] = cell.cell_contents
            except ValueError:
                pass
        names = collections.ChainMap(captured, fn.__globals__)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            obj = _resolve(node.func, names, local)
            helper = _as_helper(obj)
            if helper is not None:
                found.append(helper)
    return found


_UNRESOLVED = object()


def _resolve(node: ast.AST, globals_: dict, local: set):
    if isinstance(node, ast.Name):
        if node.id in local:
            return _UNRESOLVED
        if node.id in globals_:
            return globals_[node.id]
        return getattr(builtins, node.id, _UNRESOLVED)
    if isinstance(node, ast.Attribute):
        base = _resolve(node.value, globals_, local)
        if isinstance(base, (types.ModuleType, type)):      # module.helper, Class.static_helper
            return getattr(base, node.attr, _UNRESOLVED)
    return _UNRESOLVED


def _as_helper(obj):
    """The Python function a call runs as a device helper, or None (builtins, gpu.*, classes...)."""
    from ._builtins import lookup_object
    from ._kernel import KernelFunction

    if isinstance(obj, KernelFunction):      # a kernel called from a kernel runs as a helper
        obj = obj.py_func
    if isinstance(obj, staticmethod):
        obj = obj.__func__
    if not isinstance(obj, types.FunctionType) or (getattr(obj, "__module__", None) or "").startswith("numpy"):
        return None          # numpy's own Python functions (np.full, np.ones: private arrays) are no helpers
    try:
        if lookup_object(obj) is not None:      # math/np/gpu/funcs functions the translator knows
            return None
    except TypeError:
        return None
    return obj
