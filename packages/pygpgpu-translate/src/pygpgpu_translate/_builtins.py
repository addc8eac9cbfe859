"""The builtin registry: every function a kernel may call that is not a user helper, one row each.

A row says what the call is (qualified name, arity, accepted keywords), how it is lowered (the
``lower_*`` function of ``_calls`` it names, with the ``key`` that function is parametrized by:
the math function, the atomic operation, the work-item word...), what it does in plain Python
(``host``; ``hosts`` are other objects meaning the same, so ``math.sqrt``, ``np.sqrt`` and
``from math import sqrt`` all land on one row) and its docstring. ``gpu.*`` and ``funcs.*``
calls also resolve by name inside the ``pygpgpu_core.gpu`` / ``pygpgpu_core.funcs`` modules
(and their re-exports). How each dialect spells what a lowering produces is the dialect's
business (``_dialects``); pygpgpu-core keeps only the host functions.

Lowerings are named, not imported, so the syntax gate (``_precheck``) and a generated-source
cache hit can look builtins up without loading the translator proper.
"""
from __future__ import annotations

import builtins
import cmath
import importlib
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from pygpgpu_core import funcs as _funcs
from pygpgpu_core import gpu as _gpu
from pygpgpu_core import gpu_random

if TYPE_CHECKING:
    from ._builder import FunctionBuilder

__all__ = ["Builtin", "BUILTINS", "FUNCS", "FuncTypes", "lookup_object", "lookup_namespace", "GPU_MODULES",
           "FUNCS_MODULES", "CAST_TYPES", "supported_in"]


@dataclass(frozen=True)
class FuncTypes:
    """What a ``funcs.*`` function takes and gives: argument ``kinds`` ("float", "floatn", "int",
    "intn"; every argument has one type once the scalars at the ``scalar_ok`` positions are splat
    to the first argument's vector), vector ``widths`` (None: all) and ``result``: "same" (the
    first argument's type) or "base" (its scalar base type). The prelude's ``funcs.<f>:<T>``
    pieces exist for exactly these types."""
    kinds: frozenset
    result: str
    widths: frozenset | None = None
    scalar_ok: tuple = ()


@dataclass(frozen=True)
class Builtin:
    name: str                  # qualified: "math.sqrt", "gpu.atomic_add", "funcs.dot"
    arity: tuple               # (min, max); max None = variadic
    lowering: str              # "lower_x" in _calls, or "module:function" in this package
    host: Any = field(default=None, compare=False, hash=False)   # what the call does in plain Python
    doc: str = ""
    key: Any = ""              # what the lowering is parametrized by
    hosts: tuple = field(default=(), compare=False, hash=False)   # other objects meaning the same
    keywords: tuple = ()       # keyword arguments the lowering reads
    checked: bool = True       # False: the lowering checks arguments and keywords itself (named parameters)
    types: Any = field(default=None, compare=False, hash=False)   # funcs.*: a FuncTypes

    def lower(self, fb: FunctionBuilder, node):
        """The call at ``node`` lowered by this row's function (in the function builder ``fb``)."""
        fn = _LOWERINGS.get(self.lowering)
        if fn is None:
            module, _, name = self.lowering.rpartition(":")
            fn = _LOWERINGS[self.lowering] = getattr(importlib.import_module(f".{module or '_calls'}", __package__), name)
        return fn(fb, self, node)


_LOWERINGS: dict[str, Callable[[FunctionBuilder, Builtin, Any], Any]] = {}   # every lowering: (fb, row, call node)
BUILTINS: dict[str, Builtin] = {}


def _first_line(doc: str | None) -> str:
    return doc.strip().splitlines()[0] if doc and doc.strip() else ""


def row(name, arity, lowering, host=None, doc="", key="", hosts=(), keywords=(), checked=True, types=None) -> Builtin:
    """Add a builtin. ``arity``: an int or (min, max); ``doc``: defaults to the host's first doc line."""
    hosts = tuple(h for h in hosts if h is not None)
    if host is None and hosts:
        host, hosts = hosts[0], hosts[1:]
    b = Builtin(name, arity if isinstance(arity, tuple) else (arity, arity), lowering, host,
                doc or _first_line(getattr(host, "__doc__", None)), key, hosts, tuple(keywords), checked, types)
    BUILTINS[name] = b
    return b


