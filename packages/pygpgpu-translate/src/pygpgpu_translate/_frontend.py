"""The syntax gate: a kernel or helper body may only contain the constructs listed here.

Everything else is rejected with a SyntaxError pointing at the construct, saying what is
unsupported and what to write instead. Semantic restrictions (recursion, closures, kernel
return values, dynamic shape indexing) are checked by the builder where the facts are known.
"""
from __future__ import annotations

import ast

from ._print import is_print_call, print_gate_children
from ._captures import check_captured_writes
from ._source import FunctionSource, syntax_error

__all__ = ["check_syntax", "ALLOWED_NODES", "REJECTED"]

ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Module, ast.FunctionDef, ast.arguments, ast.arg, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr,
    ast.If, ast.While, ast.For, ast.Break, ast.Continue, ast.Return, ast.Pass,
    ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call, ast.keyword, ast.Subscript,
    ast.Attribute, ast.Name, ast.Constant, ast.Tuple, ast.Load, ast.Store,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift,
    ast.BitOr, ast.BitXor, ast.BitAnd, ast.UAdd, ast.USub, ast.Not, ast.Invert, ast.And, ast.Or,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)
if hasattr(ast, "Index"):  # Python < 3.9 compatibility node, harmless
    ALLOWED_NODES = ALLOWED_NODES + (ast.Index,)

_LOOP_HINT = "use a for loop over range(...) and write into an output array"
REJECTED = {
    ast.List: ("list literals are not supported in kernels", "pass a numpy array argument, or use a vector type (float4(...))"),
    ast.Dict: ("dicts are not supported in kernels", "pass the values as separate scalar or array arguments"),
    ast.Set: ("sets are not supported in kernels", "use an array argument"),
    ast.ListComp: ("list comprehensions are not supported in kernels", _LOOP_HINT),
    ast.DictComp: ("dict comprehensions are not supported in kernels", _LOOP_HINT),
    ast.SetComp: ("set comprehensions are not supported in kernels", _LOOP_HINT),
    ast.GeneratorExp: ("generator expressions are not supported in kernels", _LOOP_HINT),
    ast.Lambda: ("lambda is not supported in kernels", "define a plain module-level helper function with def"),
    ast.Try: ("try/except is not supported in kernels", "device code has no exceptions; check conditions with if"),
    ast.Raise: ("raise is not supported in kernels", "device code has no exceptions; write an error flag into an output array"),
    ast.Assert: ("assert is not supported in kernels", "check on the host before the call, or write a flag into an output array"),
    ast.With: ("with is not supported in kernels", "remove the with block; device code has no context managers"),
    ast.AsyncWith: ("async with is not supported in kernels", "remove it"),
    ast.AsyncFor: ("async for is not supported in kernels", "use a plain for loop over range(...)"),
    ast.Await: ("await is not supported in kernels", "kernels are synchronous device code"),
    ast.AsyncFunctionDef: ("async functions are not supported in kernels", "use a plain def"),
    ast.Global: ("global statements are not supported in kernels", "pass the value as an argument; module constants can be read without 'global'"),
    ast.Nonlocal: ("nonlocal is not supported in kernels", "kernels read names of the enclosing function as constants; assign a local name"),
    ast.Yield: ("yield is not supported in kernels", "write results into an output array"),
    ast.YieldFrom: ("yield from is not supported in kernels", "write results into an output array"),
    ast.Import: ("import inside a kernel is not supported", "import at module level; the kernel can use the module"),
    ast.ImportFrom: ("import inside a kernel is not supported", "import at module level; the kernel can use the names"),
    ast.Starred: ("starred expressions (*args) are not supported in kernels", "pass the values one by one"),
    ast.Slice: ("slices are not supported in kernels", "index one element at a time inside a loop"),
    ast.Delete: ("del is not supported in kernels", "just stop using the variable"),
    ast.ClassDef: ("class definitions inside kernels are not supported", "define classes at module level"),
    ast.FunctionDef: ("nested functions (closures) are not supported in kernels", "move the function to module level; it becomes a device helper"),
    ast.NamedExpr: ("assignment expressions (:=) are not supported in kernels", "assign in a separate statement"),
    ast.JoinedStr: ("f-strings are not supported in kernels", "kernels cannot build strings; an f-string may be a print() argument"),
    ast.MatMult: ("the @ operator is not supported in kernels", "write the products out, or use funcs.dot on vectors"),
    ast.Is: ("'is' comparisons are not supported in kernels", "compare values with =="),
    ast.IsNot: ("'is not' comparisons are not supported in kernels", "compare values with !="),
    ast.In: ("'in' tests are not supported in kernels", "compare explicitly, e.g. a == 1 or a == 2"),
    ast.NotIn: ("'not in' tests are not supported in kernels", "compare explicitly, e.g. a != 1 and a != 2"),
}
for _name, _msg in (("Match", ("match statements are not supported in kernels", "use if/elif/else")),
                    ("TryStar", ("try/except* is not supported in kernels", "check conditions with if")),
                    ("TypeAlias", ("type aliases are not supported in kernels", "define them at module level"))):
    if hasattr(ast, _name):
        REJECTED[getattr(ast, _name)] = _msg


