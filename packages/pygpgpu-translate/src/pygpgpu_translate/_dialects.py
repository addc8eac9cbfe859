"""Dialects: every spelling of one target language, in one object per target.

The IR and the prelude's logic are shared; a ``Dialect`` answers every question whose answer
is text of its language: type names and qualifiers, literals, the work-item table, barriers,
math function names, the atomics and vector pieces of the prelude, the build options of fast
math. The emitter and the prelude ask it (docs/architecture.md#dialects-and-builtins); nothing
else compares against a dialect's name. A difference that needs more than a word (float
atomics, Python floor division, vector rows) is lowered in the IR or calls a prelude piece.

A dialect also says how the kernel is declared (:meth:`Dialect.kernel_signature`: per-parameter
attributes, parameters the language fills in such as a thread id, bindings at file scope), how a
declaration is spelled and which words its language reserves.

Dialects are found by name in a registry: ``"opencl"``, ``"cuda"`` and ``"hip"`` are built in; a
third-party backend names its own in its ``dialect`` attribute and registers a target
(``pygpgpu_core.targets.Target``, whose ``dialect`` is the ``Dialect``), either in code or lazily
through the ``pygpgpu.targets`` entry-point group. The public names are in
``pygpgpu_translate.target``. An unknown name is an error, never OpenCL.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from pygpgpu_core import targets
from pygpgpu_core.errors import GPGPUError

from . import _c_words
from ._names import RESERVED
from .prelude._subgroups import SCRATCH_ITEMS
from .prelude._types import split_type
from ._types import Scalar, Vector

__all__ = ["Dialect", "OpenCL", "CUDA", "HIP", "UnknownDialect", "dialect_for", "register_dialect", "dialect_names",
           "DEFAULT_DIALECT", "KernelParam", "KernelSignature"]

_DIMS = "xyz"
ENTRY_POINT_GROUP = targets.ENTRY_POINT_GROUP


@dataclass(frozen=True)
class KernelParam:
    """One parameter of a kernel as the launch passes it, for :meth:`Dialect.kernel_signature`."""
    name: str
    """The parameter's name in the generated source (valid in every registered dialect)."""
    index: int
    """Its position among the launch's arguments: the slot the backend's launcher fills (Metal's
    ``[[buffer(i)]]``, a WGSL ``@binding(i)``)."""
    kind: str
    """``"global"``: a pointer into device memory (an array); ``"local"``: local memory sized at
    launch (``gpu.local_array(n, ...)``); ``"value"``: a scalar, vector or record passed by value."""
    type_text: str
    """The element type (``"global"``, ``"local"``) or the value's type, in the dialect's words."""
    written: bool = False
    """``"global"``: the kernel stores through it (else it is only read)."""


@dataclass(frozen=True)
class KernelSignature:
    """What :meth:`Dialect.kernel_signature` answers: the kernel's head, and lines that go with it."""
    head: str
    """The text before the body's ``{`` (``__kernel void f(__global float* x, float a)``)."""
    module_scope: "list[str]" = field(default_factory=list)
    """Declarations at file scope before the kernel (a WGSL ``@group(0) @binding(0) var<storage> x: ...;``)."""
    prologue: "list[str]" = field(default_factory=list)
    """Statements at the top of the kernel body (binding a parameter under another name)."""

# gpu.rsqrt and gpu.native_* at float64: the precise function (the fast hardware ones are float32-only)
_PRECISE = {"rsqrt": "rsqrt({0})", "native_sqrt": "sqrt({0})", "native_rsqrt": "rsqrt({0})",
            "native_recip": "(1.0 / ({0}))", "native_exp": "exp({0})", "native_exp2": "exp2({0})",
            "native_exp10": "exp10({0})", "native_log": "log({0})", "native_log2": "log2({0})",
            "native_log10": "log10({0})", "native_sin": "sin({0})", "native_cos": "cos({0})",
            "native_tan": "tan({0})", "native_divide": "(({0}) / ({1}))", "native_powr": "pow({0}, {1})"}


# classification functions CUDA overloads for float and double (there is no isnanf)
_OVERLOADED = frozenset({"isnan", "isinf", "isfinite"})


def _stable(value) -> str:
    """A text of ``value`` that is the same in every process: plain data spelled out, sets sorted,
    anything else (functions, descriptors) by its type alone."""
    if isinstance(value, (str, int, float, bool, type(None))):
        return repr(value)
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_stable(v) for v in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_stable(v) for v in value) + ")"
    if isinstance(value, dict) or type(value).__name__ == "mappingproxy":
        return "{" + ",".join(sorted(f"{_stable(k)}:{_stable(v)}" for k, v in value.items()
                                     if not (isinstance(k, str) and k.startswith("__")) and k != "_fingerprint")) + "}"
    return type(value).__name__


class UnknownDialect(GPGPUError, ValueError):
    """No dialect is registered under a name (a backend or selector names one the translator lacks)."""


def _missing_hook(dialect: "Dialect", hook: str) -> NotImplementedError:
    """The error of a dialect class (a plug-in's, say) that left out a spelling every dialect gives."""
    return NotImplementedError(f"dialect {dialect.name!r} ({type(dialect).__name__}) does not define {hook}(); "
                               "every dialect spells it: see the OpenCL and CUDA dialects in pygpgpu_translate._dialects "
                               "and docs/writing-a-backend.md")


