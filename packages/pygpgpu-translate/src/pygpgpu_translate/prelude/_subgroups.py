"""Pieces ``subgroup_<op>:<T>``: warp / wavefront / sub-group operations with one meaning everywhere.

A subgroup is a run of consecutive work items of a group (by linear local id: dimension 0
fastest) that exchange values without local memory: a CUDA warp (32 lanes), an AMD wavefront
(``warpSize``: 64 on CDNA, 32 on RDNA in wave32), and on OpenCL the device's own sub-group where its
compiler and extension list have the sub-group builtins and a shuffle (``NATIVE_REQUIREMENTS``; its
width: Intel 8, 16 or 32), else a run of 32 emulated through local memory (PoCL and NVIDIA's OpenCL expose no portable
shuffle). Every op must be reached by
every work item of the group (CUDA's full-mask ``*_sync`` rule; the OpenCL emulation waits at
barriers), which the translator enforces by refusing them behind a magic loop's bounds guard.

``pg_sg_<op>_<T>(...)`` per op, T in int uint long ulong float double:

- ``shuffle(v, lane)``: ``v`` of lane ``lane % size``;
- ``shuffle_xor(v, mask)``: ``v`` of lane ``lane ^ mask``, or the caller's own ``v`` where that
  lane is outside the subgroup (a mask of 32 or more on a warp: CUDA's and HIP's rule);
- ``shuffle_down(v, d)`` / ``shuffle_up(v, d)``: ``v`` of lane ``lane + d`` / ``lane - d``, or
  the caller's own ``v`` where that lane is outside the subgroup (CUDA's rule);
- ``add/min/max(v)``: the reduction over the subgroup, the same in every lane (floats: ``fmin``/
  ``fmax``, so NaN is ignored; integers wrap);
- ``any/all(p)`` (T int): whether ``p`` is non-zero in any / every lane;
- ``ballot(p)`` (T int): a 64-bit mask, bit ``k`` set when lane ``k``'s ``p`` is non-zero;
- ``size`` / ``local_id`` (T int): ``pg_sg_size_int()`` / ``pg_sg_local_id_int()``.

The emulated OpenCL pieces are macros over functions taking the kernel's ``__local ulong
pg_sg_scratch[]`` (declared by :meth:`~pygpgpu_translate._dialects.Dialect.kernel_locals` when
the kernel uses subgroups, and handed to helpers by ``_subgroup_scratch``), since OpenCL C allows
``__local`` variables only at kernel scope. ``subgroup_base:int`` chooses between native and
emulated with ``#if`` on the compiler's extension macros and the define the host adds for a
device listing the extensions (``PG_SG_NATIVE``; the scratch then shrinks to one item,
``PG_SG_SCRATCH_ITEMS``), so one source serves every device.
"""
from __future__ import annotations

from ._types import dialect_of

__all__ = ["SUBGROUP_OPS", "SCRATCH_ITEMS", "OPENCL_WIDTH", "NATIVE_REQUIREMENTS", "subgroup_types", "function_name",
           "subgroup_source", "subgroup_deps", "base_source", "cuda_subgroup_source", "opencl_subgroup_source",
           "native_opencl_subgroups", "device_subgroup_options", "opencl_c_std", "DEVICE_DEFINE"]

VALUE_OPS = ("shuffle", "shuffle_xor", "shuffle_down", "shuffle_up", "add", "min", "max")
PREDICATE_OPS = ("any", "all", "ballot")
QUERY_OPS = ("size", "local_id")
SUBGROUP_OPS = VALUE_OPS + PREDICATE_OPS + QUERY_OPS
VALUE_TYPES = ("int", "uint", "long", "ulong", "float", "double")
OPENCL_WIDTH = 32          # the emulated subgroup's lanes on OpenCL
SCRATCH_ITEMS = 1024       # work items per group the OpenCL emulation's local scratch holds


def subgroup_types(op: str) -> tuple[str, ...]:
    return VALUE_TYPES if op in VALUE_OPS else ("int",)


def function_name(op: str, type_name: str) -> str:
    return f"pg_sg_{op}_{type_name}"


def subgroup_source(dialect, op: str, type_name: str) -> str:
    if type_name not in subgroup_types(op):
        raise KeyError(f"subgroup_{op} is not defined for {type_name}")
    return dialect_of(dialect).subgroup_source(op, type_name)


def subgroup_deps(dialect, op: str, type_name: str) -> list[str]:
    return (["ext:fp64"] if type_name == "double" else []) + ["subgroup_base:int"]


def base_source(dialect) -> str:
    """``subgroup_base:int``: what the other pieces share (the OpenCL linear local id)."""
    return dialect_of(dialect).subgroup_source("base", "int")


