// Every qualifier spelling of OpenCL C in kernel signatures, and parameters named like Python keywords.
typedef struct { float lo; float hi; } Range;

__kernel __attribute__((reqd_work_group_size(4, 1, 1)))
void clamp_copy(__global __const float* restrict in, global float* volatile out, __constant Range* limits,
                const int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    out[i] = clamp(in[i], limits[0].lo, limits[0].hi);
}

kernel void scale(__global const float* __restrict lambda, __global float* pass, const float def,
                  __private int len, local float* scratch)
{
    int i = get_global_id(0);
    scratch[get_local_id(0)] = lambda[i] * def;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (i < len) pass[i] = scratch[get_local_id(0)];
}

__kernel void __attribute__((work_group_size_hint(8, 1, 1))) add_const(const __global float *a, constant float *b,
                                                                        __global float * __restrict__ self, int n)
{
    int i = get_global_id(0);
    if (i < n) self[i] = a[i] + b[0];
}

__kernel_exec(8, float4) void exec_fill(__global float* out, const float value)
{
    out[get_global_id(0)] = value;
}
