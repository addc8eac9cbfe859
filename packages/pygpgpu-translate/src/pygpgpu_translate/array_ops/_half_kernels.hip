// float16 conversions for gnp on HIP (_half.py): the arrays travel as their uint16 bit patterns;
// clang's _Float16 converts with round to nearest even, as numpy's npy_float_to_half.
#include <hip/hip_runtime.h>

extern "C" __global__ void gnp_half_to_float(const unsigned short* src, float* dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = (float)__builtin_bit_cast(_Float16, src[i]);
}

extern "C" __global__ void gnp_float_to_half(const float* src, unsigned short* dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = __builtin_bit_cast(unsigned short, (_Float16)src[i]);
}

extern "C" __global__ void gnp_double_to_half(const double* src, unsigned short* dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = __builtin_bit_cast(unsigned short, (_Float16)src[i]);
}