# ---- CUDA and HIP: the hardware's shuffles ------------------------------------------------------------
_CUDA_LANE = "((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31)"
_CUDA_SHUFFLE = {"shuffle": "__shfl", "shuffle_xor": "__shfl_xor", "shuffle_down": "__shfl_down",
                 "shuffle_up": "__shfl_up"}


def _combine(op: str, type_name: str, a: str, b: str) -> str:
    floats = type_name in ("float", "double")
    return {"add": f"{a} + {b}", "min": f"fmin({a}, {b})" if floats else f"({b} < {a} ? {b} : {a})",
            "max": f"fmax({a}, {b})" if floats else f"({b} > {a} ? {b} : {a})"}[op]


def cuda_subgroup_source(d, op: str, type_name: str, hip: bool = False) -> str:
    """CUDA's ``__shfl*_sync`` with the full warp's mask; HIP's ``__shfl*`` over its ``warpSize``."""
    fn = function_name(op, type_name)
    pre = d.prelude_fn_prefix
    full, sync, size = ("", "", "warpSize") if hip else ("0xffffffffu, ", "_sync", "32")
    if op == "base":
        return ""
    if op == "size":
        return f"{pre} int {fn}(void) {{ return {size}; }}\n"
    if op == "local_id":
        return f"{pre} int {fn}(void) {{ return {'(int)__lane_id()' if hip else _CUDA_LANE}; }}\n"
    if op in ("any", "all"):
        return f"{pre} int {fn}(int p) {{ return __{op}{sync}({full}p) != 0; }}\n"
    if op == "ballot":
        return f"{pre} unsigned long long {fn}(int p) {{ return (unsigned long long)__ballot{sync}({full}p); }}\n"
    t = d.c_type(type_name)
    if op == "shuffle_xor":     # the H100 xors with the mask's low 5 bits (lane ^ 33 read lane ^ 1):
        # a mask reaching past the subgroup gives the caller's own v, as the other paths do; every
        # lane still takes part in the shuffle
        return (f"{pre} {t} {fn}({t} v, int k) {{ {t} o = __shfl_xor{sync}({full}v, k & ({size} - 1)); "
                f"return (unsigned int)k < (unsigned int){size} ? o : v; }}\n")
    if op in _CUDA_SHUFFLE:
        k = "(unsigned int)k" if op in ("shuffle_down", "shuffle_up") else "k"
        return f"{pre} {t} {fn}({t} v, int k) {{ return {_CUDA_SHUFFLE[op]}{sync}({full}v, {k}); }}\n"
    return (f"{pre} {t} {fn}({t} v) {{ for (int s = {size} / 2; s > 0; s >>= 1) "
            f"{{ {t} o = __shfl_xor{sync}({full}v, s); v = {_combine(op, type_name, 'v', 'o')}; }} return v; }}\n")


# ---- OpenCL: the device's sub-groups where it has them, else 32 lanes through local memory ----------------
# Native needs the sub-group builtins (cl_khr_subgroups, OpenCL C 3.0's __opencl_c_subgroups, or
# cl_intel_subgroups, which brings them) and an indexed shuffle (cl_khr_subgroup_shuffle or
# cl_intel_subgroups). Two must agree: the device's extension list (the host passes DEVICE_DEFINE,
# device_subgroup_options) and its compiler's macros (the #if of subgroup_base:int). Either alone
# misleads: clang-based compilers define every SPIR extension macro whatever the device (oclgrind
# then fails to link get_sub_group_local_id), and cl_khr_subgroups declares the builtins only from
# OpenCL C 2.0 on (kernels build as 1.2: such a device builds subgroup kernels with its newest
# OpenCL C instead). A kernel is all native or all emulated: mixing would number lanes two ways.
# Only GPUs take the native path: CPU implementations (PoCL 5 on x86, measured on the H100 machine)
# make a sub-group the whole work-group, 256 lanes, wider than a 64-bit ballot and than the 32 lanes
# a CUDA port counts on; the emulation gives them 32.
# (macros, any of which serves) per requirement:
NATIVE_REQUIREMENTS = (("cl_khr_subgroups", "__opencl_c_subgroups", "cl_intel_subgroups"),
                       ("cl_khr_subgroup_shuffle", "cl_intel_subgroups"))
DEVICE_DEFINE = "PG_SG_DEVICE_SUBGROUPS"


def native_opencl_subgroups(extensions) -> bool:
    """Whether a device with ``extensions`` (or a compiler defining those macros) has what the
    native path needs."""
    return all(any(m in extensions for m in alternatives) for alternatives in NATIVE_REQUIREMENTS)


