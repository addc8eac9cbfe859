"""The n-body kernel of benchmarks/bench_cuda.py (rows of 4 float32 read as pos[j, 0..3]), shared by
the tests of row strides and row vector loads."""
from __future__ import annotations

from pygpgpu_core import gpu
from pygpgpu_translate import kernel


@kernel
def nbody(pos, acc):
    for i in range(acc.shape[0]):
        ax = 0.0
        ay = 0.0
        az = 0.0
        for j in range(pos.shape[0]):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            r2 = dx * dx + dy * dy + dz * dz + 1e-3
            inv = gpu.rsqrt(r2)
            sc = pos[j, 3] * inv * inv * inv
            ax += dx * sc
            ay += dy * sc
            az += dz * sc
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
        acc[i, 3] = 0.0
