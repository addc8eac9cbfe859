__kernel void twice(__global int* v, int n) { int i = get_global_id(0); if (i < n) v[i] *= 2; }