def device_subgroup_options(device, dialect: str, features=()) -> tuple[str, ...]:
    """For a kernel using subgroups on an OpenCL device with native sub-groups: the define that tells
    the generated source so, and the device's newest OpenCL C from 2.0 on (which declares the
    cl_khr_subgroups builtins; 1.2, the default, does not)."""
    if ("subgroups" not in features or dialect != "opencl" or not getattr(device, "is_gpu", False)
            or not native_opencl_subgroups(getattr(device, "extensions", None) or ())):
        return ()
    std = opencl_c_std(getattr(device, "opencl_c_version", "") or "")
    return (f"-D{DEVICE_DEFINE}",) + ((f"-cl-std=CL{std}",) if std else ())


def opencl_c_std(version: str) -> str:
    """``"3.0"`` / ``"2.0"`` from a device's OpenCL C version ("OpenCL C 3.0 ..."), "" below 2.0."""
    parts = version.split()
    if len(parts) < 3 or parts[:2] != ["OpenCL", "C"]:
        return ""
    major = parts[2].split(".")[0]
    return f"{major}.0" if major.isdigit() and int(major) >= 2 else ""


def _native_condition() -> str:
    return " && ".join([f"defined({DEVICE_DEFINE})"] + ["(" + " || ".join(f"defined({m})" for m in alts) + ")"
                                                         for alts in NATIVE_REQUIREMENTS])


_OPENCL_SELECT = f"""#if {_native_condition()}
#define PG_SG_NATIVE 1
#define PG_SG_SCRATCH_ITEMS 1
#ifdef cl_khr_subgroups
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif
#ifdef cl_khr_subgroup_shuffle
#pragma OPENCL EXTENSION cl_khr_subgroup_shuffle : enable
#define pg_sg_pick(v, lane) sub_group_shuffle(v, lane)
#else
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
#define pg_sg_pick(v, lane) intel_sub_group_shuffle(v, lane)
#endif
#ifdef cl_khr_subgroup_ballot
#pragma OPENCL EXTENSION cl_khr_subgroup_ballot : enable
#endif
#else
#define PG_SG_NATIVE 0
#define PG_SG_SCRATCH_ITEMS {SCRATCH_ITEMS}
#endif
"""

# native: the lane each shuffle reads, and when it is inside the subgroup (else the caller's own v)
_NATIVE_SOURCE_LANE = {"shuffle": ("(uint)k & (get_max_sub_group_size() - 1u)", "src < n"),
                       "shuffle_xor": ("me ^ (uint)k", "src < n"),
                       "shuffle_down": ("me + (uint)k", "k >= 0 && src < n"),
                       "shuffle_up": ("me - (uint)k", "k >= 0 && me >= (uint)k")}


def _opencl_native(d, op: str, type_name: str) -> str:
    """``op`` on the device's sub-groups: lanes are ``get_sub_group_local_id()``, the width is the
    device's (``get_sub_group_size()``: Intel 8, 16 or 32, AMD 32 or 64), the same meaning otherwise."""
    fn = function_name(op, type_name)
    pre = d.prelude_fn_prefix
    if op == "size":
        return f"{pre} int {fn}(void) {{ return (int)get_sub_group_size(); }}\n"
    if op == "local_id":
        return f"{pre} int {fn}(void) {{ return (int)get_sub_group_local_id(); }}\n"
    if op in ("any", "all"):
        return f"{pre} int {fn}(int p) {{ return sub_group_{op}(p != 0); }}\n"
    if op == "ballot":      # without cl_khr_subgroup_ballot: distinct bits add up to their OR (width <= 64)
        return (f"{pre} ulong {fn}(int p) {{\n#ifdef cl_khr_subgroup_ballot\n"
                "uint4 b = sub_group_ballot(p != 0); return (ulong)b.x | ((ulong)b.y << 32);\n#else\n"
                "return sub_group_reduce_add(p != 0 ? 1UL << get_sub_group_local_id() : 0UL);\n#endif\n}\n")
    t = d.c_type(type_name)
    head = "uint me = get_sub_group_local_id(), n = get_sub_group_size(); "
    if op in _NATIVE_SOURCE_LANE:
        src, inside = _NATIVE_SOURCE_LANE[op]
        # every lane shuffles (sub-group functions need all of them); one outside reads its own lane
        return (f"{pre} {t} {fn}({t} v, int k) {{ {head}uint src = {src}; int ok = {inside}; "
                f"{t} r = pg_sg_pick(v, ok ? src : me); return ok ? r : v; }}\n")
    if op == "add" or type_name not in ("float", "double"):
        return f"{pre} {t} {fn}({t} v) {{ return sub_group_reduce_{op}(v); }}\n"
    # float min/max: fmin/fmax lane by lane, so NaN is ignored as everywhere else
    return (f"{pre} {t} {fn}({t} v) {{ {head}{t} r = pg_sg_pick(v, 0u); "
            f"for (uint j = 1u; j < n; ++j) {{ {t} o = pg_sg_pick(v, j); r = {_combine(op, type_name, 'r', 'o')}; }} "
            "return r; }\n")