def _constant_problem(value):
    if isinstance(value, str):
        return ("strings are not supported in kernels",
                "kernels work on numbers; encode choices as int constants (print() takes string literals)")
    if isinstance(value, bytes):
        return "bytes are not supported in kernels", "pass a uint8 array instead"
    if value is None:
        return "None is not supported in kernels", "use a sentinel number (e.g. -1) or a bool flag"
    if value is Ellipsis:
        return "... (Ellipsis) is not supported in kernels", "index every dimension explicitly"
    return None


def check_syntax(src: FunctionSource) -> None:
    """Raise SyntaxError at the first construct outside the accepted list."""
    fdef = src.tree
    args = fdef.args
    if args.vararg or args.kwarg:
        node = args.vararg or args.kwarg
        raise syntax_error(src, node, "*args/**kwargs parameters are not supported in kernels",
                           "list every parameter explicitly")
    body = fdef.body
    check_captured_writes(src)               # nonlocal: reported at the write, before the walk
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        body = body[1:]                      # the docstring is allowed
    for stmt in body:
        _walk(src, stmt, stmt)


_FLOAT_WORDS = {"inf", "+inf", "-inf", "infinity", "-infinity", "nan"}


def _is_float_word(node) -> bool:
    """``float("inf")`` / ``float("nan")``: the one place a string literal is a number."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str) and node.args[0].value.strip().lower() in _FLOAT_WORDS)


def _walk(src, node, located):
    # depth first, in source order, with a stack rather than recursion: a sum of 1000 terms is a
    # 1000-deep tree
    stack = [(node, located)]
    while stack:
        node, located = stack.pop()
        if hasattr(node, "lineno"):
            located = node
        _check_node(src, node, located)
        if _is_float_word(node):
            continue
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, str)):
            stack.append((node.value, located))      # p[i]["mass"]: a record field (_records)
            continue
        if is_print_call(node):              # print's string literals and f-strings are its own (_print)
            stack.extend((child, located) for child in reversed(print_gate_children(node)))
            continue
        stack.extend((child, located) for child in reversed(_gated_children(node)))


def _gated_children(node) -> list:
    """The children the walk checks. Two forms pass with their parts checked instead: a list
    literal as a call's argument (``float2([x, y])``, as ports of ``ti.Vector([...])`` write; the
    callee decides what a list means) and a slice as a subscript's index (``x.shape[:2]``, a tuple's
    items; indexing an array with one is refused when it is lowered)."""
    children = list(ast.iter_child_nodes(node))
    if isinstance(node, ast.Call):
        return [grand for c in children
                for grand in (c.elts if isinstance(c, ast.List) and c in node.args else [c])]
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        return [node.value] + [p for p in (node.slice.lower, node.slice.upper, node.slice.step) if p is not None]
    return children


def _check_node(src, node, located):
    cls = type(node)
    if cls in REJECTED:
        msg, hint = REJECTED[cls]
        raise syntax_error(src, located, msg, hint)
    if cls is ast.Constant:
        problem = _constant_problem(node.value)
        if problem:
            raise syntax_error(src, node, *problem)
        return
    if cls in (ast.For, ast.While) and node.orelse:
        raise syntax_error(src, node.orelse[0], f"{cls.__name__.lower()}/else is not supported in kernels",
                           "use a flag variable set before break")
    if cls is ast.Call:
        for kw in node.keywords:
            if kw.arg is None:
                raise syntax_error(src, kw.value, "**kwargs in calls are not supported in kernels",
                                   "pass keyword arguments explicitly")
    if cls is ast.Assign and len(node.targets) > 1:
        raise syntax_error(src, node, "chained assignment (a = b = ...) is not supported in kernels",
                           "assign each name in its own statement")
    if cls is ast.AnnAssign and node.value is None:
        raise syntax_error(src, node, "a bare annotation without a value is not supported in kernels",
                           "assign a value: x: float = 0.0")
    if not isinstance(node, ALLOWED_NODES):
        raise syntax_error(src, located, f"{cls.__name__} is not supported in kernels",
                           "kernels accept assignments, arithmetic, if/while/for-range, calls to helpers and builtins")
