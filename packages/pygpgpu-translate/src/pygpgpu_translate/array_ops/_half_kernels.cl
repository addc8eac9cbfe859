// float16 stored as half on any OpenCL device (gnp's _half.py): vload_half / vstore_half_rte read
// and write half memory without cl_khr_fp16; the arithmetic itself runs in float32, as numpy's
// float16 loops compute it, and rounds once to the nearest half (ties to even).
__kernel void gnp_half_to_float(__global const half* src, __global float* dst, const long n) {
    long i = get_global_id(0);
    if (i < n) dst[i] = vload_half(i, src);
}

__kernel void gnp_float_to_half(__global const float* src, __global half* dst, const long n) {
    long i = get_global_id(0);
    if (i < n) vstore_half_rte(src[i], i, dst);
}

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// float64 -> float16 in one rounding, as numpy's npy_double_to_half (not through float32)
__kernel void gnp_double_to_half(__global const double* src, __global half* dst, const long n) {
    long i = get_global_id(0);
    if (i < n) vstore_half_rte(src[i], i, dst);
}
