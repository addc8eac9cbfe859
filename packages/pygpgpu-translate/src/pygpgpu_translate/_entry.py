"""The kernel entry point: parameters and hidden arguments, the iteration domain (magic loop,
np.ndindex/ndenumerate, enumerate, gpu.work_size), the bounds guard, and the C parameter layout
the launch plan packs."""
from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

import numpy as np

from . import _ir as ir
from ._complex import complex_from_parts, is_complex
from ._bindings import Domain, KernelParamSpec, ObjectRef, ShapeRef, TupleRef
from ._builder import FunctionBuilder, ProgramBuilder
from ._domain import DomainDim, plan_of, render
from ._guards import find_guards
from ._races import refuse_shared_stores
from ._source import parameter_names, parse
from ._types import BOOL, INT64, VOID, concrete

__all__ = ["KernelParamSpec", "KernelIR", "build_kernel"]


@dataclass
class KernelIR:
    function: ir.Function
    layout: list              # C parameter order: ("buffer", name) ("shape", name, k) ("scalar", name, dtype)
                              # ("vcomp", name, k, dtype) ("bound", k, dtype)
    domain: "Domain | None"
    domain_plan: "dict | None"  # the host-side domain function as data (see _domain); None without a domain
    uses_barrier: bool
    self_attrs_used: set
    domain_index: "tuple | None" = None  # C names of the domain's indices when they are the work-item ids
    guards: "list | None" = None  # gid-style kernels: [[d, plan]] the extent `if id < E` guards (_guards)


def _domain_setup(fb: FunctionBuilder, before: list, exprs: list, argnames) -> list:
    """The statements before the domain loop that its size needs (``n = x.shape[0]`` for
    ``for i in range(n)``), for the host-side domain function: plain assignments to names,
    taken in order. A size that depends on anything else is a translation error."""
    def loads(tree):
        return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}

    needed = set().union(*(loads(parse(e, mode="eval")) for e in exprs)) - set(argnames)
    lines = []
    for stmt in reversed(before):
        stored = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        if not stored & needed:
            continue
        simple = (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                  and all(isinstance(n, ast.Name) for n in ast.walk(stmt.targets[0])
                          if not isinstance(n, (ast.Tuple, ast.Store))))
        if not simple:
            name = sorted(stored & needed)[0]
            raise fb.err(stmt, f"the kernel's iteration domain depends on {name!r}, which this statement sets",
                         "compute the loop bound from the arguments with plain assignments "
                         "(n = x.shape[0]) or write it in the loop: range(x.shape[0])")
        lines.append(stmt)
        needed = (needed - stored) | (loads(stmt.value) - set(argnames))
    return lines[::-1]


def domain_setup_or_none(fb: FunctionBuilder, before: list, exprs: list, argnames) -> "list | None":
    """:func:`_domain_setup`, or None where the statements it needs are not plain assignments."""
    try:
        return _domain_setup(fb, before, exprs, argnames)
    except SyntaxError:
        return None


def _domain_form(fb: FunctionBuilder, s: ast.stmt) -> "str | None":
    if not (isinstance(s, ast.For) and isinstance(s.iter, ast.Call)):
        return None
    callee = fb.resolve_callee(s.iter.func)
    if not isinstance(callee, ObjectRef):
        return None
    o = callee.obj
    if o is range:
        return "range"
    if o is np.ndindex:
        return "ndindex"
    if o is np.ndenumerate:
        return "ndenumerate"
    if o is enumerate:
        return "enumerate"
    return None


def _is_work_size(fb: FunctionBuilder, s: ast.stmt) -> bool:
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        b = fb.builtin_of(fb.resolve_callee(s.value.func))
        return b is not None and b.name == "gpu.work_size"
    return False


def _uses_work_items(fb: FunctionBuilder, stmts) -> bool:
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                b = fb.builtin_of(fb.resolve_callee(node.func))
                if b is not None and b.lowering in ("lower_work_item", "lower_work_items", "lower_barrier",
                                                     "lower_local_array"):
                    return True
    return False


def _split_hint(src, body: list, loops: list) -> str:
    """The kernels to write instead of one with several top-level parallel loops (as Taichi runs
    them): one per loop, in order, each with the kernel's parameters, the statements before the
    first loop and those between the previous loop and its own."""
    params = ast.unparse(src.tree.args)
    prefix = body[:body.index(loops[0])]
    parts, start = [], body.index(loops[0])
    for k, loop in enumerate(loops):
        end = body.index(loops[k + 1]) if k + 1 < len(loops) else len(body)
        stmts = prefix + body[start:end]
        start = end
        text = "\n".join(ast.unparse(st) for st in stmts)
        parts.append(f"@kernel\ndef {src.name}_{k + 1}({params}):\n" + textwrap.indent(text, "    "))
    names = ", ".join(a.arg for a in src.tree.args.args)
    calls = "; ".join(f"{src.name}_{k + 1}({names})" for k in range(len(loops)))
    return ("write one kernel per loop and call them in order (each call is one launch, run after the one "
            "before):\n\n" + "\n\n".join(parts) + f"\n\n{calls}")


