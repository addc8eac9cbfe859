"""One kernel on every device this machine has: a table of throughputs and a bar chart.

    python examples/08_compare_backends.py [n]

The same @kernel object runs on each device: `k["cuda:0"]`, `k["opencl:1"]`... Each backend
and device compiles its own copy once; after that, switching is a dictionary lookup. Times are
the best of several warm calls with numpy arrays in and out (so transfers are included). Without
``n`` each device gets a size that suits it (4M values on a GPU, 64K on a CPU device, which
would otherwise take minutes), so the table compares values per second, not milliseconds.
"""
import math
import time

import numpy as np
from _common import example_size, save_bar_chart, size_for

import pygpgpu
from pygpgpu import kernel

ROUNDS = 64
GPU_SIZE, CPU_SIZE = 4_000_000, 65_536


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


def main(n: "int | None" = None, repeats: int = 5) -> dict:
    rows = []
    inputs = {}
    outputs = {}
    for selector in pygpgpu.available_devices():
        device = pygpgpu.get_device(selector)
        size = n or size_for(device, GPU_SIZE, CPU_SIZE)
        print(f"{selector}: {size:,} values, {repeats} timed calls ...", flush=True)   # progress
        x = np.random.default_rng(7).uniform(0.1, 0.9, size).astype(np.float32)
        out = np.empty_like(x)
        iterate[selector](x, out)                 # compile (or load from the cache) and warm up
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            iterate[selector](x, out)
            best = min(best, time.perf_counter() - t0)
        inputs[selector], outputs[selector] = x, out
        rows.append((selector, device.name, size / best / 1e6))
    if not rows:
        raise SystemExit("no device found: `python -m pygpgpu info` says why")
    print(f"v = sin(v)/2 + x, {ROUNDS} rounds per float32 value (numpy arrays in and out)")
    print(f"{'device':<12} {'name':<44} {'values':>10} {'M values/s':>11}")
    for selector, name, rate in rows:
        print(f"{selector:<12} {name[:44]:<44} {len(inputs[selector]):>10,} {rate:11.2f}")
    save_bar_chart([f"{s}  {name[:24]}" for s, name, _ in rows], [rate for *_, rate in rows], "M/s",
                   "compare_backends.png", f"v = sin(v)/2 + x, {ROUNDS} rounds: million values per second "
                                           "(higher is better)")
    return {"inputs": inputs, "outputs": outputs, "rows": rows}


if __name__ == "__main__":
    main(example_size(0) or None)