# ---- float math: math.* and np.* -----------------------------------------------------------------
_FLOAT1 = {  # C name: (math attr, numpy attr, doc)
    "sqrt": ("sqrt", "sqrt", "square root"), "exp": ("exp", "exp", "e**x"), "exp2": ("exp2", "exp2", "2**x"),
    "expm1": ("expm1", "expm1", "exp(x) - 1, accurate near 0"), "log2": ("log2", "log2", "base-2 logarithm"), "log10": ("log10", "log10", "base-10 logarithm"),
    "log1p": ("log1p", "log1p", "log(1 + x), accurate near 0"), "sin": ("sin", "sin", "sine"),
    "cos": ("cos", "cos", "cosine"), "tan": ("tan", "tan", "tangent"), "asin": ("asin", "arcsin", "arc sine"),
    "acos": ("acos", "arccos", "arc cosine"), "atan": ("atan", "arctan", "arc tangent"),
    "sinh": ("sinh", "sinh", "hyperbolic sine"), "cosh": ("cosh", "cosh", "hyperbolic cosine"),
    "tanh": ("tanh", "tanh", "hyperbolic tangent"), "asinh": ("asinh", "arcsinh", "inverse hyperbolic sine"),
    "acosh": ("acosh", "arccosh", "inverse hyperbolic cosine"), "atanh": ("atanh", "arctanh", "inverse hyperbolic tangent"),
    "erf": ("erf", None, "error function"), "erfc": ("erfc", None, "complementary error function"),
    "cbrt": ("cbrt", "cbrt", "cube root"), "lgamma": ("lgamma", None, "log of the gamma function"),
    "tgamma": ("gamma", None, "gamma function"),
}
for _c, (_m, _n, _d) in _FLOAT1.items():
    row(f"math.{_c}", 1, "lower_math", doc=_d, key=_c, hosts=[getattr(math, _m, None), getattr(np, _n) if _n else None])

for _c, _m, _n, _d in [("atan2", "atan2", "arctan2", "arc tangent of y/x with the quadrant"),
                       ("hypot", "hypot", "hypot", "sqrt(x*x + y*y) without overflow"),
                       ("fmod", "fmod", "fmod", "C remainder: sign of the dividend"),
                       ("copysign", "copysign", "copysign", "magnitude of x with the sign of y"),
                       ("pow", "pow", None, "x**y in floating point")]:
    row(f"math.{_c}", 2, "lower_math", doc=_d, key=_c, hosts=[getattr(math, _m), getattr(np, _n) if _n else None])
row("np.power", 2, "lower_power", np.power, "x**y with Python/numpy typing")
row("math.log", (1, 2), "lower_log", math.log, "natural logarithm; log(x, base) is log(x) / log(base)")
row("np.log", 1, "lower_log", np.log, "natural logarithm")      # np.log's second argument is `out`

# ---- numpy's functions for operators: np.add(a, b) is a + b, with the same types and rules ---------------
for _n, _op in (("add", "+"), ("subtract", "-"), ("multiply", "*"), ("true_divide", "/"),
                ("floor_divide", "//"), ("mod", "%"), ("left_shift", "<<"), ("right_shift", ">>"),
                ("bitwise_and", "&"), ("bitwise_or", "|"), ("bitwise_xor", "^")):
    row(f"np.{_n}", 2, "lower_operator", getattr(np, _n), f"a {_op} b", _op)
row("np.square", 1, "lower_square", np.square, "x * x, in x's type")
for _n, _hosts, _factor in (("radians", (math.radians, np.radians, np.deg2rad), math.pi / 180.0),
                            ("degrees", (math.degrees, np.degrees, np.rad2deg), 180.0 / math.pi)):
    row(f"math.{_n}", 1, "lower_scale", doc=f"an angle converted to {_n}", key=_factor, hosts=list(_hosts))

for _c in ("floor", "ceil", "trunc"):
    row(f"math.{_c}", 1, "lower_float_to_int", getattr(math, _c), f"{_c} of x as an int (Python semantics)", _c)
    row(f"np.{_c}", 1, "lower_math", getattr(np, _c), f"{_c} of x, same float type (numpy semantics)", _c)
row("np.rint", 1, "lower_math", np.rint, "round half to even, same float type", "rint")
row("np.round", 1, "lower_math", np.round, "round half to even, same float type", "rint", hosts=[np.around])
row("fabs", 1, "lower_math", math.fabs, "absolute value as a float", "fabs", hosts=[np.fabs])
for _c, _np in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
    row(f"math.{_c}", 1, "lower_python_classify", getattr(math, _c), f"{_c}(x) -> bool (a Python bool)", _c)
    row(f"np.{_c}", 1, "lower_classify", _np, f"{_c}(x) -> bool (numpy's)", _c)

