"""The ``wgsl`` target: how ``@kernel`` functions are written in WGSL, through the translator's
public target surface only (``pygpgpu_translate.target``).

A WGSL kernel takes no parameters: its arrays are ``var<storage>`` bindings at module scope, one
per launch argument at ``@binding(i)`` (``i``: the argument's position), and its values one
``var<uniform>`` struct (``pg_values``, at the binding after the last array) read into locals of
their own names at the top of the body. The runtime packs the values into that struct in launch
order (``_values``: WGSL's uniform layout). Work items come from ``@builtin`` parameters.

The translator's prelude helpers (Python's ``//`` and ``%``, ``min``/``max``, ``funcs.*``...) are
written in WGSL by ``_prelude`` (``prelude_piece``); atomics on int32/uint32 are written inline on
``atomic<T>`` arrays (``prelude_call``, ``atomic_element``, ``atomic_load``, ``atomic_store``);
bool, 8- and 16-bit array elements are packed in 32-bit words (``_packed``: ``element_load``,
``element_store``), and a float ``!=`` is IEEE's (``float_not_equal``).

What WGSL cannot express is refused by name while the kernel is written (``WGSLUnsupported``), with
the backends that have it: float64, 64-bit integers, print(), helpers taking arrays, local arrays sized at launch, math functions WGSL lacks, atomics on
floats, vectors wider than 4, complex numbers, random numbers and subgroup operations.
The words of the language are the dialect's; the rest is the shared translator.
"""
from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path

from pygpgpu_translate.target import KernelParam, KernelSignature, KernelTypeError, OpenCL, Target

from . import _packed, _prelude
from ._values import VALUES_BINDING_NAME, VALUES_STRUCT, wgsl_value_type

__all__ = ["WGSL", "TARGET", "WGSLUnsupported", "WORKGROUP_SIZE", "FOLD_MARK"]

WORKGROUP_SIZE = (64, 1, 1)
"""The ``@workgroup_size`` of every translated kernel (WGSL fixes it in the source)."""
FOLD_MARK = "pg_folds_x_into_z"
"""A module constant saying the kernel unfolds workgroups in z into x (the runtime may fold)."""

OTHER_BACKENDS = "cuda, hip and opencl"

# prelude short names -> WGSL; None: WGSL has no such type
# (8- and 16-bit integers are 32-bit values under an alias of their own, packed in buffers: _packed)
_SCALARS = {"float": "f32", "int": "i32", "uint": "u32", "bool": "bool", "half": "f16",
            "double": None, "long": None, "ulong": None, **_packed.ALIASES}
_NUMPY = {"double": "float64", "long": "int64", "ulong": "uint64"}
_CAPABILITY = {"double": "fp64", "long": "int64", "ulong": "int64"}
# C math names the translator asks for -> WGSL's
_MATH = {"fabs": "abs", "fmin": "min", "fmax": "max", "rsqrt": "inverseSqrt", "atan2": "atan2", "pow": "pow",
         "rint": "round",     # WGSL's round takes the even neighbour at halves, as rint and numpy do
         "exp10": None, "log10": None, "cbrt": None, "erf": None, "erfc": None, "tgamma": None, "lgamma": None,
         "hypot": None, "expm1": None, "log1p": None, "copysign": None, "nextafter": None,
         "isnan": None, "isinf": None, "isfinite": None}


# math functions WGSL lacks, composed of its own (log10/exp10 through base 2: a rounding more)
_COMPOSED = {"log10": "(log2({0}) * 0.30102999566398120)", "exp10": "exp2(({0}) * 3.3219280948873623)",
             "hypot": "length(vec2({0}, {1}))"}
