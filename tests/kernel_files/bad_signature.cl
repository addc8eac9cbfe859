// The second kernel uses a type the parser cannot know.
__kernel void fine(__global float* x) { x[0] = 1.0f; }

__kernel void broken(__global float* x,
                     mystery_t y)
{
}