class Dialect:
    """The words of one target language. Subclass one of the built-in dialects (``OpenCL`` or
    ``CUDA``) to describe a new target, override what differs, and register it as the ``dialect`` of a
    target (``pygpgpu_translate.target.register_target`` or the ``pygpgpu.targets`` entry point).

    Type arguments named ``type_name`` are the prelude's short names (``"float"``, ``"long"``,
    ``"float4"``, ``"ulong16"``); ``t`` arguments are the translator's ``Scalar``/``Vector``."""

    name = ""
    source_suffix = ".c"       # the file name suffix of a failed build's kept source
    kernel_prefix = ""
    device_fn_prefix = "static inline "           # helpers the translator generates
    prelude_fn_prefix = "static inline"           # prelude pieces
    global_ptr = ""            # qualifier on pointer parameters into global memory
    local_ptr = ""             # qualifier on pointers into local/shared memory
    local_decl = ""            # qualifier on a static local/shared array declaration
    own_scalars: dict = {}     # the scalars the prelude has no name for (bool, float16)
    float_suffix = False       # sqrt -> sqrtf for float32 (CUDA/HIP); OpenCL's math is overloaded
    float16 = False            # kernels may take float16 arrays (where the device has them)
    # OpenCL C's vector model: every type and width built in, with its operators, comparisons
    # giving -1/0 per component and (float4)(a, b, c, d) literals; the prelude adds none of them
    builtin_vectors = False
    # The launcher guarantees row-array pointers this alignment (ArrayType.align); telling the
    # compiler lets a row of 4 floats load as one 128-bit access. OpenCL C has no portable spelling.
    assume_aligned = ""
    # A member's byte offset as a constant expression, for the compile-time layout checks of
    # record structs. Clang (OpenCL C, hiprtc) has __builtin_offsetof; no toolchain ships <stddef.h>.
    offsetof = "__builtin_offsetof({type}, {member})"
    # Build options of @kernel(fastmath=True): the compiler may reassociate, contract, flush
    # denormals, assume no NaN/inf and use approximate division, sqrt and transcendentals.
    fast_math_options: tuple[str, ...] = ()
    # The most work items per group a kernel using subgroup operations can run with (None: the
    # device's own limit); OpenCL's emulation keeps one local scratch slot per work item.
    subgroup_group_limit: int | None = None
    # The kernel-scope array its subgroup emulation works in ("" none): helpers reaching a
    # subgroup operation take it as a hidden parameter (_subgroup_scratch).
    subgroup_scratch = ""
    # Build options of @kernel(contract=False): no fused multiply-add contraction, so each
    # multiply and add rounds on its own as numpy's do. OpenCL C says it in the source instead
    # (headers(): #pragma OPENCL FP_CONTRACT OFF), since it has no standard build option for it.
    no_contract_options: tuple[str, ...] = ()
    # literals
    long_suffix = "LL"
    ulong_suffix = "ULL"
    # print() in kernels: the device printf and its length modifier for 64-bit integers
    printf = "printf"
    printf_int64 = "ll"
    nan32 = "__int_as_float(0x7fc00000)"
    inf32 = "__int_as_float(0x7f800000)"
    nan64 = "__longlong_as_double(0x7ff8000000000000LL)"
    inf64 = "__longlong_as_double(0x7ff0000000000000LL)"
    # work items: what -> template with {d} the dimension's letter (x, y, z) and {n} its number
    work_items: dict = {}
    native32: dict = {}        # gpu.rsqrt / gpu.native_* at float32: call templates ("native_exp({0})")
    # Identifiers the language reserves that no generated name may take (keywords, types, builtins,
    # macros). Registering the dialect adds them to the words every translation avoids, since one
    # build is rendered in any dialect (_names): a local `device` is `device_` once a Metal-like
    # dialect is registered. The built-ins list what their compilers were asked for (_c_words).
    reserved_words: frozenset = frozenset()
    # Whether an element pointer into global memory may be read as a vector pointer (wide_access,
    # wide_element): wide kernels and row loads rely on it. A language without pointer casts (WGSL)
    # says False, and its kernels are built with one element per access (_translate.build).
    vector_views = True

    def __repr__(self) -> str:
        return f"<dialect {self.name!r}>"

    def fingerprint(self) -> str:
        """What of this dialect the generated text depends on beyond its name, for the
        generated-source cache key: its classes, the source files of those outside the translator
        (whose own code is in the key already: a plug-in's new release writes anew), their plain
        attributes and the instance's, and its reserved words."""
        known = self.__dict__.get("_fingerprint")
        if known is None:
            h = hashlib.sha256()
            for cls in type(self).__mro__[:-1]:                 # not object
                h.update(f"{cls.__module__}.{cls.__qualname__}\n".encode())
                if cls.__module__.partition(".")[0] != __name__.partition(".")[0]:
                    path = getattr(sys.modules.get(cls.__module__), "__file__", None)
                    if path:
                        with contextlib.suppress(OSError):
                            h.update(Path(path).read_bytes())
                    h.update(_stable(vars(cls)).encode())
            h.update(_stable(vars(self)).encode())
            h.update(" ".join(sorted(self.reserved_words)).encode())
            known = self.__dict__["_fingerprint"] = h.hexdigest()[:16]
        return known

    # ---- declarations and the kernel's signature -------------------------------------------------
    def declaration(self, type_text: str, name: str) -> str:
        """``name`` declared with the type spelled ``type_text``: C's ``float x``; a language that
        spells types after names answers ``x: f32``. Parameters of helpers and locals use it."""
        return f"{type_text} {name}"

    def local_variable(self, type_text: str, name: str) -> str:
        """The statement declaring a local variable (``float x;``, WGSL ``var x: f32;``)."""
        return f"{self.declaration(type_text, name)};"

    def array_variable(self, elem_text: str, name: str, size: int, local: bool) -> str:
        """The statement declaring an array of ``size`` elements in private (``local`` False) or
        local/shared memory (``float t[8];``, ``__local float tile[256];``)."""
        return f"{self.local_decl if local else ''}{elem_text} {name}[{size}];"

    def pointer_type(self, space: str, elem_text: str, const: bool) -> str:
        """A pointer to ``elem_text`` in ``space`` (``"global"``, ``"local"``, ``"private"``)."""
        qual = {"global": self.global_ptr, "local": self.local_ptr}.get(space, "")
        return f"{qual}{'const ' if const else ''}{elem_text}*"

    def cast(self, type_text: str, expr: str) -> str:
        """``expr`` converted to ``type_text`` (C's ``((float)(x))``; WGSL ``f32(x)``)."""
        return f"(({type_text})({expr}))"

    def ternary(self, cond: str, a: str, b: str) -> str:
        """``a`` where ``cond`` holds, else ``b`` (C's ``?:``; WGSL ``select(b, a, cond)``)."""
        return f"({cond} ? {a} : {b})"

    def atomic_element(self, elem_text: str) -> str:
        """The element type of an array the kernel updates atomically (``gpu.atomic_*``), in its
        kernel binding or local-array declaration: C's is the plain type (the prelude's atomics cast
        the pointer); WGSL's is ``atomic<i32>``, whose plain reads and writes go through
        :meth:`atomic_load` and :meth:`atomic_store`."""
        return elem_text

    def atomic_load(self, element: str) -> str:
        """A plain read of ``element`` (``a[i]``) of an array that is updated atomically elsewhere
        in the function (WGSL: ``atomicLoad(&a[i])``)."""
        return element

    def atomic_store(self, element: str, value: str) -> str:
        """The statement writing ``value`` to ``element`` of such an array (WGSL: ``atomicStore``)."""
        return f"{element} = {value};"

    def element_load(self, array: str, index: str, elem_text: str) -> str:
        """A read of element ``index`` of kernel array ``array`` (a launch argument; ``elem_text``:
        its element type as the kernel binding declares it, a bool array's ``uchar``). C's is
        ``a[i]``; a language whose buffers have no such elements (WGSL has no 8- or 16-bit
        storage) writes the read from the words around it."""
        return f"{array}[{index}]"

    def element_store(self, array: str, index: str, elem_text: str, value: str) -> str:
        """The statement writing ``value`` to element ``index`` of kernel array ``array`` (see
        :meth:`element_load`): C's ``a[i] = v;``."""
        return f"{array}[{index}] = {value};"

    def float_not_equal(self, a: str, b: str, type_text: str) -> str:
        """``a != b`` of two floats of ``type_text``: true where either is NaN (IEEE). C's ``!=`` is;
        a language whose compilers may assume no NaN reaches a comparison (WGSL) tests the bits."""
        return f"({a} != {b})"

    def expression_statement(self, expr: str) -> str:
        """``expr`` evaluated for its effects alone (an atomic whose old value is not used): C's
        ``expr;``. WGSL allows only calls there, and writes other values to ``_``."""
        return f"{expr};"

    def prelude_call(self, function: str, args: "list[str]") -> str:
        """A call of prelude function ``function`` (``pg_atomic_add_int``, ``pg_pymod_int``...). A
        language may write a piece inline instead (WGSL's atomics take pointers into storage,
        which its functions cannot be given); its :meth:`prelude_piece` then answers "" for it."""
        return f"{function}({', '.join(args)})"

    def prelude_piece(self, name: str) -> "tuple[tuple[str, ...], str] | None":
        """``(pieces it needs, source)`` of prelude piece ``name`` (``"pymod:int"``,
        ``"funcs.min:float4"``, ``"atomic_add:uint"``; the families are listed in
        ``pygpgpu_translate.prelude``) in this language, or None for the shared C piece. It must
        depend on ``name`` alone (pieces are cached per dialect). A language not C-like answers
        every piece its kernels may need, and raises naming the ones it cannot have."""
        return None

    def line_directive(self, line: int, filename: str) -> str:
        """The directive that makes the compiler report ``line`` of ``filename`` ("" where the
        language has none: the generated lines then carry no mapping)."""
        return f'#line {line} "{filename}"'

    def helper_head(self, ret_text: str, name: str, params: "list[str]") -> str:
        """The head of a helper function the translator generates (``params`` from :meth:`declaration`)."""
        return f"{self.device_fn_prefix}{ret_text} {name}({', '.join(params) or 'void'})"

    def helper_prologue(self, params: "list[str]") -> "list[str]":
        """Statements opening a helper's body, given its parameters as :meth:`helper_head` got
        them: none in C, whose parameters are variables; WGSL's are immutable, so its head renames
        them and these copy them into variables of the Python names (a helper may assign to its
        parameters, as Python's may)."""
        return []

    def kernel_param(self, p: KernelParam) -> str:
        """The declaration of one kernel parameter, attributes included (Metal: ``device const
        float* x [[buffer(0)]]``, ``constant float& a [[buffer(2)]]``); "" where the dialect passes
        it otherwise (CUDA's launch-sized local memory is the dynamic shared memory)."""
        if p.kind == "global":
            return self.declaration(self.pointer_type("global", p.type_text, not p.written), p.name)
        if p.kind == "local":
            return self.launch_sized_local_param(p.type_text, p.name)
        return self.declaration(p.type_text, p.name)

    def implicit_params(self, work_items: "frozenset[tuple[str, int]]") -> "list[str]":
        """Kernel parameters the launch does not pass and the language fills in: the work-item
        values the kernel reads (``work_items``: ``(what, dim)`` pairs, ``("global_id", 0)``) where
        the language gives them as attributed parameters (Metal's ``uint3 gid
        [[thread_position_in_grid]]``, WGSL's ``@builtin(global_invocation_id)``), and the
        :attr:`work_items` templates name those parameters. None in C-like languages."""
        return []

    def implicit_values(self, work_items: "frozenset[tuple[str, int]]") -> "list[tuple[str, str]]":
        """``(type_text, name)`` of each value :meth:`implicit_params` declares for ``work_items``,
        in the same order: a helper that reads work items takes them as ordinary parameters, and
        every call passes them on (the names are in scope in the caller, a kernel or a helper
        taking them in turn). None in C-like languages, whose work items are read anywhere."""
        return []

    def kernel_signature(self, name: str, params: "list[KernelParam]",
                         work_items: "frozenset[tuple[str, int]]") -> KernelSignature:
        """The kernel's head from its launched parameters (in launch order) and the work items it
        reads. The default joins :meth:`kernel_param` of each and :meth:`implicit_params` after
        :attr:`kernel_prefix`; a language whose arguments are bindings at file scope answers
        those in ``module_scope`` instead."""
        decls = [d for d in (self.kernel_param(p) for p in params) if d] + self.implicit_params(work_items)
        return KernelSignature(f"{self.kernel_prefix} {name}({', '.join(decls) or 'void'})")

    # ---- types: prelude short names ----------------------------------------------------------------
    def c_type(self, type_name: str) -> str:
        """The C spelling of a scalar or vector type (``"long"`` -> ``long long`` on CUDA)."""
        return type_name

    def own_struct(self, type_name: str) -> bool:
        """Whether the prelude itself defines this vector type (as ``struct pg_<T>``)."""
        return False

    def component(self, type_name: str, i: int) -> str:
        """Member access suffix of component ``i`` (``".x"``, ``".s5"``)."""
        return f".s{i:x}"

    def make_vector(self, type_name: str, comps: list[str]) -> str:
        """An expression building a vector from one expression per component."""
        return f"pg_make_{type_name}({', '.join(comps)})"

    def vector_literal(self, type_name: str, comps: list[str]) -> str:
        """The toolchain's own constructor of a built-in vector type (``make_float4(...)``)."""
        return f"make_{self.c_type(type_name)}({', '.join(comps)})"

    def vector_operator_builtin(self, op: str, form: str, type_name: str) -> bool:
        """Whether the toolchain already defines vector operator ``op`` in ``form`` (``"vv"``,
        ``"vs"``, ``"sv"``, ``"vv="``, ``"vs="``, ``"unary"``) on ``type_name``."""
        return self.builtin_vectors

    def wide_access(self, type_name: str, address: str, const: bool) -> str:
        """The vector ``type_name`` at ``address`` (an element pointer into global memory, aligned
        to the vector's size) as one lvalue: a wide load or store (``ld.global.v4.f32`` for
        ``float4`` on CUDA). Pointer casts, not ``vload4``: OpenCL's vloadn promises only the
        element's alignment, so compilers may split it."""
        return f"(*({self.global_ptr}{'const ' if const else ''}{self.c_type(type_name)}*)({address}))"

    def wide_element(self, type_name: str, array: str, index: str, const: bool) -> str:
        """Vector number ``index`` of ``array`` seen as an array of ``type_name`` (``((const
        float4*)pos)[j]``), as a handwritten kernel indexes its ``float4*``. NVRTC then steps one
        64-bit pointer by the vector's size through a loop; from ``pos + j * 4`` it widened the
        32-bit offset at each step (1-2% of an n-body kernel)."""
        return f"(({self.global_ptr}{'const ' if const else ''}{self.c_type(type_name)}*)({array}))[{index}]"

    # ---- types: the translator's -----------------------------------------------------------------
    def type_name(self, t) -> str:
        if isinstance(t, (Scalar, Vector)):
            short = t.short_name
            return self.c_type(short) if short else self.own_scalars[t.name]
        return "void"

    def param_scalar_name(self, t: Scalar) -> str:
        return self.type_name(Scalar("uint8") if t.name == "bool" else t)

    def vector_ctor(self, t: Vector, args: list[str]) -> str:
        return self.make_vector(t.name, args)

    def vector_member(self, t: Vector, k: int) -> str:
        return self.component(t.name, k)

    # ---- literals ------------------------------------------------------------------------------------
    def float_special(self, value: float, t: Scalar) -> str:
        """NaN or +-infinity of float type ``t`` (float16 takes the float32 spelling)."""
        wide = t.name == "float64"
        if value != value:
            return f"({self.nan64})" if wide else self.nan32
        sign = "" if value > 0 else "-"
        if wide:
            return f"({sign}{self.inf64})"
        return self.inf32 if value > 0 else f"(-{self.inf32})"

    def string_literal(self, text: str) -> str:
        """``text`` as a C string literal: UTF-8 bytes, printable ASCII kept, the rest as octal escapes
        (always three digits, so a following digit is never read as part of the escape)."""
        out = []
        for b in text.encode("utf-8"):
            c = chr(b)
            if c in '"\\':
                out.append("\\" + c)
            elif c == "\n":
                out.append("\\n")
            elif 32 <= b < 127 and c != "?":          # '?': no trigraphs
                out.append(c)
            else:
                out.append(f"\\{b:03o}")
        return '"' + "".join(out) + '"'

    # ---- print() ---------------------------------------------------------------------------------------
    def printf_call(self, format: list, args: list[str]) -> str:
        """The device printf of an ``ir.Printf``: ``format`` is its literal text (``%`` doubled here)
        and ``PrintfConversion``s (64-bit integers get ``printf_int64``), ``args`` the printed values."""
        text = "".join(p.replace("%", "%%") if isinstance(p, str) else
                       p.spec + (self.printf_int64 if p.int64 else "") + p.conv for p in format)
        return f"{self.printf}({', '.join([self.string_literal(text)] + args)})"

    # ---- work items and synchronization ---------------------------------------------------------
    def work_item(self, what: str, dim: int) -> str:
        """``what``: global_id, local_id, group_id, global_size, local_size, num_groups."""
        if dim not in (0, 1, 2):
            raise ValueError(f"gpu.get_{what}: dimension must be 0, 1 or 2, got {dim}")
        return self.work_items[what].format(d=_DIMS[dim], n=dim)

    def barrier(self, fence: str) -> str:
        """``fence``: ``"local"``, ``"global"`` or ``"both"``."""
        raise _missing_hook(self, "barrier")

    def mem_fence(self, fence: str) -> str:
        raise _missing_hook(self, "mem_fence")

    # ---- math ------------------------------------------------------------------------------------------
    def math_name(self, name: str, t) -> str:
        """C name of math function ``name`` (``sqrt``, ``fmin``...) at float type ``t`` (a Scalar or
        a short name)."""
        short = t if isinstance(t, str) else t.short_name
        if self.float_suffix and short == "float" and name not in _OVERLOADED:
            return name + "f"
        return name

    def native_math(self, name: str, t: Scalar) -> str:
        """Call template of ``gpu.rsqrt`` / ``gpu.native_<fn>`` at float32 or float64."""
        return self.native32[name] if t.name == "float32" else _PRECISE[name]

    def native_source(self, family: str) -> str:
        """The body of prelude piece ``<family>:float`` (``native_rsqrt``: ``pg_native_rsqrt_float``)
        where a ``native32`` template calls it; "" where none does."""
        return ""

    def math_call(self, name: str, at: Scalar, args: list[str], fast: bool = False) -> str:
        """A call of math function ``name`` computed in ``at``; ``fast``: gpu.rsqrt / gpu.native_*."""
        if fast:
            return self.native_math(name, at).format(*args)
        return f"{self.math_name(name, at)}({', '.join(args)})"

    def builtin_function(self, name: str, type_name: str) -> str | None:
        """The language's own function computing ``funcs.<name>`` on ``type_name`` to the host's
        precision, or None where the prelude's body is used."""
        return None

    def mul_hi64(self, a: str, b: str) -> str:
        """The high 64 bits of the 128-bit product of two unsigned 64-bit values."""
        return f"__umul64hi({a}, {b})"

    # ---- atomics and extensions ---------------------------------------------------------------------
    def atomic_source(self, op: str, type_name: str, local: bool) -> str:
        """The prelude piece ``atomic_<op>[.local]:<type_name>`` (``prelude/_atomics`` says what it means)."""
        raise _missing_hook(self, "atomic_source")

    def atomic_cas_global_int(self, p: str, cmp: str, v: str) -> str:
        """Compare-and-swap on an int in global memory, returning the old value."""
        raise _missing_hook(self, "atomic_cas_global_int")

    def extension_pragma(self, extension: str) -> str:
        """The line enabling an optional feature (``fp64``, ``int64_base_atomics``,
        ``int64_extended_atomics``); empty where it needs none."""
        return ""

    def headers(self, features: set[str]) -> list[str]:
        return []

    def launch_sized_local_param(self, type_name: str, name: str) -> str:
        """The kernel parameter of a local array sized at launch (``gpu.local_array(n, ...)``), or
        "" where it is no parameter (:meth:`launch_sized_local_body` declares it)."""
        return f"{self.local_ptr}{type_name}* {name}"

    def launch_sized_local_body(self, type_name: str, name: str, offset: str) -> list[str]:
        """Declarations at the top of the kernel body for that array (CUDA/HIP: a pointer into the
        launch's dynamic shared memory, ``offset`` bytes in: ``_entry.launch_sized_locals``)."""
        return []

    def kernel_locals(self, features: set[str]) -> list[str]:
        """Declarations at the top of the kernel body that prelude pieces rely on (OpenCL's
        subgroup emulation: its local scratch, since __local variables live only at kernel scope)."""
        return []

    def subgroup_source(self, op: str, type_name: str) -> str:
        """The prelude piece ``subgroup_<op>:<type_name>`` (``prelude/_subgroups`` says what it means)."""
        raise _missing_hook(self, "subgroup_source")


