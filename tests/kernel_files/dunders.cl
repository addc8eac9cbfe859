// Kernels named like the attributes every module has.
__kernel void __file__(__global int* out) { out[get_global_id(0)] = 1; }
__kernel void __kernels__(__global int* out) { out[get_global_id(0)] = 2; }
__kernel void __name__(__global int* out) { out[get_global_id(0)] = 3; }
__kernel void plain(__global int* out) { out[get_global_id(0)] = 4; }
