"""Dialects as data: type names, qualifiers, work-item builtins and spellings per backend.

The emitter is shared; each dialect only fills in words. A difference that needs more
than a word (float atomics, Python floor division, vector rows) is lowered in the IR or
provided as a support function, not printed here.
"""
from __future__ import annotations

from . import prelude as _prelude
from ._types import Scalar, Vector

__all__ = ["Dialect", "OpenCL", "CUDA", "HIP", "dialect_for", "DIALECTS"]

_DIMS = "xyz"


class Dialect:
    name = ""
    kernel_prefix = ""
    device_fn_prefix = "static inline "
    global_ptr = ""            # qualifier on pointer parameters into global memory
    local_ptr = ""             # qualifier on pointers into local/shared memory
    local_decl = ""            # qualifier on a static local/shared array declaration
    scalar_names: dict = {}
    vector_base_names: dict = {}
    float_suffix = False       # CUDA/HIP spell float32 math as sqrtf, expf, ...
    supports_fp16 = False
    index_names = {32: "int", 64: "long"}
    atomic_space_kw: dict = {}
    # The launcher guarantees row-array pointers this alignment (ArrayType.align); telling the
    # compiler lets a row of 4 floats load as one 128-bit access. OpenCL C has no portable spelling.
    assume_aligned = ""

    # ---- types -------------------------------------------------------------
    def type_name(self, t) -> str:
        if isinstance(t, Scalar):
            return self.scalar_names[t.name]
        if isinstance(t, Vector):
            return _prelude.c_type(self.name, t.name)
        return "void"

    def component(self, t: Vector, k: int) -> str:
        return _prelude.component(self.name, t.name, k)

    def param_scalar_name(self, t: Scalar) -> str:
        return self.type_name(Scalar("uint8") if t.name == "bool" else t)

    def vector_ctor(self, t: Vector, args: list[str]) -> str:
        return _prelude.make_vector(self.name, t.name, args)

    # ---- work-item builtins ------------------------------------------------
    def work_item(self, what: str, dim: int) -> str:
        raise NotImplementedError

    def barrier(self, fence: str) -> str:
        raise NotImplementedError

    def mem_fence(self, fence: str) -> str:
        raise NotImplementedError

    # ---- math --------------------------------------------------------------
    def math_name(self, name: str, t: Scalar) -> str:
        if self.float_suffix and t.name == "float32":
            return name + "f"
        return name

    def fast_math_name(self, name: str, t: Scalar) -> str:
        return self.math_name(name, t)

    def headers(self, features: set[str]) -> list[str]:
        return []


class OpenCL(Dialect):
    name = "opencl"
    kernel_prefix = "__kernel void"
    global_ptr = "__global "
    local_ptr = "__local "
    local_decl = "__local "
    scalar_names = {"bool": "bool", "int8": "char", "uint8": "uchar", "int16": "short", "uint16": "ushort",
                    "int32": "int", "uint32": "uint", "int64": "long", "uint64": "ulong", "float16": "half",
                    "float32": "float", "float64": "double"}
    vector_base_names = scalar_names
    supports_fp16 = True
    index_names = {32: "int", 64: "long"}

    def work_item(self, what, dim):
        return f"get_{what}({dim})"

    def barrier(self, fence):
        return {"local": "barrier(CLK_LOCAL_MEM_FENCE)", "global": "barrier(CLK_GLOBAL_MEM_FENCE)",
                "both": "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"}[fence]

    def mem_fence(self, fence):
        return {"local": "mem_fence(CLK_LOCAL_MEM_FENCE)", "global": "mem_fence(CLK_GLOBAL_MEM_FENCE)",
                "both": "mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)"}[fence]

    def fast_math_name(self, name, t):
        if t.name == "float32" and name in ("sqrt", "rsqrt", "exp", "exp2", "exp10", "log", "log2", "log10",
                                             "sin", "cos", "tan", "powr", "divide", "recip"):
            return "native_" + name
        if t.name == "float32" and name == "pow":
            return "native_powr"
        return name

    def headers(self, features):
        out = []
        if "fp64" in features:
            out.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        if "fp16" in features:
            out.append("#pragma OPENCL EXTENSION cl_khr_fp16 : enable")
        if "int64_atomics" in features:
            out.append("#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable")
            out.append("#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable")
        return out


class CUDA(Dialect):
    name = "cuda"
    kernel_prefix = 'extern "C" __global__ void'
    device_fn_prefix = "static __device__ __forceinline__ "
    local_decl = "__shared__ "
    scalar_names = {"bool": "bool", "int8": "signed char", "uint8": "unsigned char", "int16": "short",
                    "uint16": "unsigned short", "int32": "int", "uint32": "unsigned int", "int64": "long long",
                    "uint64": "unsigned long long", "float16": "__half", "float32": "float", "float64": "double"}
    vector_base_names = {"int8": "char", "uint8": "uchar", "int16": "short", "uint16": "ushort", "int32": "int",
                         "uint32": "uint", "int64": "longlong", "uint64": "ulonglong", "float32": "float",
                         "float64": "double"}
    float_suffix = True
    assume_aligned = "__builtin_assume_aligned"
    index_names = {32: "int", 64: "long long"}
    _what = {"global_id": None, "local_id": "threadIdx", "group_id": "blockIdx", "local_size": "blockDim",
             "num_groups": "gridDim", "global_size": None}

    def work_item(self, what, dim):
        d = _DIMS[dim]
        if what == "global_id":
            return f"((long long)blockIdx.{d} * blockDim.{d} + threadIdx.{d})"
        if what == "global_size":
            return f"((long long)gridDim.{d} * blockDim.{d})"
        return f"{self._what[what]}.{d}"

    def barrier(self, fence):
        return "__syncthreads()"

    def mem_fence(self, fence):
        return "__threadfence_block()" if fence == "local" else "__threadfence()"

    def fast_math_name(self, name, t):
        if t.name == "float32" and name in ("sin", "cos", "tan", "exp", "exp10", "log", "log2", "log10", "pow"):
            return "__" + name + "f"
        if t.name == "float32" and name == "divide":
            return "__fdividef"
        if t.name == "float32" and name == "powr":
            return "__powf"
        if t.name == "float32" and name == "recip":
            return "__frcp_rn"
        return self.math_name(name, t)


class HIP(CUDA):
    name = "hip"


DIALECTS = {"opencl": OpenCL(), "cuda": CUDA(), "hip": HIP()}


def dialect_for(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown source dialect {name!r}; expected one of {sorted(DIALECTS)}") from None