# ---- Python builtins with Python semantics ---------------------------------------------------------
row("abs", 1, "lower_abs", builtins.abs, "absolute value, same type (ints stay ints)", hosts=[np.abs, np.absolute])
row("min", (2, None), "lower_min_max", builtins.min, "smallest argument (Python: the first of equal ones)", ("min", None))
row("max", (2, None), "lower_min_max", builtins.max, "largest argument", ("max", None))
row("np.minimum", 2, "lower_min_max", np.minimum, "element-wise minimum; NaN if either is NaN", ("min", "propagate"))
row("np.maximum", 2, "lower_min_max", np.maximum, "element-wise maximum; NaN if either is NaN", ("max", "propagate"))
row("np.fmin", 2, "lower_min_max", np.fmin, "element-wise minimum ignoring NaN", ("min", "ignore"))
row("np.fmax", 2, "lower_min_max", np.fmax, "element-wise maximum ignoring NaN", ("max", "ignore"))
row("np.clip", 3, "lower_clamp", np.clip, "min(max(x, lo), hi)")
row("np.where", 3, "lower_where", np.where, "a if cond else b")
row("np.sign", 1, "lower_sign", np.sign, "-1, 0 or 1 in x's type; NaN stays NaN", False)
row("round", (1, 2), "lower_round", builtins.round, "Python round: half to even, an int without ndigits",
    keywords=("ndigits",))
row("pow", 2, "lower_power", builtins.pow, "x**y with Python typing")
row("len", 1, "lower_len", builtins.len, "first dimension of an array")
row("divmod", 2, "lower_divmod", builtins.divmod, "(a // b, a % b), floored as in Python", hosts=[np.divmod])

# ---- conversions -------------------------------------------------------------------------------------
CAST_TYPES = {builtins.int: "int", builtins.float: "float", builtins.bool: "bool"}
for _py, _n in ((builtins.int, "int"), (builtins.float, "float"), (builtins.bool, "bool")):
    row(_n, 1, "lower_cast", _py, f"{_n}(x) with Python semantics (truncation toward zero for int)", _n)
