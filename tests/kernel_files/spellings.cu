// CUDA qualifier spellings in kernel signatures, and parameters named like Python keywords.
#define BLOCK 128

extern "C" __global__ void __launch_bounds__(BLOCK, 2) scale(const float* __restrict__ in, float* __restrict__ out,
                                                             const float lambda, const int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) out[i] = in[i] * lambda;
}

extern "C" {
__global__ void shift(const float* const __restrict__ def, float* __restrict__ const pass, volatile int n,
                      float self)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) pass[i] = def[i] + self;
}
}

extern "C" __global__ __launch_bounds__(64) void fill(float* __restrict__ out, const __grid_constant__ int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 1.0f;
}
