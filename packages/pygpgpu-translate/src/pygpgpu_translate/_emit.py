"""The one C-style emitter: prints the typed IR in a dialect's words.

Everything semantic was decided in lowering; this walks the IR, asks the dialect for names
and writes ``#line`` directives so compiler messages point at the user's Python lines.
"""
from __future__ import annotations

import math

from . import _ir as ir
from ._complex import ComplexType
from ._dialects import KernelParam
from ._located import first_line, locate
from ._records import RecordType
from ._source import KernelTypeError
from ._types import ArrayType, Scalar, Vector, concrete

__all__ = ["emit_program"]

# C's binary operators by precedence (lower binds tighter); all of them associate to the left
_PRECEDENCE = {op: level for level, ops in enumerate((("*", "/", "%"), ("+", "-"), ("<<", ">>"), ("<", "<=", ">", ">="),
                                                       ("==", "!="), ("&",), ("^",), ("|",), ("&&",), ("||",)))
               for op in ops}


def _test(text: str) -> str:
    """An if/while condition without the one pair of brackets that may wrap all of it: clang
    warns on ``if ((v == 3))`` (-Wparentheses-equality), and PoCL prints "1 warning generated."
    to the user's terminal on the first build of nearly every kernel comparing a local."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for k, ch in enumerate(text[:-1]):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:                 # the first bracket closes early: (a) && (b)
            return text
    return text[1:-1]


class Emitter:
    def __init__(self, dialect, default_float: Scalar):
        self.d = dialect
        self.df = default_float
        self.out: list[str] = []
        self.last_line = None
        self.filename = ""
        self.features: set[str] = set()      # the program's (Dialect.kernel_locals reads them)
        self.work_items: set[tuple[str, int]] = set()   # (what, dim) read in the function being printed
        # helper name -> the work items it reads, itself or through its callees (printed before
        # their callers): where the dialect passes them as values, its calls pass them on
        self.helper_work_items: dict[str, frozenset[tuple[str, int]]] = {}
        self.atomic_arrays: set[str] = set()   # arrays of the function being printed that atomics update

    # ---- types & constants ---------------------------------------------------------------------------
    def tname(self, t) -> str:
        if isinstance(t, (RecordType, ComplexType)):   # C structs: a structured dtype's, a complex number's
            return t.cname
        return self.d.type_name(concrete(t, self.df))

    def const(self, v, t) -> str:
        t = concrete(t, self.df)
        d = self.d
        if isinstance(t, Vector):
            return d.vector_ctor(t, [self.const(v, t.base)] * t.width)
        n = t.name
        if n == "bool":
            return "true" if v else "false"
        if t.kind in "iu":
            v = int(v)
            if n == "int32":
                return f"({v + 1} - 1)" if v == -2**31 else (f"({v})" if v < 0 else str(v))
            if n == "uint32":
                return f"{v & 0xFFFFFFFF}u"
            if n == "int64":
                suffix = d.long_suffix
                return f"({v + 1}{suffix} - 1)" if v == -2**63 else (f"({v}{suffix})" if v < 0 else f"{v}{suffix}")
            if n == "uint64":
                return f"{v & 0xFFFFFFFFFFFFFFFF}{d.ulong_suffix}"
            return f"({self.d.cast(self.tname(t), str(v))})"
        v = float(v)
        if math.isnan(v) or math.isinf(v):
            text = d.float_special(v, t)
        elif n == "float64":
            return f"({v!r})" if v < 0 else repr(v)
        else:
            r = repr(float(v))
            if "e" not in r and "." not in r:
                r += ".0"
            text = f"{r}f" if v >= 0 else f"({r}f)"
        if n == "float16":
            return f"({self.d.cast(self.tname(t), text)})"
        return text

    # ---- expressions ---------------------------------------------------------------------------------
    def ex(self, e) -> str:
        if isinstance(e, ir.Const):
            return self.const(e.value, e.type)
        if isinstance(e, ir.Var):
            return e.name
        if isinstance(e, ir.Raw):
            return e.text
        if isinstance(e, ir.ArrayRef):
            return e.cname
        if isinstance(e, ir.Load):
            if self._plain_element(e.array, e.member):
                return self.d.element_load(e.array.cname, self.ex(e.index), self.elem_name(e.array.type.elem))
            element = f"{e.array.cname}[{self.ex(e.index)}]{e.member}"
            return self.d.atomic_load(element) if e.array.cname in self.atomic_arrays else element
        if isinstance(e, ir.Un) and e.op == "&" and isinstance(e.a, ir.Load):      # an atomic's operand
            return f"(&{e.a.array.cname}[{self.ex(e.a.index)}]{e.a.member})"
        if isinstance(e, ir.Bin):
            at = getattr(e.a, "type", None)
            if e.op == "!=" and isinstance(at, Scalar) and at.name.startswith("float"):
                return self.d.float_not_equal(self.ex(e.a), self.ex(e.b), self.tname(at))
            return self.chain(e)
        if isinstance(e, ir.Un):
            return f"({e.op}{self.ex(e.a)})"
        if isinstance(e, ir.Cast):
            return self.d.cast(self.tname(e.type), self.ex(e.a))
        if isinstance(e, ir.MathCall):
            return self.d.math_call(e.name, e.at, [self.ex(a) for a in e.args], e.fast)
        if isinstance(e, ir.WorkItem):
            self.work_items.add((e.what, e.dim))
            return self.d.work_item(e.what, e.dim)
        if isinstance(e, ir.Barrier):
            return self.d.barrier(e.fence)
        if isinstance(e, ir.MemFence):
            return self.d.mem_fence(e.fence)
        if isinstance(e, ir.Printf):
            return self.d.printf_call(e.format, [self.ex(a) for a in e.args])
        if isinstance(e, ir.Call):
            helper = getattr(e, "helper", None)                  # helpers are named last
            fn = helper.name if helper is not None else e.fn
            args = [self.ex(a) for a in e.args]
            reads = self.helper_work_items.get(fn, frozenset())
            if reads:
                self.work_items |= reads
                args += [name for _type, name in self.d.implicit_values(reads)]
            return f"{fn}({', '.join(args)})" if helper is not None else self.d.prelude_call(fn, args)
        if isinstance(e, ir.Ternary):
            return self.d.ternary(self.ex(e.cond), self.ex(e.a), self.ex(e.b))
        if isinstance(e, ir.WideLoad):
            if e.in_vectors:
                return self.d.wide_element(e.type.name, e.array.cname, self.ex(e.index), True)
            return self.d.wide_access(e.type.name, f"{e.array.cname} + {self.ex(e.index)}", True)
        if isinstance(e, ir.VecCtor):
            return self.d.vector_ctor(e.type, [self.ex(a) for a in e.args])
        if isinstance(e, ir.Swizzle):
            return f"{self.ex(e.a)}{self.d.vector_member(e.a.type, e.index)}"
        raise TypeError(f"cannot print {type(e).__name__}")

    def chain(self, e) -> str:
        """``(a + b - c)``: C's binary operators are left-associative, so a left operand of the same
        precedence needs no brackets of its own (nesting them broke clang at 256 levels). Loops
        down the chain instead of recursing."""
        prec = _PRECEDENCE[e.op]
        links = []
        while isinstance(e, ir.Bin) and _PRECEDENCE[e.op] == prec:
            links.append(e)
            e = e.a
        text = self.ex(e)
        for link in reversed(links):
            text = f"{text} {link.op} {self.ex(link.b)}"
        return f"({text})"

    # ---- statements ----------------------------------------------------------------------------------
    def line(self, n, indent):
        if n and n != self.last_line:
            directive = self.d.line_directive(n, self.filename)
            if directive:
                self.out.append(directive)
            self.last_line = n

    def w(self, text, indent):
        self.out.append("    " * indent + text)
        if self.last_line is not None:
            self.last_line += 1

    def stmts(self, body, indent):
        for s in body:
            self.stmt(s, indent)

    def stmt(self, s, indent):
        try:
            self._stmt(s, indent)
        except KernelTypeError as exc:          # a dialect's refusal: at the statement's line
            raise self._at(exc, s.line or self.fn.line) from None

    def _at(self, exc: KernelTypeError, line: int) -> KernelTypeError:
        return locate(exc, self.fn.filename, line, self.fn.name)

    def _stmt(self, s, indent):
        self.line(s.line, indent)
        if isinstance(s, ir.Assign):
            self.w(f"{s.target.name} = {self.ex(s.value)};", indent)
        elif isinstance(s, ir.Store):
            element = f"{s.array.cname}[{self.ex(s.index)}]{s.member}"
            if self._plain_element(s.array, s.member):
                self.w(self.d.element_store(s.array.cname, self.ex(s.index), self.elem_name(s.array.type.elem),
                                            self.ex(s.value)), indent)
            elif s.array.cname in self.atomic_arrays:
                self.w(self.d.atomic_store(element, self.ex(s.value)), indent)
            else:
                self.w(f"{element} = {self.ex(s.value)};", indent)
        elif isinstance(s, ir.WideStore):
            target = self.d.wide_access(s.type.name, f"{s.array.cname} + {self.ex(s.index)}", False)
            self.w(f"{target} = {self.d.vector_literal(s.type.name, [self.ex(v) for v in s.lanes])};", indent)
        elif isinstance(s, ir.ExprStmt):
            self.w(self.d.expression_statement(self.ex(s.value)), indent)
        elif isinstance(s, ir.If):
            self.w(f"if ({_test(self.ex(s.cond))}) {{", indent)
            self.stmts(s.body, indent + 1)
            if s.orelse:
                self.w("} else {", indent)
                self.stmts(s.orelse, indent + 1)
            self.w("}", indent)
        elif isinstance(s, ir.While):
            self.w(f"while ({_test(self.ex(s.cond))}) {{", indent)
            self.stmts(s.body, indent + 1)
            self.w("}", indent)
        elif isinstance(s, ir.For):
            v = s.var.name
            stop, step = self.ex(s.stop), self.ex(s.step)
            if s.step_sign > 0:
                cond = f"{v} < {stop}"
            elif s.step_sign < 0:
                cond = f"{v} > {stop}"
            else:
                # a step that is 0 at run time (Python's ValueError) runs no turn instead of forever
                cond = self.d.ternary(f"({step} > 0)", f"({v} < {stop})", f"(({step} < 0) && ({v} > {stop}))")
            self.w(f"for ({v} = {self.ex(s.start)}; {cond}; {v} += {step}) {{", indent)
            self.stmts(s.body, indent + 1)
            self.w("}", indent)
        elif isinstance(s, ir.Break):
            self.w("break;", indent)
        elif isinstance(s, ir.Continue):
            self.w("continue;", indent)
        elif isinstance(s, ir.Return):
            self.w("return;" if s.value is None else f"return {self.ex(s.value)};", indent)
        elif isinstance(s, ir.LocalArrayDecl):
            elem = s.array.type.elem
            tn = self.d.param_scalar_name(elem) if isinstance(elem, Scalar) else self.tname(elem)
            if s.array.cname in self.atomic_arrays:
                tn = self.d.atomic_element(tn)
            self.w(self.d.array_variable(tn, s.array.cname, s.size, local=True), indent)
        else:
            raise TypeError(type(s).__name__)

    def _plain_element(self, array: ir.ArrayRef, member: str) -> bool:
        """An element of a global array of scalars that no atomic updates: the dialect's
        ``element_load``/``element_store`` write its reads and writes."""
        t = array.type
        return (not member and array.cname not in self.atomic_arrays and isinstance(t, ArrayType)
                and t.space == "global" and isinstance(t.elem, Scalar))

    # ---- functions -----------------------------------------------------------------------------------
    def elem_name(self, elem) -> str:
        """An array element's type: bool arrays hold bytes (the numpy layout)."""
        return self.d.param_scalar_name(elem) if isinstance(elem, Scalar) else self.tname(elem)

    def kernel_param(self, p: ir.Param, index: int, fn: ir.Function):
        """What the dialect's kernel signature is told of a launched parameter."""
        t = p.type
        if isinstance(t, ArrayType):
            kind = "local" if t.space == "local" else "global"
            elem = self.elem_name(t.elem)
            if p.name in self.atomic_arrays:
                elem = self.d.atomic_element(elem)
            return KernelParam(p.name, index, kind, elem, "w" in fn.access.get(p.name, set()))
        return KernelParam(p.name, index, "value", self.d.param_scalar_name(t) if isinstance(t, Scalar) else self.tname(t))

    def param_decl(self, p: ir.Param, fn: ir.Function) -> str:
        """A helper parameter's declaration."""
        t = p.type
        if isinstance(t, ArrayType):
            if t.space == "private":      # into the caller's own memory: an out-parameter, a private array
                return self.d.declaration(self.d.pointer_type("private", self.tname(t.elem), False), p.name)
            const = "w" not in fn.access.get(p.name, set())
            return self.d.declaration(self.d.pointer_type(t.space, self.elem_name(t.elem), const), p.name)
        return self.d.declaration(self.tname(t), p.name)

    def function(self, fn: ir.Function):
        self.fn = fn
        try:
            self._function(fn)
        except KernelTypeError as exc:          # a parameter's or a local's type: the def line
            raise self._at(exc, fn.line) from None

    def _local(self, fn: ir.Function, name: str, declare):
        try:
            return declare()
        except KernelTypeError as exc:          # a local's type: where it is first assigned
            raise self._at(exc, first_line(fn, name)) from None

    def _function(self, fn: ir.Function):
        self.filename = fn.filename.replace("\\", "\\\\").replace('"', '\\"')
        # the body first: a kernel's signature depends on the work items it reads (implicit parameters)
        outer, self.out = self.out, []
        self.work_items = set()
        self.atomic_arrays = _atomic_arrays(fn.body)
        self.last_line = None
        self.stmts(fn.body, 1)
        body, self.out = self.out, outer
        prologue: list[str] = []
        if fn.is_kernel:
            sig = self.d.kernel_signature(fn.name, [self.kernel_param(p, k, fn) for k, p in enumerate(fn.params)],
                                          frozenset(self.work_items))
            self.out.extend(sig.module_scope)
            head = sig.head
            prologue = list(sig.prologue)
        else:
            reads = frozenset(self.work_items)
            self.helper_work_items[fn.name] = reads
            implicit = [self.d.declaration(t, name) for t, name in self.d.implicit_values(reads)] if reads else []
            ret = self.tname(fn.ret) if fn.ret is not None else "void"
            params = [self.param_decl(p, fn) for p in fn.params] + implicit
            head = self.d.helper_head(ret, fn.name, params)
            prologue = list(self.d.helper_prologue(params))
        directive = self.d.line_directive(len(self.out) + 2, f"pygpgpu-generated:{fn.name}")
        if directive:
            self.out.append(directive)
        self.out.append(head)
        self.out.append("{")
        for name, t in fn.locals.items():
            if isinstance(t, (Scalar, Vector, ComplexType)):
                self.out.append(f"    {self._local(fn, name, lambda: self.d.local_variable(self.tname(t), name))}")
            elif isinstance(t, ArrayType) and t.space == "private":      # t = np.zeros(8) (_private_arrays)
                decl = self._local(fn, name, lambda: self.d.array_variable(self.tname(t.elem), name,
                                                                           math.prod(t.static_shape), False))
                self.out.append(f"    {decl}")
        self.out.extend(f"    {line}" for line in prologue)
        if fn.is_kernel:
            self.out.extend(f"    {line}" for line in self.d.kernel_locals(self.features))
            for p in fn.params:
                if isinstance(p.type, ArrayType) and p.type.space == "local":
                    offset = self.ex(p.local_offset) if p.local_offset is not None else "0"
                    self.out.extend(f"    {line}" for line in
                                    self.d.launch_sized_local_body(self.elem_name(p.type.elem), p.name, offset))
        if fn.is_kernel and self.d.assume_aligned:
            for p in fn.params:
                if isinstance(p.type, ArrayType) and p.type.align:
                    ptr = self.d.pointer_type(p.type.space, self.elem_name(p.type.elem), "w" not in fn.access.get(p.name, set()))
                    self.out.append(f"    {p.name} = ({ptr}){self.d.assume_aligned}({p.name}, {p.type.align});")
        self.out.extend(body)
        self.out.append("}")
        self.out.append("")


def _atomic_arrays(body) -> set[str]:
    """The names of the arrays that atomics in ``body`` update (their element's address is the
    call's first argument)."""
    found: set[str] = set()

    def visit(node):
        if isinstance(node, ir.Call) and node.atomic_root is not None:
            ptr = node.args[0]
            if isinstance(ptr, ir.Un) and isinstance(ptr.a, ir.Load):
                found.add(ptr.a.array.cname)
        return ir.rebuilt(node, visit)

    visit(body)
    return found


def emit_program(dialect, default_float, kernel: ir.Function, helpers: list, features: set,
                 header: str = "", prelude: str = "") -> str:
    em = Emitter(dialect, default_float)
    em.features = features
    lines = [f"// {header}" if header else "// generated by pygpgpu"]
    lines.extend(dialect.headers(features))
    if prelude:
        lines.append(prelude)
    lines.append("")
    em.out = lines
    for h in helpers:
        em.function(h)
    em.function(kernel)
    return "\n".join(em.out) + "\n"