class OpenCL(Dialect):
    name = "opencl"
    reserved_words = _c_words.KEYWORDS | _c_words.OPENCL_C
    source_suffix = ".cl"
    kernel_prefix = "__kernel void"
    global_ptr = "__global "
    local_ptr = "__local "
    local_decl = "__local "
    own_scalars = {"bool": "bool", "float16": "half"}
    float16 = True
    builtin_vectors = True
    fast_math_options = ("-cl-fast-relaxed-math",)
    subgroup_group_limit = SCRATCH_ITEMS
    subgroup_scratch = "pg_sg_scratch"

    def helper_head(self, ret_text: str, name: str, params: "list[str]") -> str:
        # A helper taking the subgroup scratch reaches barriers: always inlined. Debian 12's PoCL 3.1
        # ran such helpers, left as calls, with wrong sums in about one launch of four
        # (tests/test_lang_subgroups.py::test_subgroup_ops_work_in_helpers); inlined, never.
        head = super().helper_head(ret_text, name, params)
        if any(p.endswith(f" {self.subgroup_scratch}") for p in params):
            return f"__attribute__((always_inline)) {head}"
        return head
    long_suffix = "L"
    ulong_suffix = "UL"
    printf_int64 = "l"         # OpenCL C's long is 64-bit
    nan32 = "NAN"
    inf32 = "INFINITY"
    nan64 = "(double)NAN"
    inf64 = "(double)INFINITY"
    work_items = {w: f"get_{w}({{n}})" for w in ("global_id", "local_id", "group_id", "global_size", "local_size",
                                               "num_groups")}
    native32 = {"rsqrt": "rsqrt({0})", "native_divide": "native_divide({0}, {1})", "native_powr": "native_powr({0}, {1})",
                **{f"native_{f}": f"native_{f}({{0}})" for f in ("sqrt", "rsqrt", "recip", "exp", "exp2", "exp10",
                                                                   "log", "log2", "log10", "sin", "cos", "tan")}}
    _FENCES = {"local": "CLK_LOCAL_MEM_FENCE", "global": "CLK_GLOBAL_MEM_FENCE",
               "both": "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE"}
    _PRAGMAS = {"fp64": "cl_khr_fp64", "int64_base_atomics": "cl_khr_int64_base_atomics",
                "int64_extended_atomics": "cl_khr_int64_extended_atomics"}

    def make_vector(self, type_name, comps):
        return f"(({type_name})({', '.join(comps)}))"

    def vector_literal(self, type_name, comps):
        return f"({type_name})({', '.join(comps)})"

    def barrier(self, fence):
        return f"barrier({self._FENCES[fence]})"

    def mem_fence(self, fence):
        return f"mem_fence({self._FENCES[fence]})"

    # OpenCL C's own funcs.* functions per argument kind; "double" overrides "float" for double
    # types, None there meaning the prelude's formula: OpenCL bounds the float error of mix
    # (1e-3) and smoothstep (1e-5) and leaves their double precision to the vendor (NVIDIA's double
    # smoothstep is float-accurate). Its integer abs returns the unsigned type: pg_abs_<int> keeps it.
    _FUNCS: dict[str, dict[str, str | None]] = {"dot": {"float": "dot"}, "cross": {"float": "cross"}, "length": {"float": "length"},
              "distance": {"float": "distance"}, "normalize": {"float": "normalize"},
              "clamp": {"float": "clamp", "int": "clamp"}, "mix": {"float": "mix", "double": None},
              "step": {"float": "step"}, "smoothstep": {"float": "smoothstep", "double": None},
              "fma": {"float": "fma"}, "sign": {"float": "sign"}, "radians": {"float": "radians"},
              "degrees": {"float": "degrees"}, "min": {"float": "fmin", "int": "min"},
              "max": {"float": "fmax", "int": "max"}, "abs": {"float": "fabs"}}

    def builtin_function(self, name, type_name):
        names = self._FUNCS.get(name, {})
        s, _ = split_type(type_name)
        if s not in ("float", "double"):
            return names.get("int")
        if s == "double" and "double" in names:
            return names["double"]
        return names.get("float")

    def mul_hi64(self, a, b):
        return f"mul_hi({a}, {b})"

    def atomic_source(self, op, type_name, local):
        from .prelude._atomics import opencl_atomic_source
        return opencl_atomic_source(self, op, type_name, local)

    def subgroup_source(self, op, type_name):
        from .prelude._subgroups import opencl_subgroup_source
        return opencl_subgroup_source(self, op, type_name)

    def kernel_locals(self, features):
        # PG_SG_SCRATCH_ITEMS: 1 where the device's own sub-groups serve (prelude/_subgroups)
        return ["__local ulong pg_sg_scratch[PG_SG_SCRATCH_ITEMS];"] if "subgroups" in features else []

    def atomic_cas_global_int(self, p, cmp, v):
        return f"atomic_cmpxchg((volatile __global int*){p}, {cmp}, {v})"

    def extension_pragma(self, extension):
        return f"#pragma OPENCL EXTENSION {self._PRAGMAS[extension]} : enable\n"

    def headers(self, features):
        # fp64 and 64-bit atomics pragmas come with the prelude pieces that need them (ext:*)
        lines = ["#pragma OPENCL EXTENSION cl_khr_fp16 : enable"] if "fp16" in features else []
        if "no_contract" in features:
            lines.append("#pragma OPENCL FP_CONTRACT OFF")
        return lines


