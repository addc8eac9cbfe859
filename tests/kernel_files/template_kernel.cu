template <typename T>
__global__ void scale(T* x, T k)
{
    x[threadIdx.x] *= k;
}