# emulated: (to the scratch's ulong, from it) per type
_BITS = {"int": ("(ulong)(uint)({0})", "(int)(uint)({0})"), "uint": ("(ulong)({0})", "(uint)({0})"),
         "long": ("(ulong)({0})", "(long)({0})"), "ulong": ("({0})", "({0})"),
         "float": ("(ulong)as_uint({0})", "as_float((uint)({0}))"), "double": ("as_ulong({0})", "as_double({0})")}
_SOURCE_LANE = {"shuffle": ("base | ((uint)k & 31u)", "1"),
                "shuffle_xor": ("me ^ (uint)k", "((me & 31u) ^ (uint)k) < 32u"),
                "shuffle_down": ("me + (uint)k", "k >= 0 && (me & 31u) + (uint)k < 32u"),
                "shuffle_up": ("me - (uint)k", "k >= 0 && (me & 31u) >= (uint)k")}
_PREDICATE = {"any": ("int", "0", "r |= s[j] != 0UL;"), "all": ("int", "1", "r &= s[j] != 0UL;"),
              "ballot": ("ulong", "0UL", "if (s[j] != 0UL) r |= 1UL << (j - base);")}


def opencl_subgroup_source(d, op: str, type_name: str) -> str:
    """The native piece where the device compiler takes that path (``PG_SG_NATIVE``), else the
    emulation; ``subgroup_base:int`` makes the choice."""
    if op == "base":
        return _OPENCL_SELECT + _opencl_emulated(d, op, type_name)
    return f"#if PG_SG_NATIVE\n{_opencl_native(d, op, type_name)}#else\n{_opencl_emulated(d, op, type_name)}#endif\n"


def _opencl_emulated(d, op: str, type_name: str) -> str:
    """Each op writes the caller's value to the kernel's scratch, waits for the group, reads what
    it needs of its run of 32, and waits again before the scratch is reused."""
    fn = function_name(op, type_name)
    pre = d.prelude_fn_prefix
    if op == "base":
        return (f"{pre} uint pg_sg_lid(void) {{ return (uint)(get_local_id(0) + get_local_size(0) * "
                "(get_local_id(1) + get_local_size(1) * get_local_id(2))); }\n"
                f"{pre} uint pg_sg_count(void) "
                "{ return (uint)(get_local_size(0) * get_local_size(1) * get_local_size(2)); }\n")
    if op == "size":
        return f"{pre} int {fn}(void) {{ return {OPENCL_WIDTH}; }}\n"
    if op == "local_id":
        return f"{pre} int {fn}(void) {{ return (int)(pg_sg_lid() & 31u); }}\n"
    head = "uint me = pg_sg_lid(), n = pg_sg_count(), base = me & ~31u; "
    done = "barrier(CLK_LOCAL_MEM_FENCE); return r;"
    if op in _PREDICATE:
        t, start, step = _PREDICATE[op]
        params, args = "int v", "v"
        body = (f"{head}s[me] = (ulong)(v != 0); barrier(CLK_LOCAL_MEM_FENCE); uint end = min(base + 32u, n); "
                f"{t} r = {start}; for (uint j = base; j < end; ++j) {{ {step} }} {done}")
    else:
        t = d.c_type(type_name)
        to_bits, from_bits = _BITS[type_name]
        head += f"s[me] = {to_bits.format('v')}; barrier(CLK_LOCAL_MEM_FENCE); "
        if op in _SOURCE_LANE:
            src, inside = _SOURCE_LANE[op]
            params, args = f"{t} v, int k", "v, k"
            body = f"{head}uint src = {src}; {t} r = ({inside}) && src < n ? {from_bits.format('s[src]')} : v; {done}"
        else:
            params, args = f"{t} v", "v"
            body = (f"{head}uint end = min(base + 32u, n); {t} r = {from_bits.format('s[base]')}; "
                    f"for (uint j = base + 1u; j < end; ++j) {{ {t} o = {from_bits.format('s[j]')}; "
                    f"r = {_combine(op, type_name, 'r', 'o')}; }} {done}")
    return (f"{pre} {t} {fn}_(__local ulong* s, {params}) {{ {body} }}\n"
            f"#define {fn}({args}) {fn}_(pg_sg_scratch, {args})\n")
