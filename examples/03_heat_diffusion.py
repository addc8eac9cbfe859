"""2-D heat diffusion: a hot square in a cold plate, explicit finite differences, and a PNG of
the temperature field at the end.

    python examples/03_heat_diffusion.py [grid_size]

The two grids are device arrays (pygpgpu.numpy): they stay on the device for all the steps and
come back once at the end. The kernel runs over np.ndindex(out.shape), a 2-D launch.

The kernel is made inside `make_diffuse(alpha)` and reads `alpha` from the enclosing function:
a closure constant, compiled in like a module constant (another alpha is another compiled
specialization, as a changed global would be).
"""
import numpy as np
from _common import colorize, example_size, save_png

import pygpgpu
import pygpgpu.numpy as gnp
from pygpgpu import kernel

ALPHA = 0.2             # default diffusion number (dt * k / dx^2): stable below 0.25


def make_diffuse(alpha: float):
    """One explicit step with this diffusion number, as a kernel."""
    if not 0.0 < alpha < 0.25:
        raise ValueError(f"alpha must be in (0, 0.25) for a stable explicit scheme, got {alpha}")

    @kernel
    def diffuse(t, out):
        for y, x in np.ndindex(out.shape):
            h, w = out.shape
            if y == 0 or x == 0 or y == h - 1 or x == w - 1:
                out[y, x] = t[y, x]                    # the border keeps its temperature
            else:
                lap = t[y - 1, x] + t[y + 1, x] + t[y, x - 1] + t[y, x + 1] - 4.0 * t[y, x]
                out[y, x] = t[y, x] + alpha * lap      # alpha: read from make_diffuse

    return diffuse


def initial_field(n: int) -> np.ndarray:
    field = np.zeros((n, n), np.float32)
    field[n // 3: 2 * n // 3, n // 4: n // 2] = 100.0     # a hot rectangle
    field[:, -1] = 50.0                                   # a warm right edge
    return field


def host_steps(field: np.ndarray, steps: int, alpha: float = ALPHA) -> np.ndarray:
    """The same scheme in numpy (float32), for checking."""
    t = field.copy()
    a = np.float32(alpha)
    for _ in range(steps):
        new = t.copy()
        lap = t[:-2, 1:-1] + t[2:, 1:-1] + t[1:-1, :-2] + t[1:-1, 2:] - np.float32(4.0) * t[1:-1, 1:-1]
        new[1:-1, 1:-1] = t[1:-1, 1:-1] + a * lap
        t = new
    return t


def main(n: int = 512, steps: int = 500, alpha: float = ALPHA) -> dict:
    # One device for the arrays and the kernel: a kernel runs where it is told (here the
    # default device, $PYGPGPU_BACKEND), and refuses device arrays that live elsewhere.
    device = pygpgpu.get_device()
    diffuse = make_diffuse(alpha)
    step = diffuse[device.selector]
    field = initial_field(n)
    a = gnp.asarray(field, device=device)  # one upload
    b = gnp.empty_like(a)
    for _ in range(steps):
        step(a, b)                         # no host transfer inside the loop
        a, b = b, a
    result = a.get()                       # one download
    print(f"{steps} steps on a {n}x{n} grid on {device.selector}: mean temperature {result.mean():.3f}")
    save_png(colorize(result / 100.0), "heat_diffusion.png")
    return {"initial": field, "steps": steps, "alpha": alpha, "result": result, "kernel": diffuse}


if __name__ == "__main__":
    main(example_size(512))
