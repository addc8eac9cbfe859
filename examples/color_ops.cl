/* A handwritten OpenCL kernel, imported from Python as a module (09_handwritten_kernel.py). */

#define GAMMA_TABLE_SIZE 256

typedef struct {
    float gain;     /* multiply every channel */
    float offset;   /* then add */
} Adjust;

/* Brighten an RGBA image (uint8 per channel) and write the luminance of each pixel. */
__kernel void adjust_rgba(__global const uchar4* src, __global uchar4* out,
                          __global float* luma, Adjust adj, const int n)
{
    int i = get_global_id(0);
    if (i >= n) return;                       /* the launch is rounded up to whole groups */
    float4 c = convert_float4(src[i]) * adj.gain + adj.offset;
    c = clamp(c, 0.0f, 255.0f);
    out[i] = (uchar4)(convert_uchar_sat_rte(c.x), convert_uchar_sat_rte(c.y),
                      convert_uchar_sat_rte(c.z), src[i].w);
    luma[i] = 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z;
}
