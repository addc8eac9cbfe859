// float16 conversions for gnp on CUDA (_half.py): the arrays travel as their uint16 bit patterns,
// converted by the PTX cvt instructions (round to nearest even), so no cuda_fp16.h is needed.
extern "C" __global__ void gnp_half_to_float(const unsigned short* src, float* dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(src[i]));
        dst[i] = f;
    }
}

extern "C" __global__ void gnp_float_to_half(const float* src, unsigned short* dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(src[i]));
        dst[i] = h;
    }
}

extern "C" __global__ void gnp_double_to_half(const double* src, unsigned short* dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned short h;
        asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(src[i]));
        dst[i] = h;
    }
}
