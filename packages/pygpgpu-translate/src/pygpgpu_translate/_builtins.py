"""The builtin table: every function a kernel may call that is not a user helper.

One row per builtin: qualified name, arity, type rule (implemented once in ``_calls``), a key
the rule uses (the C base name of math.* rows, each dialect spelling it: ``sqrt`` -> ``sqrtf``
on CUDA for float32), the host objects that resolve to it (so ``math.sqrt``, ``np.sqrt`` and
``from math import sqrt`` all land here) and a docstring.

gpu.* and funcs.* rows are not written here: they are generated from ``pygpgpu_core.gpu.GPU_TABLE``
and ``pygpgpu_core.funcs.FUNCS_TABLE``, which own what those functions are (names, arities,
docs, host behaviour) and how each dialect spells them (``_dialects`` reads GPU_TABLE's
templates; funcs.* lower to IR or to prelude pieces). This table adds only what the translator
needs on top: which type rule applies. They resolve by name inside the ``pygpgpu_core.gpu`` /
``pygpgpu_core.funcs`` modules (and their re-exports).
"""
from __future__ import annotations

import builtins
import math
from dataclasses import dataclass, field

import numpy as np
from pygpgpu_core import gpu_random
from pygpgpu_core.funcs import FUNCS_TABLE
from pygpgpu_core.gpu import GPU_TABLE

__all__ = ["Builtin", "BUILTINS", "lookup_object", "lookup_namespace", "GPU_MODULES", "FUNCS_MODULES", "CAST_TYPES"]


@dataclass(frozen=True)
class Builtin:
    name: str                  # qualified: "math.sqrt", "gpu.atomic_add", "funcs.dot"
    arity: tuple               # (min, max); max None = variadic
    rule: str                  # type/lowering rule the builder applies
    cname: str = ""            # C base name (dialects add suffixes / native_ prefixes)
    doc: str = ""
    hosts: tuple = field(default=(), compare=False, hash=False)


BUILTINS: dict[str, Builtin] = {}


def _add(name, arity, rule, cname="", doc="", hosts=()):
    BUILTINS[name] = Builtin(name, arity if isinstance(arity, tuple) else (arity, arity), rule, cname, doc, tuple(hosts))


