"""Values a kernel reads through an object's attributes (``P.scale``, ``P.inner.scale``,
``Params.scale``, ``cfg.P.scale``) and its helpers' default values: compiled in as constants, so
each read is recorded and a changed value translates again, in this process and the next.

- In the process: the translation keeps an :class:`AttrRef` per attribute read, a namespace the
  warm-call check (``_state.refs_current``) asks for the attribute again; a helper's defaults are
  a :class:`DefaultsRef`. Rebinding ``P.scale`` (or the class attribute it falls back to) is a
  new object, so the next call translates again. A number (or a tuple of numbers) that is equal
  to the one compiled in, bit for bit and of the same type, counts as the same: a property that
  computes ``2.0`` on every read does not translate on every call.
- Across processes: each read is a dependency of the generated-source disk entry, named by its
  path from a module global (``("mod", "P.inner.scale")``) or from a captured name of the kernel
  (``("<closure>", "P.scale")``), stored with a fingerprint of its value and checked before the
  entry is used (:func:`resolve`). A read with no such path (through a helper's captured object)
  keeps the translation out of the disk cache (never a stale entry).
- An attribute that yields a different value on each read (a ``__getattr__`` making new objects)
  cannot be compiled in: a clear error says to pass it as an argument.
"""
from __future__ import annotations

import ast
import types
from typing import TYPE_CHECKING

import numpy as np

from ._bindings import vector_class_info

if TYPE_CHECKING:
    from ._bindings import ObjectRef
    from ._builder import FunctionBuilder

__all__ = ["CLOSURE_ROOT", "AttrRef", "DefaultsRef", "same_value", "default_refs", "child_path", "resolve", "defaults_of",
           "attribute_value"]

CLOSURE_ROOT = "<closure>"        # a path's root that is a captured name of the kernel function

def same_value(a, b) -> bool:
    """Whether ``a`` and ``b`` compile to the same constant: the same object, or numbers of the same
    type and bits (``-0.0`` is not ``0.0``; NaN is NaN), or tuples of such."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, types.MethodType):     # Cls.method, obj.method: a new bound method per read
        return a.__func__ is b.__func__ and a.__self__ is b.__self__
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, (bool, int)):
        return a == b
    if isinstance(a, (float, complex)):
        return repr(a) == repr(b)
    if isinstance(a, np.generic) and a.dtype.kind in "biufc":
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if vector_class_info(type(a)) is not None:    # float3(...) made by a property on each read
        return np.asarray(a).tobytes() == np.asarray(b).tobytes()
    return False


class AttrRef:
    """``obj`` seen as a one-attribute namespace for the warm-call check: ``get(name)`` is the
    attribute now, or the value compiled in while the two are :func:`same_value`."""

    __slots__ = ("obj", "name", "value", "path")

    def __init__(self, obj, name: str, value, path: "tuple[str, str] | None"):
        self.obj, self.name, self.value, self.path = obj, name, value, path

    def get(self, key, default=None):
        try:
            cur = getattr(self.obj, key)
        except Exception:             # deleted, or a property that now raises: not the compiled value
            return default
        if key == self.name and cur is not self.value and same_value(cur, self.value):
            return self.value
        return cur


def defaults_of(func) -> dict:
    """A function's default values by parameter name (positional, then keyword-only)."""
    code = func.__code__
    positional = code.co_varnames[:code.co_argcount]
    values = func.__defaults__ or ()
    out = dict(zip(positional[len(positional) - len(values):], values))
    out.update(func.__kwdefaults__ or {})
    return out


class DefaultsRef:
    """A helper's default values as a namespace: ``h.__defaults__ = (5.0,)`` after a translation
    compiled in 2.0 is seen by the warm-call check."""

    __slots__ = ("func", "name", "value")

    def __init__(self, func, name: str, value):
        self.func, self.name, self.value = func, name, value

    def get(self, key, default=None):
        cur = defaults_of(self.func).get(key, default)
        if key == self.name and cur is not self.value and same_value(cur, self.value):
            return self.value
        return cur


def default_refs(value) -> list:
    """The :class:`DefaultsRef` references of a helper function's defaults (none for other values)."""
    if not isinstance(value, types.FunctionType):
        return []
    return [(DefaultsRef(value, n, v), n, v) for n, v in defaults_of(value).items()]


def child_path(path: "tuple[str, str] | None", attr: str) -> "tuple[str, str] | None":
    """The path of attribute ``attr`` of the object at ``path`` (None: not reachable from a root)."""
    return None if path is None else (path[0], f"{path[1]}.{attr}")


def attribute_value(fb: FunctionBuilder, base: ObjectRef, attr: str, node) -> tuple[object, tuple[str, str] | None]:
    """``(value, path)`` of attribute ``attr`` of the object ``base`` (an instance or a class),
    recorded so that a changed value translates again; ``fb``: the function builder reading it,
    its explicit, typed lowering context."""
    obj = base.obj
    value = getattr(obj, attr)
    if not same_value(getattr(obj, attr), value):
        what = ast.unparse(node) if isinstance(node, ast.AST) else attr
        raise fb.err(node, f"{what} gives a different value on each read, and kernels compile the values they read "
                     "from objects in as constants",
                     "read it on the host and pass it to the kernel as an argument")
    path = child_path(base.path, attr)
    fb.prog.global_refs[("attr", id(obj), attr)] = (AttrRef(obj, attr, value, path), attr, value)
    return value, path


def resolve(root: str, dotted: str, func) -> "tuple[object, str, object]":
    """``(namespace, name, value)`` of the stored dependency ``root``/``dotted`` as it is now, for
    the warm-call check of a disk hit; raises LookupError when it cannot be read."""
    import sys
    parts = dotted.split(".")
    if not all(p.isidentifier() for p in parts):
        raise LookupError(dotted)
    if root == CLOSURE_ROOT:
        from ._captures import closure_cells
        cells = dict(closure_cells(func))
        if parts[0] not in cells:
            raise LookupError(dotted)
        try:
            value = cells[parts[0]].cell_contents
        except ValueError:
            raise LookupError(dotted) from None
        ns: object = None
    else:
        mod = sys.modules.get(root)
        if mod is None or parts[0] not in mod.__dict__:
            raise LookupError(dotted)
        ns = mod.__dict__
        value = mod.__dict__[parts[0]]
    name = parts[0]
    for attr in parts[1:]:
        obj = value
        try:
            value = getattr(obj, attr)
        except Exception:          # gone, or a property that raises now: the entry is a miss
            raise LookupError(dotted) from None
        ns, name = AttrRef(obj, attr, value, (root, dotted)), attr
    return ns, name, value
