#include "particles.h"

/* A force passed by value: a float4 member forces 16-byte alignment of the struct. */
typedef struct __attribute__((aligned(16))) {
    float4 dir;
    float strength;
    int mode;
} Force;

struct Pair { char tag; double value; float3 v; };

__kernel void advance(__global Particle* ps, const Force f, const float dt, const int n)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float4 acc = f.dir * (f.strength / ps[i].mass);
    ps[i].vel += acc * dt;
    ps[i].pos += ps[i].vel * dt;
    ps[i].id = ps[i].id * SCALE + f.mode;
}

/* Scales by the header's SCALE: the cache-invalidation test edits particles.h. */
__kernel void scale(__global const float* x, __global float* out, int n)
{
    int i = get_global_id(0);
    if (i < n) out[i] = x[i] * SCALE;
}

__kernel void pair_sum(struct Pair p, __global double* out)
{
    out[0] = p.tag + p.value + p.v.x + p.v.y + p.v.z;
}
