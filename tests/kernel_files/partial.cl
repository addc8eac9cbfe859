// One kernel uses a type the declaration parser cannot see (a macro makes the typedef; the
// compiler knows it): only that kernel is lost at import, the others run.
#define DECLARE_COUNTER(name) typedef uint name
DECLARE_COUNTER(counter32_t);

__kernel void doubled(__global const int* x, __global int* out, int n)
{
    int i = get_global_id(0);
    if (i < n) out[i] = 2 * x[i];
}

__kernel void count_hits(__global const int* x,
                         volatile __global counter32_t* hits)
{
    if (x[get_global_id(0)] > 0) atomic_inc(hits);
}

__kernel void negated(__global const int* x, __global int* out, int n)
{
    int i = get_global_id(0);
    if (i < n) out[i] = -x[i];
}
