"""One kernel on every device this machine has: a table of times and a bar chart.

    python examples/08_compare_backends.py [n]

The same @kernel object runs on each device: `k["cuda:0"]`, `k["opencl:1"]`... Each backend
and device compiles its own copy once; after that, switching is a dictionary lookup. Times are
the best of several warm calls with numpy arrays in and out (so transfers are included).
"""
import math
import time

import numpy as np
from _common import example_size, save_bar_chart

import pygpgpu
from pygpgpu import kernel

ROUNDS = 64


@kernel
def iterate(x, out):
    """ROUNDS steps of v = sin(v)/2 + x per element: arithmetic-heavy, memory-light (and a
    contraction, so rounding differences between devices shrink instead of growing)."""
    for i in range(out.shape[0]):
        v = x[i]
        for _ in range(ROUNDS):
            v = math.sin(v) * 0.5 + x[i]
        out[i] = v


def host_iterate(x: np.ndarray) -> np.ndarray:
    v = x.astype(np.float64)
    for _ in range(ROUNDS):
        v = np.sin(v) * 0.5 + x
    return v


def main(n: int = 4_000_000, repeats: int = 5) -> dict:
    x = np.random.default_rng(7).uniform(0.1, 0.9, n).astype(np.float32)
    rows = []
    outputs = {}
    for selector in pygpgpu.available_devices():
        device = pygpgpu.get_device(selector)
        out = np.empty_like(x)
        iterate[selector](x, out)                 # compile (or load from the cache) and warm up
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            iterate[selector](x, out)
            best = min(best, time.perf_counter() - t0)
        outputs[selector] = out
        rows.append((selector, device.name, best * 1e3))
    if not rows:
        raise SystemExit("no device found: `python -m pygpgpu info` says why")
    print(f"v = sin(v)/2 + x, {ROUNDS} rounds on {n:,} float32 values (numpy arrays in and out)")
    print(f"{'device':<12} {'name':<44} {'ms':>9}")
    for selector, name, ms in rows:
        print(f"{selector:<12} {name[:44]:<44} {ms:9.2f}")
    save_bar_chart([f"{s}  {name[:24]}" for s, name, _ in rows], [ms for *_, ms in rows], "ms",
                   "compare_backends.png", f"v = sin(v)/2 + x, {ROUNDS} rounds on {n:,} values: ms per call (lower is better)")
    return {"x": x, "outputs": outputs, "rows": rows}


if __name__ == "__main__":
    main(example_size(4_000_000))
