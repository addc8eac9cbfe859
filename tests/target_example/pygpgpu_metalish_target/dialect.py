"""The Metal-like dialect of the example target: imported only when the translator first writes
for it (the target names it as ``"pygpgpu_metalish_target.dialect:Metalish"``)."""
from __future__ import annotations

from pygpgpu_translate.target import KernelParam, OpenCL

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
        return [f"uint3 {name} [[{name[3:]}]]" for _type, name in self.implicit_values(work_items)]

    def implicit_values(self, work_items):
        # a helper reading the thread's position takes it from its caller
        return [("uint3", f"pg_{_ATTRIBUTES[what]}") for what in sorted({what for what, _dim in work_items})]
