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
