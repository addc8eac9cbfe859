/* y = alpha * x + y, single and double precision, plus an unsigned/long mix. */
__kernel void saxpy(__global float* restrict y,
                    __global const float* restrict x,
                    const float alpha,
                    const unsigned int n)
{
    size_t i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i] + y[i];
}

__kernel void daxpy(__global double* y, __global const double* x, double alpha, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = alpha * x[i] + y[i];
}

// Adds a 64-bit offset and an 8-bit step: exercises ulong / uchar conversions.
__kernel void offset_index(__global ulong* out, ulong base, uchar step, int n)
{
    int i = get_global_id(0);
    if (i < n) out[i] = base + (ulong)step * (ulong)i;
}
