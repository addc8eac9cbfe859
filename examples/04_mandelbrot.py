"""The Mandelbrot set: iterations until escape for every pixel, written as a PNG.

    python examples/04_mandelbrot.py [width]

A 2-D launch over the image (np.ndindex), a while loop with a data-dependent trip count, and
float32 arithmetic throughout (Python literals are weak: they take the array's type).
"""
import numpy as np
from _common import colorize, example_size, save_png

from pygpgpu import kernel

MAX_ITER = 200


@kernel
def mandelbrot(counts, x0, y0, step):
    for py, px in np.ndindex(counts.shape):
        cr = x0 + px * step
        ci = y0 + py * step
        zr = 0.0
        zi = 0.0
        n = 0
        while n < MAX_ITER and zr * zr + zi * zi <= 4.0:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            n += 1
        counts[py, px] = n


def host_mandelbrot(height: int, width: int, x0: float, y0: float, step: float) -> np.ndarray:
    """numpy version (float32), for checking."""
    cr = np.float32(x0) + np.arange(width, dtype=np.float32)[None, :] * np.float32(step)
    ci = np.float32(y0) + np.arange(height, dtype=np.float32)[:, None] * np.float32(step)
    cr, ci = np.broadcast_to(cr, (height, width)), np.broadcast_to(ci, (height, width))
    zr = np.zeros((height, width), np.float32)
    zi = np.zeros_like(zr)
    counts = np.zeros((height, width), np.int32)
    for _ in range(MAX_ITER):
        alive = zr * zr + zi * zi <= np.float32(4.0)
        if not alive.any():
            break
        zr, zi = (np.where(alive, zr * zr - zi * zi + cr, zr), np.where(alive, np.float32(2.0) * zr * zi + ci, zi))
        counts += alive
    return counts


def main(width: int = 1200) -> dict:
    height = width * 2 // 3
    x0, y0, step = -2.2, -1.2, 3.3 / width
    counts = np.zeros((height, width), np.int32)
    mandelbrot(counts, np.float32(x0), np.float32(y0), np.float32(step))
    print(f"{width}x{height} pixels, {np.count_nonzero(counts == MAX_ITER):,} inside the set")
    shade = np.where(counts == MAX_ITER, 0.0, np.sqrt(counts / MAX_ITER))
    save_png(colorize(shade), "mandelbrot.png")
    return {"counts": counts, "x0": x0, "y0": y0, "step": step}


if __name__ == "__main__":
    main(example_size(1200))