_NP_CASTS: dict[str, list] = {}
for _t in ("bool_", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float16", "float32", "float64", "intc", "uintc", "single", "double", "half", "intp"):
    if hasattr(np, _t):
        CAST_TYPES[getattr(np, _t)] = np.dtype(getattr(np, _t)).name
        _NP_CASTS.setdefault(np.dtype(getattr(np, _t)).name, []).append(getattr(np, _t))
for _n, _objs in _NP_CASTS.items():
    row(f"np.{_n}", 1, "lower_cast", doc=f"x converted to {_n} (integers wrap, floats truncate toward zero)", key=_n,
        hosts=_objs)

# ---- gpu.*: work items, synchronization, atomics, shared memory, fast math, random numbers ------------
for _w in ("global_id", "local_id", "group_id", "global_size", "local_size", "num_groups"):
    row(f"gpu.get_{_w}", (0, 1), "lower_work_item", getattr(_gpu, f"get_{_w}"), key=_w)
for _w in ("global_id", "local_id", "group_id"):       # i, j = gpu.global_ids(2), as Numba's cuda.grid(2)
    row(f"gpu.{_w}s", 1, "lower_work_items", getattr(_gpu, f"{_w}s"), key=_w)
for _f in _gpu.SUBGROUP_FUNCTIONS:       # warps / wavefronts (prelude/_subgroups)
    _op = _f.replace("subgroup_", "")
    row(f"gpu.{_f}", 0 if _op in ("size", "local_id") else 2 if _op.startswith("shuffle") else 1, "lower_subgroup",
        getattr(_gpu, _f), key=_op)
row("gpu.barrier", (0, 1), "lower_barrier", _gpu.barrier)
row("gpu.mem_fence", (0, 1), "lower_mem_fence", _gpu.mem_fence)
for _op in ("add", "sub", "min", "max", "and", "or", "xor", "xchg", "cmpxchg", "inc", "dec"):
    row(f"gpu.atomic_{_op}", {"cmpxchg": 4, "inc": 2, "dec": 2}.get(_op, 3), "lower_atomic",
        getattr(_gpu, f"atomic_{_op}"), key=_op)
row("gpu.local_array", (0, 2), "lower_local_array", _gpu.local_array, keywords=("shape", "dtype"))
row("gpu.work_size", (1, None), "lower_work_size", _gpu.work_size)
row("gpu.rsqrt", 1, "lower_native", _gpu.rsqrt, key="rsqrt")
for _name, _host in _gpu.NATIVE_FUNCS.items():
    row(f"gpu.{_name}", 2 if _name in ("native_divide", "native_powr") else 1, "lower_native", _host, key=_name)
for _r, _arity in (("uniform", 2), ("normal", 2), ("randint", 4)):
    row(f"gpu.{_r}", _arity, "_random_calls:call_random", getattr(gpu_random, _r), key=_r,
        keywords=("dtype",) if _r != "randint" else (), checked=False)

# ---- complex numbers (_complex): abs, np.exp and np.sqrt take them through their own rows -----------------
row("cmath.exp", 1, "_complex:lower_cmath", cmath.exp, "e**z of a complex number", "exp")
row("cmath.sqrt", 1, "_complex:lower_cmath", cmath.sqrt, "principal square root of a complex number", "sqrt")
row("np.real", 1, "_complex:lower_part", np.real, "the real part", "real")
row("np.imag", 1, "_complex:lower_part", np.imag, "the imaginary part", "imag")
row("np.conjugate", 1, "_complex:lower_conj", np.conjugate, "the complex conjugate")
row("complex", (0, 2), "_complex:lower_complex", builtins.complex, "complex(re, im) in the default float's precision")
row("np.complex64", (0, 1), "_complex:lower_complex", np.complex64, "x as complex64", "float32")
row("np.complex128", (0, 1), "_complex:lower_complex", np.complex128, "x as complex128", "float64")

# ---- funcs.*: the dual-sided vector/scalar functions (pygpgpu_core.funcs on the host) ------------------
_F = frozenset({"float", "floatn"})
_FI = frozenset({"float", "floatn", "int", "intn"})
_GEO = frozenset({"float", "floatn"})
FUNCS: dict[str, Builtin] = {}
for _name, _arity, _lowering, _key, _types in [
        ("dot", 2, "lower_dot", "", FuncTypes(_GEO, "base", frozenset({2, 3, 4}))),
        ("cross", 2, "lower_cross", "", FuncTypes(frozenset({"floatn"}), "same", frozenset({3, 4}))),
        ("length", 1, "lower_length", "", FuncTypes(_GEO, "base", frozenset({2, 3, 4}))),
        ("distance", 2, "lower_distance", "", FuncTypes(_GEO, "base", frozenset({2, 3, 4}))),
        ("normalize", 1, "lower_normalize", "", FuncTypes(_GEO, "same", frozenset({2, 3, 4}))),
        ("reflect", 2, "lower_reflect", "", FuncTypes(frozenset({"floatn"}), "same", frozenset({2, 3, 4}))),
        ("clamp", 3, "lower_clamp", "", FuncTypes(_FI, "same", scalar_ok=(1, 2))),
        ("mix", 3, "lower_mix", "", FuncTypes(_F, "same", scalar_ok=(2,))),
        ("step", 2, "lower_step", "", FuncTypes(_F, "same", scalar_ok=(0,))),
        ("smoothstep", 3, "lower_smoothstep", "", FuncTypes(_F, "same", scalar_ok=(0, 1))),
        ("fma", 3, "lower_math", "fma", FuncTypes(_F, "same")),
        ("sign", 1, "lower_sign", True, FuncTypes(_FI, "same")),
        ("radians", 1, "lower_scale", math.pi / 180.0, FuncTypes(_F, "same")),
        ("degrees", 1, "lower_scale", 180.0 / math.pi, FuncTypes(_F, "same")),
        ("min", 2, "lower_min_max", ("min", "ignore"), FuncTypes(_FI, "same", scalar_ok=(1,))),
        ("max", 2, "lower_min_max", ("max", "ignore"), FuncTypes(_FI, "same", scalar_ok=(1,))),
        ("abs", 1, "lower_abs", "", FuncTypes(_FI, "same"))]:
    FUNCS[_name] = row(f"funcs.{_name}", _arity, _lowering, getattr(_funcs, _name), key=_key, types=_types)

_BY_OBJECT: dict[int, Builtin] = {}
for _b in BUILTINS.values():
    for _h in (_b.host,) + _b.hosts:
        if _h is not None:
            _BY_OBJECT.setdefault(id(_h), _b)

GPU_MODULES = ("pygpgpu_core.gpu", "pygpgpu.gpu")
FUNCS_MODULES = ("pygpgpu_core.funcs", "pygpgpu.funcs", "pygpgpu.vec_types.funcs", "pygpgpu_core.vec_types.funcs")


def supported_in(module: str) -> list[str]:
    """The names of module ``module``'s functions (``"numpy"``, ``"math"``) that kernels translate,
    for an error about one that they do not."""
    names = set()
    for b in BUILTINS.values():
        for h in (b.host,) + b.hosts:
            if getattr(h, "__module__", None) == module and callable(h) and not isinstance(h, type):
                names.add(h.__name__)
    return sorted(names)


def lookup_object(obj) -> "Builtin | None":
    """The builtin a resolved Python object stands for (``math.sqrt``, ``np.abs``, ``gpu.barrier`` ...)."""
    b = _BY_OBJECT.get(id(obj))
    if b is not None:
        return b
    mod = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None)
    if name and mod:
        return lookup_namespace(mod, name)
    return None


def lookup_namespace(module_name: str, attr: str) -> "Builtin | None":
    if module_name in GPU_MODULES or module_name.startswith("pygpgpu_core.gpu"):
        return BUILTINS.get(f"gpu.{attr}") or BUILTINS.get(f"funcs.{attr}")
    if module_name in FUNCS_MODULES or module_name.startswith("pygpgpu_core.funcs"):
        return BUILTINS.get(f"funcs.{attr}")
    return None
