"""The prelude library: small C/C++ helpers a generated kernel needs, emitted once, only when used.

Call ``prelude_source(dialect, needed)`` with the set of piece names the emitted code uses; it
returns the source of those pieces and everything they depend on, dependency-ordered and each
exactly once (the result is "" when nothing is needed). ``PRELUDE_NAMES`` lists every piece.

Piece names are ``"<family>:<type>"``; ``<type>`` is a PyGPGPU type name: a scalar (``char uchar
short ushort int uint long ulong float double``; ``long`` is always 64-bit) or a vector
(``float4``, ``ulong16``, ...). What each family defines, under the same C name in every dialect:

``vec:<V>``
    The vector type where the toolchain lacks it (CUDA/HIP 8- and 16-wide, CUDA 13's deprecated
    ``long4/ulong4/double4``: struct ``pg_<V>`` with members ``s0 ... sF``), plus
    ``pg_make_<V>(c0, ..., cN)`` and ``pg_splat_<V>(s)``. Use :func:`c_type` for the C spelling
    of a type, :func:`component` for member access, :func:`make_vector` for a constructor call.
    CUDA/HIP 3-wide built-ins are packed (``float3`` is 12 bytes); OpenCL's are 16 bytes.
``vec_ops:<V>``
    Arithmetic operators with scalar broadcast on either side (``+ - * /``; for integer vectors
    also ``% & | ^ << >>``, shifts take the count modulo the bit width), compound assignment,
    unary ``- + ~``. Empty where the dialect has them natively (OpenCL; HIP's 2/3/4-wide).
``vec_cmp:<V>``
    ``pg_eq_<V> pg_ne_<V> pg_lt_<V> pg_le_<V> pg_gt_<V> pg_ge_<V>(a, b)``: -1/0 per component in
    the signed integer vector of the element size (OpenCL's rule), e.g. float4 -> int4.
``funcs.<f>:<T>``
    ``pg_<f>_<T>(...)`` for each function of ``pygpgpu_core.funcs`` (dot, cross, length, distance,
    normalize, reflect, clamp, mix, step, smoothstep, fma, sign, radians, degrees, min, max,
    abs), all arguments of type ``T`` (splat scalars first). OpenCL versions wrap the native
    builtin (``Dialect.builtin_function``).
``atomic_<op>:<T>`` and ``atomic_<op>.local:<T>``
    ``pg_atomic_<op>_<T>(p, v)`` / ``pg_atomic_<op>_local_<T>(p, v)`` (the ``.local`` variant takes
    a ``__local`` pointer in OpenCL; identical in CUDA/HIP). ops: add sub min max and or xor xchg
    ``cmpxchg(p, cmp, v)`` ``inc(p)`` ``dec(p)``; T: int uint long ulong float (float: no
    and/or/xor). All return the old value; inc/dec are +-1 with wrap-around everywhere.
``pyfloordiv:<T>``, ``pymod:<T>``, ``pypow:<T>``, ``pyshl:<T>``, ``pyshr:<T>``, ``pyneg:<T>``, ``pymin:<T>``, ``pymax:<T>``, ``npminimum:<T>``, ``npmaximum:<T>``, ``npsign:<T>``
    ``pg_pyfloordiv_<T>(a, b)`` ...: Python's ``//`` and ``%`` (every type; integer division by
    zero yields 0), integer ``**`` and numpy's ``<<``/``>>`` (integer types; a count outside
    0..bits-1 gives 0, or -1 shifting a negative value right), builtin ``min``/``max`` and numpy's
    ``minimum``/``maximum``/``sign`` (float types; for integers ``funcs.*`` means the same), on
    scalars and vectors (component-wise). The generated kernels call these for Python semantics.
``philox:uint``, ``random_uniform:<float|double>``, ``random_normal:<float|double>``, ``random_randint:long``
    Counter-based random numbers (``gpu.uniform/normal/randint``): ``pg_philox4x32_10`` and
    ``pg_uniform_<T>(seed, counter)``, ``pg_normal_<T>``, ``pg_randint_long(seed, counter, low, high)``.
``complex:<float|double>``
    The ``pg_complex64``/``pg_complex128`` struct (numpy's layout) and its operations
    ``pg_cmake_<T> pg_creal_<T> pg_cimag_<T> pg_cadd_<T> pg_csub_<T> pg_cmul_<T> pg_cdiv_<T> pg_cneg_<T>
    pg_cconj_<T> pg_ceq_<T> pg_cabs_<T> pg_cexp_<T> pg_csqrt_<T>`` (numpy's formulas).
``native_rsqrt:float``
    ``pg_native_rsqrt_float(x)``: float32 ``gpu.rsqrt``/``gpu.native_rsqrt`` where the dialect's
    template calls it (CUDA: PTX ``rsqrt.approx.ftz.f32``); empty elsewhere (``_native``).
``subgroup_<op>:<T>`` and ``subgroup_base:int``
    ``pg_sg_<op>_<T>(...)``: warp / wavefront operations (shuffle, shuffle_xor, shuffle_down,
    shuffle_up, add, min, max on int uint long ulong float double; any, all, ballot, size,
    local_id on int); ``_subgroups`` says what each means. The OpenCL pieces use the device's
    sub-groups where ``subgroup_base:int``'s ``#if`` finds them (``PG_SG_NATIVE``), else emulate
    32 lanes in the kernel's local scratch (``Dialect.kernel_locals``, passed to helpers by
    ``_subgroup_scratch``).
``ext:fp64``, ``ext:int64_base_atomics``, ``ext:int64_extended_atomics``
    OpenCL ``#pragma OPENCL EXTENSION`` lines (empty elsewhere); pulled in automatically.

:func:`piece_function` maps a piece to the C function name it defines (where it is one function).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from . import _atomics, _complex, _funcs, _native, _pysem, _random, _subgroups, _vec
from ._types import (
    VECTORS,
    c_type,
    check_dialect,
    comparison_type,
    component,
    make_vector,
)

__all__ = [
    "prelude_source",
    "PRELUDE_NAMES",
    "piece_function",
    "c_type",
    "component",
    "make_vector",
    "comparison_type",
]

def _all_names() -> frozenset[str]:
    names = {"ext:fp64", "ext:int64_base_atomics", "ext:int64_extended_atomics"}
    for v in VECTORS:
        names |= {f"vec:{v}", f"vec_ops:{v}", f"vec_cmp:{v}"}
    for f in _funcs.FUNCS:
        names |= {f"funcs.{f}:{t}" for t in _funcs.func_types(f)}
    for op in _atomics.ATOMIC_OPS:
        for t in _atomics.atomic_types(op):
            names |= {f"atomic_{op}:{t}", f"atomic_{op}.local:{t}"}
    for op in _pysem.PY_OPS:
        names |= {f"{op}:{t}" for t in _pysem.pysem_types(op)}
    for fam in _random.RANDOM_FAMILIES:
        names |= {f"{fam}:{t}" for t in _random.random_types(fam)}
    names |= {f"complex:{t}" for t in _complex.COMPLEX_TYPES}
    names |= {f"{fam}:float" for fam in _native.NATIVE_FAMILIES}
    names.add("subgroup_base:int")
    for op in _subgroups.SUBGROUP_OPS:
        names |= {f"subgroup_{op}:{t}" for t in _subgroups.subgroup_types(op)}
    return frozenset(names)


PRELUDE_NAMES: frozenset[str] = _all_names()


def _resolve(dialect, name: str, native: bool) -> tuple[list[str], str]:
    """(dependencies, source) of one piece."""
    family, _, type_name = name.partition(":")
    if family == "ext":
        if type_name == "fp64":
            return [], _vec.ext_fp64(dialect)
        return [], _atomics.ext_int64(dialect, type_name.split("_")[1])
    if family == "vec":
        return _vec.vec_deps(dialect, type_name), _vec.vec_source(dialect, type_name)
    if family == "vec_ops":
        return _vec.vec_ops_deps(dialect, type_name), _vec.vec_ops_source(dialect, type_name)
    if family == "vec_cmp":
        return _vec.vec_cmp_deps(dialect, type_name), _vec.vec_cmp_source(dialect, type_name, native)
    if family.startswith("funcs."):
        f = family[len("funcs."):]
        return _funcs.funcs_deps(dialect, f, type_name, native), _funcs.funcs_source(dialect, f, type_name, native)
    if family.startswith("atomic_"):
        op, _, local = family[len("atomic_"):].partition(".")
        return (
            _atomics.atomic_deps(dialect, op, type_name, bool(local)),
            _atomics.atomic_source(dialect, op, type_name, bool(local)),
        )
    if family in _pysem.PY_OPS:
        return _pysem.pysem_deps(dialect, family, type_name), _pysem.pysem_source(dialect, family, type_name)
    if family in _random.RANDOM_FAMILIES:
        return _random.random_deps(dialect, family, type_name), _random.random_source(dialect, family, type_name)
    if family == "complex":
        return _complex.complex_deps(dialect, type_name), _complex.complex_source(dialect, type_name)
    if family in _native.NATIVE_FAMILIES:
        return [], _native.native_source(dialect, family)
    if family == "subgroup_base":
        return [], _subgroups.base_source(dialect)
    if family.startswith("subgroup_"):
        op = family[len("subgroup_"):]
        return _subgroups.subgroup_deps(dialect, op, type_name), _subgroups.subgroup_source(dialect, op, type_name)
    raise KeyError(name)


@lru_cache(maxsize=None)
def _piece(dialect, name: str, native: bool = True) -> tuple[tuple[str, ...], str]:
    if name not in PRELUDE_NAMES:
        close = sorted(n for n in PRELUDE_NAMES if n.split(":")[0] == name.split(":")[0])[:6]
        hint = f" (same family: {', '.join(close)} ...)" if close else ""
        raise KeyError(f"no prelude piece {name!r}{hint}")
    own = dialect.prelude_piece(name)       # a language's own spelling of the piece (WGSL)
    if own is not None:
        return tuple(own[0]), own[1]
    deps, src = _resolve(dialect, name, native)
    return tuple(deps), src


def prelude_source(dialect: str, needed: Iterable[str], *, native: bool = True) -> str:
    """C/C++ source defining every piece in ``needed`` and its dependencies, each once,
    dependencies first. The order of ``needed`` does not matter (output order is stable).

    ``native=False`` makes OpenCL use the portable component-wise bodies that CUDA/HIP get
    instead of wrapping OpenCL builtins; tests use it to execute those bodies on an OpenCL
    device. Generated kernels keep the default."""
    # an unknown dialect raises here; pieces are cached per dialect object, so a plug-in dialect
    # registered again under a name (another class, in tests) never gets the earlier one's pieces
    dialect = check_dialect(dialect)
    order: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        deps, _ = _piece(dialect, name, native)
        for d in deps:
            visit(d)
        order.append(name)

    for name in sorted(set(needed)):
        visit(name)
    parts = [_piece(dialect, n, native)[1] for n in order]
    return "".join(p for p in parts if p)


def piece_function(name: str) -> str | None:
    """The C function a single-function piece defines (``"funcs.dot:float4"`` -> ``"pg_dot_float4"``,
    ``"atomic_add.local:int"`` -> ``"pg_atomic_add_local_int"``); None for multi-definition pieces."""
    family, _, type_name = name.partition(":")
    if family.startswith("funcs."):
        return f"pg_{family[6:]}_{type_name}"
    if family.startswith("atomic_"):
        op, _, local = family[7:].partition(".")
        return _atomics.function_name(op, type_name, bool(local))
    if family in _pysem.PY_OPS:
        return f"pg_{family}_{type_name}"
    if family in _random.RANDOM_FAMILIES:
        return _random.function_name(family, type_name)
    if family.startswith("subgroup_") and family != "subgroup_base":
        return _subgroups.function_name(family[len("subgroup_"):], type_name)
    return None
