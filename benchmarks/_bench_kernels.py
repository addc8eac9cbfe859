"""The four float32 kernels the device benchmarks share (bench_cpu.py: PoCL against Numba;
bench_webgpu.py: WebGPU against CUDA/OpenCL): one source, run on whichever device the caller picks."""
from __future__ import annotations

import math

import numpy as np
from pygpgpu import kernel

__all__ = ["saxpy", "stencil", "mandelbrot", "nbody"]


@kernel
def saxpy(a, x, y, out):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + y[i]


@kernel
def stencil(a, out):
    for i, j in np.ndindex(a.shape):
        if 0 < i < a.shape[0] - 1 and 0 < j < a.shape[1] - 1:
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]


@kernel
def mandelbrot(out, iters):
    for i, j in np.ndindex(out.shape):
        cr = -2.0 + 3.0 * j / out.shape[1]
        ci = -1.5 + 3.0 * i / out.shape[0]
        zr = 0.0
        zi = 0.0
        n = 0
        while n < iters and zr * zr + zi * zi < 4.0:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            n += 1
        out[i, j] = n


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
            inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz + 1e-3)
            s = pos[j, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az