# gpu.rsqrt and gpu.native_*: WGSL has one precision, so they are the ordinary functions
_NATIVE = {"rsqrt": "inverseSqrt({0})", "native_sqrt": "sqrt({0})", "native_rsqrt": "inverseSqrt({0})",
           "native_recip": "(1.0 / ({0}))", "native_exp": "exp({0})", "native_exp2": "exp2({0})",
           "native_exp10": _COMPOSED["exp10"], "native_log": "log({0})", "native_log2": "log2({0})",
           "native_log10": _COMPOSED["log10"], "native_sin": "sin({0})", "native_cos": "cos({0})",
           "native_tan": "tan({0})", "native_divide": "(({0}) / ({1}))", "native_powr": "pow({0}, {1})"}

_NEGATIVE_LITERAL = re.compile(r"\(*-(\d+)\)*")
# math.isnan/isinf/isfinite at float32 on the magnitude's bits
_CLASSIFY = {"isnan": "({} > 0x7f800000u)", "isinf": "({} == 0x7f800000u)", "isfinite": "({} < 0x7f800000u)"}


class WGSLUnsupported(KernelTypeError):
    """A kernel uses something WGSL cannot express (names it, and the backends that have it); the
    translator adds the user's file and line (``filename``, ``lineno``). ``capability`` names what
    is missing as the webgpu device declares it (``WebGPUDevice.lacks``: ``"fp64"``, ``"printf"``...)."""

    capability = ""


def _refuse(what: str, fix: str = "", capability: str = "") -> WGSLUnsupported:
    """The refusal of ``what``; ``capability``: its name in the device's ``lacks`` (``_device``)."""
    exc = WGSLUnsupported(f"WGSL (the webgpu backend) has no {what}; {OTHER_BACKENDS} have it: run the kernel on "
                          f"one of them (k['opencl']){'; ' + fix if fix else ''}")
    exc.capability = capability
    return exc


def _vector(type_name: str) -> "tuple[str, int] | None":
    base = type_name.rstrip("0123456789")
    width = type_name[len(base):]
    return (base, int(width)) if width else None