_CUDA_SCALAR = {"char": "signed char", "uchar": "unsigned char", "short": "short", "ushort": "unsigned short",
                "int": "int", "uint": "unsigned int", "long": "long long", "ulong": "unsigned long long",
                "float": "float", "double": "double"}
# Built-in CUDA/HIP vector names of the 2/3/4-wide types ("long" is 64-bit: longlong).
_CUDA_VEC_BASE = {"char": "char", "uchar": "uchar", "short": "short", "ushort": "ushort", "int": "int", "uint": "uint",
                  "long": "longlong", "ulong": "ulonglong", "float": "float", "double": "double"}
# gpu.rsqrt / gpu.native_* at float32 on HIP (the hardware intrinsics where there is one); CUDA overrides the rsqrts
_HIP_NATIVE = {"rsqrt": "rsqrtf({0})", "native_sqrt": "sqrtf({0})", "native_rsqrt": "rsqrtf({0})",
               "native_recip": "__fdividef(1.0f, {0})", "native_exp": "__expf({0})", "native_exp2": "exp2f({0})",
               "native_exp10": "__exp10f({0})", "native_log": "__logf({0})", "native_log2": "__log2f({0})",
               "native_log10": "__log10f({0})", "native_sin": "__sinf({0})", "native_cos": "__cosf({0})",
               "native_tan": "__tanf({0})", "native_divide": "__fdividef({0}, {1})", "native_powr": "__powf({0}, {1})"}


