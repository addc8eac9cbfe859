// Local memory, a vector by value, a const pointer written through a cast.
#define TILE 64

__kernel void block_sum(__global const float* x, __global float* sums, __local float* scratch, int n)
{
    int lid = get_local_id(0), gid = get_global_id(0);
    scratch[lid] = gid < n ? x[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] += scratch[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) sums[get_group_id(0)] = scratch[0];
}

__kernel void shift(__global float4* pts, float4 by, int n)
{
    int i = get_global_id(0);
    if (i < n) pts[i] += by;
}

/* Writes through a cast-away const: the host copy must stay untouched (no read-back). */
__kernel void scribble(__global const float* src, __global float* dst, int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    dst[i] = src[i] + 1.0f;
    ((__global float*)src)[i] = -1.0f;
}

__kernel void fill_2d(__global int* out, int width, int height)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x < width && y < height) out[y * width + x] = y * 1000 + x;
}

__kernel void lookup(__constant float* table, __global const int* idx, __global float* out, int n)
{
    int i = get_global_id(0);
    if (i < n) out[i] = table[idx[i]];
}