# ---- float math: math.* and np.* -----------------------------------------------------------------
_FLOAT1 = {  # C name: (math attr, numpy attr, doc)
    "sqrt": ("sqrt", "sqrt", "square root"), "exp": ("exp", "exp", "e**x"), "exp2": ("exp2", "exp2", "2**x"),
    "expm1": ("expm1", "expm1", "exp(x) - 1, accurate near 0"), "log": ("log", "log", "natural logarithm"),
    "log2": ("log2", "log2", "base-2 logarithm"), "log10": ("log10", "log10", "base-10 logarithm"),
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
    hosts = [getattr(math, _m, None), getattr(np, _n, None) if _n else None]
    _add(f"math.{_c}", 1, "float1", _c, _d, [h for h in hosts if h is not None])

for _c, _m, _n, _d in [("atan2", "atan2", "arctan2", "arc tangent of y/x with the quadrant"),
                       ("hypot", "hypot", "hypot", "sqrt(x*x + y*y) without overflow"),
                       ("fmod", "fmod", "fmod", "C remainder: sign of the dividend"),
                       ("copysign", "copysign", "copysign", "magnitude of x with the sign of y"),
                       ("pow", "pow", None, "x**y in floating point")]:
    _add(f"math.{_c}", 2, "float2", _c, _d, [h for h in (getattr(math, _m), getattr(np, _n) if _n else None) if h is not None])
_add("np.power", 2, "pow", "pow", "x**y with Python/numpy typing", [np.power])

for _c in ("floor", "ceil", "trunc"):
    _add(f"math.{_c}", 1, "float_to_int", _c, f"{_c} of x as an int (Python semantics)", [getattr(math, _c)])
    _add(f"np.{_c}", 1, "float_round", _c, f"{_c} of x, same float type (numpy semantics)", [getattr(np, _c)])
_add("np.rint", 1, "float_round", "rint", "round half to even, same float type", [np.rint])
_add("np.round", (1, 1), "float_round", "rint", "round half to even, same float type", [np.round, np.around])
_add("fabs", 1, "fabs", "fabs", "absolute value as a float", [math.fabs, np.fabs])

for _c, _hosts in (("isnan", [math.isnan, np.isnan]), ("isinf", [math.isinf, np.isinf]),
                   ("isfinite", [math.isfinite, np.isfinite])):
    _add(f"math.{_c}", 1, "predicate", _c, f"{_c}(x) -> bool", _hosts)

# ---- Python builtins with Python semantics ---------------------------------------------------------
_add("abs", 1, "abs", "", "absolute value, same type (ints stay ints)", [builtins.abs, np.abs, np.absolute])
_add("min", (2, None), "min", "", "smallest argument (Python: the first of equal ones)", [builtins.min])
_add("max", (2, None), "max", "", "largest argument", [builtins.max])
_add("np.minimum", 2, "npmin", "", "element-wise minimum; NaN if either is NaN", [np.minimum])
_add("np.maximum", 2, "npmax", "", "element-wise maximum; NaN if either is NaN", [np.maximum])
_add("np.fmin", 2, "fmin", "", "element-wise minimum ignoring NaN", [np.fmin])
_add("np.fmax", 2, "fmax", "", "element-wise maximum ignoring NaN", [np.fmax])
_add("np.clip", 3, "clip", "", "min(max(x, lo), hi)", [np.clip])
_add("np.where", 3, "where", "", "a if cond else b", [np.where])
_add("np.sign", 1, "sign", "", "-1, 0 or 1 in x's type", [np.sign])
_add("round", (1, 2), "round", "rint", "Python round: half to even, an int without ndigits", [builtins.round])
_add("pow", 2, "pow", "pow", "x**y with Python typing", [builtins.pow])
_add("len", 1, "len", "", "first dimension of an array", [builtins.len])

CAST_TYPES = {builtins.int: "int", builtins.float: "float", builtins.bool: "bool"}
for _t in ("bool_", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
           "float16", "float32", "float64", "intc", "uintc", "single", "double", "half", "intp"):
    if hasattr(np, _t):
        CAST_TYPES[getattr(np, _t)] = np.dtype(getattr(np, _t)).name
for _py, _n in ((builtins.int, "int"), (builtins.float, "float"), (builtins.bool, "bool")):
    _add(_n, 1, "cast", "", f"{_n}(x) with Python semantics (truncation toward zero for int)", [_py])

# ---- gpu.* and funcs.*: names, arities and docs come from pygpgpu-core's tables --------------------
# GPU_TABLE / FUNCS_TABLE say what each function is and how every dialect spells it; a row here only
# adds the translator's type rule (and the key the rule passes on: a GPU_TABLE name for "native", the
# work-item word, the atomic op).
def _first_line(doc: str) -> str:
    return doc.strip().splitlines()[0] if doc.strip() else ""


_GPU_RULES = {"workitem": "workitem", "atomic": "atomic", "memory": "local_array", "host": "work_size",
              "math": "native"}
for _s in GPU_TABLE.values():
    if _s.category == "sync":
        _rule, _key = _s.name, ""          # barrier / mem_fence
    else:
        _rule = _GPU_RULES[_s.category]
        _key = {"workitem": _s.name[len("get_"):], "atomic": _s.name[len("atomic_"):], "math": _s.name}.get(_s.category, "")
    _add(f"gpu.{_s.name}", _s.arity, _rule, _key, _first_line(_s.doc))
for _f in FUNCS_TABLE.values():
    _add(f"funcs.{_f.name}", _f.arity, f"funcs_{_f.name}", _f.name, _first_line(_f.doc))

# ---- counter-based random numbers (pygpgpu_core.gpu_random; the device half is prelude/_random) ----------
for _r, _arity in (("uniform", 2), ("normal", 2), ("randint", 4)):
    _host = getattr(gpu_random, _r)
    _add(f"gpu.{_r}", _arity, "random", _r, _first_line(_host.__doc__ or ""), [_host])

_BY_OBJECT: dict[int, Builtin] = {}
for _b in BUILTINS.values():
    for _h in _b.hosts:
        _BY_OBJECT.setdefault(id(_h), _b)

GPU_MODULES = ("pygpgpu_core.gpu", "pygpgpu.gpu")
FUNCS_MODULES = ("pygpgpu_core.funcs", "pygpgpu.funcs", "pygpgpu.vec_types.funcs", "pygpgpu_core.vec_types.funcs")


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