class CUDA(Dialect):
    name = "cuda"
    reserved_words = _c_words.KEYWORDS | _c_words.CUDA
    source_suffix = ".cu"
    kernel_prefix = 'extern "C" __global__ void'
    device_fn_prefix = "static __device__ __forceinline__ "
    prelude_fn_prefix = "__device__ __forceinline__"
    local_decl = "__shared__ "
    own_scalars = {"bool": "bool", "float16": "__half"}
    float_suffix = True
    assume_aligned = "__builtin_assume_aligned"
    # NVRTC's EDG front end: 13.0 rejects __builtin_offsetof ("type name is not allowed"), newer
    # ones take both; __INTADDR__ is EDG's own constant-folding of an address, accepted by all.
    offsetof = "__INTADDR__(&((({type}*)0)->{member}))"
    # NVRTC: ftz, approximate div/sqrt, fast intrinsics. NVRTC 13.0 building a CUBIN dropped the
    # flush/approximation flags for some kernels (same image as the exact build; measured on the H100,
    # benchmarks/RESULTS.md) unless a ptxas option is given: -O3 is ptxas's default level, so naming
    # it changes nothing else.
    fast_math_options: tuple[str, ...] = ("--use_fast_math", "--ptxas-options=-O3")
    no_contract_options = ("--fmad=false",)
    # ids and sizes of the whole grid are widened before the product: kernels may index past 2**32 items
    work_items = {"global_id": "((long long)blockIdx.{d} * blockDim.{d} + threadIdx.{d})",
                  "global_size": "((long long)gridDim.{d} * blockDim.{d})",
                  "local_id": "threadIdx.{d}", "group_id": "blockIdx.{d}", "local_size": "blockDim.{d}",
                  "num_groups": "gridDim.{d}"}
    # rsqrtf without -ftz wraps MUFU.RSQ in a subnormal rescale (a compare, two multiplies);
    # the PTX instruction with .ftz is the bare MUFU.RSQ (prelude/_native)
    native32 = {**_HIP_NATIVE, "rsqrt": "pg_native_rsqrt_float({0})", "native_rsqrt": "pg_native_rsqrt_float({0})"}
    # CUDA 13 deprecates these 4-wide built-ins (their alignment changed); the prelude defines its own.
    own_vector_structs = frozenset({"long4", "ulong4", "double4"})
    int64_min_max_atomics = True     # atomicMin/atomicMax on long long

    def c_type(self, type_name):
        s, w = split_type(type_name)
        if w == 1:
            return _CUDA_SCALAR[s]
        if self.own_struct(type_name):
            return f"pg_{type_name}"
        return f"{_CUDA_VEC_BASE[s]}{w}"

    def own_struct(self, type_name):
        _, w = split_type(type_name)
        return w in (8, 16) or type_name in self.own_vector_structs

    def component(self, type_name, i):
        _, w = split_type(type_name)
        if w > 4:
            return f".s{i:X}"
        return "." + "xyzw"[i]

    def barrier(self, fence):
        # __syncthreads() orders shared and global memory for the block: every fence maps to it
        return "__syncthreads()"

    def mem_fence(self, fence):
        return "__threadfence()"

    def atomic_source(self, op, type_name, local):
        from .prelude._atomics import cuda_atomic_source
        return cuda_atomic_source(self, op, type_name, local)

    def launch_sized_local_param(self, type_name, name):
        return ""

    def launch_sized_local_body(self, type_name, name, offset):
        # the launch's dynamic shared memory (the launcher adds the LocalMemory byte counts up)
        return ["extern __shared__ __attribute__((aligned(16))) unsigned char pg_launch_local[];",
                f"{type_name}* {name} = ({type_name}*)(pg_launch_local + {offset});"]

    def subgroup_source(self, op, type_name):
        from .prelude._subgroups import cuda_subgroup_source
        return cuda_subgroup_source(self, op, type_name, hip=self.name == "hip")

    def atomic_cas_global_int(self, p, cmp, v):
        return f"atomicCAS({p}, {cmp}, {v})"

    def native_source(self, family):
        if family == "native_rsqrt":
            return (f'{self.prelude_fn_prefix} float pg_native_rsqrt_float(float x) '
                    '{ float r; asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }\n')
        return ""


