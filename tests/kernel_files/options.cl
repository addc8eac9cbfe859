// pygpgpu: options -DSCALE=3
// Build options decide both the code and the declarations the import sees.
#ifdef USE_DOUBLE
typedef double real;
#else
typedef float real;
#endif

__kernel void scaled(__global const real* x, __global real* out, int n)
{
    int i = get_global_id(0);
    if (i < n) out[i] = SCALE * x[i];
}

#if defined(WITH_OFFSET) && WITH_OFFSET > 0
__kernel void offset(__global real* x, int n)
{
    int i = get_global_id(0);
    if (i < n) x[i] += WITH_OFFSET;
}
#endif
