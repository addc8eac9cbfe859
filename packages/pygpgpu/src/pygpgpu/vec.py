"""``pygpgpu.vec``: the 50 OpenCL-style vector types (``float4``, ``int3``, ``uchar16``, ...).

    from pygpgpu.vec import float4, int8

Here every vector type has its OpenCL name. Five of those names are also numpy's scalar types
(``int8``, ``int16``, ``uint8``, ``uint16``, ``float16``: 8 or 16 components here, one number in
numpy), so the top level of ``pygpgpu`` offers them only with a DeprecationWarning; spell them
``pygpgpu.vec.int8`` (the vector) or ``np.int8`` (the scalar). Kernels translate the classes
from either spelling. ``Vector`` is their base class; ``vector_type(base, width)`` finds one.
"""
from pygpgpu_core.vec_types import (
    BASE_TYPES as BASE_TYPES,
    VECTOR_TYPES as VECTOR_TYPES,
    WIDTHS as WIDTHS,
    Vector as Vector,
    vector_dtype as vector_dtype,
    vector_type as vector_type,
    vector_type_of_dtype as vector_type_of_dtype,
)
from pygpgpu_core.vec_types import char2, char3, char4, char8, char16
from pygpgpu_core.vec_types import uchar2, uchar3, uchar4, uchar8, uchar16
from pygpgpu_core.vec_types import short2, short3, short4, short8, short16
from pygpgpu_core.vec_types import ushort2, ushort3, ushort4, ushort8, ushort16
from pygpgpu_core.vec_types import int2, int3, int4, int8, int16
from pygpgpu_core.vec_types import uint2, uint3, uint4, uint8, uint16
from pygpgpu_core.vec_types import long2, long3, long4, long8, long16
from pygpgpu_core.vec_types import ulong2, ulong3, ulong4, ulong8, ulong16
from pygpgpu_core.vec_types import float2, float3, float4, float8, float16
from pygpgpu_core.vec_types import double2, double3, double4, double8, double16

__all__ = [
    "BASE_TYPES", "VECTOR_TYPES", "WIDTHS", "Vector", "vector_dtype", "vector_type", "vector_type_of_dtype",
    "char2", "char3", "char4", "char8", "char16", "uchar2", "uchar3", "uchar4", "uchar8", "uchar16",
    "short2", "short3", "short4", "short8", "short16", "ushort2", "ushort3", "ushort4", "ushort8", "ushort16",
    "int2", "int3", "int4", "int8", "int16", "uint2", "uint3", "uint4", "uint8", "uint16",
    "long2", "long3", "long4", "long8", "long16", "ulong2", "ulong3", "ulong4", "ulong8", "ulong16",
    "float2", "float3", "float4", "float8", "float16", "double2", "double3", "double4", "double8", "double16",
]