class HIP(CUDA):
    name = "hip"
    reserved_words = _c_words.KEYWORDS | _c_words.HIP
    source_suffix = ".hip"
    fast_math_options = ("-ffast-math",)           # hiprtc and clang refuse NVRTC's --use_fast_math
    no_contract_options = ("-ffp-contract=off",)
    offsetof = Dialect.offsetof                    # hiprtc is clang: no __INTADDR__
    own_vector_structs = frozenset()
    int64_min_max_atomics = False    # a compare-exchange loop instead
    native32 = _HIP_NATIVE           # hiprtc compiles no PTX
    native_source = Dialect.native_source

    def vector_operator_builtin(self, op, form, type_name):
        """What HIP's own vector types (ROCm 5.2 HIP_vector_type, probed with hiprtc) already
        define; the prelude adds only the rest, since redefining them would be ambiguous."""
        if self.own_struct(type_name):
            return False
        s, _ = split_type(type_name)
        if form == "unary":
            return op == "~" or (op == "-" and not s.startswith("u"))
        if op in ("%", "&", "|", "^", "<<", ">>") and form == "vs=":
            return False
        if op == "<<" and form == "sv":
            return False
        return True


# ---- the registry ------------------------------------------------------------------------------------
DEFAULT_DIALECT = "opencl"
"""What ``k.inspect(...)`` writes when no backend is installed at all."""

