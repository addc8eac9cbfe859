"""Names a kernel or helper reads from its enclosing function (closures), and the compile-time
values beyond plain numbers that globals and captured names may hold (vectors, tuples).

- A captured int, float, bool, vector, tuple of those, module, function or kernel is compiled
  in exactly like a module-level constant: the translation keeps a reference to the cell
  (:class:`CellRef`), and a call after the enclosing function rebinds the name translates again.
- A captured numpy or ``pygpgpu.numpy`` array becomes a hidden argument of the kernel, named by
  the captured name, as ``self.attr`` arrays are: each call passes what the cell holds then, and
  its dtype and rank are part of the signature. Helpers cannot take captured arrays (a hidden
  argument would have to pass through every call on the way); they say so.
- A module-level array a kernel reads or writes by name (a Taichi-style field, ``pixels[i] = ...``)
  rides along the same way (:func:`global_array_cells`): each call passes what the module holds
  then, and writes reach it as they reach any numpy argument.
- Writing to a captured name (``nonlocal``) is a SyntaxError at the write.

Vectors are mutable on the host (``v.x = 1.0``), so a vector constant's reference also compares
its components (:func:`live_refs`): changing one in place is a new specialization too.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import numpy as np

from . import _ir as ir
from ._attr_refs import CLOSURE_ROOT
from ._bindings import TupleRef, vector_class_info
from ._source import syntax_error
from ._types import Scalar, Vector

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["CellRef", "GlobalCell", "closure_cells", "global_array_cells", "kernel_cells", "captured_arrays", "captured_tokens", "captured_value", "constant_value",
           "live_refs", "closure_refs", "closure_fingerprint", "check_captured_writes", "is_array_value"]

_EMPTY = object()


class CellRef:
    """A closure cell seen as the one-name namespace the warm-call check reads (``refs_current``
    calls ``.get(name, default)`` on the dict a constant came from)."""

    __slots__ = ("cell", "name")

    def __init__(self, cell, name: str):
        self.cell = cell
        self.name = name

    def get(self, key, default=None):
        if key != self.name:
            return default
        try:
            return self.cell.cell_contents
        except ValueError:        # the enclosing function has not assigned it (or deleted it)
            return default


def closure_cells(func) -> tuple:
    """``((name, cell), ...)`` for the names ``func`` reads from enclosing functions."""
    code = getattr(func, "__code__", None)
    cells = getattr(func, "__closure__", None)
    if code is None or not cells:
        return ()
    return tuple(zip(code.co_freevars, cells))


class GlobalCell:
    """A module-level name seen as a closure cell: ``cell_contents`` is what the module holds now
    (an unbound name reads as an empty cell does, with ValueError)."""

    __slots__ = ("namespace", "name")

    def __init__(self, namespace: dict, name: str):
        self.namespace = namespace
        self.name = name

    @property
    def cell_contents(self):
        try:
            return self.namespace[self.name]
        except KeyError:
            raise ValueError(f"module-level name {self.name!r} is not bound") from None


def global_array_cells(func) -> tuple:
    """``((name, GlobalCell), ...)`` for the module-level arrays ``func`` reads or writes by name
    (not its parameters or locals), in the order they first appear. Which names hold arrays is
    decided when the kernel is defined; the arrays themselves are read at each call."""
    g = getattr(func, "__globals__", None)
    code = getattr(func, "__code__", None)
    if g is None or code is None or not any(is_array_value(g.get(n)) for n in code.co_names):
        return ()                    # the common case, without parsing the source
    from ._source import function_source
    try:
        tree = function_source(func).tree
    except Exception:                # no source: the translation says so when it runs
        return ()
    local = {a.arg for a in ast.walk(tree.args) if isinstance(a, ast.arg)}
    local |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names = dict.fromkeys(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in local)
    return tuple((n, GlobalCell(g, n)) for n in names if is_array_value(g.get(n)))


def kernel_cells(func) -> tuple:
    """The names a kernel takes from outside its parameters as hidden arguments or constants:
    its closure cells, then the module-level arrays it uses."""
    return closure_cells(func) + global_array_cells(func)


def is_array_value(value) -> bool:
    """A numpy array or a device array (``pygpgpu.numpy``, or anything with a buffer, shape and dtype)."""
    if isinstance(value, np.ndarray):
        return True
    return hasattr(value, "buffer") and hasattr(value, "shape") and hasattr(value, "dtype")


def captured_arrays(cells) -> list:
    """One value per cell, in order: the array it holds, else None (compiled in as a constant)."""
    out = []
    for _name, cell in cells:
        try:
            v = cell.cell_contents
        except ValueError:
            v = None
        out.append(v if is_array_value(v) else None)
    return out


def captured_tokens(cells, values, arg_token) -> "tuple[list, bool] | None":
    """The signature tokens of the captured arrays (None for the other cells), and whether one is
    past 32-bit indexing; None when no cell holds an array (the signature is the arguments')."""
    if all(v is None for v in values):
        return None
    tokens: list = []
    big = False
    for (name, _cell), v in zip(cells, values):
        if v is None:
            tokens.append(None)
            continue
        tok = arg_token(v, name)
        tokens.append(tok)
        if tok[0] in ("a", "d") and v.size > 2**31 - 1:
            big = True
    return tokens, big


def captured_value(fb: FunctionBuilder, name: str, node):
    """What the captured ``name`` of ``fb``'s function is in the kernel: a constant (recorded so a
    rebinding re-translates), a compile-time object, or a clear error."""
    code = fb.func.__code__
    cell = fb.func.__closure__[code.co_freevars.index(name)]
    where = f"{fb.src.name}()"
    try:
        value = cell.cell_contents
    except ValueError:
        raise fb.err(node, f"{name!r}, a name of the function enclosing {where}, has no value yet",
                     f"assign {name} in the enclosing function before calling the kernel") from None
    if is_array_value(value):
        # a kernel's captured arrays are parameters (KernelFunction passes them): only helpers get here
        raise fb.err(node, f"helper {where} reads the array {name!r} from its enclosing function; only a kernel "
                     "takes captured arrays (as hidden arguments)",
                     f"pass {name} to the helper as an argument")
    fb.prog.global_refs[("cell", id(cell))] = (CellRef(cell, name), name, value)
    # a kernel's own cells are found again from the kernel; a helper's are not (_attr_refs)
    return fb.object_value(value, node, name, (CLOSURE_ROOT, name) if fb.is_kernel else None)


def constant_value(fb: FunctionBuilder, value, node, what):
    """A vector or a tuple of constants as IR (a vector of constants, a TupleRef), else None."""
    info = vector_class_info(type(value))
    if info is not None:
        vt = Vector(Scalar(info[0]), info[1])
        comps = np.asarray(value).tolist()
        kind = vt.base.kind
        fb.prog.note_type(vt)
        return ir.VecCtor([ir.Const(float(c) if kind == "f" else int(c), vt.base) for c in comps], vt)
    if isinstance(value, tuple):
        items = []
        for k, item in enumerate(value):
            if not (isinstance(item, (bool, int, float, np.generic, tuple)) or vector_class_info(type(item))):
                raise fb.err(node, f"{what}[{k}] is a {type(item).__name__}; a tuple a kernel reads holds numbers, "
                             "vectors or tuples of them", f"pass {what} as arguments or a numpy array instead")
            items.append(fb.object_value(item, node, f"{what}[{k}]"))
        return TupleRef(items)
    return None


class _VectorRef:
    """A vector constant's reference: current while the name holds the same object with the same
    components (a host vector changes in place with ``v.x = ...``)."""

    __slots__ = ("source", "name", "value", "bits")

    def __init__(self, source, name, value):
        self.source, self.name, self.value = source, name, value
        self.bits = np.asarray(value).tobytes()

    def get(self, key, default=None):
        cur = self.source.get(key, default)
        if key == self.name and cur is self.value and np.asarray(cur).tobytes() != self.bits:
            return default
        return cur


def live_refs(entries) -> list:
    """``(namespace, name, value)`` references for the warm-call check, vectors compared by value too."""
    out = []
    for g, name, value in entries:
        if vector_class_info(type(value)) is not None:
            g = _VectorRef(g, name, value)
        out.append((g, name, value))
    return out


def closure_refs(func) -> list:
    """References to the cells of ``func`` that hold constants (a disk-cache hit has no builder
    to record them)."""
    out = []
    for name, cell in closure_cells(func):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if not is_array_value(value):
            out.append((CellRef(cell, name), name, value))
    return out


def closure_fingerprint(func, fingerprint, depth: int = 0) -> str:
    """The captured values of ``func`` as text for the generated-source disk key (arrays by kind
    only: they are arguments, their types are in the signature)."""
    parts = []
    for name, cell in closure_cells(func):
        try:
            value = cell.cell_contents
        except ValueError:
            parts.append(f"{name}=<empty>")
            continue
        if is_array_value(value):
            parts.append(f"{name}=<array>")
        elif depth < 8 and getattr(value, "__closure__", None):
            parts.append(f"{name}={fingerprint(value)}[{closure_fingerprint(value, fingerprint, depth + 1)}]")
        else:
            parts.append(f"{name}={fingerprint(value)}")
    return ";".join(parts)


def check_captured_writes(src) -> None:
    """A SyntaxError at the first assignment to a name declared ``nonlocal`` (a captured name)."""
    declared = [n for n in ast.walk(src.tree) if isinstance(n, ast.Nonlocal)]
    if not declared:
        return
    names = {name for n in declared for name in n.names}
    writes = [n for n in ast.walk(src.tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
              and n.id in names]
    candidates: list[ast.Name | ast.Nonlocal] = [*writes] if writes else [*declared]
    first = min(candidates, key=lambda n: (n.lineno, n.col_offset))
    name = first.id if isinstance(first, ast.Name) else first.names[0]
    raise syntax_error(src, first, f"cannot assign to {name!r}, a name of the enclosing function: kernels read "
                       "captured names as constants",
                       "assign the new value to a local name, or write the result into an array")
