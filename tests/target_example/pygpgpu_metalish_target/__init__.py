"""An example target plug-in: a Metal-like language, as docs/writing-a-backend.md#a-target-of-your-own
describes. It only renders (no runtime): tests/test_target_plugin.py checks the source it writes
and runs it on the host as C++. Everything comes from public names.

What makes it unlike C: the thread's position is a kernel parameter the language fills in
(``uint3 pg_thread_position_in_grid [[thread_position_in_grid]]``), every launched parameter
carries its slot as an attribute (``[[buffer(i)]]``), scalars are passed by constant
reference, and ``device``, ``constant``, ``threadgroup`` and ``thread`` are keywords.
"""
from __future__ import annotations

from types import MappingProxyType

from pygpgpu_translate.target import KernelParam, Language, OpenCL, Target

# gpu.get_<what> -> the Metal attribute of the uint3 parameter that holds it
_ATTRIBUTES = {"global_id": "thread_position_in_grid", "global_size": "threads_per_grid",
               "local_id": "thread_position_in_threadgroup", "group_id": "threadgroup_position_in_grid",
               "local_size": "threads_per_threadgroup", "num_groups": "threadgroups_per_grid"}


class Metalish(OpenCL):
    source_suffix = ".metal"
    kernel_prefix = "kernel void"
    global_ptr = "device "
    local_ptr = "threadgroup "
    local_decl = "threadgroup "
    reserved_words = OpenCL.reserved_words | frozenset({
        "device", "constant", "threadgroup", "threadgroup_imageblock", "thread", "ray_data", "object_data",
        "vertex", "fragment", "metal", "simd", "uint3", "packed_float3"})
    work_items = {what: f"pg_{attr}.{{d}}" for what, attr in _ATTRIBUTES.items()}

    def component(self, type_name, i):
        return "." + "xyzw"[i]

    def barrier(self, fence):
        return "threadgroup_barrier(mem_flags::mem_threadgroup)"

    def mem_fence(self, fence):
        return "atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst)"

    def kernel_param(self, p: KernelParam) -> str:
        if p.kind == "value":                      # setBytes: a constant buffer, read by reference
            return f"constant {p.type_text}& {p.name} [[buffer({p.index})]]"
        if p.kind == "local":
            return f"threadgroup {p.type_text}* {p.name} [[threadgroup({p.index})]]"
        return f"{super().kernel_param(p)} [[buffer({p.index})]]"

    def implicit_params(self, work_items):
        return [f"uint3 pg_{_ATTRIBUTES[what]} [[{_ATTRIBUTES[what]}]]"
                for what in sorted({what for what, _dim in work_items})]


METALISH = Language(
    name="metalish", suffix="metal", long_bytes=8, long_long_reserved=False, vector_widths=(2, 3, 4),
    vector3_padded=True, vector_align_cap=0, kernel_words=frozenset({"kernel"}), kernels_need_extern_c=False,
    tags_are_type_names=True, attributes_after_brace=False,
    predefined=MappingProxyType({"__METAL_VERSION__": "300"}))

target = Target("metalish", Metalish(), language=METALISH)