_lock = threading.Lock()
DIALECTS: dict[str, Dialect] = {"opencl": OpenCL(), "cuda": CUDA(), "hip": HIP()}
_entry_points_failed: dict[str, str] = {}


def register_dialect(name: str, dialect) -> Dialect:
    """Make ``dialect`` (a :class:`Dialect` instance or subclass) the dialect called ``name``:
    a backend whose ``dialect`` attribute is ``name`` gets kernels written by it. Registering
    the same object again is a no-op; another object under a taken name is a ``ValueError``."""
    if isinstance(dialect, type) and issubclass(dialect, Dialect):
        dialect = dialect()
    if not isinstance(dialect, Dialect):
        raise TypeError(f"register_dialect({name!r}, ...) needs a pygpgpu_translate.Dialect instance or subclass, "
                        f"got {type(dialect).__name__}")
    if not (isinstance(name, str) and name.isidentifier()):
        raise ValueError(f"a dialect name is an identifier, got {name!r}")
    with _lock:
        known = DIALECTS.get(name)
        if known is not None and known is not dialect:
            raise ValueError(f"dialect {name!r} is already registered ({known!r}); pick another name")
        dialect.name = name
        RESERVED.add_words(dialect.reserved_words)
        DIALECTS[name] = dialect
    return dialect