def build_kernel(prog: ProgramBuilder, func, specs: list, self_obj=None) -> KernelIR:
    src = prog.source_of(func)
    fb = FunctionBuilder(prog, src, func, is_kernel=True, kernel_name=src.name)
    fb.self_obj = self_obj
    layout: list[tuple] = []
    params = []
    prologue = []
    vector_types: dict = {}          # vector parameters rebuilt in the prologue: their C local's type
    idx = prog.index_type
    for spec in specs:
        if spec.kind == "self":
            fb.params[spec.name] = ObjectRef(self_obj)
            continue
        pyname = spec.name
        c = fb.cname(pyname)          # self.w -> self_w_, apart from a local named self_w
        t = spec.type
        prog.note_type(t)
        binding: ir.ArrayRef | ir.Var
        if spec.kind == "array":
            shape: list[ir.Expr] = [ir.Var(f"{c}_shape{k}", idx) for k in range(t.ndim)]
            if t.known_last:      # the signature fixes it: a constant stride lets rows load as one vector
                shape[-1] = ir.Const(t.known_last, idx)
            binding = ir.ArrayRef(pyname, c, shape, t)
            params.append(ir.Param(c, t, root=pyname))
            layout.append(("buffer", pyname))
            for k in range(t.ndim):      # every extent stays a parameter: one launcher layout
                params.append(ir.Param(f"{c}_shape{k}", idx, hidden=True))
                fb.non_negative.add(f"{c}_shape{k}")
                layout.append(("shape", pyname, k, idx.dtype))
        elif spec.kind == "scalar":
            ct = concrete(t, prog.default_float)
            binding = ir.Var(c, t)
            params.append(ir.Param(c, ct))
            layout.append(("scalar", pyname, np.dtype("uint8") if ct.name == "bool" else ct.dtype))
        elif spec.kind == "vector":
            comps = []
            for k in range(t.width):
                params.append(ir.Param(f"{c}_{k}", t.base, hidden=True))
                layout.append(("vcomp", pyname, k, t.base.dtype))
                comps.append(ir.Var(f"{c}_{k}", t.base))
            binding = ir.Var(c, t)
            whole = complex_from_parts(fb, comps, t) if is_complex(t) else ir.VecCtor(comps, t)
            prologue.append(ir.Assign(binding, whole, src.tree.lineno))
            vector_types[c] = t
        else:
            raise ValueError(spec.kind)
        if pyname.startswith("self."):
            fb.self_attrs[pyname[5:]] = binding
        else:
            fb.params[pyname] = binding
    fb.fn_params = params
    body = fb.body_without_docstring()
    fb.assigned = set(fb._scan_assigned(body))
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Return) and node.value is not None:
            raise fb.err(node, "kernels cannot return values", "write the result into an output array argument")
    # the iteration domain
    ws = [s for s in body if _is_work_size(fb, s)]
    domain_plan = None
    dims: list[DomainDim] = []
    argnames = parameter_names(src.tree.args)
    if ws:
        call = ws[0].value
        dims = []
        for a in call.args:
            v = fb.expr(a)
            if isinstance(v, ir.ArrayRef):
                dims.extend(DomainDim("dim", [a], k) for k in range(v.type.ndim))
            elif isinstance(v, ShapeRef):
                dims.extend(DomainDim("dim", [a.value], k) for k in range(v.array.type.ndim))
            else:
                dims.append(DomainDim("int", [a]))
        if not 1 <= len(dims) <= 3:
            raise fb.err(call, "gpu.work_size() describes 1 to 3 dimensions")
        fb.domain = Domain("work_size", len(dims), [render(d) for d in dims])
    else:
        top_loops = [s for s in body if _domain_form(fb, s)]
        if top_loops and _uses_work_items(fb, body[:body.index(top_loops[0])]):
            top_loops = []     # a gid-style kernel: its top-level loops are ordinary loops
        if top_loops:
            s = top_loops[0]
            kind = _domain_form(fb, s)
            assert kind is not None      # top_loops holds only domain loops
            it = s.iter
            if it.keywords:
                raise fb.err(it, f"{kind}() with keyword arguments is not supported as an iteration domain")
            after = body[body.index(s) + 1:]
            more = [t for t in after if _domain_form(fb, t)]
            if more:
                raise fb.err(more[0], f"kernel {src.name!r} has {1 + len(more)} top-level parallel loops; a kernel is "
                             "one launch over one domain", _split_hint(src, body, [s] + more))
            if after:
                raise fb.err(after[0], "statements after the kernel's iteration-domain loop are not supported",
                             "put the work inside the loop; every loop iteration runs as its own work item")
            if kind == "range":
                if not 1 <= len(it.args) <= 3:
                    raise fb.err(it, "range() takes 1 to 3 arguments")
                dims = [DomainDim("range", it.args)]
            elif kind == "ndindex":
                if len(it.args) == 1:
                    v = fb.expr(it.args[0])
                    if isinstance(v, ShapeRef):
                        nd = v.array.type.ndim
                    elif isinstance(v, TupleRef):
                        nd = len(v.items)
                    else:
                        raise fb.err(it.args[0], "np.ndindex needs a shape: x.shape or a tuple (h, w)")
                    dims = [DomainDim("item", [it.args[0]], k) for k in range(nd)]
                else:
                    dims = [DomainDim("int", [a]) for a in it.args]
            else:
                if len(it.args) != 1:
                    raise fb.err(it, f"{kind}() takes one array here")
                v = fb.expr(it.args[0])
                if not isinstance(v, ir.ArrayRef):
                    raise fb.err(it.args[0], f"{kind}() iterates over an array argument")
                nd = 1 if kind == "enumerate" else v.type.ndim
                if kind == "enumerate" and v.type.ndim > 1 and not v.type.row_width:
                    raise fb.err(it, "enumerate() over a multi-dimensional array is not supported",
                                 "use np.ndenumerate(arr) or np.ndindex(arr.shape)")
                dims = [DomainDim("dim", [it.args[0]], k) for k in range(nd)]
            if len(dims) > 3:
                raise fb.err(it, "iteration domains have at most 3 dimensions")
            fb.domain = Domain(kind, len(dims), [render(d) for d in dims], node=s)
    if fb.domain is not None:
        start = ws[0] if ws else fb.domain.node
        setup = _domain_setup(fb, body[:body.index(start)], fb.domain.host_exprs, argnames)
        domain_plan = plan_of(src, setup, dims)
        for k in range(fb.domain.ndim):
            params.append(ir.Param(f"_pyg_n{k}", idx, hidden=True))
            layout.append(("bound", k, idx.dtype))
    guards = find_guards(fb, body, src, argnames) if fb.domain is None else []
    body_ir = fb.run_passes(body)
    if fb.domain is not None and fb.domain.kind != "work_size" and fb.domain_vars:
        # the loop's iterations run at once: t[0] += x[i] from each would race (_races)
        loop = fb.domain.node
        if isinstance(loop, ast.For):
            names = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
            loop_text = f"for {', '.join(ast.unparse(n) for n in names)} in {ast.unparse(loop.iter)}:"
        else:
            loop_text = "of the kernel"
        refuse_shared_stores(body_ir, [fb.cname(n) for n in fb.domain_vars], src, src.name, f"`{loop_text}`")
    prog.name_helpers()
    params.extend(launch_sized_locals(prog.dynamic_locals, layout, idx))
    # no early return when any barrier (also in a helper) or subgroup operation needs every work
    # item of the group
    if (fb.domain is not None and fb.domain.kind == "work_size" and not prog.uses_barrier
            and "subgroups" not in prog.features):
        beyond = [ir.Bin(">=", ir.Cast(ir.WorkItem("global_id", fb.domain.ndim - 1 - k, INT64), idx),
                         ir.Var(f"_pyg_n{k}", idx), BOOL)
                  for k in range(fb.domain.ndim)]      # gpu.work_size() has 1 to 3 dimensions
        cond: ir.Expr = beyond[0]
        for b in beyond[1:]:
            cond = ir.Bin("||", cond, b, BOOL)
        body_ir = [ir.If(cond, [ir.Return(None, src.tree.lineno)], [], src.tree.lineno)] + body_ir
    body_ir = list(prog.local_arrays) + prologue + body_ir
    local_table = fb.locals_table()
    local_table.update(vector_types)
    fn = ir.Function(prog.kernel_cname, params, VOID, body_ir, local_table, True, src.filename, src.tree.lineno)
    index = None
    if fb.domain is not None and len(fb.domain_vars) == fb.domain.ndim and (
            fb.domain.kind != "range" or fb.domain_identity):
        index = tuple(fb.cname(n) for n in fb.domain_vars)
    return KernelIR(fn, layout, fb.domain, domain_plan, prog.uses_barrier, set(fb.self_attrs), index, guards)


def launch_sized_locals(dynamic_locals: dict, layout: list, idx) -> list:
    """The hidden parameters of the local arrays sized at launch (``_local_arrays.dynamic_local_array``),
    widest element first: carved one after another out of one block (CUDA/HIP), each then starts
    on a multiple of its own element size with no padding (sizes are powers of two), so the
    launch's byte counts simply add up. Each adds a ``("local", size parameter, dtype)`` layout item."""
    params = []
    offset: ir.Expr = ir.Const(0, idx)
    for cname, (ref, size_name) in sorted(dynamic_locals.items(), key=lambda kv: -kv[1][0].type.elem.dtype.itemsize):
        params.append(ir.Param(cname, ref.type, hidden=True, local_offset=offset))
        layout.append(("local", size_name, ref.type.elem.dtype))
        nbytes = ir.Bin("*", ref.shape[0], ir.Const(ref.type.elem.dtype.itemsize, idx), idx)
        offset = nbytes if isinstance(offset, ir.Const) and offset.value == 0 else ir.Bin("+", offset, nbytes, idx)
    return params
