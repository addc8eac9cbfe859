"""The bounds-checked debug mode, translator side (``@kernel(debug=True)``, ``PYGPGPU_BOUNDS_CHECK=1``).

Every array subscript (loads, stores, atomics, vector rows; in the kernel and in helpers) gets a
device-side check of each index, after Python's negative-index wrap, against its dimension. The
first failing access records itself in a small error buffer, a hidden kernel argument that
every helper receives too, and is skipped (a load yields 0), so nothing is corrupted; the host
reads the buffer after the launch and raises IndexError (``_bounds_host``).

The check is lowered here into plain IR (a call to ``_pyg_bounds<ndim>`` guarding the access),
so the emitter only prints it. Kernels built without debug contain none of this.

Error buffer (int32 slots): 0 flag (claimed with an atomic compare-and-swap, so one access wins),
1 site id, 2 dimension, 3 ndim, 4-5 index (low, high 32 bits), then each extent as (low, high).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import _ir as ir
from ._types import BOOL, INT32, INT64, ArrayType

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["ERROR_NAME", "ERROR_SLOTS", "MAX_DIMS", "BoundsChecks"]

ERROR_NAME = "_pyg_err"
MAX_DIMS = 32                     # extents recorded per access (numpy allows 64 dims; kernels use few)
ERROR_SLOTS = 6 + 2 * MAX_DIMS
_ERROR_TYPE = ArrayType(INT32, 1)


class BoundsChecks:
    """The checks of one debug translation: the site table (site id -> where in the Python
    source) and the ``_pyg_bounds<ndim>`` functions its accesses call."""

    def __init__(self):
        self.error = ir.Var(ERROR_NAME, _ERROR_TYPE)
        self.ids: dict = {}               # (file, line, column, array, kind, function) -> site id
        self.sites: list = []             # site id -> [array, file, line, kind, function, source line]
        self.ndims: set = set()

    # ---- building (called by the function builder) ------------------------------------------------
    @staticmethod
    def full_width(fb: FunctionBuilder, i: ir.Expr, extent: ir.Expr, wrap: bool) -> ir.Expr:
        """Index ``i`` as an int64, after Python's negative wrap when ``wrap`` (``i + extent``),
        for the check: never narrowed first, so an int64 index of 2**32 + 2 fails rather than
        reading element 2. A uint64 index keeps its bits (2**63 and more look negative and fail;
        the site remembers that the dimension is unsigned, so the message shows its real value)."""
        if getattr(i.type, "name", "") == "uint64":
            return i
        w = fb.convert(i, INT64)
        if wrap:
            w = fb.materialize(w)
            w = ir.Ternary(ir.Bin("<", w, ir.Const(0, INT64), BOOL), ir.Bin("+", w, fb.convert(extent, INT64), INT64),
                           w, INT64)
        return w

    def check(self, fb: FunctionBuilder, arr: ir.ArrayRef, parts: list, node, kind: str):
        """``(parts, ok)``: the per-dimension indices made safe to repeat and the condition that
        they are all inside ``arr``'s extents (false: the access was recorded and must be skipped)."""
        return self.check_extents(fb, arr.root, parts, arr.shape, node, kind)

    def check_extents(self, fb: FunctionBuilder, name: str, parts: list, extents: list, node, kind: str):
        """:meth:`check` of indices ``parts`` against ``extents``, reported as array ``name``
        (also a record's subarray field: ``p[i].pos``). ``parts`` are :meth:`full_width` indices,
        returned materialized: the caller narrows them to the index type only for the access."""
        unsigned = [k for k, p in enumerate(parts) if getattr(p.type, "name", "") == "uint64"]
        parts = [fb.materialize(p) for p in parts]      # an index with side effects runs once
        line = getattr(node, "lineno", fb.src.tree.lineno)
        func = "" if fb.is_kernel else fb.src.name
        key = (fb.src.filename, line, getattr(node, "col_offset", 0), name, kind, func)
        site = self.ids.get(key)
        if site is None:
            site = self.ids[key] = len(self.sites)
            text = fb.src.lines[line - 1].strip() if 0 < line <= len(fb.src.lines) else ""
            self.sites.append([name, fb.src.filename, line, kind, func, text, unsigned])
        self.sites[site][6] = unsigned        # the last (final) pass's types
        n = len(parts)
        args = [self.error, ir.Const(site, INT32)]
        for p, extent in zip(parts, extents):
            args += [p if p.type == INT64 else ir.Cast(p, INT64), extent]
        return parts, ir.Call(f"_pyg_bounds{n}", args, BOOL)

    @staticmethod
    def load(ok, e: ir.Expr) -> ir.Expr:
        """``e`` (an element load or an atomic) when ``ok``, else a zero of its type."""
        if ok is None:
            return e
        return ir.Ternary(ok, e, ir.Const(0, e.type), e.type)

    @staticmethod
    def stores(ok, stores: list, line: int) -> list:
        """The stores of one subscript assignment, run only when ``ok``."""
        if ok is None:
            return stores
        return [ir.If(ok, stores, [], line)]

    # ---- finishing the translation --------------------------------------------------------------
    def finish(self, kernel: ir.Function, layout: list, helpers: list) -> None:
        """Give the kernel and every helper the error buffer as a last (hidden) parameter, pass
        it at every helper call, and mark it written (after the access analysis ran)."""
        for fn in [kernel] + helpers:
            fn.params.append(ir.Param(ERROR_NAME, _ERROR_TYPE, hidden=True))
            fn.access[ERROR_NAME] = {"r", "w"}
        layout.append(("errbuf", ERROR_NAME))
        done: set = set()
        self.ndims = set()          # the checks the final IR calls (provisional passes made others)
        for fn in [kernel] + helpers:
            _pass_error_buffer(fn.body, self.error, done, self.ndims)

    def source(self, d) -> str:
        """The C functions of the checks this translation uses, in dialect ``d``'s words."""
        return "\n".join(self._check_function(d, n) for n in sorted(self.ndims))

    @staticmethod
    def _check_function(d, n: int) -> str:
        i64, i32 = d.type_name(INT64), d.type_name(INT32)
        ptr = f"{d.global_ptr}{i32}*"
        params = ", ".join([f"{ptr} err", f"{i32} site"] + [f"{i64} i{k}, {i64} n{k}" for k in range(n)])
        claim = d.atomic_cas_global_int("err", "0", "1")
        lines = [f"{d.device_fn_prefix}bool _pyg_bounds{n}({params})", "{",
                 "    int dim = -1;", f"    {i64} i = 0;"]
        for k in reversed(range(n)):        # the first failing dimension is reported
            lines.append(f"    if (i{k} < 0 || i{k} >= n{k}) {{ dim = {k}; i = i{k}; }}")
        lines += ["    if (dim < 0) return true;",
                  f"    if ({claim} == 0) {{",
                  f"        err[1] = site; err[2] = dim; err[3] = {n};",
                  f"        err[4] = ({i32})i; err[5] = ({i32})(i >> 32);"]
        for k in range(min(n, MAX_DIMS)):
            lines.append(f"        err[{6 + 2 * k}] = ({i32})n{k}; err[{7 + 2 * k}] = ({i32})(n{k} >> 32);")
        lines += ["    }", "    return false;", "}", ""]
        return "\n".join(lines)


def _pass_error_buffer(node, error, done, ndims) -> None:
    """Append ``error`` to the arguments of every helper call under ``node`` (each call once:
    the builder may share one expression between several statements); collect the ranks of
    the ``_pyg_bounds<ndim>`` checks called in ``ndims``."""
    if isinstance(node, list):
        for x in node:
            _pass_error_buffer(x, error, done, ndims)
        return
    if not isinstance(node, (ir.Expr, ir.Stmt)) or isinstance(node, ir.ArrayRef):
        return
    if id(node) in done:
        return
    done.add(id(node))
    for name, value in vars(node).items():
        if name != "helper" and isinstance(value, (ir.Expr, ir.Stmt, list)):
            _pass_error_buffer(value, error, done, ndims)
    if isinstance(node, ir.Call):
        if getattr(node, "helper", None) is not None:
            node.args.append(error)
        elif node.fn.startswith("_pyg_bounds"):
            ndims.add(int(node.fn[len("_pyg_bounds"):]))