def dialect_names() -> list[str]:
    return sorted(DIALECTS)


def dialect_for(name) -> Dialect:
    """The dialect registered as ``name`` (a ``Dialect`` passes through). Raises
    :class:`UnknownDialect` for a name neither registered nor provided by an entry point."""
    if isinstance(name, Dialect):
        return name
    d = DIALECTS.get(name)
    if d is not None:
        return d
    d = _from_entry_point(name)
    if d is not None:
        return d
    why = f" ({_entry_points_failed[name]})" if name in _entry_points_failed else ""
    raise UnknownDialect(f"unknown dialect {name!r}{why}; registered dialects: {', '.join(dialect_names())}. A backend "
                         "with its own language registers a target: pygpgpu_translate.target.register_target(Target(name, "
                         f"MyDialect())) or an entry point in the {ENTRY_POINT_GROUP!r} group (docs/writing-a-backend.md)")


def _resolve(ref):
    """A target's ``dialect``: the object itself, or the one a ``"module:attribute"`` names."""
    if not isinstance(ref, str):
        return ref
    module, _, attr = ref.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def _from_entry_point(name) -> Dialect | None:
    """The dialect of the target registered as ``name`` (``pygpgpu_core.targets``: in code or
    through the ``pygpgpu.targets`` entry points), registered here on first use."""
    if not isinstance(name, str) or name in _entry_points_failed:
        return None
    t = targets.target(name)
    if t is None:
        why = targets.why_missing(name)
        if why:
            _entry_points_failed[name] = why
        return None
    try:
        return register_dialect(name, _resolve(t.dialect))
    except Exception as exc:
        _entry_points_failed[name] = f"the dialect {t.dialect!r} of target {name!r} raised {type(exc).__name__}: {exc}"
        return None

