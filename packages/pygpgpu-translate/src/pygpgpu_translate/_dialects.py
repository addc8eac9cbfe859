"""Dialects as data: type names, qualifiers, work-item builtins and spellings per backend.

The emitter is shared; each dialect only fills in words. A difference that needs more
than a word (float atomics, Python floor division, vector rows) is lowered in the IR or
calls a prelude piece (``prelude/``), not printed here.
"""
from __future__ import annotations

from pygpgpu_core.gpu import FENCE_SPELLING, GLOBAL, GPU_TABLE, LOCAL

from . import prelude as _prelude
from ._types import Scalar, Vector

__all__ = ["Dialect", "OpenCL", "CUDA", "HIP", "dialect_for", "DIALECTS"]

_DIMS = "xyz"
_FENCES = {"local": LOCAL, "global": GLOBAL, "both": LOCAL | GLOBAL}


class Dialect:
    name = ""
    kernel_prefix = ""
    device_fn_prefix = "static inline "
    global_ptr = ""            # qualifier on pointer parameters into global memory
    local_ptr = ""             # qualifier on pointers into local/shared memory
    local_decl = ""            # qualifier on a static local/shared array declaration
    own_scalars: dict = {}     # the scalars the prelude has no name for (bool, float16)
    float_suffix = False       # CUDA/HIP spell float32 math as sqrtf, expf, ...
    # The launcher guarantees row-array pointers this alignment (ArrayType.align); telling the
    # compiler lets a row of 4 floats load as one 128-bit access. OpenCL C has no portable spelling.
    assume_aligned = ""
    # Build options of @kernel(fastmath=True): the compiler may reassociate, contract, flush
    # denormals, assume no NaN/inf and use approximate division, sqrt and transcendentals.
    fast_math_options: tuple[str, ...] = ()
    # print() in kernels: the device printf and its length modifier for 64-bit integers
    printf = "printf"
    printf_int64 = "ll"

    # ---- types -------------------------------------------------------------
    def type_name(self, t) -> str:
        if isinstance(t, (Scalar, Vector)):
            short = t.short_name
            return _prelude.c_type(self.name, short) if short else self.own_scalars[t.name]
        return "void"

    def component(self, t: Vector, k: int) -> str:
        return _prelude.component(self.name, t.name, k)

    def param_scalar_name(self, t: Scalar) -> str:
        return self.type_name(Scalar("uint8") if t.name == "bool" else t)

    def vector_ctor(self, t: Vector, args: list[str]) -> str:
        return _prelude.make_vector(self.name, t.name, args)

    # ---- gpu.* builtins: spelled by pygpgpu_core.gpu.GPU_TABLE -------------
    def work_item(self, what: str, dim: int) -> str:
        return GPU_TABLE[f"get_{what}"].expr(self.name, [], dim=dim)

    def barrier(self, fence: str) -> str:
        return GPU_TABLE["barrier"].expr(self.name, [FENCE_SPELLING[_FENCES[fence]]])

    def mem_fence(self, fence: str) -> str:
        return GPU_TABLE["mem_fence"].expr(self.name, [FENCE_SPELLING[_FENCES[fence]]])

    def gpu_spelling(self, name: str, t: Scalar) -> str:
        """Call template (``"native_exp({0})"``) of math builtin ``gpu.<name>`` at float32 or float64."""
        spec = GPU_TABLE[name]
        return spec.spelling[self.name] if t.name == "float32" else spec.native["double"]

    # ---- math --------------------------------------------------------------
    def math_name(self, name: str, t: Scalar) -> str:
        if self.float_suffix and t.name == "float32":
            return name + "f"
        return name

    def headers(self, features: set[str]) -> list[str]:
        return []


class OpenCL(Dialect):
    name = "opencl"
    kernel_prefix = "__kernel void"
    global_ptr = "__global "
    local_ptr = "__local "
    local_decl = "__local "
    own_scalars = {"bool": "bool", "float16": "half"}
    fast_math_options = ("-cl-fast-relaxed-math",)
    printf_int64 = "l"         # OpenCL C's long is 64-bit

    def headers(self, features):
        # fp64 and 64-bit atomics pragmas come with the prelude pieces that need them (ext:*)
        return ["#pragma OPENCL EXTENSION cl_khr_fp16 : enable"] if "fp16" in features else []


class CUDA(Dialect):
    name = "cuda"
    kernel_prefix = 'extern "C" __global__ void'
    device_fn_prefix = "static __device__ __forceinline__ "
    local_decl = "__shared__ "
    own_scalars = {"bool": "bool", "float16": "__half"}
    float_suffix = True
    assume_aligned = "__builtin_assume_aligned"
    fast_math_options = ("--use_fast_math",)       # NVRTC: ftz, approximate div/sqrt, fast intrinsics

    # GPU_TABLE spells the 32-bit product; kernels may index past 2**32 work items, so widen first
    _wide = {"global_id": "((long long)blockIdx.{d} * blockDim.{d} + threadIdx.{d})",
             "global_size": "((long long)gridDim.{d} * blockDim.{d})"}

    def work_item(self, what, dim):
        if what in self._wide:
            return self._wide[what].format(d=_DIMS[dim])
        return super().work_item(what, dim)


class HIP(CUDA):
    name = "hip"
    fast_math_options = ("-ffast-math",)           # hiprtc and clang refuse NVRTC's --use_fast_math


DIALECTS = {"opencl": OpenCL(), "cuda": CUDA(), "hip": HIP()}


def dialect_for(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown source dialect {name!r}; expected one of {sorted(DIALECTS)}") from None
