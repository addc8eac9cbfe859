// CUDA: only extern "C" __global__ functions are exported.
#define BLOCK 256

struct Body {
    float3 pos;   // 12 bytes, aligned 4 in CUDA
    float mass;
    double4 extra; // 32 bytes, aligned 16 in CUDA
};

extern "C" __global__ void __launch_bounds__(BLOCK)
vecadd(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

extern "C" {
__global__ void bodies_mass(const Body* bodies, float* total, unsigned long long n)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, bodies[i].mass);
}
}

template <typename T>
__device__ T twice(T x) { return x + x; }

__global__ void mangled(float* x) { x[0] = twice(x[0]); }