class WGSL(OpenCL):
    """WGSL's words. Built on the public ``OpenCL`` dialect (expressions, operators and literals
    are C-like in both); everything that differs is overridden here."""

    reserved_words = OpenCL.reserved_words | frozenset(
        "alias array atomic bitcast bool break case const const_assert continue continuing default diagnostic "
        "discard else enable f16 f32 false fn for i32 if let loop override ptr requires return select storage "
        "struct switch true u32 uniform var vec2 vec3 vec4 while workgroup read read_write write "
        "mat2x2 mat3x3 mat4x4 sampler texture_2d arrayLength workgroupBarrier storageBarrier".split()) | frozenset(
        # WGSL's reserved words (the spec's list: a kernel array named `of` failed to parse)
        "NULL Self abstract active alignas alignof as asm asm_fragment async attribute auto await become "
        "binding_array cast catch class co_await co_return co_yield coherent column_major common compile "
        "compile_fragment concept const_cast consteval constexpr constinit crate debugger decltype delete demote "
        "demote_to_helper do dynamic_cast enum explicit export extends extern external fallthrough filter final "
        "finally friend from fxgroup get goto groupshared highp impl implements import inline instanceof interface "
        "layout lowp macro macro_rules match mediump meta mod module move mut noexcept noinline nointerpolation "
        "noperspective null nullptr of operator package packoffset partition pass patch pixelfragment precise "
        "precision premerge priv protected pub public readonly ref regardless register reinterpret_cast require "
        "resource restrict self set shared sizeof smooth snorm static static_assert static_cast std subroutine "
        "super target template this thread_local throw trait try type typedef typeid typename typeof union unless "
        "unorm unsafe unsized use using varying virtual volatile wgsl where with writeonly yield".split())
    vector_views = False                      # no pointer casts: no wide kernels, no row loads
    own_scalars = {"bool": "bool", "float16": "f16"}   # f16 where the adapter has shader-f16 (device.fp16)
    builtin_vectors = True
    float_suffix = False
    nan32 = "bitcast<f32>(0x7fc00000u)"
    inf32 = "bitcast<f32>(0x7f800000u)"
    work_items = {"global_id": "i32(pg_gid.{d})", "local_id": "i32(pg_lid.{d})", "group_id": "i32(pg_wid.{d})",
                  "num_groups": "i32(pg_nwg.{d})", "local_size": "pg_wgsize.{d}",
                  "global_size": "(i32(pg_nwg.{d}) * pg_wgsize.{d})"}
    # Dimension 0 of these goes through a prologue value: a 1-D or 2-D launch with more workgroups
    # in x than the adapter dispatches (65535 on most) is folded into z by the runtime, and these
    # values unfold it (_fold_prologue)
    _FOLDED = {"global_id": "pg_gx", "group_id": "pg_wx", "num_groups": "pg_nx", "global_size": "pg_gsx"}
    _BUILTINS = {"global_id": ("gid", "nwg"), "local_id": ("lid",), "group_id": ("wid", "nwg"),
                 "num_groups": ("nwg",), "global_size": ("nwg",), "local_size": ()}
    _BUILTIN_DECL = {"gid": "@builtin(global_invocation_id) pg_gid: vec3<u32>",
                     "lid": "@builtin(local_invocation_id) pg_lid: vec3<u32>",
                     "wid": "@builtin(workgroup_id) pg_wid: vec3<u32>",
                     "nwg": "@builtin(num_workgroups) pg_nwg: vec3<u32>"}

    def __init__(self) -> None:
        # workgroup arrays met while the kernel's body is written, declared at module scope by
        # kernel_signature (the emitter writes the body first); per thread, as translations may run in several
        self._pending = threading.local()

    def fingerprint(self) -> str:
        """The class and reserved words (the default), and this module's own text: the generated-source
        cache then misses when the plug-in's spellings change, not only its name."""
        known = self.__dict__.get("_source_fingerprint")
        if known is None:
            text = Path(__file__).read_bytes()
            known = self.__dict__["_source_fingerprint"] = hashlib.sha256(
                super().fingerprint().encode() + text).hexdigest()[:16]
        return known

    # ---- types and declarations ----------------------------------------------------------------
    def c_type(self, type_name: str) -> str:
        """WGSL's name of a type; a type WGSL lacks keeps its short name, refused where a
        declaration, a cast or a binding uses it (``_check``): the translator also names types it
        never declares (a record's padding byte)."""
        if type_name in _SCALARS:
            return _SCALARS[type_name] or type_name
        vec = _vector(type_name)
        if vec is not None:
            base, width = vec
            if width > 4:
                raise _refuse(f"{width}-wide vectors ({type_name})", "or use vectors of 2 to 4 components",
                              "wide_vectors")
            return f"vec{width}<{self.c_type(base)}>"
        return type_name

    def component(self, type_name: str, i: int) -> str:
        return "." + "xyzw"[i]

    def make_vector(self, type_name: str, comps: "list[str]") -> str:
        return f"{self.c_type(type_name)}({', '.join(comps)})"

    vector_literal = make_vector

    @staticmethod
    def _check(type_text: str, what: str) -> str:
        base = type_text.split("<")[-1].rstrip(">") if type_text.startswith("vec") else type_text
        if base in _NUMPY:
            raise _refuse(f"{_NUMPY[base]} type ({what})", "or pass float32, int32 or uint32 data", _CAPABILITY[base])
        return type_text

    def declaration(self, type_text: str, name: str) -> str:
        return f"{name}: {self._check(type_text, name)}"

    def local_variable(self, type_text: str, name: str) -> str:
        return f"var {name}: {self._check(type_text, name)};"

    def array_variable(self, elem_text: str, name: str, size: int, local: bool) -> str:
        self._check(elem_text, name)
        if not local:
            return f"var {name}: array<{elem_text}, {size}>;"
        pending = getattr(self._pending, "arrays", None)
        if pending is None:
            pending = self._pending.arrays = []
        pending.append(f"var<workgroup> {name}: array<{elem_text}, {size}>;")
        return "// " + f"{name}: workgroup memory, declared at module scope"

    def pointer_type(self, space: str, elem_text: str, const: bool) -> str:
        raise _refuse("pointers: helpers cannot take arrays or out-parameters",
                      "or pass the elements the helper needs and return its result", "pointer_arguments")

    def cast(self, type_text: str, expr: str) -> str:
        """``T(expr)``; a negative integer literal made unsigned is written wrapped, as C converts it:
        WGSL refuses ``u32(-1)`` at compile time (the value does not fit)."""
        self._check(type_text, "a conversion")
        if type_text in _packed.PACKED and type_text != "bool":
            return _packed.cast(type_text, expr)
        literal = _NEGATIVE_LITERAL.fullmatch(expr)
        if type_text == "u32" and literal:
            return f"{(-int(literal.group(1))) & 0xFFFFFFFF}u"
        return f"{type_text}({expr})"

    def line_directive(self, line: int, filename: str) -> str:
        return ""

    def float_not_equal(self, a: str, b: str, type_text: str) -> str:
        return f"pg_wgsl_ne_{type_text}({a}, {b})" if type_text in ("f32", "f16") else super().float_not_equal(a, b, type_text)

    def element_load(self, array: str, index: str, elem_text: str) -> str:
        """An 8/16-bit element (bool, int8...) through its array's function (``_packed``)."""
        if elem_text in _packed.PACKED:
            return f"pg_load_{array}(u32({index}))"
        return super().element_load(array, index, elem_text)

    def element_store(self, array: str, index: str, elem_text: str, value: str) -> str:
        if elem_text in _packed.PACKED:
            return f"pg_store_{array}(u32({index}), {value});"
        return super().element_store(array, index, elem_text, value)

    def helper_head(self, ret_text: str, name: str, params: "list[str]") -> str:
        """WGSL's parameters are immutable: each is ``pg_in_<name>``, copied into a ``var`` of its
        own name by :meth:`helper_prologue` (a helper may assign to its parameters)."""
        renamed = [f"pg_in_{p}" for p in params]
        return f"fn {name}({', '.join(renamed)})" + ("" if ret_text == "void" else f" -> {ret_text}")

    def helper_prologue(self, params: "list[str]") -> "list[str]":
        names = [p.split(":")[0].strip() for p in params]
        return [f"var {n} = pg_in_{n};" for n in names]

    def param_scalar_name(self, t) -> str:
        return self.type_name(t)

    # ---- the kernel ------------------------------------------------------------------------------
    def work_item(self, what: str, dim: int) -> str:
        if dim == 0 and what in self._FOLDED:
            return self._FOLDED[what]
        return super().work_item(what, dim)

    @staticmethod
    def _fold_prologue(work_items: "frozenset[tuple[str, int]]") -> "tuple[list[str], bool]":
        """The dimension-0 values the body reads, and whether the kernel may be folded: a kernel
        that reads no dimension-2 item has z to spare, so ``x = x + z * (workgroups in x)``
        (``FOLD_MARK`` tells the runtime it may launch so)."""
        folds = not any(dim == 2 for _, dim in work_items)
        z = " + i32(pg_{0}.z) * i32(pg_nwg.x){1}" if folds else ""
        lines = {"global_id": "let pg_gx = i32(pg_gid.x)" + z.format("gid", " * pg_wgsize.x") + ";",
                 "group_id": "let pg_wx = i32(pg_wid.x)" + z.format("wid", "") + ";",
                 "num_groups": "let pg_nx = i32(pg_nwg.x)" + (" * i32(pg_nwg.z)" if folds else "") + ";",
                 "global_size": "let pg_gsx = i32(pg_nwg.x)" + (" * i32(pg_nwg.z)" if folds else "") + " * pg_wgsize.x;"}
        return [line for what, line in lines.items() if (what, 0) in work_items], folds

    def kernel_signature(self, name: str, params: "list[KernelParam]",
                         work_items: "frozenset[tuple[str, int]]") -> KernelSignature:
        scope: list[str] = []
        prologue: list[str] = []
        values: list[str] = []
        accessors: list[str] = []
        for p in params:
            self._check(p.type_text, f"parameter {p.name}")
            if p.kind == "local":
                raise _refuse("local arrays sized at launch (gpu.local_array(n) with n from the call)",
                              "or give the local array a size known when the kernel is written", "launch_sized_local")
            if p.kind == "global":
                access = "read_write" if p.written else "read"
                elem = p.type_text
                if elem in _packed.PACKED:
                    elem = _packed.binding_type(p.written)
                    accessors.extend(_packed.accessors(p.name, p.type_text, p.written))
                scope.append(f"@group(0) @binding({p.index}) var<storage, {access}> {p.name}: array<{elem}>;")
                prologue.append(f"_ = &{p.name};")          # every binding used: the launch passes them all
            else:
                field_type, read = wgsl_value_type(p.type_text)
                values.append(f"    {p.name}: {field_type},")
                # var: a kernel may assign to its value parameters (Python's do)
                prologue.append(f"var {p.name} = {read.format(f'{VALUES_BINDING_NAME}.{p.name}')};")
        if values:
            binding = len(params)
            scope[:0] = [f"struct {VALUES_STRUCT} {{", *values, "}"]
            scope.append(f"@group(0) @binding({binding}) var<uniform> {VALUES_BINDING_NAME}: {VALUES_STRUCT};")
        scope.extend(accessors)
        scope.append("const pg_wgsize = vec3<i32>({}, {}, {});".format(*WORKGROUP_SIZE))
        unfold, folds = self._fold_prologue(work_items)
        if folds:
            scope.append(f"const {FOLD_MARK} = true;")
        scope.extend(getattr(self._pending, "arrays", None) or [])
        self._pending.arrays = []
        used = {b for what, _ in work_items for b in self._BUILTINS.get(what, ())}
        builtins = [self._BUILTIN_DECL[b] for b in sorted(used)]
        head = "@compute @workgroup_size({}, {}, {})\nfn {}({})".format(*WORKGROUP_SIZE, name, ", ".join(builtins))
        return KernelSignature(head, scope, prologue + unfold)

    # ---- statements and calls ---------------------------------------------------------------------
    def barrier(self, fence: str) -> str:
        if fence == "local":
            return "workgroupBarrier()"
        return "storageBarrier(); workgroupBarrier()"

    def mem_fence(self, fence: str) -> str:
        return self.barrier(fence)

    def printf_call(self, format: list, args: "list[str]") -> str:
        raise _refuse("print() in kernels", "or write the values to an output array", "printf")

    def math_name(self, name: str, t) -> str:
        """WGSL's name of a C math function (the prelude's C pieces ask too: a name WGSL lacks
        passes through, and such a piece fails to compile naming itself)."""
        return _MATH.get(name) or name

    def math_call(self, name: str, at, args: "list[str]", fast: bool = False) -> str:
        """The calls WGSL spells otherwise: ``fmod`` is the exact one every kernel carries
        (``_prelude.exact_fmod``: WGSL's float ``%`` rounds the quotient first); the classifications test the bits, since WGSL lets a compiler assume no
        NaN or infinity reaches a comparison."""
        if not fast and name == "fmod" and getattr(at, "name", at) in ("float32", "float", "float16", "half"):
            return f"pg_wgsl_fmod_{self.type_name(at) if not isinstance(at, str) else _SCALARS[at]}({args[0]}, {args[1]})"
        if not fast and name in _CLASSIFY and getattr(at, "name", at) in ("float32", "float"):
            return _CLASSIFY[name].format(f"(bitcast<u32>({args[0]}) & 0x7fffffffu)")
        if not fast and name in _COMPOSED:
            return _COMPOSED[name].format(*args)
        if not fast and name == "copysign":
            if getattr(at, "name", at) in ("float32", "float"):
                return f"bitcast<f32>((bitcast<u32>({args[0]}) & 0x7fffffffu) | (bitcast<u32>({args[1]}) & 0x80000000u))"
            return f"select(abs({args[0]}), -abs({args[0]}), ({args[1]}) < 0.0)"
        if not fast and name in _MATH and _MATH[name] is None:
            raise _refuse(f"math function {name}()", "or compose it from sqrt/exp/log/pow/abs", "math_functions")
        return super().math_call(name, at, args, fast)

    def native_math(self, name: str, t) -> str:
        if name not in _NATIVE:
            raise _refuse(f"gpu.{name}", "or use the math module's function", "math_functions")
        return _NATIVE[name]

    def ternary(self, cond: str, a: str, b: str) -> str:
        """WGSL's ``select`` evaluates both sides: the translator's conditionals have no side effects
        on either, and a read out of range on the side not taken is bounded by WGSL's robust
        buffer access."""
        return f"select({b}, {a}, {cond})"

    # ---- prelude pieces and atomics ------------------------------------------------------------------
    def prelude_piece(self, name: str):
        """Every piece in WGSL (``_prelude``); one WGSL cannot have is refused naming it."""
        own = _prelude.piece(name, _refuse)
        if own is not None:
            return own
        family, _, type_name = name.partition(":")
        vec = _vector(type_name)
        if type_name in _NUMPY:
            raise _refuse(f"{_NUMPY[type_name]} type ({name})", "or use float32, int32 or uint32 values",
                          _CAPABILITY[type_name])
        if vec is not None and vec[0] in _NUMPY:
            raise _refuse(f"{_NUMPY[vec[0]]} type ({type_name} vectors)", "or use float32, int32 or uint32 vectors",
                          _CAPABILITY[vec[0]])
        if vec is not None and vec[1] > 4:
            raise _refuse(f"{vec[1]}-wide vectors ({type_name})", "or use vectors of 2 to 4 components", "wide_vectors")
        what = {"complex": "complex numbers", "random_uniform": "gpu.uniform", "random_normal": "gpu.normal",
                "random_randint": "gpu.randint", "philox": "gpu.* random numbers"}.get(family, "")
        capability = {"complex": "complex"}.get(family) or (
            "random" if "random" in family or family == "philox" else
            "subgroups" if family.startswith("subgroup") else
            "narrow_arithmetic" if type_name in _packed.ALIASES else "types")
        what = what or ("subgroup operations (gpu.subgroup_*)" if family.startswith("subgroup") else
                        f"{type_name} values ({name})" if type_name not in _packed.ALIASES else
                        f"{name.split(':')[0]} on 8- and 16-bit integers ({name})")
        raise _refuse(what, "" if type_name not in _packed.ALIASES else "or compute in int32 (x.astype(np.int32))",
                      capability)

    def prelude_call(self, function: str, args: "list[str]") -> str:
        return _prelude.call(function, args) or super().prelude_call(function, args)

    def expression_statement(self, expr: str) -> str:
        # a call statement may be any call; another value (atomicCompareExchangeWeak(...).old_value) goes to _
        return f"{expr};" if expr.endswith(")") else f"_ = {expr};"

    def atomic_element(self, elem_text: str) -> str:
        return f"atomic<{elem_text}>"

    def atomic_load(self, element: str) -> str:
        return f"atomicLoad(&{element})"

    def atomic_store(self, element: str, value: str) -> str:
        return f"atomicStore(&{element}, {value});"

    def headers(self, features: "set[str]") -> "list[str]":
        self._pending.arrays = []       # a program starts here: nothing left from one that failed
        common = [*_packed.ALIAS_DECLARATIONS, _prelude.exact_fmod("f32"), _prelude.not_equal("f32")]
        if "fp16" in features:
            return ["enable f16;", *common, _prelude.exact_fmod("f16"), _prelude.not_equal("f16")]
        return common

    def extension_pragma(self, extension: str) -> str:
        return ""


TARGET = Target("wgsl", WGSL())
"""The target with its dialect resolved (the entry point, ``_target_entry``, names it by reference)."""
