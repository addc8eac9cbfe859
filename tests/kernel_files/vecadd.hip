#include <hip/hip_runtime.h>
#define BLOCK 256

typedef struct {
    float3 pos;    // 12 bytes, aligned 4 (as in CUDA)
    double4 extra; // 32 bytes, aligned 32 in HIP (no 16-byte cap)
} Body;

extern "C" __global__ void __launch_bounds__(BLOCK)
vecadd(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

extern "C" __global__ void body_x(const Body* bodies, float* xs, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) xs[i] = bodies[i].pos.x;
}
